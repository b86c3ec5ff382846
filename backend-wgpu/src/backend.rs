//! The [`Backend`] trait on a wgpu device (WGSL on any Vulkan, Metal or DX12 adapter;
//! lavapipe on CI): buffers live inside `DeviceBuffer`'s storage, errors become
//! `BackendError`s, and each operation carries the current host span, so every device span
//! comes back parented to the span that queued it.
//!
//! One engine device per (adapter, arithmetic path, formula path) per process: opening the backend again
//! (each test opens its own) reuses the device and its compiled pipelines.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use g16_core::backend::{
    check_range, Backend, BackendError, BackendId, BackendInfo, BackendKind, DeviceBuffer, G1Bases, G2Bases, NttKind,
    ScalarBuffer, Scalars, SOFTWARE_ADAPTER,
};
use g16_core::timeline::{current_span, now_ns, DeviceSpan};
use g16_core::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use crate::{Arith, Formulas, FrBuffer, G1Buffer, G2Buffer, Options, WgpuDevice, WgpuError};

/// `G16_WGPU_ARITH=u32` takes the 32-bit path even where the adapter has SHADER_INT64.
pub const ARITH_ENV: &str = "G16_WGPU_ARITH";

pub struct WgpuBackend {
    id: BackendId,
    dev: Arc<WgpuDevice>,
    lane: String,
}

/// Open engine devices by (adapter ordinal, 32-bit path forced, formula path asked for).
type DeviceCache = Mutex<HashMap<(usize, bool, Option<Formulas>), Arc<WgpuDevice>>>;

fn devices() -> &'static DeviceCache {
    static DEVICES: OnceLock<DeviceCache> = OnceLock::new();
    DEVICES.get_or_init(Mutex::default)
}

fn map_err(e: WgpuError) -> BackendError {
    match e {
        WgpuError::NoAdapter(reason) => BackendError::Unavailable { backend: BackendKind::Wgpu, reason },
        WgpuError::OutOfMemory { what, requested } => BackendError::OutOfMemory { what, requested, available: 0 },
        WgpuError::TooLarge { what, requested, limit } => {
            BackendError::OutOfMemory { what, requested, available: limit }
        }
        WgpuError::NttSize { len, max_log2 } => BackendError::NttSize { len, max_log2 },
        other => BackendError::Device(other.to_string()),
    }
}

impl WgpuBackend {
    /// Adapter `ordinal`, on the arithmetic path `G16_WGPU_ARITH` asks for (default: int64
    /// where the adapter has it) and the formula path `G16_WGPU_FORMULAS` asks for (default:
    /// interpreted).
    pub fn open(ordinal: usize) -> Result<WgpuBackend, BackendError> {
        let force_u32 = std::env::var(ARITH_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("u32"));
        Self::open_with(ordinal, force_u32, Formulas::from_env())
    }

    /// Adapter `ordinal`; `force_u32` takes the 32-bit path even where SHADER_INT64 exists;
    /// `formulas` forces a formula path (`None`: `G16_WGPU_FORMULAS`, else the default).
    pub fn open_with(ordinal: usize, force_u32: bool, formulas: Option<Formulas>) -> Result<WgpuBackend, BackendError> {
        let mut cache = devices().lock().unwrap_or_else(|p| p.into_inner());
        let key = (ordinal, force_u32, formulas);
        let dev = match cache.get(&key) {
            Some(d) => d.clone(),
            None => {
                let options = Options { ordinal, force_u32, formulas, clock: now_ns, ..Default::default() };
                let d = Arc::new(WgpuDevice::open(&options).map_err(map_err)?);
                cache.insert(key, d.clone());
                d
            }
        };
        Ok(WgpuBackend { id: BackendId::fresh(), dev, lane: format!("wgpu:{ordinal}") })
    }

    /// The engine underneath (pipeline timings, limits).
    pub fn device(&self) -> &WgpuDevice {
        &self.dev
    }

    fn wrap<T: g16_core::backend::Element, S: Send + Sync + 'static>(&self, len: usize, s: S) -> DeviceBuffer<T> {
        DeviceBuffer::new(self.id, len, Box::new(s))
    }

    fn fr<'a>(&self, b: &'a ScalarBuffer) -> Result<&'a FrBuffer, BackendError> {
        b.storage::<FrBuffer>(self.id)
    }

    fn fr_mut<'a>(&self, b: &'a mut ScalarBuffer) -> Result<&'a mut FrBuffer, BackendError> {
        b.storage_mut::<FrBuffer>(self.id)
    }

    fn same_len(op: &'static str, a: &ScalarBuffer, b: &ScalarBuffer) -> Result<(), BackendError> {
        if a.len() == b.len() {
            Ok(())
        } else {
            Err(BackendError::LengthMismatch { op, expected: a.len(), got: b.len() })
        }
    }

    /// The scalars of an MSM as (device buffer, range), uploading host scalars first.
    fn msm_scalars<R>(
        &self,
        op: &'static str,
        bases_len: usize,
        scalars: Scalars<'_>,
        run: impl FnOnce(&FrBuffer, std::ops::Range<usize>) -> Result<R, WgpuError>,
    ) -> Result<R, BackendError> {
        if bases_len < scalars.len() {
            return Err(BackendError::LengthMismatch { op, expected: scalars.len(), got: bases_len });
        }
        match scalars {
            Scalars::Host(s) => {
                let buf = self.dev.upload_fr(s).map_err(map_err)?;
                run(&buf, 0..s.len()).map_err(map_err)
            }
            Scalars::Device(buf, range) => {
                check_range(op, &range, buf.len())?;
                run(self.fr(buf)?, range).map_err(map_err)
            }
        }
    }
}

