//! The `Backend` trait: what a device must offer for the prover to run on it.
//!
//! Design rules:
//! - Data lives on the device between steps: buffers are opaque handles ([`DeviceBuffer`]),
//!   never slices; dropping a handle frees its memory.
//! - Every operation returns a typed [`BackendError`]; nothing panics on a missing device,
//!   a size the device cannot hold, or a buffer that belongs to another backend.
//! - The CPU backend implements the same trait, so the prover has one code path.
//! - Devices time themselves: each backend keeps the spans of its own work, on the
//!   timeline's host clock, until the prover drains them ([`Backend::drain_device_spans`]).
//!
//! Selection happens once, at run time, through [`AnyBackend`] (`enum_dispatch`), so no
//! operation matches over every backend.

pub mod cpu;
pub mod cuda;
pub mod wgpu;

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use enum_dispatch::enum_dispatch;

use crate::timeline::DeviceSpan;
use crate::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

pub use cpu::CpuBackend;
pub use cuda::CudaBackend;
pub use wgpu::WgpuBackend;

/// Which backend to run on. `Auto` takes the fastest one available: CUDA, then wgpu, then CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    Auto,
    Cpu,
    Cuda,
    Wgpu,
}

impl BackendKind {
    /// The concrete backends, in the order `Auto` tries them.
    pub const PREFERENCE: [BackendKind; 3] = [BackendKind::Cuda, BackendKind::Wgpu, BackendKind::Cpu];

