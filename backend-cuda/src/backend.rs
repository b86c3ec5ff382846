//! The [`Backend`] trait on a CUDA device: [`CudaBackend`] owns the device and the layers above
//! it (kernels, timing, staging, NTT, MSM, fixed-base, sparse, subgroup checks) and holds each
//! buffer inside [`DeviceBuffer`]'s type-erased storage; every operation carries the timeline's
//! current span, so each device span comes back parented to the host span that queued it.

use std::sync::Arc;

use g16_backend::timeline::{current_span, DeviceSpan};
use g16_backend::{
    check_msm, check_ntt_len, check_range, check_same_len, check_spmv, Backend, BackendId, BackendInfo, BackendKind,
    BackendResult, G1Bases, G2Bases, MatrixBuffer, NttKind, ScalarBuffer, Scalars, SparseMatrix,
};
use g16_backend::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use crate::buffers::{FrBuffer, G1Buffer, G2Buffer};
use crate::compile::{self, Kernels};
use crate::device::{self, CudaDevice};
use crate::error::CudaError;
use crate::fixed_base::{self, FixedBase};
use crate::msm::{Msm, ScalarsRef, G1, G2};
use crate::ntt::{Ntt, Pointwise, MAX_NTT_LOG2};
use crate::options::CudaOptions;
use crate::sparse::{DeviceMatrix, Sparse};
use crate::staging::Staging;
use crate::subgroup::{self, Subgroup};
use crate::timing::Timing;

pub struct CudaBackend {
    id: BackendId,
    /// Boxed: the device and its layers take several hundred bytes, and `AnyBackend`'s
    /// variants should stay alike in size.
    gpu: Box<Gpu>,
}

/// One open device and the layers built on it, each holding the ones below it.
struct Gpu {
    dev: Arc<CudaDevice>,
    kernels: Arc<Kernels>,
    timing: Arc<Timing>,
    staging: Arc<Staging>,
    ntt: Ntt,
    msm: Msm,
    fixed_base: FixedBase,
    sparse: Sparse,
    subgroup: Subgroup,
}

impl Gpu {
    /// Opens device `options.ordinal`; compiling its kernels (or loading them from the cache)
    /// is part of opening.
    fn open(options: &CudaOptions) -> Result<Gpu, CudaError> {
        compile::require_nvrtc()?;
        let dev = Arc::new(CudaDevice::open(options.ordinal)?);
        let kernels = Arc::new(Kernels::load(dev.clone(), options.cache_dir.as_deref())?);
        let timing = Arc::new(Timing::new(dev.clone(), format!("cuda:{}", options.ordinal)));
        let staging = Arc::new(Staging::new(dev.clone(), timing.clone()));
        let below = || (dev.clone(), kernels.clone(), timing.clone(), staging.clone());
        let ntt = Ntt::new(dev.clone(), kernels.clone(), timing.clone(), options.ntt_twiddles, options.ntt_block);
        let msm = Msm::new(below(), options);
        let fixed_base = FixedBase::new(below());
        let sparse = Sparse::new(below());
        let subgroup = Subgroup::new(below());
        Ok(Gpu { dev, kernels, timing, staging, ntt, msm, fixed_base, sparse, subgroup })
    }
}

/// How many CUDA devices can be opened (0 where CUDA is unavailable: no driver, no device, or
/// no NVRTC to compile the kernels).
pub fn device_count() -> usize {
    if !compile::nvrtc_present() {
        return 0;
    }
    device::device_count().unwrap_or(0)
}

impl CudaBackend {
    /// Opens the device `options.ordinal`; compiling its kernels (or loading them from the
    /// cache) is part of opening.
    pub fn open(options: &CudaOptions) -> BackendResult<CudaBackend> {
        let gpu = Gpu::open(options).map_err(|e| e.at_open())?;
        Ok(CudaBackend { id: BackendId::fresh(), gpu: Box::new(gpu) })
    }

    /// Turns the MSM's 0/1 split on or off on an open device (to measure it, or to test both).
    pub fn set_ones_split(&self, on: bool) {
        self.gpu.msm.set_ones_split(on);
    }
    pub fn ones_split(&self) -> bool {
        self.gpu.msm.ones_split()
    }

