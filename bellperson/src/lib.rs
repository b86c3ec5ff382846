//! The bellman family on g16: circuits written for bellperson (bellpepper-core's [`Circuit`] and
//! [`ConstraintSystem`]), bellperson's `.params` and `.vk` files, and its proof bytes.
//!
//! - [`compile`] records a circuit's R1CS in setup mode — its allocation closures are never
//!   called, so no witness is needed — into a g16 [`CompiledCircuit`], the system bellperson's
//!   own setup sees.
//! - [`witness`] runs the circuit for its values only (no constraint is kept) and gives g16's
//!   assignment z = [1, inputs…, aux…], which the prover's device multiplies by the matrices.
//! - [`params::DecodedParams`] reads a `.params` file through g16's key loading: the points
//!   bellperson leaves out of the a and b queries (a variable with no nonzero coefficient in A,
//!   resp. B) are put back from the circuit's densities, the counts are checked against the
//!   circuit, and every point against the curve and its subgroup; [`write_params`] writes a
//!   g16 key made for a circuit (`g16::prover::setup`) as bellperson's setup would.
//! - [`proof`] writes and reads bellperson's 192-byte proofs.
//!
//! The conventions agree with arkworks' libsnark reduction, which g16 proves: the input rows
//! `x_i · 0 = 0` after the circuit's constraints, the same domain and coset, so for the same
//! (r, s) a g16 proof equals `bellperson::groth16::create_proof`'s byte for byte.
//!
//! [`Circuit`]: bellpepper_core::Circuit
//! [`ConstraintSystem`]: bellpepper_core::ConstraintSystem
//! [`CompiledCircuit`]: g16::compiled::CompiledCircuit

pub mod params;
pub mod proof;
mod record;
pub mod scalar;
mod witness;

pub use params::{read_vk, write_params, write_vk, DecodedParams};
pub use record::{compile, RecordingCs};
pub use witness::{assignment, witness, witness_parts, WitnessCs};

/// The scalar field of bellperson's BLS12-381 circuits.
pub use blstrs::Scalar;

/// Why a circuit, a parameter file or a proof was refused.
#[derive(Debug, thiserror::Error)]
pub enum BellpersonError {
    #[error("the circuit failed to synthesize: {0}")]
    Synthesis(#[from] bellpepper_core::SynthesisError),
    #[error("the circuit is malformed: {0}")]
    Malformed(String),
    #[error(transparent)]
    Compile(#[from] g16::compiled::CompileError),
    #[error("bellperson parameters: {0}")]
    Key(#[from] g16::prover::KeyError),
    /// The file's vector lengths disagree with the circuit's: it was made for another circuit.
    #[error("the parameter file was made for another circuit: it has {file} {what} points, the circuit needs {circuit}")]
    Counts { what: &'static str, file: usize, circuit: usize },
    #[error("the key does not fit the circuit: {0}")]
    Shape(#[from] g16::compiled::ShapeMismatch),
    #[error("cannot read {path}: {source}")]
    Io { path: std::path::PathBuf, source: std::io::Error },
    #[error("bellperson proof: {0}")]
    Proof(String),
    /// A key written as a parameter file for a circuit it was not made for.
    #[error("the key was not made for this circuit: {0}")]
    NotThisCircuit(String),
    #[error("cannot write the parameter file: {0}")]
    Write(std::io::Error),
}