    pub fn name(&self) -> &'static str {
        match self {
            BackendKind::Auto => "auto",
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
            BackendKind::Wgpu => "wgpu",
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendKind {
    type Err = BackendError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(BackendKind::Auto),
            "cpu" => Ok(BackendKind::Cpu),
            "cuda" => Ok(BackendKind::Cuda),
            "wgpu" => Ok(BackendKind::Wgpu),
            other => Err(BackendError::UnknownBackend(other.to_string())),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("unknown backend '{0}' (expected auto, cpu, cuda or wgpu)")]
    UnknownBackend(String),
    #[error("{backend} backend unavailable: {reason}")]
    Unavailable { backend: BackendKind, reason: String },
    #[error("no backend available: {0}")]
    NoneAvailable(String),
    #[error("buffer belongs to another backend instance (made by #{owner}, used on #{user})")]
    ForeignBuffer { owner: u64, user: u64 },
    #[error("{op}: length mismatch: expected {expected}, got {got}")]
    LengthMismatch { op: &'static str, expected: usize, got: usize },
    #[error("{op}: range {start}..{end} is outside a buffer of {len} elements")]
    OutOfRange { op: &'static str, start: usize, end: usize, len: usize },
    #[error("NTT of {len} elements: the length must be a power of two between 2 and 2^{max_log2}")]
    NttSize { len: usize, max_log2: u32 },
    #[error("out of device memory: {what} needs {requested} bytes, {available} available")]
    OutOfMemory { what: String, requested: u64, available: u64 },
    #[error("{op} is not supported by the {backend} backend")]
    Unsupported { backend: BackendKind, op: &'static str },
    #[error("device error: {0}")]
    Device(String),
}

/// What a backend reports about itself and its device.
#[derive(Clone, Debug, PartialEq)]
pub struct BackendInfo {
    pub kind: BackendKind,
    /// The device, in words ("NVIDIA H200", "AMD EPYC 9454 (16 threads)").
    pub device: String,
    /// The driver or library that runs it ("580.95", "arkworks 0.6").
    pub driver: String,
    /// Device memory, where known.
    pub memory_bytes: Option<u64>,
    /// The largest NTT it supports, as log2 of the length.
    pub max_ntt_log2: u32,
    /// Free-form capabilities ("SHADER_INT64", "sm_90", "rayon").
    pub capabilities: Vec<String>,
}

/// The four NTTs over Fr. Coset NTTs are on the coset `g·H` of the multiplicative
/// generator `g = Fr::GENERATOR` (7), as arkworks' `get_coset(F::GENERATOR)`.
///
/// - `Forward`: coefficients → evaluations on H.
/// - `Inverse`: evaluations on H → coefficients.
/// - `CosetForward`: coefficients → evaluations on gH.
/// - `CosetInverse`: evaluations on gH → coefficients.
///
/// Inputs and outputs are in natural order; how a backend avoids bit-reversal passes is its own affair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttKind {
    Forward,
    Inverse,
    CosetForward,
    CosetInverse,
}

impl NttKind {
    pub const ALL: [NttKind; 4] = [NttKind::Forward, NttKind::Inverse, NttKind::CosetForward, NttKind::CosetInverse];

    /// The span name devices use for this NTT, so backends' timelines compare line by line.
    pub fn span_name(&self) -> &'static str {
        match self {
            NttKind::Forward => "ntt",
            NttKind::Inverse => "ntt_inverse",
            NttKind::CosetForward => "ntt_coset",
            NttKind::CosetInverse => "ntt_coset_inverse",
        }
    }
}

/// Element types a [`DeviceBuffer`] can hold.
pub trait Element: Send + Sync + 'static {
    const NAME: &'static str;
    /// Bytes per element in host memory, for budgets and messages.
    const HOST_BYTES: usize;
}
impl Element for Fr {
    const NAME: &'static str = "Fr";
    const HOST_BYTES: usize = 32;
}
// Named through the concrete curve configs: through the `G1Affine`/`G2Affine` aliases
// (projections of `Bls12Config`) coherence cannot tell the two impls apart.
impl Element for ark_ec::short_weierstrass::Affine<ark_bls12_381::g1::Config> {
    const NAME: &'static str = "G1Affine";
    const HOST_BYTES: usize = std::mem::size_of::<G1Affine>();
}
impl Element for ark_ec::short_weierstrass::Affine<ark_bls12_381::g2::Config> {
    const NAME: &'static str = "G2Affine";
    const HOST_BYTES: usize = std::mem::size_of::<G2Affine>();
}

/// A backend's identity, stamped on the buffers it makes, so that a buffer handed to the
/// wrong backend is an error rather than undefined behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BackendId(pub u64);

impl BackendId {
    pub fn fresh() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        BackendId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// An opaque handle to `len` elements of `T` held by one backend. The storage is the
/// backend's own type (a `Vec` on the CPU, a device allocation on a GPU); dropping the
/// handle frees it.
pub struct DeviceBuffer<T: Element> {
    owner: BackendId,
    len: usize,
    storage: Box<dyn Any + Send + Sync>,
    _elem: PhantomData<fn() -> T>,
}

impl<T: Element> DeviceBuffer<T> {
    /// For backends: wrap their own storage.
    pub fn new(owner: BackendId, len: usize, storage: Box<dyn Any + Send + Sync>) -> Self {
        DeviceBuffer { owner, len, storage, _elem: PhantomData }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn owner(&self) -> BackendId {
        self.owner
    }
    /// For backends: their storage, if this buffer is theirs and of storage type `S`.
    pub fn storage<S: 'static>(&self, me: BackendId) -> Result<&S, BackendError> {
        self.check_owner(me)?;
        self.storage
            .downcast_ref::<S>()
            .ok_or_else(|| BackendError::Device(format!("buffer of {} has unexpected storage", T::NAME)))
    }
    pub fn storage_mut<S: 'static>(&mut self, me: BackendId) -> Result<&mut S, BackendError> {
        self.check_owner(me)?;
        self.storage
            .downcast_mut::<S>()
            .ok_or_else(|| BackendError::Device(format!("buffer of {} has unexpected storage", T::NAME)))
    }
    fn check_owner(&self, me: BackendId) -> Result<(), BackendError> {
        if self.owner == me {
            Ok(())
        } else {
            Err(BackendError::ForeignBuffer { owner: self.owner.0, user: me.0 })
        }
    }
}

impl<T: Element> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceBuffer<{}>[{}] of backend #{}", T::NAME, self.len, self.owner.0)
    }
}

pub type ScalarBuffer = DeviceBuffer<Fr>;
pub type G1Bases = DeviceBuffer<G1Affine>;
pub type G2Bases = DeviceBuffer<G2Affine>;

