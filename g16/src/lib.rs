//! g16: a Groth16 prover for BLS12-381 whose NTTs and MSMs run on pluggable backends.
//!
//! The library a Rust user depends on. Below it is the contract, [`g16_backend`] (re-exported
//! as [`backend`]): the `Backend` trait, the CPU reference backend, the timeline's recorder and
//! the conformance suite's operations half. The GPU backends are cargo features (`cuda`, `wgpu`,
//! both on by default); [`backends`] assembles what the build has into one run-time choice.
//!
//! - [`prover`]: checked proving keys, their preparation on a backend, and the Groth16
//!   prover, generic over the backend and bit-exact with `ark-groth16` (libsnark reduction).
//!   Proofs draw their randomness (r, s) from the caller's cryptographic RNG.
//! - [`compiled`]: a circuit's R1CS compiled once (and the QAP's shape), proven from witnesses.
//! - [`engine`]: many proofs overlapped across host threads and devices.
//! - [`circom`]: circom's `.r1cs` and `.wtns`, snarkjs's Groth16 `.zkey`, and the
//!   `proof.json`/`public.json` snarkjs verifies.
//! - [`circuits`]: the built-in circuits (`sha256`, `poseidon`, `synthetic`).
//! - [`key_store`]: keys of the built-in circuits kept between runs.
//! - [`trust`]: key files checked once, trusted by their [`digest`] afterwards.
//! - [`timeline`]: the recorder's events read, written and reported: the time no child explains.
//! - [`settings`]: the environment mapped once onto typed options.
//!
//! [`library`] walks through a whole proof of a circuit of your own.

pub use g16_backend;
/// The contract every backend implements (the crate `g16_backend`).
pub use g16_backend as backend;
pub use curve::{Curve, Fr, G1Affine, G1Projective, G2Affine, G2Projective, Proof, ProvingKey, VerifyingKey};
pub use g16_backend::sample;

pub mod backends;
pub mod circom;
pub mod circuits;
pub mod compiled;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod curve;
pub mod engine;
pub mod digest;
pub mod huge_pages;
pub mod key_store;
pub mod prover;
pub mod settings;
pub mod timeline;
pub mod trust;
pub mod whole_file;

pub use backends::AnyBackend;
pub use g16_backend::{Backend, BackendError, BackendKind};
pub use prover::{CheckedKey, PreparedKey, ProveError, Prover};
pub use timeline::Timeline;

/// Using g16 from another crate (docs/library.md; its examples run as tests).
pub mod library {
    #![doc = include_str!("../../docs/library.md")]
}
