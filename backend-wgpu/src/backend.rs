//! The [`Backend`] trait on a wgpu device (WGSL on any Vulkan, Metal or DX12 adapter;
//! lavapipe on CI): buffers live inside `DeviceBuffer`'s storage, errors become
//! `BackendError`s, and each operation carries the current host span, so every device span
//! comes back parented to the span that queued it.
//!
//! One open device per set of options per process: opening the backend again with equal
//! [`WgpuOptions`] (each test opens its own) reuses the device, its compiled pipelines and its
//! tables; each backend instance still drains only its own device spans.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use g16_backend::subgroup::{G1_CHECK_IN_ADDITIONS, G2_CHECK_IN_ADDITIONS};
use g16_backend::timeline::{current_span, DeviceSpan};
use g16_backend::{
    check_msm, check_range, check_same_len, check_spmv, Backend, BackendId, BackendInfo, BackendKind, BackendResult,
    G1Bases, G2Bases, MatrixBuffer, NttKind, ScalarBuffer, Scalars, SparseMatrix, SOFTWARE_ADAPTER,
};
use g16_backend::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use crate::buffers::{Elem, FrBuffer, G1Buffer, G2Buffer, Memory};
use crate::compile::{CurvePrograms, Pipelines};
use crate::device::{list_adapters, lock, Arith, WgpuDevice};
use crate::error::WgpuError;
use crate::fixed_base::FixedBase;
use crate::msm::Msm;
use crate::ntt::Ntt;
use crate::options::WgpuOptions;
use crate::sparse::{DeviceMatrix, Sparse};
use crate::staging;
use crate::subgroup;
use crate::timing::{Tag, Timing};

/// One open adapter and the layers built on it, each holding the ones below it.
struct Gpu {
    dev: Arc<WgpuDevice>,
    mem: Arc<Memory>,
    pipelines: Arc<Pipelines>,
    timing: Arc<Timing>,
    ntt: Ntt,
    msm: Msm,
    fixed_base: FixedBase,
    sparse: Sparse,
    /// Whether the subgroup checks run here (`WgpuOptions::subgroup_on_device`).
    subgroup_on_device: bool,
}

impl Gpu {
    fn open(options: &WgpuOptions) -> Result<Gpu, WgpuError> {
        let dev = Arc::new(WgpuDevice::open(options)?);
        let mem = Arc::new(Memory::new(dev.clone(), options.upload_slot_bytes));
        let pipelines = Arc::new(Pipelines::new(dev.clone(), options.pipeline_cache.as_deref()));
        let timing = Arc::new(Timing::new(dev.clone(), format!("wgpu:{}", options.ordinal))?);
        let ntt = Ntt::new(mem.clone(), pipelines.clone(), timing.clone(), options.ntt_max_pass_stages);
        let programs = Arc::new(CurvePrograms::default());
        let msm = Msm::new(mem.clone(), pipelines.clone(), timing.clone(), programs.clone(), options.msm);
        let fixed_base = FixedBase::new(mem.clone(), pipelines.clone(), timing.clone(), programs);
        let sparse = Sparse::new(mem.clone(), pipelines.clone(), timing.clone());
        let subgroup_on_device = options.subgroup_on_device.unwrap_or(dev.adapter().device_type != "Cpu");
        Ok(Gpu { dev, mem, pipelines, timing, ntt, msm, fixed_base, sparse, subgroup_on_device })
    }
}

/// The devices opened so far in this process, by the options they were opened with.
fn opened() -> &'static Mutex<HashMap<WgpuOptions, Arc<Gpu>>> {
    static OPENED: OnceLock<Mutex<HashMap<WgpuOptions, Arc<Gpu>>>> = OnceLock::new();
    OPENED.get_or_init(Mutex::default)
}

pub struct WgpuBackend {
    id: BackendId,
    gpu: Arc<Gpu>,
}

impl WgpuBackend {
    /// The adapter and settings `options` name; the device is shared with every other
    /// backend opened with equal options in this process.
    pub fn open(options: &WgpuOptions) -> BackendResult<WgpuBackend> {
        let mut cache = lock(opened());
        let gpu = match cache.get(options) {
            Some(gpu) => gpu.clone(),
            None => {
                let gpu = Arc::new(Gpu::open(options)?);
                cache.insert(options.clone(), gpu.clone());
                gpu
            }
        };
        Ok(WgpuBackend { id: BackendId::fresh(), gpu })
    }

    /// The device underneath (adapter, arithmetic path, limits).
    pub fn device(&self) -> &WgpuDevice {
        &self.gpu.dev
    }

    /// The device's pipelines (compile them ahead, read how long each took).
    pub fn pipelines(&self) -> &Pipelines {
        &self.gpu.pipelines
    }