    /// Waits until the MSM's shifted bases queued so far are made, so that every MSM after
    /// this takes them (benchmarks of the steady state; [`CudaOptions::table_build`] does it
    /// at every upload). `synchronize` does not wait for them.
    pub fn wait_for_tables(&self) -> BackendResult<()> {
        Ok(self.gpu.msm.wait_for_tables()?)
    }

    /// Whether shifted bases are being made in the background.
    pub fn tables_building(&self) -> bool {
        self.gpu.msm.tables_building()
    }

    fn fr<'a>(&self, buf: &'a ScalarBuffer) -> BackendResult<&'a FrBuffer> {
        buf.storage::<FrBuffer>(self.id)
    }

    fn fr_mut<'a>(&self, buf: &'a mut ScalarBuffer) -> BackendResult<&'a mut FrBuffer> {
        buf.storage_mut::<FrBuffer>(self.id)
    }

    /// The scalars of an MSM over `bases_len` bases, checked as every backend checks them.
    fn scalars<'a>(
        &self,
        op: &'static str,
        bases_len: usize,
        scalars: &'a Scalars<'a>,
    ) -> BackendResult<ScalarsRef<'a>> {
        let scalars_ref = match scalars {
            Scalars::Host(s) => ScalarsRef::Host(s),
            Scalars::Device(buf, range) => ScalarsRef::Device(self.fr(buf)?, range),
        };
        check_msm(op, bases_len, scalars)?;
        Ok(scalars_ref)
    }
}

impl Backend for CudaBackend {
    fn id(&self) -> BackendId {
        self.id
    }

    fn info(&self) -> BackendInfo {
        let i = self.gpu.dev.info();
        BackendInfo {
            kind: BackendKind::Cuda,
            device: i.name.clone(),
            driver: format!("{}, {}", i.driver_version, self.gpu.kernels.nvrtc_version()),
            memory_bytes: Some(i.memory_bytes),
            max_ntt_log2: MAX_NTT_LOG2,
            capabilities: vec![
                i.arch.clone(),
                format!("{} SMs", i.multiprocessors),
                format!("0/1 split {}", if self.ones_split() { "on" } else { "off" }),
            ],
        }
    }

    fn upload_scalars(&self, host: &[Fr]) -> BackendResult<ScalarBuffer> {
        Ok(self.id.wrap(host.len(), self.gpu.staging.upload_fr(host, current_span())?))
    }

    fn alloc_scalars(&self, len: usize) -> BackendResult<ScalarBuffer> {
        Ok(self.id.wrap(len, FrBuffer::zeros(&self.gpu.dev, len)?))
    }

    fn download_scalars(&self, buf: &ScalarBuffer) -> BackendResult<Vec<Fr>> {
        Ok(self.gpu.staging.download_fr(self.fr(buf)?)?)
    }

    fn upload_g1_bases(&self, host: &[G1Affine]) -> BackendResult<G1Bases> {
        Ok(self.id.wrap(host.len(), self.gpu.msm.upload(&G1, host)?))
    }

    fn upload_g2_bases(&self, host: &[G2Affine]) -> BackendResult<G2Bases> {
        Ok(self.id.wrap(host.len(), self.gpu.msm.upload(&G2, host)?))
    }

    fn ntt(&self, buf: &mut ScalarBuffer, kind: NttKind) -> BackendResult<()> {
        let parent = current_span();
        let buf = self.fr_mut(buf)?;
        check_ntt_len(buf.len, MAX_NTT_LOG2)?;
        Ok(self.gpu.ntt.run(buf, kind, parent)?)
    }

    fn mul_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> BackendResult<()> {
        let (a, b) = (self.fr_mut(a)?, self.fr(b)?);
        check_same_len("mul_assign", a.len, b.len)?;
        Ok(self.gpu.ntt.pointwise(a, Pointwise::Mul(b), current_span())?)
    }

    fn sub_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> BackendResult<()> {
        let (a, b) = (self.fr_mut(a)?, self.fr(b)?);
        check_same_len("sub_assign", a.len, b.len)?;
        Ok(self.gpu.ntt.pointwise(a, Pointwise::Sub(b), current_span())?)
    }

