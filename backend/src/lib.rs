//! g16-backend: the contract between g16's prover and a device, and nothing above it.
//!
//! The [`Backend`] trait and its vocabulary (buffers, [`NttKind`], sparse matrices and their
//! packed words, errors, the word layouts of field elements and points, MSM and NTT planning),
//! the evaluation domain's maths ([`domain`]), the timeline's recorder and its one clock
//! ([`timeline`]), the curve aliases, the host's subgroup checks of points ([`subgroup`]), the
//! CPU reference backend ([`cpu`]) and the conformance suite every backend passes
//! ([`conformance`], cargo feature `conformance`). It depends on
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
pub mod contract;
pub mod cpu;
pub mod curve;
pub mod domain;
pub mod error;
pub mod fixed_base;
pub mod limbs;
pub mod msm_plan;
pub mod ntt_plan;
pub mod sample;
pub mod sparse;
pub mod subgroup;
pub mod timeline;

pub use buffer::{
    check_msm, check_range, check_same_len, BackendId, DeviceBuffer, Element, G1Bases, G2Bases, ScalarBuffer, Scalars,
};
pub use contract::{Backend, BackendInfo, SOFTWARE_ADAPTER};
pub use cpu::CpuBackend;
pub use curve::{Curve, Fr, G1Affine, G1Projective, G2Affine, G2Projective};
pub use domain::{check_ntt_len, NttKind};
pub use error::{BackendError, BackendKind, BackendResult};
pub use sparse::{check_spmv, MatrixBuffer, SparseMatrix, SparseRow};
