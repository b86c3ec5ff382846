//! The [`Backend`] trait on the CUDA device: buffers live inside [`DeviceBuffer`]'s
//! type-erased storage, errors become [`BackendError`]s, and every operation carries the
//! timeline's current span, so each device span comes back parented to the host span that
//! queued it.

use g16_core::backend::{
    Backend, BackendError, BackendId, BackendInfo, BackendKind, DeviceBuffer, Element, G1Bases, G2Bases, NttKind,
    ScalarBuffer, Scalars,
};
use g16_core::timeline::{current_span, now_ns, DeviceSpan};
use g16_core::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use crate::device::{CudaDevice, FrBuffer, G1Buffer, G2Buffer};
use crate::error::CudaError;
use crate::msm::ScalarsRef;

pub struct CudaBackend {
    id: BackendId,
    /// Boxed: the engine is large and `AnyBackend`'s variants should stay alike in size.
    device: Box<CudaDevice>,
    /// The device's name on the timeline: one trace lane per device (`cuda:0`).
    lane: String,
}

fn map_err(e: CudaError) -> BackendError {
    match e {
        CudaError::Unavailable(reason) => BackendError::Unavailable { backend: BackendKind::Cuda, reason },
        CudaError::OutOfMemory { what, requested, available } => {
            BackendError::OutOfMemory { what, requested, available }
        }
        CudaError::LengthMismatch { op, expected, got } => BackendError::LengthMismatch { op, expected, got },
        CudaError::OutOfRange { op, start, end, len } => BackendError::OutOfRange { op, start, end, len },
        CudaError::NttSize { len, max_log2 } => BackendError::NttSize { len, max_log2 },
        other @ (CudaError::Compile { .. } | CudaError::Driver { .. }) => BackendError::Device(other.to_string()),
    }
}

/// How many CUDA devices can be opened (0 where CUDA is unavailable).
pub fn device_count() -> usize {
    crate::device::device_count().unwrap_or(0)
}

impl CudaBackend {
    pub fn open(ordinal: usize) -> Result<CudaBackend, BackendError> {
        let device = CudaDevice::open(ordinal, now_ns).map_err(|e| match e {
            // A kernel that does not compile or load makes the backend unusable here: say why.
            CudaError::Compile { .. } | CudaError::Driver { .. } => {
                BackendError::Unavailable { backend: BackendKind::Cuda, reason: e.to_string() }
            }
            other => map_err(other),
        })?;
        Ok(CudaBackend { id: BackendId::fresh(), device: Box::new(device), lane: format!("cuda:{ordinal}") })
    }

    /// The engine, for what the trait does not cover (the 0/1 split switch, its info).
    pub fn engine(&self) -> &CudaDevice {
        &self.device
    }

    fn wrap<T: Element, S: Send + Sync + 'static>(&self, len: usize, storage: S) -> DeviceBuffer<T> {
        DeviceBuffer::new(self.id, len, Box::new(storage))
    }

    fn fr<'a>(&self, buf: &'a ScalarBuffer) -> Result<&'a FrBuffer, BackendError> {
        buf.storage::<FrBuffer>(self.id)
    }

    fn fr_mut<'a>(&self, buf: &'a mut ScalarBuffer) -> Result<&'a mut FrBuffer, BackendError> {
        buf.storage_mut::<FrBuffer>(self.id)
    }
}

fn scalars_ref<'a>(backend: &CudaBackend, scalars: &'a Scalars<'a>) -> Result<ScalarsRef<'a>, BackendError> {
    Ok(match scalars {
        Scalars::Host(s) => ScalarsRef::Host(s),
        Scalars::Device(buf, range) => ScalarsRef::Device(backend.fr(buf)?, range),
    })
}

impl Backend for CudaBackend {
    fn id(&self) -> BackendId {
        self.id
    }