    /// The most elements one `elem` array can hold on this device.
    pub fn max_elements(&self, elem: Elem) -> u64 {
        self.gpu.mem.max_elements(elem)
    }

    fn tag(&self) -> Tag {
        Tag { owner: self.id, parent: current_span() }
    }

    fn fr<'a>(&self, b: &'a ScalarBuffer) -> BackendResult<&'a FrBuffer> {
        b.storage::<FrBuffer>(self.id)
    }

    fn fr_mut<'a>(&self, b: &'a mut ScalarBuffer) -> BackendResult<&'a mut FrBuffer> {
        b.storage_mut::<FrBuffer>(self.id)
    }

    /// Runs an MSM on the scalars as (device buffer, range), uploading host scalars first.
    fn with_scalars<R>(
        &self,
        op: &'static str,
        bases_len: usize,
        scalars: Scalars<'_>,
        run: impl FnOnce(&FrBuffer, Range<usize>) -> Result<R, WgpuError>,
    ) -> BackendResult<R> {
        check_msm(op, bases_len, &scalars)?;
        match scalars {
            Scalars::Host(s) => {
                let buf = staging::upload_fr(&self.gpu.mem, s)?;
                Ok(run(&buf, 0..s.len())?)
            }
            Scalars::Device(buf, range) => Ok(run(self.fr(buf)?, range)?),
        }
    }
}

impl Backend for WgpuBackend {
    fn id(&self) -> BackendId {
        self.id
    }

    fn info(&self) -> BackendInfo {
        let dev = &self.gpu.dev;
        let a = dev.adapter();
        let mut capabilities = vec![
            a.backend.clone(),
            match dev.arith() {
                Arith::Int64 => "SHADER_INT64".to_string(),
                Arith::U32 => "32-bit limbs".to_string(),
            },
            if dev.has_timestamps() { "timestamp queries" } else { "host-timed" }.to_string(),
            format!("bindings of {} MiB", dev.binding_bytes() >> 20),
        ];
        if a.device_type == "Cpu" {
            capabilities.push(SOFTWARE_ADAPTER.to_string());
        }
        let adapters: Vec<String> = list_adapters()
            .iter()
            .map(|x| if x.name == a.name && x.backend == a.backend { format!("{x} (used)") } else { x.to_string() })
            .collect();
        capabilities.push(format!("adapters: {}", adapters.join("; ")));
        BackendInfo {
            kind: BackendKind::Wgpu,
            device: a.name.clone(),
            driver: format!("{} {}", a.backend, a.driver),
            memory_bytes: None,
            max_ntt_log2: self.gpu.ntt.max_log2(),
            capabilities,
        }
    }

    fn upload_scalars(&self, host: &[Fr]) -> BackendResult<ScalarBuffer> {
        Ok(self.id.wrap(host.len(), staging::upload_fr(&self.gpu.mem, host)?))
    }

    fn alloc_scalars(&self, len: usize) -> BackendResult<ScalarBuffer> {
        Ok(self.id.wrap(len, FrBuffer(self.gpu.mem.chunked("scalars", Elem::Fr, len)?)))
    }

    fn download_scalars(&self, buf: &ScalarBuffer) -> BackendResult<Vec<Fr>> {
        Ok(staging::download_fr(&self.gpu.mem, self.fr(buf)?)?)
    }

    fn upload_g1_bases(&self, host: &[G1Affine]) -> BackendResult<G1Bases> {
        Ok(self.id.wrap(host.len(), self.gpu.msm.upload(host, self.tag())?))
    }

    fn upload_g2_bases(&self, host: &[G2Affine]) -> BackendResult<G2Bases> {
        Ok(self.id.wrap(host.len(), self.gpu.msm.upload(host, self.tag())?))
    }

    fn ntt(&self, buf: &mut ScalarBuffer, kind: NttKind) -> BackendResult<()> {
        Ok(self.gpu.ntt.ntt(self.fr_mut(buf)?, kind, self.tag())?)
    }

    fn mul_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> BackendResult<()> {
        check_same_len("mul_assign", a.len(), b.len())?;
        let b = self.fr(b)?;
        Ok(self.gpu.ntt.mul_assign(self.fr_mut(a)?, b, self.tag())?)
    }

    fn sub_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> BackendResult<()> {
        check_same_len("sub_assign", a.len(), b.len())?;
        let b = self.fr(b)?;
        Ok(self.gpu.ntt.sub_assign(self.fr_mut(a)?, b, self.tag())?)
    }

    fn scale(&self, a: &mut ScalarBuffer, c: Fr) -> BackendResult<()> {
        Ok(self.gpu.ntt.scale(self.fr_mut(a)?, c, self.tag())?)
    }

