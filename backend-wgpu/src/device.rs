//! The device: adapter selection, limits, lazily created pipelines, buffers, dispatch.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use wgpu::util::DeviceExt;

use crate::shader::{compose, Access, Arith, Elem, Formulas, Module, Shape, SPLIT_SLOTS};
use crate::timing::Timing;
use crate::WgpuError;

/// Locks a mutex, recovering from poisoning (every structure behind these locks stays valid
/// after a panic elsewhere: caches and append-only lists).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How to open a device.
#[derive(Clone, Debug)]
pub struct Options {
    /// Which usable adapter (see [`list_adapters`]), in order of preference.
    pub ordinal: usize,
    /// Take the 32-bit arithmetic path even where the adapter offers SHADER_INT64.
    pub force_u32: bool,
    /// How to compile the curve formulas; `None`: `G16_WGPU_FORMULAS` and
    /// `G16_WGPU_FQ2_LAZY` if set (`Formulas::from_env`), else
    /// [`Formulas::DEFAULT`].
    pub formulas: Option<Formulas>,
    /// Lower the per-binding size limit below the adapter's (tests of split bindings).
    pub max_binding_bytes: Option<u64>,
    /// The host clock device timestamps are mapped onto (nanoseconds).
    pub clock: fn() -> u64,
    /// Base vectors of 2^min ≤ len < 2^max points get shifted bases at upload (msm.rs,
    /// `ShiftedBases`); an empty range turns them off. `None`: `G16_WGPU_MSM_PRECOMPUTE`
    /// (0 = off, else min) and `G16_WGPU_MSM_PRECOMPUTE_MAX`, else [`MSM_TABLES_DEFAULT`].
    pub msm_tables: Option<(u32, u32)>,
}

/// Which base vectors get shifted bases by default: 2^18 ≤ len < 2^23, as the CUDA backend
/// (below, the windowed layout's few additions gain little; above, the tables outgrow memory
/// and, for G2, the split bindings).
pub const MSM_TABLES_DEFAULT: (u32, u32) = (18, 23);

/// `Options::msm_tables` from the environment.
fn msm_tables_from_env() -> (u32, u32) {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u32>().ok());
    let max = var("G16_WGPU_MSM_PRECOMPUTE_MAX").unwrap_or(MSM_TABLES_DEFAULT.1).min(40);
    match var("G16_WGPU_MSM_PRECOMPUTE") {
        Some(0) => (0, 0),
        Some(min) => (min.min(40), max),
        None => (MSM_TABLES_DEFAULT.0, max),
    }
}

fn default_clock() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ordinal: 0,
            force_u32: false,
            formulas: None,
            max_binding_bytes: None,
            clock: default_clock,
            msm_tables: None,
        }
    }
}

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

fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::all();
    wgpu::Instance::new(desc)
}

