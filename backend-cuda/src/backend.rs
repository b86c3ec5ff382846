//! The [`Backend`] trait on a CUDA device: [`CudaBackend`] owns the device and the layers above
//! it (staging, NTT, MSM) and holds each buffer inside [`DeviceBuffer`]'s type-erased storage;
//! every operation carries the timeline's current span, so each device span comes back
//! parented to the host span that queued it.

use std::path::PathBuf;

use g16_backend::msm_plan::MsmTuning;
use g16_backend::{
    check_msm, check_ntt_len, check_range, check_same_len, check_spmv, Backend, BackendId, BackendInfo, BackendKind,
    BackendResult, G1Bases, G2Bases, MatrixBuffer, NttKind, ScalarBuffer, Scalars, SparseMatrix,
};
use g16_backend::timeline::{current_span, DeviceSpan};
use g16_backend::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use crate::buffers::{FrBuffer, G1Buffer, G2Buffer};
use crate::device::CudaDevice;
use crate::fixed_base;
use crate::msm::{Msm, ScalarsRef, G1, G2};
use crate::ntt::{pointwise, Ntt, Pointwise, MAX_NTT_LOG2};
use crate::sparse::{self, DeviceMatrix};
use crate::staging::Staging;

/// How to open a CUDA device: read once, at [`CudaBackend::open`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CudaOptions {
    /// Which device (`cuda:N`).
    pub ordinal: usize,
    /// Where compiled kernels (CUBIN) are cached; `None`: no on-disk cache, every open
    /// compiles with NVRTC (about a minute a program).
    pub cache_dir: Option<PathBuf>,
    /// Whether MSMs send scalars equal to 1 to a batch addition instead of Pippenger (a
    /// witness of a hash circuit is mostly bits; docs/perf/cuda.md: the 0/1 split.
    pub ones_split: bool,
    /// Overrides of the MSM's window and shifted-bases planning.
    pub msm: MsmTuning,
}

impl Default for CudaOptions {
    fn default() -> Self {
        CudaOptions { ordinal: 0, cache_dir: None, ones_split: true, msm: MsmTuning::default() }
    }
}

pub struct CudaBackend {
    id: BackendId,
    /// Boxed: the device and its layers take several hundred bytes, and `AnyBackend`'s
    /// variants should stay alike in size.
    layers: Box<Layers>,
}

/// The device and the layers above it, each owning its own state.
struct Layers {
    device: CudaDevice,
    staging: Staging,
    ntt: Ntt,
    msm: Msm,
}

impl Layers {
    /// The device and its staging, which the MSM and the fixed-base multiplication use both of.
    fn io(&self) -> (&CudaDevice, &Staging) {
        (&self.device, &self.staging)
    }
}

/// How many CUDA devices can be opened (0 where CUDA is unavailable).
pub fn device_count() -> usize {
    crate::device::device_count().unwrap_or(0)
}

impl CudaBackend {
    /// Opens the device `options.ordinal`; compiling its kernels (or loading them from the
    /// cache) is part of opening.
    pub fn open(options: &CudaOptions) -> BackendResult<CudaBackend> {
        let device = CudaDevice::open(options.ordinal, options.cache_dir.as_deref()).map_err(|e| e.at_open())?;
        let layers =
            Layers { device, staging: Staging::new(), ntt: Ntt::new(), msm: Msm::new(options.msm, options.ones_split) };
        Ok(CudaBackend { id: BackendId::fresh(), layers: Box::new(layers) })
    }