    fn scale(&self, a: &mut ScalarBuffer, c: Fr) -> BackendResult<()> {
        Ok(self.gpu.ntt.pointwise(self.fr_mut(a)?, Pointwise::Scale(c), current_span())?)
    }

    fn quotient(&self, a: &mut ScalarBuffer, b: &ScalarBuffer, c: &ScalarBuffer, z_inv: Fr) -> BackendResult<()> {
        let (a, b, c) = (self.fr_mut(a)?, self.fr(b)?, self.fr(c)?);
        check_same_len("quotient", a.len, b.len)?;
        check_same_len("quotient", a.len, c.len)?;
        Ok(self.gpu.ntt.pointwise(a, Pointwise::Quotient(b, c, z_inv), current_span())?)
    }

    fn msm_g1(&self, bases: &G1Bases, scalars: Scalars<'_>) -> BackendResult<G1Projective> {
        let bases = bases.storage::<G1Buffer>(self.id)?;
        let scalars = self.scalars("msm_g1", bases.len, &scalars)?;
        Ok(self.gpu.msm.run(&G1, bases, scalars, current_span())?)
    }

    fn msm_g2(&self, bases: &G2Bases, scalars: Scalars<'_>) -> BackendResult<G2Projective> {
        let bases = bases.storage::<G2Buffer>(self.id)?;
        let scalars = self.scalars("msm_g2", bases.len, &scalars)?;
        Ok(self.gpu.msm.run(&G2, bases, scalars, current_span())?)
    }

    fn fixed_base_g1(&self, base: G1Projective, batches: &[&[Fr]]) -> BackendResult<Vec<Vec<G1Affine>>> {
        Ok(self.gpu.fixed_base.run(&fixed_base::G1, base, batches, current_span())?)
    }

    fn fixed_base_g2(&self, base: G2Projective, batches: &[&[Fr]]) -> BackendResult<Vec<Vec<G2Affine>>> {
        Ok(self.gpu.fixed_base.run(&fixed_base::G2, base, batches, current_span())?)
    }

    fn upload_matrix(&self, m: &SparseMatrix) -> BackendResult<MatrixBuffer> {
        let stored = self.gpu.sparse.upload(m, current_span())?;
        Ok(self.id.wrap(m.rows(), stored))
    }

    fn spmv(&self, m: &MatrixBuffer, z: &ScalarBuffer, out: &mut ScalarBuffer) -> BackendResult<()> {
        let m = m.storage::<DeviceMatrix>(self.id)?;
        let (z, out) = (self.fr(z)?, self.fr_mut(out)?);
        check_spmv(m.layout.columns as usize, m.layout.rows as usize, z.len, out.len)?;
        Ok(self.gpu.sparse.spmv(m, z, out, current_span())?)
    }

    fn first_unsatisfied(&self, [a, b, c]: [&ScalarBuffer; 3], rows: usize) -> BackendResult<Option<usize>> {
        let abc = (self.fr(a)?, self.fr(b)?, self.fr(c)?);
        for len in [abc.0.len, abc.1.len, abc.2.len] {
            check_range("first_unsatisfied", &(0..rows), len)?;
        }
        Ok(self.gpu.sparse.first_unsatisfied(abc, rows, current_span())?)
    }

    fn first_outside_subgroup_g1(&self, points: &[G1Affine]) -> BackendResult<Option<usize>> {
        Ok(self.gpu.subgroup.first_outside(&self.gpu.msm, &subgroup::G1, points, current_span())?)
    }

    fn first_outside_subgroup_g2(&self, points: &[G2Affine]) -> BackendResult<Option<usize>> {
        Ok(self.gpu.subgroup.first_outside(&self.gpu.msm, &subgroup::G2, points, current_span())?)
    }

    /// The compute stream's work: shifted bases being made in the background are not waited for.
    fn synchronize(&self) -> BackendResult<()> {
        Ok(self.gpu.dev.synchronize()?)
    }

    fn drain_device_spans(&self) -> Vec<DeviceSpan> {
        // A failure to read event times loses the spans, not the proof: the trait returns spans only.
        self.gpu.timing.drain().unwrap_or_default()
    }
}
