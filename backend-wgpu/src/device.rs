//! The device: adapter selection, its limits, wgpu's errors, buffer creation, read-backs of
//! mappable buffers, bind groups and dispatch. Nothing here knows what the buffers hold or
//! which kernels run: the layers above (buffers, compile, timing, staging, ntt, msm) build on
//! it.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use wgpu::util::DeviceExt;

use crate::error::WgpuError;
use crate::options::WgpuOptions;

/// Locks a mutex, recovering from poisoning (every structure behind the crate's locks stays
/// valid after a panic elsewhere: caches and append-only lists).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How a device's kernels multiply 32-bit limbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arith {
    /// 64-bit integer products (`SHADER_INT64`).
    Int64,
    /// 32-bit integers only: 16-bit partial products.
    U32,
}

impl Arith {
    pub fn name(self) -> &'static str {
        match self {
            Arith::Int64 => "int64",
            Arith::U32 => "u32",
        }
    }
}

/// Storage buffers the largest module binds (the NTT's and the pointwise ops': three arrays,
/// each split over four bindings); an adapter with fewer per stage is not used.
/// compile/module.rs's tests hold the modules to it.
pub const STORAGE_BUFFERS_NEEDED: u32 = 12;

/// One adapter wgpu found, and whether g16 can use it.
#[derive(Clone, Debug)]
pub struct AdapterSummary {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    pub shader_int64: bool,
    pub timestamps: bool,
    /// `Ok` if usable; otherwise why not.
    pub usable: Result<(), String>,
}

impl std::fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {} ({})", self.backend, self.name, self.device_type)?;
        if let Err(why) = &self.usable {
            write!(f, ": not used, {why}")?;
        }
        Ok(())
    }
}

/// The APIs g16 runs on. GL is left out: its adapters lack the storage-buffer sizes and
/// 64-bit features the shaders rely on, and merely probing it (EGL) prints errors on
/// machines without a display.
const BACKENDS: wgpu::Backends = wgpu::Backends::VULKAN.union(wgpu::Backends::METAL).union(wgpu::Backends::DX12);

/// Why an adapter cannot run g16's shaders, if it cannot.
fn unusable_reason(adapter: &wgpu::Adapter) -> Option<String> {
    let down = adapter.get_downlevel_capabilities();
    if !down.flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS) {
        return Some("no compute shaders".to_string());
    }
    let limits = adapter.limits();
    if limits.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS_NEEDED {
        return Some(format!(
            "{} storage buffers per stage, {STORAGE_BUFFERS_NEEDED} needed",
            limits.max_storage_buffers_per_shader_stage
        ));
    }
    None
}

fn rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    }
}

fn summarize(adapter: &wgpu::Adapter) -> AdapterSummary {
    let info = adapter.get_info();
    let features = adapter.features();
    AdapterSummary {
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver: format!("{} {}", info.driver, info.driver_info).trim().to_string(),
        shader_int64: features.contains(wgpu::Features::SHADER_INT64),
        timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
        usable: unusable_reason(adapter).map_or(Ok(()), Err),
    }
}

/// Every adapter, usable ones first in order of preference (the order ordinals index),
/// enumerated once per process.
///
/// Why once: each enumeration goes through the Vulkan loader's implicit layers, and Mesa's
/// device-select layer tries a Wayland connection every time (wgpu asks for the Wayland
/// surface extension), which prints an error where no display is set up.
fn sorted_adapters() -> &'static [wgpu::Adapter] {
    static ADAPTERS: OnceLock<(wgpu::Instance, Vec<wgpu::Adapter>)> = OnceLock::new();
    let (_instance, adapters) = ADAPTERS.get_or_init(|| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = BACKENDS;
        let instance = wgpu::Instance::new(desc);
        let mut adapters = pollster::block_on(instance.enumerate_adapters(BACKENDS));
        adapters.sort_by_key(|a| (unusable_reason(a).is_some(), rank(a.get_info().device_type)));
        (instance, adapters)
    });
    adapters
}

/// Every adapter wgpu finds, usable ones first, in the order [`WgpuOptions::ordinal`] counts
/// them.
pub fn list_adapters() -> Vec<AdapterSummary> {
    sorted_adapters().iter().map(summarize).collect()
}

/// How many adapters g16 can use.
pub fn device_count() -> usize {
    list_adapters().iter().filter(|a| a.usable.is_ok()).count()
}