/// Why an adapter cannot run g16's shaders, if it cannot. Only Vulkan, Metal and DX12 are
/// used: GL adapters lack storage-buffer sizes and 64-bit features the shaders rely on, and
/// never get picked silently.
fn unusable_reason(adapter: &wgpu::Adapter) -> Option<String> {
    let info = adapter.get_info();
    match info.backend {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => {}
        other => return Some(format!("the {other:?} backend is not used (Vulkan, Metal or DX12 only)")),
    }
    let down = adapter.get_downlevel_capabilities();
    if !down.flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS) {
        return Some("no compute shaders".to_string());
    }
    let limits = adapter.limits();
    let needed = 1 + 6; // the uniform and the MSM bucket module's arrays (one split into 4)
    if limits.max_storage_buffers_per_shader_stage < (needed + SPLIT_SLOTS - 1) as u32 {
        return Some(format!(
            "{} storage buffers per stage, {} needed",
            limits.max_storage_buffers_per_shader_stage,
            needed + SPLIT_SLOTS - 1
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

/// Every adapter, usable ones first in order of preference (the order ordinals index).
fn sorted_adapters() -> Vec<wgpu::Adapter> {
    let mut adapters = pollster::block_on(instance().enumerate_adapters(wgpu::Backends::all()));
    adapters.sort_by_key(|a| (unusable_reason(a).is_some(), rank(a.get_info().device_type)));
    adapters
}

/// Every adapter wgpu finds, usable ones first, in the order `Options::ordinal` counts them.
pub fn list_adapters() -> Vec<AdapterSummary> {
    sorted_adapters().iter().map(summarize).collect()
}

/// How many adapters g16 can use.
pub fn device_count() -> usize {
    list_adapters().iter().filter(|a| a.usable.is_ok()).count()
}

/// A compiled entry point and the layout its bind groups follow.
pub(crate) struct Kernel {
    pub module: Module,
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

/// What a binding is bound to.
pub(crate) enum Res<'a> {
    Split(&'a Chunked),
    Plain(&'a wgpu::Buffer),
}

/// A device array of `len` elements, split into buffers of 2^log elements each (the last
/// one shorter), so that no binding exceeds the adapter's limit.
pub struct Chunked {
    pub(crate) elem: Elem,
    pub(crate) len: usize,
    pub(crate) chunks: Vec<wgpu::Buffer>,
    pub(crate) log: u32,
}

impl Chunked {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The open device and everything cached on it.
pub struct WgpuDevice {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) arith: Arith,
    pub(crate) formulas: Formulas,
    pub(crate) limits: wgpu::Limits,
    pub(crate) summary: AdapterSummary,
    /// Largest binding, in bytes, after `Options::max_binding_bytes`.
    pub(crate) binding_bytes: u64,
    kernels: Mutex<HashMap<(Module, &'static str), Arc<Kernel>>>,
    /// Serialises creation per module, so two threads never compile the same module twice.
    compiling: Mutex<HashMap<Module, Arc<Mutex<()>>>>,
    pipeline_ms: Mutex<Vec<(String, f64)>>,
    errors: Arc<Mutex<Vec<String>>>,
    pub(crate) timing: Timing,
    pub(crate) dummies: Mutex<HashMap<Elem, Arc<Chunked>>>,
    pub(crate) tables: crate::ntt::Tables,
    pub(crate) programs: Mutex<HashMap<crate::shader::Curve, Arc<wgpu::Buffer>>>,
    cache: Option<(wgpu::PipelineCache, std::path::PathBuf)>,
    /// Temporaries kept across operations (scratch.rs).
    pub(crate) scratch_pool: crate::scratch::Pool,
    /// Which base vectors get shifted bases (`Options::msm_tables`, resolved); None: none.
    pub(crate) msm_tables: Option<(u32, u32)>,
}

impl WgpuDevice {
    /// Opens the usable adapter `options.ordinal` with its real limits, SHADER_INT64 and
    /// timestamp queries where offered.
    pub fn open(options: &Options) -> Result<WgpuDevice, WgpuError> {
        let adapters = sorted_adapters();
        let all: Vec<AdapterSummary> = adapters.iter().map(summarize).collect();
        let usable: Vec<&wgpu::Adapter> = adapters.iter().filter(|a| unusable_reason(a).is_none()).collect();
        let Some(adapter) = usable.get(options.ordinal) else {
            let found = if all.is_empty() {
                "wgpu found no adapter (is a Vulkan driver installed? on Debian: mesa-vulkan-drivers libvulkan1)"
                    .to_string()
            } else {
                format!(
                    "{} usable adapter(s), ordinal {} asked; found: {}",
                    usable.len(),
                    options.ordinal,
                    all.iter().map(|a| a.to_string()).collect::<Vec<_>>().join("; ")
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
        let formulas = options.formulas.or_else(Formulas::from_env).unwrap_or(Formulas::DEFAULT);
        let mut binding_bytes = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        if let Some(cap) = options.max_binding_bytes {
            binding_bytes = binding_bytes.min(cap);
        }
        let timing = Timing::new(&device, &queue, features.contains(wgpu::Features::TIMESTAMP_QUERY), options.clock);
        let cache = if features.contains(wgpu::Features::PIPELINE_CACHE)
            && std::env::var_os("G16_NO_PIPELINE_CACHE").is_none()
        {
            crate::cache::open(&device, adapter)
        } else {
            None
        };
        let dev = WgpuDevice {
            device,
            queue,
            arith,
            formulas,
            limits,
            summary,
            binding_bytes,
            kernels: Mutex::default(),
            compiling: Mutex::default(),
            pipeline_ms: Mutex::default(),
            errors,
            timing,
            dummies: Mutex::default(),
            tables: Default::default(),
            programs: Mutex::default(),
            cache,
            scratch_pool: Default::default(),
            msm_tables: Some(options.msm_tables.unwrap_or_else(msm_tables_from_env)).filter(|(lo, hi)| lo < hi),
        };
        dev.timing.calibrate(&dev.device, &dev.queue)?;
        Ok(dev)
    }

    pub fn adapter(&self) -> &AdapterSummary {
        &self.summary
    }

    pub fn arith(&self) -> Arith {
        self.arith
    }

    /// How this device's MSM kernels compute the curve formulas.
    pub fn formulas(&self) -> Formulas {
        self.formulas
    }

    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The largest binding used, in bytes.
    pub fn binding_bytes(&self) -> u64 {
        self.binding_bytes
    }

    pub fn has_timestamps(&self) -> bool {
        self.timing.enabled()
    }

    /// log2 of the elements per buffer of an `elem` array.
    pub(crate) fn chunk_log(&self, elem: Elem) -> u32 {
        let per = (self.binding_bytes / elem.bytes()).max(1);
        (63 - per.leading_zeros()).min(31)
    }

    /// The most elements an `elem` array can hold (its split bindings full).
    pub fn max_elements(&self, elem: Elem) -> u64 {
        (1u64 << self.chunk_log(elem)) * SPLIT_SLOTS as u64
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

    // --- pipelines --------------------------------------------------------------------------

    /// The kernel `entry` of `module`, compiling the module's pipelines on first use.
    pub(crate) fn kernel(&self, module: Module, entry: &'static str) -> Result<Arc<Kernel>, WgpuError> {
        if let Some(k) = lock(&self.kernels).get(&(module, entry)) {
            return Ok(k.clone());
        }
        let gate = lock(&self.compiling).entry(module).or_default().clone();
        let _one_at_a_time = lock(&gate);
        if let Some(k) = lock(&self.kernels).get(&(module, entry)) {
            return Ok(k.clone());
        }
        self.build_module(module)?;
        lock(&self.kernels)
            .get(&(module, entry))
            .cloned()
            .ok_or_else(|| WgpuError::Device(format!("{} has no entry point {entry}", module.name())))
    }

    fn build_module(&self, module: Module) -> Result<(), WgpuError> {
        let started = Instant::now();
        let source = compose(module, self.arith, self.formulas);
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let shader = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&module.name()),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let layout = self.bind_group_layout(module);
        let pipeline_layout = self.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(&module.name()),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let constants: Vec<(String, f64)> = module
            .bindings()
            .iter()
            .filter(|b| b.shape == Shape::Split)
            .map(|b| (format!("{}_log", b.name), f64::from(self.chunk_log(b.elem))))
            .collect();
        let constants: Vec<(&str, f64)> = constants.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let mut built = Vec::new();
        for &entry in module.entry_points() {
            let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&pipeline_layout),
                module: &shader,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    zero_initialize_workgroup_memory: false,
                },
                cache: self.cache.as_ref().map(|c| &c.0),
            });
            built.push((entry, pipeline));
        }
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(WgpuError::ShaderCompile {
                module: module.name(),
                arith: self.arith.name(),
                log: e.to_string(),
            });
        }
        self.check_errors(&format!("creating {}", module.name()))?;
        let mut kernels = lock(&self.kernels);
        for (entry, pipeline) in built {
            kernels.insert((module, entry), Arc::new(Kernel { module, pipeline, layout: layout.clone() }));
        }
        drop(kernels);
        let ms = started.elapsed().as_secs_f64() * 1e3;
        lock(&self.pipeline_ms).push((module.name(), ms));
        if let Some((cache, path)) = &self.cache {
            crate::cache::save(cache, path, &self.summary);
        }
        Ok(())
    }

    fn bind_group_layout(&self, module: Module) -> wgpu::BindGroupLayout {
        let mut entries = vec![wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }];
        for b in module.bindings() {
            for _ in 0..b.slots() {
                entries.push(wgpu::BindGroupLayoutEntry {
                    binding: entries.len() as u32,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only: b.access == Access::Read },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                });
            }
        }
        self.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(&module.name()),
            entries: &entries,
        })
    }

    /// Compiles one module's pipelines now (they are otherwise compiled on first use).
    pub fn prepare_module(&self, module: Module) -> Result<(), WgpuError> {
        self.kernel(module, module.entry_points()[0]).map(|_| ())
    }

    /// Compiles every module now, several at a time, and returns the wall time in ms.
    pub fn prepare_all_pipelines(&self) -> Result<f64, WgpuError> {
        let started = Instant::now();
        std::thread::scope(|s| {
            let handles: Vec<_> =
                Module::ALL.iter().map(|&m| s.spawn(move || self.kernel(m, m.entry_points()[0]).map(|_| ()))).collect();
            handles.into_iter().try_for_each(|h| {
                h.join().unwrap_or_else(|_| Err(WgpuError::Device("pipeline thread panicked".into())))
            })
        })?;
        Ok(started.elapsed().as_secs_f64() * 1e3)
    }

    /// Each module compiled so far and how long its shader and pipelines took, in ms.
    pub fn pipeline_times(&self) -> Vec<(String, f64)> {
        lock(&self.pipeline_ms).clone()
    }

    // --- buffers ----------------------------------------------------------------------------

    fn create_buffer(&self, what: &str, size: u64, usage: wgpu::BufferUsages) -> Result<wgpu::Buffer, WgpuError> {
        if size > self.limits.max_buffer_size {
            return Err(WgpuError::TooLarge {
                what: what.to_string(),
                requested: size,
                limit: self.limits.max_buffer_size,
            });
        }
        let attempt = || {
            let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
            let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(what),
                size: size.max(16),
                usage,
                mapped_at_creation: false,
            });
            pollster::block_on(scope.pop()).is_none().then_some(buffer)
        };
        // Out of memory: the pooled temporaries no operation holds are freed, and it tries again.
        match attempt() {
            Some(b) => Ok(b),
            None if self.scratch_pool.clear() => {
                self.wait()?;
                attempt().ok_or_else(|| WgpuError::OutOfMemory { what: what.to_string(), requested: size })
            }
            None => Err(WgpuError::OutOfMemory { what: what.to_string(), requested: size }),
        }
    }

    /// A storage buffer that is bound whole (one binding): it must fit in one.
    pub(crate) fn plain(&self, what: &str, bytes: u64) -> Result<wgpu::Buffer, WgpuError> {
        if bytes > self.binding_bytes {
            return Err(WgpuError::TooLarge { what: what.to_string(), requested: bytes, limit: self.binding_bytes });
        }
        self.create_buffer(
            what,
            bytes,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        )
    }

    /// An array of `len` elements in as many buffers as the binding limit needs; zeroed.
    pub(crate) fn chunked(&self, what: &str, elem: Elem, len: usize) -> Result<Chunked, WgpuError> {
        let log = self.chunk_log(elem);
        let per = 1usize << log;
        let count = len.div_ceil(per).max(1);
        if count > SPLIT_SLOTS {
            return Err(WgpuError::TooLarge {
                what: format!("{what} ({len} elements of {} bytes)", elem.bytes()),
                requested: len as u64 * elem.bytes(),
                limit: self.max_elements(elem) * elem.bytes(),
            });
        }
        let mut chunks = Vec::with_capacity(count);
        for k in 0..count {
            let elems = (len - (k * per).min(len)).min(per) as u64;
            chunks.push(self.create_buffer(
                what,
                elems * elem.bytes(),
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            )?);
        }
        Ok(Chunked { elem, len, chunks, log })
    }

    /// Writes `words` (whole elements) into `dst` from element 0, and returns once the copy
    /// to the device is done.
    ///
    /// Why wait: `write_buffer` only stages the data; the transfer runs with the next
    /// submission, so without the flush an upload's PCIe time lands in whatever operation
    /// comes next (on the H200, 128 MB of 2^22 scalars added ~4 ms to the MSM after them, and
    /// the NTT benchmark's wall time was twice its device time). The CUDA backend's uploads
    /// also return once copied, so an operation's time is its own on both.
    pub(crate) fn write_chunked(&self, dst: &Chunked, words: &[u32]) -> Result<(), WgpuError> {
        let w = dst.elem.words();
        let per = 1usize << dst.log;
        for (k, chunk) in dst.chunks.iter().enumerate() {
            let lo = (k * per * w).min(words.len());
            let hi = ((k + 1) * per * w).min(words.len());
            if hi > lo {
                self.queue.write_buffer(chunk, 0, bytemuck::cast_slice(&words[lo..hi]));
            }
        }
        let index = self.queue.submit([]);
        self.device
            .poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: None })
            .map(|_| ())
            .map_err(|e| WgpuError::Device(format!("waiting for an upload: {e}")))
    }

    /// A one-element array to bind where a kernel's layout has a binding it does not use.
    pub(crate) fn dummy(&self, elem: Elem) -> Result<Arc<Chunked>, WgpuError> {
        if let Some(d) = lock(&self.dummies).get(&elem) {
            return Ok(d.clone());
        }
        let d = Arc::new(self.chunked("unused binding", elem, 1)?);
        lock(&self.dummies).insert(elem, d.clone());
        Ok(d)
    }

    /// Reads buffers back: each (buffer, byte offset, bytes) in turn, concatenated as words.
    pub(crate) fn read_back(&self, parts: &[(&wgpu::Buffer, u64, u64)]) -> Result<Vec<u32>, WgpuError> {
        let total: u64 = parts.iter().map(|p| p.2).sum();
        if total == 0 {
            return Ok(Vec::new());
        }
        let staging =
            self.create_buffer("readback", total, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?;
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let mut at = 0;
        for (buf, offset, bytes) in parts {
            if *bytes > 0 {
                encoder.copy_buffer_to_buffer(buf, *offset, &staging, at, *bytes);
            }
            at += bytes;
        }
        self.queue.submit([encoder.finish()]);
        let words = self.map_read(&staging, total)?;
        self.check_errors("reading back")?;
        Ok(words)
    }

    pub(crate) fn map_read(&self, staging: &wgpu::Buffer, bytes: u64) -> Result<Vec<u32>, WgpuError> {
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, 0..bytes, move |r| {
            let _ = tx.send(r);
        });
        self.wait()?;
        rx.recv()
            .map_err(|_| WgpuError::Device("buffer mapping never completed".into()))?
            .map_err(|e| WgpuError::Device(format!("mapping a buffer: {e}")))?;
        let view = staging.get_mapped_range(0..bytes).map_err(|e| WgpuError::Device(format!("mapped range: {e}")))?;
        let words = bytemuck::cast_slice::<u8, u32>(&view).to_vec();
        drop(view);
        staging.unmap();
        Ok(words)
    }

    /// Reads all `len` elements of an array back, as words.
    pub(crate) fn read_chunked(&self, src: &Chunked) -> Result<Vec<u32>, WgpuError> {
        let per = 1u64 << src.log;
        let parts: Vec<(&wgpu::Buffer, u64, u64)> = src
            .chunks
            .iter()
            .enumerate()
            .map(|(k, b)| {
                let elems = (src.len as u64).saturating_sub(k as u64 * per).min(per);
                (b, 0, elems * src.elem.bytes())
            })
            .collect();
        self.read_back(&parts)
    }

    /// Blocks until all submitted work is done.
    pub fn wait(&self) -> Result<(), WgpuError> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| WgpuError::Device(format!("waiting for the device: {e}")))
    }

    // --- dispatch ---------------------------------------------------------------------------

    /// A bind group for `kernel`: `params` as the uniform (u32 words), then one resource per
    /// binding of the module, in order.
    pub(crate) fn bind(&self, kernel: &Kernel, params: &[u32], res: &[Res<'_>]) -> Result<wgpu::BindGroup, WgpuError> {
        let words = uniform_words(params);
        let uniform = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytemuck::cast_slice(&words),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        self.bind_uniform(kernel, uniform.as_entire_buffer_binding(), res)
    }

    /// `bind` with the parameters in the next slot of `block` (see [`ParamBlock`]); past its
    /// last slot, `bind` itself.
    pub(crate) fn bind_in(
        &self,
        block: &mut ParamBlock<'_>,
        kernel: &Kernel,
        params: &[u32],
        res: &[Res<'_>],
    ) -> Result<wgpu::BindGroup, WgpuError> {
        let words = uniform_words(params);
        let stride = block.stride as usize / 4;
        let slot = block.words.len() / stride;
        if slot as u64 >= block.slots || words.len() > stride {
            return self.bind(kernel, params, res);
        }
        block.words.extend_from_slice(&words);
        block.words.resize((slot + 1) * stride, 0);
        let binding = wgpu::BufferBinding {
            buffer: &block.buffer,
            offset: slot as u64 * block.stride,
            size: std::num::NonZeroU64::new(words.len() as u64 * 4),
        };
        self.bind_uniform(kernel, binding, res)
    }

    /// One operation's dispatch parameters in one pooled uniform buffer, one aligned slot per
    /// bind group, written with one `write_buffer` before the operation is submitted.
    ///
    /// Why: a bind group's own uniform buffer (`bind`) is a buffer creation, a staging buffer
    /// and a copy each; an MSM makes ~40 bind groups, and on the H200 its wall time stayed
    /// ~2 ms above its device time once uploads were out of it (session 4, call 1).
    pub(crate) fn param_block(&self, slots: u64) -> Result<ParamBlock<'_>, WgpuError> {
        let align = u64::from(self.limits.min_uniform_buffer_offset_alignment).max(16);
        let stride = PARAM_SLOT_BYTES.div_ceil(align) * align;
        let buffer = self.scratch_with("dispatch parameters", slots * stride, || {
            self.create_buffer(
                "dispatch parameters",
                slots * stride,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            )
        })?;
        Ok(ParamBlock { buffer, words: Vec::new(), stride, slots })
    }

    /// Queues the block's parameters for the next submission (the operation's own).
    pub(crate) fn write_params(&self, block: &ParamBlock<'_>) {
        if !block.words.is_empty() {
            self.queue.write_buffer(&block.buffer, 0, bytemuck::cast_slice(&block.words));
        }
    }

    fn bind_uniform(
        &self,
        kernel: &Kernel,
        uniform: wgpu::BufferBinding<'_>,
        res: &[Res<'_>],
    ) -> Result<wgpu::BindGroup, WgpuError> {
        let specs = kernel.module.bindings();
        if specs.len() != res.len() {
            return Err(WgpuError::Device(format!(
                "{}: {} bindings given, {} declared",
                kernel.module.name(),
                res.len(),
                specs.len()
            )));
        }
        let mut buffers: Vec<&wgpu::Buffer> = Vec::new();
        for (spec, r) in specs.iter().zip(res) {
            match (spec.shape, r) {
                (Shape::Split, Res::Split(c)) => {
                    if c.elem != spec.elem || c.log != self.chunk_log(spec.elem) {
                        return Err(WgpuError::Device(format!("binding {} given the wrong kind of array", spec.name)));
                    }
                    for k in 0..SPLIT_SLOTS {
                        buffers.push(c.chunks.get(k).unwrap_or(&c.chunks[0]));
                    }
                }
                (Shape::Plain, Res::Plain(b)) => buffers.push(b),
                _ => return Err(WgpuError::Device(format!("binding {} given the wrong shape", spec.name))),
            }
        }
        let mut entries = vec![wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::Buffer(uniform) }];
        for (i, b) in buffers.iter().enumerate() {
            entries.push(wgpu::BindGroupEntry { binding: i as u32 + 1, resource: b.as_entire_binding() });
        }
        Ok(self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &kernel.layout,
            entries: &entries,
        }))
    }

    /// Records a dispatch of `threads` threads (64 per workgroup), spread over x and y when
    /// one dimension's workgroup limit is not enough.
    pub(crate) fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        kernel: &Kernel,
        group: &wgpu::BindGroup,
        threads: u64,
    ) -> Result<(), WgpuError> {
        if threads == 0 {
            return Ok(());
        }
        let groups = threads.div_ceil(64);
        let max = u64::from(self.limits.max_compute_workgroups_per_dimension);
        let x = groups.min(max);
        let y = groups.div_ceil(x);
        if y > max || threads > u64::from(u32::MAX) {
            return Err(WgpuError::TooLarge {
                what: format!("a dispatch of {threads} threads"),
                requested: threads,
                limit: max * max * 64,
            });
        }
        pass.set_pipeline(&kernel.pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(x as u32, y as u32, 1);
        Ok(())
    }
}

/// Bytes of parameters one dispatch may have in a [`ParamBlock`] slot (the largest params
/// struct, msm_tasks.wgsl's, has 12 words).
const PARAM_SLOT_BYTES: u64 = 64;

/// Parameters as a uniform's words: padded to whole 16-byte rows, at least one.
fn uniform_words(params: &[u32]) -> Vec<u32> {
    let mut words = params.to_vec();
    words.resize(params.len().div_ceil(4).max(1) * 4, 0);
    words
}

/// One operation's dispatch parameters: `WgpuDevice::param_block`.
pub(crate) struct ParamBlock<'d> {
    buffer: crate::scratch::Scratch<'d>,
    words: Vec<u32>,
    /// Bytes per slot (a multiple of the uniform offset alignment).
    stride: u64,
    slots: u64,
}
