//! Pipelines, created lazily per module (an NTT never waits for G2's MSM kernels), and how a
//! kernel is bound: its bind group checked against the module's declared bindings, its
//! parameters in a uniform of their own or in a slot of an operation's [`ParamBlock`].

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::bindings::{Access, Shape};
use super::cache::DiskCache;
use super::module::{compose, Module};
use super::tile::NttTile;
use crate::buffers::{Chunked, Memory, Scratch, SPLIT_SLOTS};
use crate::device::{lock, WgpuDevice};
use crate::error::WgpuError;

/// A compiled entry point and the layout its bind groups follow.
pub struct Kernel {
    module: Module,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// What a binding is bound to.
pub(crate) enum Res<'a> {
    Split(&'a Chunked),
    Plain(&'a wgpu::Buffer),
}

/// Every module's pipelines on one device, created on first use.
pub struct Pipelines {
    dev: Arc<WgpuDevice>,
    kernels: Mutex<HashMap<(Module, &'static str), Arc<Kernel>>>,
    /// Serialises creation per module, so two threads never compile the same module twice.
    compiling: Mutex<HashMap<Module, Arc<Mutex<()>>>>,
    times: Mutex<Vec<(String, f64)>>,
    cache: Option<DiskCache>,
}

impl Pipelines {
    /// Pipelines of `dev`, with the on-disk pipeline cache under `cache_dir` where given.
    pub(crate) fn new(dev: Arc<WgpuDevice>, cache_dir: Option<&Path>) -> Pipelines {
        let cache = cache_dir.and_then(|dir| DiskCache::open(&dev, dir));
        Pipelines { dev, kernels: Mutex::default(), compiling: Mutex::default(), times: Mutex::default(), cache }
    }

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
        self.build(module)?;
        lock(&self.kernels)
            .get(&(module, entry))
            .cloned()
            .ok_or_else(|| WgpuError::Device(format!("{} has no entry point {entry}", module.name())))
    }

    /// Compiles one module's pipelines now (they are otherwise compiled on first use).
    pub fn prepare(&self, module: Module) -> Result<(), WgpuError> {
        self.kernel(module, module.entry_points()[0]).map(|_| ())
    }

    /// Compiles every module now, several at a time, and returns the wall time in ms.
    pub fn prepare_all(&self) -> Result<f64, WgpuError> {
        let started = Instant::now();
        std::thread::scope(|s| {
            let handles: Vec<_> = Module::ALL.iter().map(|&m| s.spawn(move || self.prepare(m))).collect();
            handles.into_iter().try_for_each(|h| {
                h.join().unwrap_or_else(|_| Err(WgpuError::Device("pipeline thread panicked".into())))
            })
        })?;
        Ok(started.elapsed().as_secs_f64() * 1e3)
    }

    /// Each module compiled so far and how long its shader and pipelines took, in ms.
    pub fn times(&self) -> Vec<(String, f64)> {
        lock(&self.times).clone()
    }

    fn build(&self, module: Module) -> Result<(), WgpuError> {
        let started = Instant::now();
        let dev = self.dev.wgpu();
        let source = compose(module, self.dev.arith());
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let shader = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&module.name()),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let layout = self.bind_group_layout(module);
        let pipeline_layout = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(&module.name()),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let mut constants: Vec<(String, f64)> = module
            .bindings()
            .iter()
            .filter(|b| b.shape == Shape::Split)
            .map(|b| (format!("{}_log", b.name), f64::from(b.elem.chunk_log(self.dev.binding_bytes()))))
            .collect();
        if module == Module::Ntt {
            constants.extend(NttTile::of(&self.dev)?.constants());
        }
        let constants: Vec<(&str, f64)> = constants.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let mut built = Vec::new();
        for &entry in module.entry_points() {
            let pipeline = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&pipeline_layout),
                module: &shader,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    zero_initialize_workgroup_memory: false,
                },
                cache: self.cache.as_ref().map(|c| &c.cache),
            });
            built.push((entry, pipeline));
        }
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(WgpuError::ShaderCompile {
                module: module.name(),
                arith: self.dev.arith().name(),
                log: e.to_string(),
            });
        }
        self.dev.check_errors(&format!("creating {}", module.name()))?;
        let mut kernels = lock(&self.kernels);
        for (entry, pipeline) in built {
            kernels.insert((module, entry), Arc::new(Kernel { module, pipeline, layout: layout.clone() }));
        }
        drop(kernels);
        lock(&self.times).push((module.name(), started.elapsed().as_secs_f64() * 1e3));
        if let Some(cache) = &self.cache {
            cache.save();
        }
        Ok(())
    }

    fn bind_group_layout(&self, module: Module) -> wgpu::BindGroupLayout {
        let entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
            count: None,
        };
        let mut entries = vec![entry(0, wgpu::BufferBindingType::Uniform)];
        for b in module.bindings() {
            for _ in 0..b.slots() {
                let ty = wgpu::BufferBindingType::Storage { read_only: b.access == Access::Read };
                entries.push(entry(entries.len() as u32, ty));
            }
        }
        self.dev.wgpu().create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(&module.name()),
            entries: &entries,
        })
    }
}