    fn quotient(&self, a: &mut ScalarBuffer, b: &ScalarBuffer, c: &ScalarBuffer, z_inv: Fr) -> BackendResult<()> {
        check_same_len("quotient", a.len(), b.len())?;
        check_same_len("quotient", a.len(), c.len())?;
        let (b, c) = (self.fr(b)?, self.fr(c)?);
        Ok(self.gpu.ntt.quotient(self.fr_mut(a)?, b, c, z_inv, self.tag())?)
    }

    fn msm_g1(&self, bases: &G1Bases, scalars: Scalars<'_>) -> BackendResult<G1Projective> {
        let b = bases.storage::<G1Buffer>(self.id)?;
        let tag = self.tag();
        self.with_scalars("msm_g1", b.len(), scalars, |s, r| self.gpu.msm.msm(b, s, r, tag))
    }

    fn msm_g2(&self, bases: &G2Bases, scalars: Scalars<'_>) -> BackendResult<G2Projective> {
        let b = bases.storage::<G2Buffer>(self.id)?;
        let tag = self.tag();
        self.with_scalars("msm_g2", b.len(), scalars, |s, r| self.gpu.msm.msm(b, s, r, tag))
    }

    fn fixed_base_g1(&self, base: G1Projective, batches: &[&[Fr]]) -> BackendResult<Vec<Vec<G1Affine>>> {
        Ok(self.gpu.fixed_base.run(base, batches, self.tag())?)
    }

    fn fixed_base_g2(&self, base: G2Projective, batches: &[&[Fr]]) -> BackendResult<Vec<Vec<G2Affine>>> {
        Ok(self.gpu.fixed_base.run(base, batches, self.tag())?)
    }

    fn upload_matrix(&self, m: &SparseMatrix) -> BackendResult<MatrixBuffer> {
        Ok(self.id.wrap(m.rows(), self.gpu.sparse.upload(m)?))
    }

    fn spmv(&self, m: &MatrixBuffer, z: &ScalarBuffer, out: &mut ScalarBuffer) -> BackendResult<()> {
        let m = m.storage::<DeviceMatrix>(self.id)?;
        check_spmv(m.layout.columns as usize, m.layout.rows as usize, z.len(), out.len())?;
        let z = self.fr(z)?;
        Ok(self.gpu.sparse.spmv(m, z, self.fr_mut(out)?, self.tag())?)
    }

    fn first_unsatisfied(&self, [a, b, c]: [&ScalarBuffer; 3], rows: usize) -> BackendResult<Option<usize>> {
        for x in [a, b, c] {
            check_range("first_unsatisfied", &(0..rows), x.len())?;
        }
        let abc = (self.fr(a)?, self.fr(b)?, self.fr(c)?);
        Ok(self.gpu.sparse.first_unsatisfied(abc, rows, self.tag())?)
    }

    fn first_outside_subgroup_g1(&self, points: &[G1Affine]) -> BackendResult<Option<usize>> {
        if !self.gpu.subgroup_on_device {
            return Ok(g16_backend::subgroup::first_outside_g1(points));
        }
        let (mem, msm) = (&self.gpu.mem, &self.gpu.msm);
        Ok(subgroup::first_outside(mem, msm, points, G1_CHECK_IN_ADDITIONS, self.tag())?)
    }

    fn first_outside_subgroup_g2(&self, points: &[G2Affine]) -> BackendResult<Option<usize>> {
        if !self.gpu.subgroup_on_device {
            return Ok(g16_backend::subgroup::first_outside_g2(points));
        }
        let (mem, msm) = (&self.gpu.mem, &self.gpu.msm);
        Ok(subgroup::first_outside(mem, msm, points, G2_CHECK_IN_ADDITIONS, self.tag())?)
    }

    fn synchronize(&self) -> BackendResult<()> {
        self.gpu.dev.wait()?;
        Ok(self.gpu.dev.check_errors("synchronize")?)
    }

    fn drain_device_spans(&self) -> Vec<DeviceSpan> {
        // The trait cannot fail here; a device error already surfaced from the operation.
        self.gpu.timing.drain(self.id).unwrap_or_default()
    }
}

impl Drop for WgpuBackend {
    fn drop(&mut self) {
        // The device outlives this instance: its undrained spans would otherwise stay with it.
        self.gpu.timing.discard(self.id);
    }
}

/// How many adapters the wgpu backend can use.
pub fn device_count() -> usize {
    crate::device::device_count()
}

/// The usable adapters `Auto` may take: not software ones (they sort last, so these are
/// ordinals 0, 1, …).
pub fn hardware_device_count() -> usize {
    list_adapters().iter().filter(|a| a.usable.is_ok() && a.device_type != "Cpu").count()
}