/// The scalars of an MSM: from the host, or a range of a buffer already on the device
/// (the H scalars and the assignment never leave it).
#[derive(Clone, Debug)]
pub enum Scalars<'a> {
    Host(&'a [Fr]),
    Device(&'a ScalarBuffer, Range<usize>),
}

impl Scalars<'_> {
    pub fn len(&self) -> usize {
        match self {
            Scalars::Host(s) => s.len(),
            Scalars::Device(_, r) => r.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Checks that `range` lies inside a buffer of `len` elements.
pub fn check_range(op: &'static str, range: &Range<usize>, len: usize) -> Result<(), BackendError> {
    if range.start <= range.end && range.end <= len {
        Ok(())
    } else {
        Err(BackendError::OutOfRange { op, start: range.start, end: range.end, len })
    }
}

/// What a device must offer the prover. See the module docs for the rules.
#[enum_dispatch]
pub trait Backend: Send + Sync {
    /// This backend instance's identity (stamped on its buffers).
    fn id(&self) -> BackendId;
    fn info(&self) -> BackendInfo;

    // --- staging -------------------------------------------------------------------------
    fn upload_scalars(&self, host: &[Fr]) -> Result<ScalarBuffer, BackendError>;
    /// A buffer of `len` zeros.
    fn alloc_scalars(&self, len: usize) -> Result<ScalarBuffer, BackendError>;
    fn download_scalars(&self, buf: &ScalarBuffer) -> Result<Vec<Fr>, BackendError>;
    /// Bases are uploaded once per proving key and stay resident.
    fn upload_g1_bases(&self, host: &[G1Affine]) -> Result<G1Bases, BackendError>;
    fn upload_g2_bases(&self, host: &[G2Affine]) -> Result<G2Bases, BackendError>;

    // --- NTT -----------------------------------------------------------------------------
    /// In place; the length must be a power of two within `info().max_ntt_log2`.
    fn ntt(&self, buf: &mut ScalarBuffer, kind: NttKind) -> Result<(), BackendError>;

    // --- pointwise ops for H ---------------------------------------------------------------
    /// `a[i] *= b[i]`
    fn mul_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> Result<(), BackendError>;
    /// `a[i] -= b[i]`
    fn sub_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> Result<(), BackendError>;
    /// `a[i] *= c`
    fn scale(&self, a: &mut ScalarBuffer, c: Fr) -> Result<(), BackendError>;
    /// `a[i] = (a[i]·b[i] − c[i])·z_inv`: the quotient step of H, on evaluations over the
    /// coset. One pass where a backend can fuse it; the default composes the three ops above.
    fn quotient(
        &self,
        a: &mut ScalarBuffer,
        b: &ScalarBuffer,
        c: &ScalarBuffer,
        z_inv: Fr,
    ) -> Result<(), BackendError> {
        self.mul_assign(a, b)?;
        self.sub_assign(a, c)?;
        self.scale(a, z_inv)
    }

    // --- MSM -----------------------------------------------------------------------------
    /// `Σ scalars[i]·bases[i]` over the first `scalars.len()` bases (the bases may be longer).
    /// Any length, zero scalars and identity points included.
    fn msm_g1(&self, bases: &G1Bases, scalars: Scalars<'_>) -> Result<G1Projective, BackendError>;
    fn msm_g2(&self, bases: &G2Bases, scalars: Scalars<'_>) -> Result<G2Projective, BackendError>;

    // --- timing --------------------------------------------------------------------------
    /// Waits for all work queued so far.
    fn synchronize(&self) -> Result<(), BackendError> {
        Ok(())
    }
    /// The device's own spans of work finished so far, on the host clock, each parented to
    /// the host span that was current when the work was queued.
    fn drain_device_spans(&self) -> Vec<DeviceSpan>;
}

/// The one enum that dispatches to whichever backend was selected at run time.
///
/// `enum_dispatch` needs the trait and the enum in one crate, so the GPU backends join here
/// as variants when their crates land (each crate supplies the device code; `g16-core`
/// holds the variant).
#[enum_dispatch(Backend)]
pub enum AnyBackend {
    Cpu(CpuBackend),
    Cuda(CudaBackend),
    Wgpu(WgpuBackend),
}

impl AnyBackend {
    pub fn kind(&self) -> BackendKind {
        match self {
            AnyBackend::Cpu(_) => BackendKind::Cpu,
            AnyBackend::Cuda(_) => BackendKind::Cuda,
            AnyBackend::Wgpu(_) => BackendKind::Wgpu,
        }
    }
}

/// How many devices a backend can open (0 when it is unavailable). The CPU counts as one
/// device, though [`open_device`] opens any number of CPU instances (for the engine's tests).
pub fn device_count(kind: BackendKind) -> usize {
    match kind {
        BackendKind::Cpu => 1,
        BackendKind::Cuda => cuda::device_count(),
        BackendKind::Wgpu => wgpu::device_count(),
        BackendKind::Auto => auto_device_count(kind),
    }
}

/// How many devices of `kind` `Auto` may take (software adapters left out, as `open` leaves
/// them out); for `Auto` itself, those of the first backend that has any.
pub fn auto_device_count(kind: BackendKind) -> usize {
    match kind {
        BackendKind::Wgpu => wgpu::hardware_device_count(),
        BackendKind::Auto => {
            BackendKind::PREFERENCE.iter().map(|&k| auto_device_count(k)).find(|&n| n > 0).unwrap_or(0)
        }
        concrete => device_count(concrete),
    }
}

/// Opens device `ordinal` of a concrete backend. The CPU backend accepts any ordinal: each
/// is another instance over the same cores.
pub fn open_device(kind: BackendKind, ordinal: usize) -> Result<AnyBackend, BackendError> {
    match kind {
        BackendKind::Cpu => Ok(AnyBackend::Cpu(CpuBackend::new())),
        BackendKind::Cuda => Ok(AnyBackend::Cuda(CudaBackend::open(ordinal)?)),
        BackendKind::Wgpu => Ok(AnyBackend::Wgpu(WgpuBackend::open(ordinal)?)),
        BackendKind::Auto => open_first_available(ordinal),
    }
}

/// Opens the backend asked for (its first device); `Auto` takes the first available in
/// [`BackendKind::PREFERENCE`] and, if none is, says why each was not.
pub fn open(kind: BackendKind) -> Result<AnyBackend, BackendError> {
    open_device(kind, 0)
}

fn open_first_available(ordinal: usize) -> Result<AnyBackend, BackendError> {
    let mut reasons = Vec::new();
    for candidate in BackendKind::PREFERENCE {
        match open_device(candidate, ordinal) {
            Ok(b) if auto_eligible(&b.info()) => return Ok(b),
            Ok(b) => reasons.push(format!("{candidate}: {} is a software adapter", b.info().device)),
            Err(e) => reasons.push(e.to_string()),
        }
    }
    Err(BackendError::NoneAvailable(reasons.join("; ")))
}

/// Whether `Auto` may take this backend: not a software GPU adapter (lavapipe), which is
/// slower than the CPU backend on the same cores.
fn auto_eligible(info: &BackendInfo) -> bool {
    !info.capabilities.iter().any(|c| c == wgpu::SOFTWARE_ADAPTER)
}

/// One line of `g16 devices`: a backend, and its device or why there is none.
#[derive(Debug)]
pub struct BackendStatus {
    pub kind: BackendKind,
    pub status: Result<BackendInfo, BackendError>,
    /// Whether `Auto` would pick this one.
    pub preferred: bool,
}

/// Every backend, available or why not, in `Auto`'s order of preference.
pub fn probe_all() -> Vec<BackendStatus> {
    let mut picked = false;
    BackendKind::PREFERENCE
        .iter()
        .map(|&kind| {
            let status = open(kind).map(|b| b.info());
            let preferred = !picked && status.as_ref().is_ok_and(auto_eligible);
            picked |= preferred;
            BackendStatus { kind, status, preferred }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_print() {
        for k in [BackendKind::Auto, BackendKind::Cpu, BackendKind::Cuda, BackendKind::Wgpu] {
            assert_eq!(k.name().parse::<BackendKind>().unwrap(), k);
        }
        assert!(matches!("metal".parse::<BackendKind>(), Err(BackendError::UnknownBackend(_))));
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
            .find(|&k| open(k).is_ok_and(|b| auto_eligible(&b.info())))
            .expect("the CPU is always eligible");
        let b = open(BackendKind::Auto).expect("cpu is always available");
        assert_eq!(b.kind(), expected);
        let probes = probe_all();
        assert_eq!(probes.len(), 3);
        let preferred: Vec<_> = probes.iter().filter(|p| p.preferred).map(|p| p.kind).collect();
        assert_eq!(preferred, vec![expected]);
    }

    #[test]
    fn buffers_refuse_a_foreign_backend() {
        let a = CpuBackend::new();
        let b = CpuBackend::new();
        let mut buf = a.upload_scalars(&[Fr::from(3u64); 4]).unwrap();
        assert!(matches!(b.ntt(&mut buf, NttKind::Forward), Err(BackendError::ForeignBuffer { .. })));
        assert!(matches!(b.download_scalars(&buf), Err(BackendError::ForeignBuffer { .. })));
    }
}