    fn info(&self) -> BackendInfo {
        let i = self.device.info();
        BackendInfo {
            kind: BackendKind::Cuda,
            device: i.name.clone(),
            driver: format!("{}, {}", i.driver_version, i.nvrtc_version),
            memory_bytes: Some(i.memory_bytes),
            max_ntt_log2: <Fr as ark_ff::FftField>::TWO_ADICITY.min(crate::ntt::MAX_NTT_LOG2),
            capabilities: vec![
                i.arch.clone(),
                format!("{} SMs", i.multiprocessors),
                format!("0/1 split {}", if self.device.ones_split() { "on" } else { "off" }),
            ],
        }
    }

    fn upload_scalars(&self, host: &[Fr]) -> Result<ScalarBuffer, BackendError> {
        Ok(self.wrap(host.len(), self.device.upload_fr(host, current_span()).map_err(map_err)?))
    }

    fn alloc_scalars(&self, len: usize) -> Result<ScalarBuffer, BackendError> {
        Ok(self.wrap(len, self.device.alloc_fr(len).map_err(map_err)?))
    }

    fn download_scalars(&self, buf: &ScalarBuffer) -> Result<Vec<Fr>, BackendError> {
        self.device.download_fr(self.fr(buf)?).map_err(map_err)
    }

    fn upload_g1_bases(&self, host: &[G1Affine]) -> Result<G1Bases, BackendError> {
        Ok(self.wrap(host.len(), self.device.upload_g1(host).map_err(map_err)?))
    }

    fn upload_g2_bases(&self, host: &[G2Affine]) -> Result<G2Bases, BackendError> {
        Ok(self.wrap(host.len(), self.device.upload_g2(host).map_err(map_err)?))
    }

    fn ntt(&self, buf: &mut ScalarBuffer, kind: NttKind) -> Result<(), BackendError> {
        let tag = current_span();
        self.device.ntt(self.fr_mut(buf)?, kind, tag).map_err(map_err)
    }

    fn mul_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> Result<(), BackendError> {
        let b = self.fr(b)?;
        self.device.mul_assign(self.fr_mut(a)?, b, current_span()).map_err(map_err)
    }

    fn sub_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> Result<(), BackendError> {
        let b = self.fr(b)?;
        self.device.sub_assign(self.fr_mut(a)?, b, current_span()).map_err(map_err)
    }

    fn scale(&self, a: &mut ScalarBuffer, c: Fr) -> Result<(), BackendError> {
        self.device.scale(self.fr_mut(a)?, c, current_span()).map_err(map_err)
    }

    fn quotient(
        &self,
        a: &mut ScalarBuffer,
        b: &ScalarBuffer,
        c: &ScalarBuffer,
        z_inv: Fr,
    ) -> Result<(), BackendError> {
        let (b, c) = (self.fr(b)?, self.fr(c)?);
        self.device.quotient(self.fr_mut(a)?, b, c, z_inv, current_span()).map_err(map_err)
    }

    fn msm_g1(&self, bases: &G1Bases, scalars: Scalars<'_>) -> Result<G1Projective, BackendError> {
        let bases = bases.storage::<G1Buffer>(self.id)?;
        self.device.msm_g1(bases, scalars_ref(self, &scalars)?, current_span()).map_err(map_err)
    }

    fn msm_g2(&self, bases: &G2Bases, scalars: Scalars<'_>) -> Result<G2Projective, BackendError> {
        let bases = bases.storage::<G2Buffer>(self.id)?;
        self.device.msm_g2(bases, scalars_ref(self, &scalars)?, current_span()).map_err(map_err)
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.device.synchronize().map_err(map_err)
    }

    fn drain_device_spans(&self) -> Vec<DeviceSpan> {
        // A failure to read event times loses the spans, not the proof: the trait returns spans only.
        let spans = self.device.drain_spans().unwrap_or_default();
        spans
            .into_iter()
            .map(|s| DeviceSpan {
                name: s.name,
                parent: s.tag,
                start_ns: s.start_ns,
                end_ns: s.end_ns,
                error_bound_ns: s.error_bound_ns,
                device: self.lane.clone(),
            })
            .collect()
    }
}