    /// Turns the MSM's 0/1 split on or off on an open device (to measure it, or to test both).
    pub fn set_ones_split(&self, on: bool) {
        self.layers.msm.set_ones_split(on);
    }
    pub fn ones_split(&self) -> bool {
        self.layers.msm.ones_split()
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
        let i = self.layers.device.info();
        BackendInfo {
            kind: BackendKind::Cuda,
            device: i.name.clone(),
            driver: format!("{}, {}", i.driver_version, i.nvrtc_version),
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
        Ok(self.id.wrap(host.len(), self.layers.staging.upload_fr(&self.layers.device, host, current_span())?))
    }

    fn alloc_scalars(&self, len: usize) -> BackendResult<ScalarBuffer> {
        Ok(self.id.wrap(len, FrBuffer::zeros(&self.layers.device, len)?))
    }

    fn download_scalars(&self, buf: &ScalarBuffer) -> BackendResult<Vec<Fr>> {
        Ok(self.layers.staging.download_fr(&self.layers.device, self.fr(buf)?)?)
    }

    fn upload_g1_bases(&self, host: &[G1Affine]) -> BackendResult<G1Bases> {
        Ok(self.id.wrap(host.len(), self.layers.msm.upload(self.layers.io(), &G1, host)?))
    }

    fn upload_g2_bases(&self, host: &[G2Affine]) -> BackendResult<G2Bases> {
        Ok(self.id.wrap(host.len(), self.layers.msm.upload(self.layers.io(), &G2, host)?))
    }

    fn ntt(&self, buf: &mut ScalarBuffer, kind: NttKind) -> BackendResult<()> {
        let parent = current_span();
        let buf = self.fr_mut(buf)?;
        check_ntt_len(buf.len, MAX_NTT_LOG2)?;
        Ok(self.layers.ntt.run(&self.layers.device, buf, kind, parent)?)
    }

    fn mul_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> BackendResult<()> {
        let (a, b) = (self.fr_mut(a)?, self.fr(b)?);
        check_same_len("mul_assign", a.len, b.len)?;
        Ok(pointwise(&self.layers.device, a, Pointwise::Mul(b), current_span())?)
    }

    fn sub_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> BackendResult<()> {
        let (a, b) = (self.fr_mut(a)?, self.fr(b)?);
        check_same_len("sub_assign", a.len, b.len)?;
        Ok(pointwise(&self.layers.device, a, Pointwise::Sub(b), current_span())?)
    }

    fn scale(&self, a: &mut ScalarBuffer, c: Fr) -> BackendResult<()> {
        Ok(pointwise(&self.layers.device, self.fr_mut(a)?, Pointwise::Scale(c), current_span())?)
    }

    fn quotient(&self, a: &mut ScalarBuffer, b: &ScalarBuffer, c: &ScalarBuffer, z_inv: Fr) -> BackendResult<()> {
        let (a, b, c) = (self.fr_mut(a)?, self.fr(b)?, self.fr(c)?);
        check_same_len("quotient", a.len, b.len)?;
        check_same_len("quotient", a.len, c.len)?;
        Ok(pointwise(&self.layers.device, a, Pointwise::Quotient(b, c, z_inv), current_span())?)
    }

    fn msm_g1(&self, bases: &G1Bases, scalars: Scalars<'_>) -> BackendResult<G1Projective> {
        let bases = bases.storage::<G1Buffer>(self.id)?;
        let scalars = self.scalars("msm_g1", bases.len, &scalars)?;
        Ok(self.layers.msm.run(self.layers.io(), &G1, bases, scalars, current_span())?)
    }

    fn msm_g2(&self, bases: &G2Bases, scalars: Scalars<'_>) -> BackendResult<G2Projective> {
        let bases = bases.storage::<G2Buffer>(self.id)?;
        let scalars = self.scalars("msm_g2", bases.len, &scalars)?;
        Ok(self.layers.msm.run(self.layers.io(), &G2, bases, scalars, current_span())?)
    }

    fn fixed_base_g1(&self, base: G1Projective, batches: &[&[Fr]]) -> BackendResult<Vec<Vec<G1Affine>>> {
        Ok(fixed_base::run(self.layers.io(), &fixed_base::G1, base, batches, current_span())?)
    }

    fn fixed_base_g2(&self, base: G2Projective, batches: &[&[Fr]]) -> BackendResult<Vec<Vec<G2Affine>>> {
        Ok(fixed_base::run(self.layers.io(), &fixed_base::G2, base, batches, current_span())?)
    }

    fn upload_matrix(&self, m: &SparseMatrix) -> BackendResult<MatrixBuffer> {
        let stored = sparse::upload(&self.layers.device, &self.layers.staging, m, current_span())?;
        Ok(self.id.wrap(m.rows(), stored))
    }

    fn spmv(&self, m: &MatrixBuffer, z: &ScalarBuffer, out: &mut ScalarBuffer) -> BackendResult<()> {
        let m = m.storage::<DeviceMatrix>(self.id)?;
        let (z, out) = (self.fr(z)?, self.fr_mut(out)?);
        check_spmv(m.layout.columns as usize, m.layout.rows as usize, z.len, out.len)?;
        Ok(sparse::spmv(&self.layers.device, m, z, out, current_span())?)
    }

    fn first_unsatisfied(
        &self,
        a: &ScalarBuffer,
        b: &ScalarBuffer,
        c: &ScalarBuffer,
        rows: usize,
    ) -> BackendResult<Option<usize>> {
        let abc = (self.fr(a)?, self.fr(b)?, self.fr(c)?);
        for len in [abc.0.len, abc.1.len, abc.2.len] {
            check_range("first_unsatisfied", &(0..rows), len)?;
        }
        Ok(sparse::first_unsatisfied(&self.layers.device, &self.layers.staging, abc, rows, current_span())?)
    }

    fn synchronize(&self) -> BackendResult<()> {
        Ok(self.layers.device.synchronize()?)
    }

    fn drain_device_spans(&self) -> Vec<DeviceSpan> {
        // A failure to read event times loses the spans, not the proof: the trait returns spans only.
        self.layers.device.drain_spans().unwrap_or_default()
    }
}
