//! The contract between the prover and a device: the [`Backend`] trait, what a backend says of
//! itself, and the macro that assembles backends into one run-time choice.

use crate::buffer::{BackendId, G1Bases, G2Bases, ScalarBuffer, Scalars};
use crate::curve::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use crate::domain::NttKind;
use crate::error::{BackendError, BackendKind, BackendResult};
use crate::sparse::{MatrixBuffer, SparseMatrix};
use crate::subgroup;
use crate::timeline::DeviceSpan;

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

    // --- subgroup checks: a proving key's points, as it loads ------------------------------
    /// The index of the first of `points` outside the prime-order subgroup, or None. Every point
    /// must already be on the curve (the caller checks that, cheaply, while decoding); the
    /// identity is in the subgroup. The default runs on the host's cores
    /// ([`subgroup::first_outside_g1`]); CUDA and wgpu sum the batched check's buckets on the
    /// device, where the key's bases go anyway.
    fn first_outside_subgroup_g1(&self, points: &[G1Affine]) -> BackendResult<Option<usize>> {
        Ok(subgroup::first_outside_g1(points))
    }
    fn first_outside_subgroup_g2(&self, points: &[G2Affine]) -> BackendResult<Option<usize>> {
        Ok(subgroup::first_outside_g2(points))
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

        impl $crate::contract::Backend for $name {
            fn id(&self) -> $crate::buffer::BackendId {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.id(), )+ }
            }
            fn info(&self) -> $crate::contract::BackendInfo {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.info(), )+ }
            }
            fn upload_scalars(&self, host: &[$crate::curve::Fr])
                -> $crate::error::BackendResult<$crate::buffer::ScalarBuffer> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.upload_scalars(host), )+ }
            }
            fn alloc_scalars(&self, len: usize)
                -> $crate::error::BackendResult<$crate::buffer::ScalarBuffer> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.alloc_scalars(len), )+ }
            }
            fn download_scalars(&self, buf: &$crate::buffer::ScalarBuffer)
                -> $crate::error::BackendResult<::std::vec::Vec<$crate::curve::Fr>> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.download_scalars(buf), )+ }
            }
            fn upload_g1_bases(&self, host: &[$crate::curve::G1Affine])
                -> $crate::error::BackendResult<$crate::buffer::G1Bases> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.upload_g1_bases(host), )+ }
            }
            fn upload_g2_bases(&self, host: &[$crate::curve::G2Affine])
                -> $crate::error::BackendResult<$crate::buffer::G2Bases> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.upload_g2_bases(host), )+ }
            }
            fn ntt(&self, buf: &mut $crate::buffer::ScalarBuffer, kind: $crate::domain::NttKind)
                -> $crate::error::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.ntt(buf, kind), )+ }
            }
            fn mul_assign(&self, a: &mut $crate::buffer::ScalarBuffer, x: &$crate::buffer::ScalarBuffer)
                -> $crate::error::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.mul_assign(a, x), )+ }
            }
            fn sub_assign(&self, a: &mut $crate::buffer::ScalarBuffer, x: &$crate::buffer::ScalarBuffer)
                -> $crate::error::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.sub_assign(a, x), )+ }
            }
            fn scale(&self, a: &mut $crate::buffer::ScalarBuffer, c: $crate::curve::Fr)
                -> $crate::error::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.scale(a, c), )+ }
            }
            fn quotient(
                &self,
                a: &mut $crate::buffer::ScalarBuffer,
                x: &$crate::buffer::ScalarBuffer,
                c: &$crate::buffer::ScalarBuffer,
                z_inv: $crate::curve::Fr,
            ) -> $crate::error::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.quotient(a, x, c, z_inv), )+ }
            }
            fn msm_g1(&self, bases: &$crate::buffer::G1Bases, scalars: $crate::buffer::Scalars<'_>)
                -> $crate::error::BackendResult<$crate::curve::G1Projective> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.msm_g1(bases, scalars), )+ }
            }
            fn msm_g2(&self, bases: &$crate::buffer::G2Bases, scalars: $crate::buffer::Scalars<'_>)
                -> $crate::error::BackendResult<$crate::curve::G2Projective> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.msm_g2(bases, scalars), )+ }
            }
            fn fixed_base_g1(&self, base: $crate::curve::G1Projective, batches: &[&[$crate::curve::Fr]])
                -> $crate::error::BackendResult<::std::vec::Vec<::std::vec::Vec<$crate::curve::G1Affine>>> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.fixed_base_g1(base, batches), )+ }
            }
            fn fixed_base_g2(&self, base: $crate::curve::G2Projective, batches: &[&[$crate::curve::Fr]])
                -> $crate::error::BackendResult<::std::vec::Vec<::std::vec::Vec<$crate::curve::G2Affine>>> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.fixed_base_g2(base, batches), )+ }
            }
            fn upload_matrix(&self, m: &$crate::sparse::SparseMatrix)
                -> $crate::error::BackendResult<$crate::sparse::MatrixBuffer> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.upload_matrix(m), )+ }
            }
            fn spmv(
                &self,
                m: &$crate::sparse::MatrixBuffer,
                z: &$crate::buffer::ScalarBuffer,
                out: &mut $crate::buffer::ScalarBuffer,
            ) -> $crate::error::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.spmv(m, z, out), )+ }
            }
            fn first_unsatisfied(&self, abc: [&$crate::buffer::ScalarBuffer; 3], rows: usize)
                -> $crate::error::BackendResult<Option<usize>> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.first_unsatisfied(abc, rows), )+ }
            }
            fn first_outside_subgroup_g1(&self, points: &[$crate::curve::G1Affine])
                -> $crate::error::BackendResult<Option<usize>> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.first_outside_subgroup_g1(points), )+ }
            }
            fn first_outside_subgroup_g2(&self, points: &[$crate::curve::G2Affine])
                -> $crate::error::BackendResult<Option<usize>> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.first_outside_subgroup_g2(points), )+ }
            }
            fn synchronize(&self) -> $crate::error::BackendResult<()> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.synchronize(), )+ }
            }
            fn drain_device_spans(&self) -> ::std::vec::Vec<$crate::timeline::DeviceSpan> {
                match self { $( $(#[cfg($cfg)])? $name::$variant(b) => b.drain_device_spans(), )+ }
            }
        }
    };
}

#[cfg(test)]
mod tests;
