//! The one place the backends are assembled into a run-time choice: [`AnyBackend`], and
//! opening, counting and probing devices by [`BackendKind`].
//!
//! The GPU backends are cargo features of this crate (`cuda`, `wgpu`, both on by default);
//! built without one, its kind still parses and opening it says why it is unavailable.

use g16_backend::{Backend, BackendError, BackendInfo, BackendKind, BackendResult, CpuBackend};
use crate::engine::{DeviceSpec, EngineError};

use crate::settings::Settings;

g16_backend::dispatch_backend! {
    /// The backend chosen at run time; it implements [`Backend`] by forwarding to the one it holds.
    pub enum AnyBackend {
        Cpu(CpuBackend),
        #[cfg(feature = "cuda")]
        Cuda(g16_cuda::CudaBackend),
        #[cfg(feature = "wgpu")]
        Wgpu(g16_wgpu::WgpuBackend),
    }
}

impl AnyBackend {
    pub fn kind(&self) -> BackendKind {
        match self {
            AnyBackend::Cpu(_) => BackendKind::Cpu,
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(_) => BackendKind::Cuda,
            #[cfg(feature = "wgpu")]
            AnyBackend::Wgpu(_) => BackendKind::Wgpu,
        }
    }
}

/// The error for a backend this build does not include.
#[allow(dead_code)] // reason: unused when every GPU feature is on
fn not_built(backend: BackendKind) -> BackendError {
    BackendError::Unavailable { backend, reason: format!("this g16 was built without the `{backend}` feature") }
}

/// How many devices a backend can open (0 when it is unavailable). The CPU counts as one
/// device, though [`open_device`] opens any number of CPU instances (for the engine's tests).
pub fn device_count(kind: BackendKind) -> usize {
    match kind {
        BackendKind::Cpu => 1,
        #[cfg(feature = "cuda")]
        BackendKind::Cuda => g16_cuda::device_count(),
        #[cfg(feature = "wgpu")]
        BackendKind::Wgpu => g16_wgpu::device_count(),
        BackendKind::Auto => auto_device_count(kind),
        #[allow(unreachable_patterns)] // reason: reached only without a GPU feature
        _ => 0,
    }
}

/// How many devices of `kind` `Auto` may take (software adapters left out, as `open` leaves
/// them out); for `Auto` itself, those of the first backend that has any.
pub fn auto_device_count(kind: BackendKind) -> usize {
    match kind {
        #[cfg(feature = "wgpu")]
        BackendKind::Wgpu => g16_wgpu::hardware_device_count(),
        BackendKind::Auto => {
            BackendKind::PREFERENCE.iter().map(|&k| auto_device_count(k)).find(|&n| n > 0).unwrap_or(0)
        }
        concrete => device_count(concrete),
    }
}

/// Opens device `ordinal` of a backend with the options `settings` gives it. The CPU backend
/// accepts any ordinal: each is another instance over the same cores. `Auto` takes the first
/// available in [`BackendKind::PREFERENCE`] that is not a software adapter and, if none is,
/// says why each was not.
pub fn open_device(kind: BackendKind, ordinal: usize, settings: &Settings) -> BackendResult<AnyBackend> {
    match kind {
        BackendKind::Cpu => Ok(AnyBackend::Cpu(CpuBackend::new())),
        #[cfg(feature = "cuda")]
        BackendKind::Cuda => {
            let options = g16_cuda::CudaOptions { ordinal, ..settings.cuda.clone() };
            Ok(AnyBackend::Cuda(g16_cuda::CudaBackend::open(&options)?))
        }
        #[cfg(not(feature = "cuda"))]
        BackendKind::Cuda => Err(not_built(kind)),
        #[cfg(feature = "wgpu")]
        BackendKind::Wgpu => {
            let options = g16_wgpu::WgpuOptions { ordinal, ..settings.wgpu.clone() };
            Ok(AnyBackend::Wgpu(g16_wgpu::WgpuBackend::open(&options)?))
        }
        #[cfg(not(feature = "wgpu"))]
        BackendKind::Wgpu => Err(not_built(kind)),
        BackendKind::Auto => open_first_available(ordinal, settings),
    }
}

