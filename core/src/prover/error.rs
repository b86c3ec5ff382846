//! What proving can fail with. Its own module, so that what the prover uses (compiled
//! circuits) can name it without importing the prover.

use ark_relations::gr1cs::SynthesisError;

use super::key::{KeyError, Qap};
use crate::backend::BackendError;

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
    #[error("the proving key does not match the circuit: {what}: key has {key}, circuit has {circuit}")]
    KeyMismatch { what: &'static str, key: usize, circuit: usize },
    #[error("the prepared key was made for another backend instance")]
    KeyForAnotherBackend,
    #[error("{expected} public inputs expected, {got} given")]
    PublicInputCount { expected: usize, got: usize },
    #[error("the key was made for {key:?}'s QAP, the circuit for {circuit:?}'s")]
    QapMismatch { key: Qap, circuit: Qap },
    #[error("the witness has {got} values, the circuit {expected} variables")]
    WitnessLength { expected: usize, got: usize },
    #[error("the witness does not start with the constant 1")]
    WitnessConstant,
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
    #[error("internal error: {0}")]
    Internal(String),
}
