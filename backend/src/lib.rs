//! g16-backend: the contract between g16's prover and a device, and nothing above it.
//!
//! The [`Backend`] trait and its vocabulary (buffers, [`NttKind`], sparse matrices and their
//! packed words, errors, the word layouts of field elements and points, MSM and NTT planning),
//! the evaluation domain's maths ([`domain`]), the timeline's recorder and its one clock
//! ([`timeline`]), the curve aliases, the CPU reference backend ([`cpu`]) and the conformance
//! suite every backend passes ([`conformance`], cargo feature `conformance`). It depends on
//! arkworks and no other part of g16: the GPU crates (`g16-cuda`, `g16-wgpu`) depend on it
//! alone, and the library `g16` builds the prover, the engine and the file formats on top.
//!
//! Design rules:
//! - Data lives on the device between steps: buffers are opaque handles ([`DeviceBuffer`]),
//!   never slices; dropping a handle frees its memory.
//! - Every operation returns a typed [`BackendError`]; nothing panics on a missing device,
//!   a size the device cannot hold, or a buffer that belongs to another backend.
//! - The CPU backend ([`cpu`]) implements the same trait, so the prover has one code path.
//! - Devices time themselves: each backend keeps the spans of its own work, on the
//!   timeline's host clock ([`timeline::ClockCalibration`]), until the prover drains
//!   them ([`Backend::drain_device_spans`]).
//! - The crate that assembles the backends into one run-time choice writes its enum with
//!   [`dispatch_backend!`], so no operation matches over every backend.

#[macro_use]
pub mod named;
pub mod buffer;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod cpu;
pub mod domain;
pub mod fixed_base;
pub mod limbs;
pub mod msm_plan;
pub mod ntt_plan;
pub mod sample;
pub mod sparse;
pub mod timeline;

/// The curve every part of g16 works over.
pub type Curve = ark_bls12_381::Bls12_381;
/// The scalar field of BLS12-381 (the field of the constraint system and of MSM scalars).
pub type Fr = ark_bls12_381::Fr;
pub type G1Affine = ark_bls12_381::G1Affine;
pub type G2Affine = ark_bls12_381::G2Affine;
pub type G1Projective = ark_bls12_381::G1Projective;
pub type G2Projective = ark_bls12_381::G2Projective;

use crate::timeline::DeviceSpan;

pub use buffer::{
    check_msm, check_range, check_same_len, BackendId, DeviceBuffer, Element, G1Bases, G2Bases, ScalarBuffer, Scalars,
};
pub use cpu::CpuBackend;
pub use sparse::{check_spmv, MatrixBuffer, SparseMatrix, SparseRow};

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
    pub const ALL: [BackendKind; 4] = [BackendKind::Auto, BackendKind::Cpu, BackendKind::Cuda, BackendKind::Wgpu];

    /// The names, in declaration order (a kind's discriminant indexes them).
    const NAMES: [&'static str; 4] = ["auto", "cpu", "cuda", "wgpu"];

    pub fn name(&self) -> &'static str {
        Self::NAMES[*self as usize]
    }
}

named_choice!(BackendKind, name, BackendError, |s: &str| BackendError::UnknownBackend(s.trim().to_ascii_lowercase()));

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

/// What every operation of a backend returns.
pub type BackendResult<T> = Result<T, BackendError>;

/// Checks an NTT's length: a power of two between 2 and 2^`max_log2`.
pub fn check_ntt_len(len: usize, max_log2: u32) -> BackendResult<()> {
    if len < 2 || !len.is_power_of_two() || len.trailing_zeros() > max_log2 {
        Err(BackendError::NttSize { len, max_log2 })
    } else {
        Ok(())
    }
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
    /// Free-form capabilities ("SHADER_INT64", "sm_90", "rayon"); [`SOFTWARE_ADAPTER`] among
    /// them marks a device `Auto` passes over.
    pub capabilities: Vec<String>,
}

/// The capability that marks a software GPU adapter (lavapipe): slower than the CPU backend
/// on the same cores, so `Auto` never picks it.
pub const SOFTWARE_ADAPTER: &str = "software adapter";

impl BackendInfo {
    /// Whether `Auto` may take this device.
    pub fn auto_eligible(&self) -> bool {
        !self.capabilities.iter().any(|c| c == SOFTWARE_ADAPTER)
    }
}

