//! g16-core: the contract every backend implements, and everything above it that needs no
//! particular backend.
//!
//! - [`backend`]: the `Backend` trait (staging, NTT, the pointwise ops of H, MSM, device
//!   timing), its vocabulary (buffers, `NttKind`, errors, limb layouts, MSM planning), the
//!   conformance suite every backend passes, and the CPU reference backend.
//! - [`prover`]: synthesis, checked proving keys and their preparation on a backend, and the
//!   Groth16 prover, generic over the backend and bit-exact with `ark-groth16` (libsnark
//!   reduction).
//! - [`engine`]: many proofs overlapped across host threads and devices.
//! - [`key_store`]: keys of the built-in circuits kept between runs.
//! - [`circom`]: circom's `.r1cs` and `.wtns`, snarkjs's Groth16 `.zkey`, and the
//!   `proof.json`/`public.json` snarkjs verifies.
//! - [`circuits`]: the built-in circuits (`sha256`, `poseidon`, `synthetic`).
//! - [`timeline`]: one clock, spans from synthesis down to device kernels, and the report
//!   that names the time no child accounts for.
//!
//! It depends on no GPU crate: the CUDA and wgpu backends depend on it.

#[macro_use]
pub mod named;
pub mod backend;
pub mod circom;
pub mod circuits;
pub mod compiled;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod engine;
pub mod key_store;
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
pub use prover::{CheckedKey, PreparedKey, ProveError, Prover};
pub use timeline::Timeline;