/// One open adapter: the wgpu device and queue, what the adapter offers, and the errors wgpu
/// reported that no operation has collected yet.
pub struct WgpuDevice {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    summary: AdapterSummary,
    features: wgpu::Features,
    limits: wgpu::Limits,
    arith: Arith,
    /// Largest binding, in bytes, after `WgpuOptions::max_binding_bytes`.
    binding_bytes: u64,
    /// Workgroup storage the kernels may declare, in bytes, after
    /// `WgpuOptions::max_workgroup_bytes`.
    workgroup_bytes: u32,
    errors: Arc<Mutex<Vec<String>>>,
}

impl WgpuDevice {
    /// Opens the usable adapter `options.ordinal` with its real limits, SHADER_INT64,
    /// timestamp queries and a pipeline cache where offered.
    pub fn open(options: &WgpuOptions) -> Result<WgpuDevice, WgpuError> {
        let adapters = sorted_adapters();
        let usable: Vec<&wgpu::Adapter> = adapters.iter().filter(|a| unusable_reason(a).is_none()).collect();
        let Some(adapter) = usable.get(options.ordinal) else {
            let found = if adapters.is_empty() {
                "wgpu found no adapter (is a Vulkan driver installed? on Debian: mesa-vulkan-drivers libvulkan1)"
                    .to_string()
            } else {
                format!(
                    "{} usable adapter(s), ordinal {} asked; found: {}",
                    usable.len(),
                    options.ordinal,
                    adapters.iter().map(|a| summarize(a).to_string()).collect::<Vec<_>>().join("; ")
                )
            };
            return Err(WgpuError::NoAdapter(found));
        };
        let summary = summarize(adapter);
        let wanted = wgpu::Features::SHADER_INT64
            | wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES
            | wgpu::Features::PIPELINE_CACHE;
        let features = adapter.features() & wanted;
        let limits = adapter.limits();
        let desc = wgpu::DeviceDescriptor {
            label: Some("g16"),
            required_features: features,
            required_limits: limits.clone(),
            // wgpu's large blocks (128 then 256 MiB); its small ones (MemoryUsage) measured no
            // different on the H200 (docs/perf/wgpu.md, "The NTT's cliff").
            memory_hints: wgpu::MemoryHints::Performance,
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| WgpuError::NoAdapter(format!("{}: request_device failed: {e}", summary.name)))?;
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| lock(&sink).push(e.to_string())));
        let arith = if features.contains(wgpu::Features::SHADER_INT64) && !options.force_u32 {
            Arith::Int64
        } else {
            Arith::U32
        };
        let mut binding_bytes = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        if let Some(cap) = options.max_binding_bytes {
            binding_bytes = binding_bytes.min(cap);
        }
        // The device's own limits: what was granted, which the request set to the adapter's.
        let granted = device.limits();
        let mut workgroup_bytes = granted.max_compute_workgroup_storage_size;
        if let Some(cap) = options.max_workgroup_bytes {
            workgroup_bytes = workgroup_bytes.min(cap);
        }
        Ok(WgpuDevice {
            device,
            queue,
            info: adapter.get_info(),
            summary,
            features,
            limits,
            arith,
            binding_bytes,
            workgroup_bytes,
            errors,
        })
    }

    pub fn adapter(&self) -> &AdapterSummary {
        &self.summary
    }

    /// What wgpu says of the adapter (the pipeline cache is keyed by it).
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    pub fn arith(&self) -> Arith {
        self.arith
    }

    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The largest binding used, in bytes.
    pub fn binding_bytes(&self) -> u64 {
        self.binding_bytes
    }

    /// The workgroup storage kernels may declare, in bytes.
    pub fn workgroup_bytes(&self) -> u32 {
        self.workgroup_bytes
    }

    pub fn has_timestamps(&self) -> bool {
        self.features.contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    pub fn has_pipeline_cache(&self) -> bool {
        self.features.contains(wgpu::Features::PIPELINE_CACHE)
    }

    pub(crate) fn wgpu(&self) -> &wgpu::Device {
        &self.device
    }

    pub(crate) fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// Errors wgpu reported since the last check.
    pub(crate) fn check_errors(&self, during: &str) -> Result<(), WgpuError> {
        let errs = std::mem::take(&mut *lock(&self.errors));
        if errs.is_empty() {
            Ok(())
        } else {
            Err(WgpuError::Device(format!("{during}: {}", errs.join("; "))))
        }
    }

    /// Blocks until all submitted work is done.
    pub fn wait(&self) -> Result<(), WgpuError> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| WgpuError::Device(format!("waiting for the device: {e}")))
    }

    /// Blocks until submission `index` is done.
    pub(crate) fn wait_for(&self, index: wgpu::SubmissionIndex, what: &str) -> Result<(), WgpuError> {
        self.device
            .poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: None })
            .map(|_| ())
            .map_err(|e| WgpuError::Device(format!("waiting for {what}: {e}")))
    }

    /// The first `bytes` of a mappable buffer, as words, once the work writing it is done.
    pub(crate) fn map_read(&self, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u32>, WgpuError> {
        let (tx, rx) = std::sync::mpsc::channel();
        buffer.map_async(wgpu::MapMode::Read, 0..bytes, move |r| {
            let _ = tx.send(r);
        });
        self.wait()?;
        rx.recv()
            .map_err(|_| WgpuError::Device("buffer mapping never completed".into()))?
            .map_err(|e| WgpuError::Device(format!("mapping a buffer: {e}")))?;
        let view = buffer.get_mapped_range(0..bytes).map_err(|e| WgpuError::Device(format!("mapped range: {e}")))?;
        let words = bytemuck::cast_slice::<u8, u32>(&view).to_vec();
        drop(view);
        buffer.unmap();
        Ok(words)
    }

    /// A buffer of `size` bytes (at least 16). Running out of memory is
    /// [`WgpuError::OutOfMemory`], reported at once (the allocation runs under an error scope).
    pub(crate) fn create_buffer(
        &self,
        what: &str,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer, WgpuError> {
        if size > self.limits.max_buffer_size {
            return Err(WgpuError::TooLarge {
                what: what.to_string(),
                requested: size,
                limit: self.limits.max_buffer_size,
            });
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(what),
            size: size.max(16),
            usage,
            mapped_at_creation: false,
        });
        match pollster::block_on(scope.pop()) {
            None => Ok(buffer),
            Some(_) => Err(WgpuError::OutOfMemory { what: what.to_string(), requested: size }),
        }
    }

    /// A uniform buffer holding `words`.
    pub(crate) fn uniform(&self, words: &[u32]) -> wgpu::Buffer {
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytemuck::cast_slice(words),
            usage: wgpu::BufferUsages::UNIFORM,
        })
    }

    /// A bind group of `layout`: the uniform at binding 0, then `storage` at 1, 2, ….
    pub(crate) fn bind_group(
        &self,
        layout: &wgpu::BindGroupLayout,
        uniform: wgpu::BufferBinding<'_>,
        storage: &[&wgpu::Buffer],
    ) -> wgpu::BindGroup {
        let mut entries = vec![wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::Buffer(uniform) }];
        for (i, b) in storage.iter().enumerate() {
            entries.push(wgpu::BindGroupEntry { binding: i as u32 + 1, resource: b.as_entire_binding() });
        }
        self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout, entries: &entries })
    }

    /// Records a dispatch of `threads` threads (64 per workgroup), spread over x and y when
    /// one dimension's workgroup limit is not enough (util/dispatch.wgsl numbers them back).
    pub(crate) fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        threads: u64,
    ) -> Result<(), WgpuError> {
        if threads > u64::from(u32::MAX) {
            return Err(WgpuError::TooLarge {
                what: format!("a dispatch of {threads} threads"),
                requested: threads,
                limit: u64::from(u32::MAX),
            });
        }
        self.dispatch_groups(pass, pipeline, group, threads.div_ceil(64))
    }

    /// Records a dispatch of `groups` workgroups, spread over x and y when one dimension's
    /// limit is not enough; the kernel numbers them x-major (`id.x + id.y·count.x`). Past one
    /// dimension x is the largest power of two within it, so a power-of-two count is covered
    /// exactly, with no workgroup past the last.
    pub(crate) fn dispatch_groups(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        groups: u64,
    ) -> Result<(), WgpuError> {
        if groups == 0 {
            return Ok(());
        }
        let max = u64::from(self.limits.max_compute_workgroups_per_dimension);
        let x = if groups <= max { groups } else { 1u64 << (63 - max.leading_zeros()) };
        let y = groups.div_ceil(x);
        if y > max {
            return Err(WgpuError::TooLarge {
                what: format!("a dispatch of {groups} workgroups"),
                requested: groups,
                limit: max * max,
            });
        }
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(x as u32, y as u32, 1);
        Ok(())
    }
}
