//! Filecoin's PoRep C2 on g16.
//!
//! A storage provider's sealing pipeline ends with C2: the SNARK over the vanilla proofs that C1
//! (`seal_commit_phase1`) wrote, one Groth16 proof per partition of the sector. This crate
//! takes C1's output as lotus and curio write it and proves it on g16:
//!
//! - [`C1Output`] reads the JSON (filecoin-proofs-api's form, which names its registered proof,
//!   or filecoin-proofs' own with the proof given) or bincode, and holds each vanilla proof to
//!   the shape the sector's circuit expects before anything is synthesized.
//! - [`PoRepCircuit`] is the partition circuit of a [`SealProof`]: compiled once from
//!   storage-proofs' blank circuit (no sealed sector needed), and its parameter file — the
//!   bellperson `.params` that filecoin-proofs names and reads — read into a checked g16 key.
//! - [`C1Output::partitions`] makes each partition's witness on the host (the circuit's values,
//!   no constraints) and checks that its public inputs are the ones filecoin-proofs derives from
//!   the C1 output's commitments; each becomes a partition of a job on g16's engine.
//! - [`c2_output`] writes the proofs as `seal_commit_phase2` does, and [`C1Output::verify_seal`] asks
//!   filecoin-proofs whether it accepts them.
//!
//! What filecoin-proofs already does correctly — the circuit, its public inputs, the vanilla
//! proofs' types, the parameter file's name, verification — is called, not rewritten; g16
//! replaces bellperson's prover only.

mod c1;
mod circuit;
mod seal_proof;
mod witness;

pub use c1::C1Output;
pub use circuit::{c2_output, prove_on, read_c2_output, PoRepCircuit, PoRepPartition, PARTITION_PROOF_BYTES};
pub use seal_proof::{SealProof, SectorSize, Version};

/// Why a C1 output, a parameter file or a C2 run was refused.
#[derive(Debug, thiserror::Error)]
pub enum FilecoinError {
    #[error("the C1 output is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the C1 output is not valid bincode: {0}")]
    Bincode(#[from] bincode::Error),
    #[error("the C1 output names no registered proof; say which (e.g. StackedDrg2KiBV1_1)")]
    NoSealProof,
    #[error("unsupported registered proof {0}: g16 proves the interactive PoRep (V1, V1_1 and V1_1 synthetic)")]
    UnsupportedSealProof(String),
    #[error("the C1 output is for {file}, the proof asked for is {asked}")]
    SealProofMismatch { file: SealProof, asked: SealProof },
    /// A vanilla proof whose shape is not the circuit's: a C1 output of another sector size, or
    /// an edited one.
    #[error("partition {partition}, challenge {challenge}: the vanilla proof does not have {proof}'s shape ({detail})")]
    VanillaShape { proof: SealProof, partition: usize, challenge: usize, detail: String },
    #[error("the C1 output holds {file} partitions of vanilla proofs, {proof} has {expected}")]
    PartitionCount { proof: SealProof, file: usize, expected: usize },
    #[error("partition {partition} holds {file} vanilla proofs, {proof} challenges {expected} a partition")]
    ChallengeCount { proof: SealProof, partition: usize, file: usize, expected: usize },
    #[error("the C1 output's {0} is all zero")]
    Zero(&'static str),
    /// The witness's public inputs are not the ones filecoin-proofs derives from the C1
    /// output's commitments (replica id, comm_d, comm_r, the challenges from the seed): the
    /// vanilla proofs were made for another sector, seed or porep id, or edited.
    #[error("partition {partition}: public input {index} of the vanilla proofs disagrees with the C1 output's commitments and challenges ({what})")]
    PublicInputs { partition: usize, index: usize, what: String },
    #[error("partition {partition}: the witness does not satisfy the circuit: constraint {row} fails")]
    Unsatisfied { partition: usize, row: usize },
    #[error("partition {partition}: the circuit failed to synthesize: {detail}")]
    Synthesis { partition: usize, detail: String },
    /// What filecoin-proofs itself refused (its errors are `anyhow`'s).
    #[error("filecoin-proofs: {0}")]
    Filecoin(String),
    #[error("{verified} of {partitions} partitions' proofs were verified: start the engine with verification on")]
    NotVerified { verified: usize, partitions: usize },
    #[error(transparent)]
    Engine(#[from] g16::engine::EngineError),
    #[error(transparent)]
    Bellperson(#[from] g16_bellperson::BellpersonError),
    #[error("the C2 output is {got} bytes, {expected} expected ({partitions} partitions of 192)")]
    ProofLength { got: usize, expected: usize, partitions: usize },
    #[error("cannot read {path}: {source}")]
    Io { path: std::path::PathBuf, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: std::path::PathBuf, source: std::io::Error },
    /// A compiled circuit cached on disk that cannot be written (or is not one).
    #[error("the cached circuit: {0}")]
    CircuitCache(g16::compiled::CompileError),
}

impl FilecoinError {
    /// filecoin-proofs' errors are `anyhow`'s; this crate's API keeps its own type and the
    /// whole chain of causes in the message.
    fn filecoin(e: anyhow::Error) -> FilecoinError {
        FilecoinError::Filecoin(format!("{e:#}"))
    }
}