/// Opens the backend asked for, on its first device.
pub fn open(kind: BackendKind, settings: &Settings) -> BackendResult<AnyBackend> {
    open_device(kind, 0, settings)
}

/// Opens one device of a device list ([`parse_device_list`]).
pub fn open_spec(spec: &DeviceSpec, settings: &Settings) -> BackendResult<AnyBackend> {
    open_device(spec.kind, spec.ordinal, settings)
}

/// A device list (`cuda:0,cuda:1`, `cuda`, `auto`, `cpu:0,cpu:1`) against the devices here.
pub fn parse_device_list(list: &str) -> Result<Vec<DeviceSpec>, EngineError> {
    crate::engine::parse_device_list(list, device_count, auto_device_count)
}

fn open_first_available(ordinal: usize, settings: &Settings) -> BackendResult<AnyBackend> {
    let mut reasons = Vec::new();
    for candidate in BackendKind::PREFERENCE {
        match open_device(candidate, ordinal, settings) {
            Ok(b) if b.info().auto_eligible() => return Ok(b),
            Ok(b) => reasons.push(format!("{candidate}: {} is a software adapter", b.info().device)),
            Err(e) => reasons.push(e.to_string()),
        }
    }
    Err(BackendError::NoneAvailable(reasons.join("; ")))
}

/// One line of `g16 devices`: a backend, and its device or why there is none.
#[derive(Debug)]
pub struct BackendStatus {
    pub kind: BackendKind,
    pub status: BackendResult<BackendInfo>,
    /// Whether `Auto` would pick this one.
    pub preferred: bool,
}

/// Every backend, available or why not, in `Auto`'s order of preference.
pub fn probe_all(settings: &Settings) -> Vec<BackendStatus> {
    let mut picked = false;
    BackendKind::PREFERENCE
        .iter()
        .map(|&kind| {
            let status = open(kind, settings).map(|b| b.info());
            let preferred = !picked && status.as_ref().is_ok_and(BackendInfo::auto_eligible);
            picked |= preferred;
            BackendStatus { kind, status, preferred }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use g16_backend::NttKind;
    use g16_backend::Fr;

    fn open(kind: BackendKind) -> BackendResult<AnyBackend> {
        super::open(kind, &Settings::default())
    }

    #[test]
    fn gpu_backends_say_why_they_are_unavailable() {
        for kind in [BackendKind::Cuda, BackendKind::Wgpu] {
            match open(kind) {
                Err(BackendError::Unavailable { backend, reason }) => {
                    assert_eq!(backend, kind);
                    assert!(!reason.is_empty());
                }
                Err(e) => panic!("{kind}: unexpected error {e}"),
                // A GPU backend opens where its device and libraries are present (wgpu: lavapipe on CI).
                Ok(b) => assert_eq!(b.kind(), kind),
            }
        }
    }

    #[test]
    fn auto_falls_back_to_cpu_and_probe_marks_it() {
        // The first backend in preference order that opens and is not a software adapter:
        // CUDA on a GPU machine, the CPU on CI (where wgpu has only lavapipe).
        let expected = BackendKind::PREFERENCE
            .into_iter()
            .find(|&k| open(k).is_ok_and(|b| b.info().auto_eligible()))
            .expect("the CPU is always eligible");
        let b = open(BackendKind::Auto).expect("cpu is always available");
        assert_eq!(b.kind(), expected);
        let probes = probe_all(&Settings::default());
        assert_eq!(probes.len(), 3);
        let preferred: Vec<_> = probes.iter().filter(|p| p.preferred).map(|p| p.kind).collect();
        assert_eq!(preferred, vec![expected]);
    }

    #[test]
    fn buffers_refuse_a_foreign_backend() {
        let a = open(BackendKind::Cpu).unwrap();
        let b = open(BackendKind::Cpu).unwrap();
        let mut buf = a.upload_scalars(&[Fr::from(3u64); 4]).unwrap();
        assert!(matches!(b.ntt(&mut buf, NttKind::Forward), Err(BackendError::ForeignBuffer { .. })));
    }
}