impl Backend for WgpuBackend {
    fn id(&self) -> BackendId {
        self.id
    }

    fn info(&self) -> BackendInfo {
        let a = self.dev.adapter();
        let mut capabilities = vec![
            a.backend.clone(),
            match self.dev.arith() {
                Arith::Int64 => "SHADER_INT64".to_string(),
                Arith::U32 => "32-bit limbs".to_string(),
            },
            format!("{} curve formulas", self.dev.formulas().name()),
            if self.dev.has_timestamps() { "timestamp queries" } else { "host-timed" }.to_string(),
            format!("bindings of {} MiB", self.dev.binding_bytes() >> 20),
        ];
        if a.device_type == "Cpu" {
            capabilities.push(SOFTWARE_ADAPTER.to_string());
        }
        let adapters: Vec<String> = crate::list_adapters()
            .iter()
            .map(|x| if x.name == a.name && x.backend == a.backend { format!("{x} (used)") } else { x.to_string() })
            .collect();
        capabilities.push(format!("adapters: {}", adapters.join("; ")));
        BackendInfo {
            kind: BackendKind::Wgpu,
            device: a.name.clone(),
            driver: format!("{} {}", a.backend, a.driver),
            memory_bytes: None,
            max_ntt_log2: self.dev.max_ntt_log2(),
            capabilities,
        }
    }

    fn upload_scalars(&self, host: &[Fr]) -> Result<ScalarBuffer, BackendError> {
        Ok(self.wrap(host.len(), self.dev.upload_fr(host).map_err(map_err)?))
    }

    fn alloc_scalars(&self, len: usize) -> Result<ScalarBuffer, BackendError> {
        Ok(self.wrap(len, self.dev.alloc_fr(len).map_err(map_err)?))
    }

    fn download_scalars(&self, buf: &ScalarBuffer) -> Result<Vec<Fr>, BackendError> {
        self.dev.download_fr(self.fr(buf)?).map_err(map_err)
    }

    fn upload_g1_bases(&self, host: &[G1Affine]) -> Result<G1Bases, BackendError> {
        Ok(self.wrap(host.len(), self.dev.upload_g1(host).map_err(map_err)?))
    }

    fn upload_g2_bases(&self, host: &[G2Affine]) -> Result<G2Bases, BackendError> {
        Ok(self.wrap(host.len(), self.dev.upload_g2(host).map_err(map_err)?))
    }

    fn ntt(&self, buf: &mut ScalarBuffer, kind: NttKind) -> Result<(), BackendError> {
        let tag = current_span();
        self.dev.ntt(self.fr_mut(buf)?, kind, kind.span_name(), tag).map_err(map_err)
    }

    fn mul_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> Result<(), BackendError> {
        Self::same_len("mul_assign", a, b)?;
        let b = self.fr(b)?;
        self.dev.mul_assign(self.fr_mut(a)?, b, current_span()).map_err(map_err)
    }

    fn sub_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> Result<(), BackendError> {
        Self::same_len("sub_assign", a, b)?;
        let b = self.fr(b)?;
        self.dev.sub_assign(self.fr_mut(a)?, b, current_span()).map_err(map_err)
    }

    fn scale(&self, a: &mut ScalarBuffer, c: Fr) -> Result<(), BackendError> {
        self.dev.scale(self.fr_mut(a)?, c, current_span()).map_err(map_err)
    }

    fn quotient(
        &self,
        a: &mut ScalarBuffer,
        b: &ScalarBuffer,
        c: &ScalarBuffer,
        z_inv: Fr,
    ) -> Result<(), BackendError> {
        Self::same_len("quotient", a, b)?;
        Self::same_len("quotient", a, c)?;
        let (b, c) = (self.fr(b)?, self.fr(c)?);
        self.dev.quotient(self.fr_mut(a)?, b, c, z_inv, current_span()).map_err(map_err)
    }

    fn msm_g1(&self, bases: &G1Bases, scalars: Scalars<'_>) -> Result<G1Projective, BackendError> {
        let b = bases.storage::<G1Buffer>(self.id)?;
        let tag = current_span();
        self.msm_scalars("msm_g1", b.len(), scalars, |s, r| self.dev.msm_g1(b, s, r, tag))
    }

    fn msm_g2(&self, bases: &G2Bases, scalars: Scalars<'_>) -> Result<G2Projective, BackendError> {
        let b = bases.storage::<G2Buffer>(self.id)?;
        let tag = current_span();
        self.msm_scalars("msm_g2", b.len(), scalars, |s, r| self.dev.msm_g2(b, s, r, tag))
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.dev.synchronize().map_err(map_err)
    }

    fn drain_device_spans(&self) -> Vec<DeviceSpan> {
        // The trait cannot fail here; a device error already surfaced from the operation.
        let spans = self.dev.drain_spans().unwrap_or_default();
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

/// How many adapters the wgpu backend can use.
pub fn device_count() -> usize {
    crate::device::device_count()
}

/// The usable adapters `Auto` may take: not software ones (they sort last, so these are
/// ordinals 0, 1, …).
pub fn hardware_device_count() -> usize {
    crate::list_adapters().iter().filter(|a| a.usable.is_ok() && a.device_type != "Cpu").count()
}