/// The four NTTs over Fr. Coset NTTs are on the coset `g·H` of the multiplicative
/// generator `g = Fr::GENERATOR` (7), as arkworks' `get_coset(F::GENERATOR)`.
///
/// - `Forward`: coefficients → evaluations on H.
/// - `Inverse`: evaluations on H → coefficients.
/// - `CosetForward`: coefficients → evaluations on gH.
/// - `CosetInverse`: evaluations on gH → coefficients.
/// - `OddCosetForward`: coefficients → evaluations on ω₂ₙ·H, the odd powers of a primitive
///   2n-th root of unity (snarkjs's QAP evaluates H there; ω₂ₙ = `Fr::get_root_of_unity(2n)`).
///
/// Inputs and outputs are in natural order; how a backend avoids bit-reversal passes is its own affair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttKind {
    Forward,
    Inverse,
    CosetForward,
    CosetInverse,
    OddCosetForward,
}

impl NttKind {
    pub const ALL: [NttKind; 5] =
        [NttKind::Forward, NttKind::Inverse, NttKind::CosetForward, NttKind::CosetInverse, NttKind::OddCosetForward];

    /// The span name devices use for this NTT, so backends' timelines compare line by line.
    pub fn span_name(&self) -> &'static str {
        match self {
            NttKind::Forward => "ntt",
            NttKind::Inverse => "ntt_inverse",
            NttKind::CosetForward => "ntt_coset",
            NttKind::CosetInverse => "ntt_coset_inverse",
            NttKind::OddCosetForward => "ntt_odd_coset",
        }
    }

    /// Whether it maps evaluations back to coefficients (ω⁻¹ twiddles, a 1/n scaling).
    pub fn is_inverse(&self) -> bool {
        matches!(self, NttKind::Inverse | NttKind::CosetInverse)
    }
}

/// What a device must offer the prover. See the module docs for the rules.
///
/// A method added here is added to [`dispatch_backend!`] too (same file, below).
pub trait Backend: Send + Sync {
    /// This backend instance's identity (stamped on its buffers).
    fn id(&self) -> BackendId;
    fn info(&self) -> BackendInfo;

    // --- staging -------------------------------------------------------------------------
    fn upload_scalars(&self, host: &[Fr]) -> BackendResult<ScalarBuffer>;
    /// A buffer of `len` zeros.
    fn alloc_scalars(&self, len: usize) -> BackendResult<ScalarBuffer>;
    fn download_scalars(&self, buf: &ScalarBuffer) -> BackendResult<Vec<Fr>>;
    /// Bases are uploaded once per proving key and stay resident.
    fn upload_g1_bases(&self, host: &[G1Affine]) -> BackendResult<G1Bases>;
    fn upload_g2_bases(&self, host: &[G2Affine]) -> BackendResult<G2Bases>;

    // --- NTT -----------------------------------------------------------------------------
    /// In place; the length must be a power of two within `info().max_ntt_log2`.
    fn ntt(&self, buf: &mut ScalarBuffer, kind: NttKind) -> BackendResult<()>;

    // --- pointwise ops for H ---------------------------------------------------------------
    /// `a[i] *= b[i]`
    fn mul_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> BackendResult<()>;
    /// `a[i] -= b[i]`
    fn sub_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> BackendResult<()>;
    /// `a[i] *= c`
    fn scale(&self, a: &mut ScalarBuffer, c: Fr) -> BackendResult<()>;
    /// `a[i] = (a[i]·b[i] − c[i])·z_inv`: the quotient step of H, on evaluations over the
    /// coset. One pass where a backend can fuse it; the default composes the three ops above.
    fn quotient(&self, a: &mut ScalarBuffer, b: &ScalarBuffer, c: &ScalarBuffer, z_inv: Fr) -> BackendResult<()> {
        self.mul_assign(a, b)?;
        self.sub_assign(a, c)?;
        self.scale(a, z_inv)
    }