impl Kernel {
    /// A bind group: `params` in a uniform of its own (u32 words), then one resource per
    /// binding of the module, in order.
    pub(crate) fn bind(&self, dev: &WgpuDevice, params: &[u32], res: &[Res<'_>]) -> Result<wgpu::BindGroup, WgpuError> {
        let uniform = dev.uniform(&uniform_words(params));
        self.bind_uniform(dev, uniform.as_entire_buffer_binding(), res)
    }

    /// `bind` with the parameters in the next slot of `block`; past its last slot, `bind`
    /// itself.
    pub(crate) fn bind_in(
        &self,
        dev: &WgpuDevice,
        block: &mut ParamBlock<'_>,
        params: &[u32],
        res: &[Res<'_>],
    ) -> Result<wgpu::BindGroup, WgpuError> {
        let words = uniform_words(params);
        let stride = block.stride as usize / 4;
        let slot = block.words.len() / stride;
        if slot as u64 >= block.slots || words.len() > stride {
            return self.bind(dev, params, res);
        }
        block.words.extend_from_slice(&words);
        block.words.resize((slot + 1) * stride, 0);
        let binding = wgpu::BufferBinding {
            buffer: &block.buffer,
            offset: slot as u64 * block.stride,
            size: std::num::NonZeroU64::new(words.len() as u64 * 4),
        };
        self.bind_uniform(dev, binding, res)
    }

    fn bind_uniform(
        &self,
        dev: &WgpuDevice,
        uniform: wgpu::BufferBinding<'_>,
        res: &[Res<'_>],
    ) -> Result<wgpu::BindGroup, WgpuError> {
        let specs = self.module.bindings();
        if specs.len() != res.len() {
            return Err(WgpuError::Device(format!(
                "{}: {} bindings given, {} declared",
                self.module.name(),
                res.len(),
                specs.len()
            )));
        }
        let mut buffers: Vec<&wgpu::Buffer> = Vec::new();
        for (spec, r) in specs.iter().zip(res) {
            match (spec.shape, r) {
                (Shape::Split, Res::Split(c)) => {
                    if c.elem != spec.elem || c.log != spec.elem.chunk_log(dev.binding_bytes()) {
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
        Ok(dev.bind_group(&self.layout, uniform, &buffers))
    }

    /// Records a dispatch of `groups` workgroups of this kernel (for kernels that index by
    /// workgroup: device.rs's `dispatch_groups`).
    pub(crate) fn dispatch_groups(
        &self,
        dev: &WgpuDevice,
        pass: &mut wgpu::ComputePass<'_>,
        group: &wgpu::BindGroup,
        groups: u64,
    ) -> Result<(), WgpuError> {
        dev.dispatch_groups(pass, &self.pipeline, group, groups)
    }

    /// Records a dispatch of `threads` threads of this kernel.
    pub(crate) fn dispatch(
        &self,
        dev: &WgpuDevice,
        pass: &mut wgpu::ComputePass<'_>,
        group: &wgpu::BindGroup,
        threads: u64,
    ) -> Result<(), WgpuError> {
        dev.dispatch(pass, &self.pipeline, group, threads)
    }
}

/// Bytes of parameters one dispatch may have in a [`ParamBlock`] slot (the largest params
/// struct, shaders/msm/tasks.wgsl's, has 12 words).
const PARAM_SLOT_BYTES: u64 = 64;

/// Parameters as a uniform's words: padded to whole 16-byte rows, at least one.
fn uniform_words(params: &[u32]) -> Vec<u32> {
    let mut words = params.to_vec();
    words.resize(params.len().div_ceil(4).max(1) * 4, 0);
    words
}

/// One operation's dispatch parameters in one pooled uniform buffer, one aligned slot per
/// bind group, written with one `write_buffer` before the operation is submitted.
///
/// Why: a bind group's own uniform buffer ([`Kernel::bind`]) is a buffer creation, a staging
/// buffer and a copy each, and an MSM makes ~40 bind groups: host time outside the device's
/// work (docs/perf/wgpu.md, "Smaller choices").
pub(crate) struct ParamBlock<'m> {
    buffer: Scratch<'m>,
    words: Vec<u32>,
    /// Bytes per slot (a multiple of the uniform offset alignment).
    stride: u64,
    slots: u64,
}

impl<'m> ParamBlock<'m> {
    /// A block of `slots` slots, from `mem`'s pool.
    pub(crate) fn new(mem: &'m Memory, slots: u64) -> Result<ParamBlock<'m>, WgpuError> {
        let align = u64::from(mem.device().limits().min_uniform_buffer_offset_alignment).max(16);
        let stride = PARAM_SLOT_BYTES.div_ceil(align) * align;
        let what = "dispatch parameters";
        let buffer = mem.scratch_with(what, slots * stride, || {
            mem.create(what, slots * stride, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST)
        })?;
        Ok(ParamBlock { buffer, words: Vec::new(), stride, slots })
    }

    /// Queues the block's parameters for the next submission (the operation's own).
    pub(crate) fn write(&self, dev: &WgpuDevice) {
        if !self.words.is_empty() {
            dev.queue().write_buffer(&self.buffer, 0, bytemuck::cast_slice(&self.words));
        }
    }
}
