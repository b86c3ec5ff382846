//! What proving can fail with: the prover's own failures, and those of what it uses (the
//! compiled circuit's shape checks and witness synthesis, keys, backends) wrapped.

use ark_relations::gr1cs::SynthesisError;

use super::key::KeyError;
use crate::compiled::{CompileError, ShapeMismatch};
use g16_backend::BackendError;

#[derive(Debug, thiserror::Error)]
pub enum ProveError {
    #[error("synthesis failed: {0}")]
    Synthesis(SynthesisError),
    #[error("the witness does not satisfy the circuit: constraint {row} fails")]
    Unsatisfied { row: usize },
    #[error("the circuit uses the non-R1CS predicate '{predicate}'; Groth16 proves R1CS only")]
    NotR1cs { predicate: String },
    #[error("{rows} constraint rows need a domain larger than Fr supports (2^{max_log2})")]
    DomainTooLarge { rows: usize, max_log2: u32 },
    /// A key or an assignment that does not fit the circuit (sizes, QAP, the constant 1).
    #[error(transparent)]
    Shape(#[from] ShapeMismatch),
    /// Witness-only synthesis of a circuit (`compiled::witness`) failed.
    #[error(transparent)]
    Compile(#[from] CompileError),
    #[error("the prepared key was made for another backend instance")]
    KeyForAnotherBackend,
    #[error("{expected} public inputs expected, {got} given")]
    PublicInputCount { expected: usize, got: usize },
    #[error("a partition came as an assignment, but the engine's devices have no compiled circuit")]
    NoCompiledCircuit,
    #[error("the job names no circuit and the device was started without a key")]
    NoKey,
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    DoesNotFit(#[from] super::memory::DoesNotFit),
    #[error("verification failed: {0}")]
    Verify(String),
    /// The partition's own witness source refused its input (a file of another format, a
    /// vanilla proof of another sector): the caller's error, carried whole.
    #[error("the witness could not be made: {0}")]
    Witness(Box<dyn std::error::Error + Send + Sync>),
    #[error("internal error: {0}")]
    Internal(String),
}