    // --- MSM -----------------------------------------------------------------------------
    /// `Σ scalars[i]·bases[i]` over the first `scalars.len()` bases (the bases may be longer).
    /// Any length, zero scalars and identity points included.
    fn msm_g1(&self, bases: &G1Bases, scalars: Scalars<'_>) -> BackendResult<G1Projective>;
    fn msm_g2(&self, bases: &G2Bases, scalars: Scalars<'_>) -> BackendResult<G2Projective>;

    // --- fixed-base scalar multiplication: key generation ----------------------------------
    /// `s·base` for every scalar s of every batch, affine, one vector a batch: a proving key's
    /// queries, which share one base per group. One table of the base's multiples serves every
    /// batch of a call, its windows chosen from their total length ([`fixed_base`]). A zero
    /// scalar gives the identity. Results are checked on the curve before they are returned.
    fn fixed_base_g1(&self, base: G1Projective, batches: &[&[Fr]]) -> BackendResult<Vec<Vec<G1Affine>>> {
        let _ = (base, batches);
        Err(BackendError::Unsupported { backend: self.info().kind, op: "fixed_base_g1" })
    }
    fn fixed_base_g2(&self, base: G2Projective, batches: &[&[Fr]]) -> BackendResult<Vec<Vec<G2Affine>>> {
        let _ = (base, batches);
        Err(BackendError::Unsupported { backend: self.info().kind, op: "fixed_base_g2" })
    }

    // --- sparse matrices: a compiled circuit's A, B, C ------------------------------------
    /// Uploads a matrix once; it stays resident, like a key's bases.
    fn upload_matrix(&self, m: &SparseMatrix) -> BackendResult<MatrixBuffer> {
        let _ = m;
        Err(BackendError::Unsupported { backend: self.info().kind, op: "upload_matrix" })
    }
    /// `out = m·z`: row r of `out` is Σ coeff·z[col] over row r of `m`; rows of `out` past the
    /// matrix become 0. `z` must be as long as `m` is wide, `out` at least as long as it is high.
    fn spmv(&self, m: &MatrixBuffer, z: &ScalarBuffer, out: &mut ScalarBuffer) -> BackendResult<()> {
        let _ = (m, z, out);
        Err(BackendError::Unsupported { backend: self.info().kind, op: "spmv" })
    }
    /// The R1CS check on the device: of the products `[a, b, c]`, the first row r < `rows` with
    /// a[r]·b[r] ≠ c[r], if any.
    fn first_unsatisfied(&self, abc: [&ScalarBuffer; 3], rows: usize) -> BackendResult<Option<usize>> {
        let _ = (abc, rows);
        Err(BackendError::Unsupported { backend: self.info().kind, op: "first_unsatisfied" })
    }

    // --- timing --------------------------------------------------------------------------
    /// Waits for all work queued so far.
    fn synchronize(&self) -> BackendResult<()> {
        Ok(())
    }
    /// The device's own spans of work finished so far, on the host clock, each parented to
    /// the host span that was current when the work was queued.
    fn drain_device_spans(&self) -> Vec<DeviceSpan>;
}

/// Declares an enum of backends, one variant each, that implements [`Backend`] by forwarding
/// every method to the variant it holds: run-time selection with one `match` per call, in one
/// place, and `From` for each variant.
///
/// Why a macro here and not `enum_dispatch`: `enum_dispatch` must see the trait and the enum
/// in one crate, and the enum names the GPU backends, whose crates depend on this one; across
/// crates it silently generates no impl (docs/design.md). Keeping the forwarding beside the
/// trait means a new method is added to both in one edit.
///
/// ```
/// use g16_backend::{Backend, BackendKind, CpuBackend};
///
/// g16_backend::dispatch_backend! {
///     pub enum AnyBackend {
///         Cpu(CpuBackend),
///         // A GPU crate's backend joins behind its feature: #[cfg(feature = "cuda")] Cuda(g16_cuda::CudaBackend),
///     }
/// }
///
/// let any = AnyBackend::from(CpuBackend::new());
/// assert_eq!(any.info().kind, BackendKind::Cpu);
/// ```
#[macro_export]
macro_rules! dispatch_backend {
    (
        $(#[$attr:meta])*
        $vis:vis enum $name:ident { $( $(#[cfg($cfg:meta)])? $variant:ident($ty:ty) ),+ $(,)? }
    ) => {
        $(#[$attr])*
        $vis enum $name { $( $(#[cfg($cfg)])? $variant($ty), )+ }

        $( $(#[cfg($cfg)])? impl ::core::convert::From<$ty> for $name {
            fn from(backend: $ty) -> Self { $name::$variant(backend) }
        } )+

        impl $crate::Backend for $name {
            fn id(&self) -> $crate::BackendId {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.id(), )+ }
            }
            fn info(&self) -> $crate::BackendInfo {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.info(), )+ }
            }
            fn upload_scalars(&self, host: &[$crate::Fr])
                -> $crate::BackendResult<$crate::ScalarBuffer> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.upload_scalars(host), )+ }
            }
            fn alloc_scalars(&self, len: usize)
                -> $crate::BackendResult<$crate::ScalarBuffer> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.alloc_scalars(len), )+ }
            }
            fn download_scalars(&self, buf: &$crate::ScalarBuffer)
                -> $crate::BackendResult<::std::vec::Vec<$crate::Fr>> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.download_scalars(buf), )+ }
            }
            fn upload_g1_bases(&self, host: &[$crate::G1Affine])
                -> $crate::BackendResult<$crate::G1Bases> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.upload_g1_bases(host), )+ }
            }
            fn upload_g2_bases(&self, host: &[$crate::G2Affine])
                -> $crate::BackendResult<$crate::G2Bases> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.upload_g2_bases(host), )+ }
            }
            fn ntt(&self, buf: &mut $crate::ScalarBuffer, kind: $crate::NttKind)
                -> $crate::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.ntt(buf, kind), )+ }
            }
            fn mul_assign(&self, a: &mut $crate::ScalarBuffer, x: &$crate::ScalarBuffer)
                -> $crate::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.mul_assign(a, x), )+ }
            }
            fn sub_assign(&self, a: &mut $crate::ScalarBuffer, x: &$crate::ScalarBuffer)
                -> $crate::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.sub_assign(a, x), )+ }
            }
            fn scale(&self, a: &mut $crate::ScalarBuffer, c: $crate::Fr)
                -> $crate::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.scale(a, c), )+ }
            }
            fn quotient(
                &self,
                a: &mut $crate::ScalarBuffer,
                x: &$crate::ScalarBuffer,
                c: &$crate::ScalarBuffer,
                z_inv: $crate::Fr,
            ) -> $crate::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.quotient(a, x, c, z_inv), )+ }
            }
            fn msm_g1(&self, bases: &$crate::G1Bases, scalars: $crate::Scalars<'_>)
                -> $crate::BackendResult<$crate::G1Projective> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.msm_g1(bases, scalars), )+ }
            }
            fn msm_g2(&self, bases: &$crate::G2Bases, scalars: $crate::Scalars<'_>)
                -> $crate::BackendResult<$crate::G2Projective> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.msm_g2(bases, scalars), )+ }
            }
            fn fixed_base_g1(&self, base: $crate::G1Projective, batches: &[&[$crate::Fr]])
                -> $crate::BackendResult<::std::vec::Vec<::std::vec::Vec<$crate::G1Affine>>> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.fixed_base_g1(base, batches), )+ }
            }
            fn fixed_base_g2(&self, base: $crate::G2Projective, batches: &[&[$crate::Fr]])
                -> $crate::BackendResult<::std::vec::Vec<::std::vec::Vec<$crate::G2Affine>>> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.fixed_base_g2(base, batches), )+ }
            }
            fn upload_matrix(&self, m: &$crate::SparseMatrix)
                -> $crate::BackendResult<$crate::MatrixBuffer> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.upload_matrix(m), )+ }
            }
            fn spmv(
                &self,
                m: &$crate::MatrixBuffer,
                z: &$crate::ScalarBuffer,
                out: &mut $crate::ScalarBuffer,
            ) -> $crate::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.spmv(m, z, out), )+ }
            }
            fn first_unsatisfied(&self, abc: [&$crate::ScalarBuffer; 3], rows: usize)
                -> $crate::BackendResult<Option<usize>> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.first_unsatisfied(abc, rows), )+ }
            }
            fn synchronize(&self) -> $crate::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.synchronize(), )+ }
            }
            fn drain_device_spans(&self) -> ::std::vec::Vec<$crate::timeline::DeviceSpan> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.drain_device_spans(), )+ }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::dispatch_backend! {
        /// One backend, and one compiled out as a disabled feature's would be.
        enum Selected {
            Cpu(CpuBackend),
            #[cfg(any())]
            Absent(CpuBackend),
        }
    }

    #[test]
    fn kinds_parse_and_print() {
        for (i, k) in BackendKind::ALL.into_iter().enumerate() {
            assert_eq!(k as usize, i, "ALL and NAMES in declaration order");
            assert_eq!(k.name().parse::<BackendKind>().unwrap(), k);
        }
        assert_eq!(BackendKind::Wgpu.to_string(), "wgpu");
        assert!(matches!("metal".parse::<BackendKind>(), Err(BackendError::UnknownBackend(_))));
    }

    #[test]
    fn the_dispatch_forwards_to_the_variant() {
        let a = Selected::from(CpuBackend::new());
        let b = Selected::Cpu(CpuBackend::new());
        assert_ne!(a.id(), b.id());
        let mut buf = a.upload_scalars(&[Fr::from(3u64); 4]).unwrap();
        a.ntt(&mut buf, NttKind::Forward).unwrap();
        assert!(matches!(b.ntt(&mut buf, NttKind::Forward), Err(BackendError::ForeignBuffer { .. })));
        assert!(matches!(b.download_scalars(&buf), Err(BackendError::ForeignBuffer { .. })));
        assert_eq!(a.drain_device_spans().len(), 2, "upload and NTT");
    }

    #[test]
    fn ntt_lengths_are_checked() {
        for bad in [0usize, 1, 3, 6, 100] {
            assert!(check_ntt_len(bad, 31).is_err(), "{bad}");
        }
        assert!(check_ntt_len(1 << 5, 4).is_err());
        assert!(check_ntt_len(2, 31).is_ok() && check_ntt_len(1 << 20, 31).is_ok());
    }
}
