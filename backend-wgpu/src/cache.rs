//! wgpu's pipeline cache (VkPipelineCache) on disk, where the adapter offers one: the second
//! run of a process skips most of the driver's shader compilation. Any failure to read or
//! write it only costs that speed-up, so it is never an error.

use std::path::PathBuf;

use crate::device::AdapterSummary;

fn dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("G16_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("g16"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("g16"))
}

fn file(key: &str) -> Option<PathBuf> {
    Some(dir()?.join(format!("{key}.bin")))
}

fn key_of(adapter: &wgpu::Adapter) -> Option<String> {
    wgpu::util::pipeline_cache_key(&adapter.get_info())
}

pub(crate) fn open(device: &wgpu::Device, adapter: &wgpu::Adapter) -> Option<(wgpu::PipelineCache, PathBuf)> {
    let path = file(&key_of(adapter)?)?;
    let data = std::fs::read(&path).ok();
    // SAFETY: the data is either absent or what `PipelineCache::get_data` wrote for an adapter
    // with the same cache key; `fallback: true` makes the driver validate it and start empty
    // when it does not match (wgpu checks the header, the driver checks its own key).
    let cache = unsafe {
        device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
            label: Some("g16"),
            data: data.as_deref(),
            fallback: true,
        })
    };
    Some((cache, path))
}

pub(crate) fn save(cache: &wgpu::PipelineCache, path: &PathBuf, _adapter: &AdapterSummary) {
    let Some(data) = cache.get_data() else { return };
    let Some(parent) = path.parent() else { return };
    if std::fs::create_dir_all(parent).is_err() {
        return;
    }
    // Write then rename, so a concurrent reader never sees half a file.
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, &data).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}
