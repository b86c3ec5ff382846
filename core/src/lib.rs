//! g16-core: everything the backends share.
//!
//! - [`backend`]: the `Backend` trait every device implements (staging, NTT, the pointwise
//!   ops of H, MSM, device timing), run-time selection, and the CPU reference backend.
//! - [`prover`]: synthesis, proving-key loading and preparation, and the Groth16 prover,
//!   generic over the backend and bit-exact with `ark-groth16` (libsnark reduction).
//! - [`circuits`]: the built-in circuits (`sha256`, `poseidon`, `synthetic`).
//! - [`timeline`]: one clock, spans from synthesis down to device kernels, and the report
//!   that names the time no child accounts for.

pub mod backend;
pub mod circuits;
pub mod engine;
pub mod prover;
pub mod sample;
pub mod timeline;

/// The curve every part of g16 works over.
pub type Curve = ark_bls12_381::Bls12_381;
/// The scalar field of BLS12-381 (the field of the constraint system and of MSM scalars).
pub type Fr = ark_bls12_381::Fr;
pub type G1Affine = ark_bls12_381::G1Affine;
pub type G2Affine = ark_bls12_381::G2Affine;
pub type G1Projective = ark_bls12_381::G1Projective;
pub type G2Projective = ark_bls12_381::G2Projective;
pub type Proof = ark_groth16::Proof<Curve>;
pub type ProvingKey = ark_groth16::ProvingKey<Curve>;
pub type VerifyingKey = ark_groth16::VerifyingKey<Curve>;

pub use backend::{Backend, BackendError, BackendKind};
pub use prover::{PreparedKey, ProveError, Prover};
pub use timeline::Timeline;
