//! wgpu's pipeline cache (VkPipelineCache) on disk, where the adapter offers one: the second
//! run of a process skips most of the driver's shader compilation. Any failure to read or
//! write it only costs that speed-up, so it is never an error.

use std::path::{Path, PathBuf};

use crate::device::WgpuDevice;

/// The cache, and the file it is saved to (`<dir>/<adapter's cache key>.bin`).
pub(crate) struct DiskCache {
    pub(crate) cache: wgpu::PipelineCache,
    path: PathBuf,
}

impl DiskCache {
    /// The cache of `dev`'s adapter under `dir`, started from the file there if any; `None`
    /// where the adapter has no pipeline cache.
    pub(crate) fn open(dev: &WgpuDevice, dir: &Path) -> Option<DiskCache> {
        if !dev.has_pipeline_cache() {
            return None;
        }
        let key = wgpu::util::pipeline_cache_key(dev.adapter_info())?;
        let path = dir.join(format!("{key}.bin"));
        let data = std::fs::read(&path).ok();
        // SAFETY: the data is either absent or what `PipelineCache::get_data` wrote for an
        // adapter with the same cache key; `fallback: true` makes the driver validate it and
        // start empty when it does not match (wgpu checks the header, the driver its own key).
        let cache = unsafe {
            dev.wgpu().create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some("g16"),
                data: data.as_deref(),
                fallback: true,
            })
        };
        Some(DiskCache { cache, path })
    }

    /// Writes the cache's current contents to its file.
    pub(crate) fn save(&self) {
        let Some(data) = self.cache.get_data() else { return };
        let Some(parent) = self.path.parent() else { return };
        if std::fs::create_dir_all(parent).is_err() {
            return;
        }
        // Write then rename, so a concurrent reader never sees half a file.
        let tmp = self.path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &data).is_ok() {
            let _ = std::fs::rename(&tmp, &self.path);
        }
    }
}
