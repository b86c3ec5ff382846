//! g16: a Groth16 prover for BLS12-381 whose NTTs and MSMs run on pluggable backends.
//!
//! This crate assembles the backends (`cuda` and `wgpu` features) into one run-time choice,
//! [`backends::AnyBackend`], over [`g16_core`], which holds the contract every backend
//! implements, the prover, the engine and the timeline; [`settings`] maps the environment onto
//! typed options once. [`library`] shows a whole proof of a circuit of your own.

pub mod backends;
pub mod settings;

pub use backends::AnyBackend;
pub use g16_core;

/// Using g16 from another crate (docs/library.md; its examples run as tests).
pub mod library {
    #![doc = include_str!("../docs/library.md")]
}
