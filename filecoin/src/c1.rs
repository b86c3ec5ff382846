//! C1's output (`SealCommitPhase1Output`), as the sealing pipelines write it.
//!
//! lotus and curio write filecoin-proofs-api's JSON, which names the registered proof and wraps
//! the vanilla proofs in a variant named after the sector size:
//!
//! ```text
//! {"registered_proof": "StackedDrg32GiBV1_1", "vanilla_proofs": {"StackedDrg32GiBV1": [[…]…]},
//!  "comm_r": [32 bytes], "comm_d": […], "replica_id": …, "seed": […], "ticket": […]}
//! ```
//!
//! filecoin-proofs' own `SealCommitPhase1Output<Tree>` (JSON or bincode) is the same without the
//! name and the wrapper; for it the caller says which proof it is. Either way the file is held
//! to the proof before anything is synthesized: the name, the number of partitions and of
//! challenges a partition, nonzero commitments and seed.

use std::any::{Any, TypeId};
use std::path::Path;

use filecoin_proofs::SealCommitPhase1Output;
use serde_json::Value;
use storage_proofs_core::merkle::MerkleTreeTrait;

use crate::seal_proof::{with_shape, SealProof};
use crate::FilecoinError;

/// A C1 output and the registered proof it was made for. The vanilla proofs are held as
/// filecoin-proofs types them (`SealCommitPhase1Output<Tree>` of the sector's shape).
pub struct C1Output {
    proof: SealProof,
    typed: Box<dyn Any + Send + Sync>,
}

impl C1Output {
    /// Reads a C1 output file: JSON when it starts with `{`, else bincode (which names no proof,
    /// so `proof` must be given). Where both the file and `proof` name one, they must agree.
    pub fn read(path: &Path, proof: Option<SealProof>) -> Result<C1Output, FilecoinError> {
        let bytes = std::fs::read(path).map_err(|source| FilecoinError::Io { path: path.to_path_buf(), source })?;
        C1Output::from_bytes(&bytes, proof)
    }

    /// A C1 output's bytes, as [`C1Output::read`] reads a file: JSON when it starts with `{`,
    /// else bincode (for which `proof` must be given).
    pub fn from_bytes(bytes: &[u8], proof: Option<SealProof>) -> Result<C1Output, FilecoinError> {
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
            C1Output::from_json(bytes, proof)
        } else {
            C1Output::from_bincode(bytes, proof.ok_or(FilecoinError::NoSealProof)?)
        }
    }

    /// filecoin-proofs-api's JSON (which names its proof), or filecoin-proofs' own with `proof`.
    pub fn from_json(bytes: &[u8], proof: Option<SealProof>) -> Result<C1Output, FilecoinError> {
        let mut value: Value = serde_json::from_slice(bytes)?;
        let named = match value.get("registered_proof") {
            Some(Value::String(name)) => Some(name.parse::<SealProof>()?),
            Some(other) => {
                return Err(FilecoinError::Json(serde::de::Error::custom(format!(
                    "registered_proof is {other}, not a proof's name"
                ))))
            }
            None => None,
        };
        let proof = match (named, proof) {
            (Some(file), Some(asked)) if file != asked => return Err(FilecoinError::SealProofMismatch { file, asked }),
            (Some(p), _) | (None, Some(p)) => p,
            (None, None) => return Err(FilecoinError::NoSealProof),
        };
        if named.is_some() {
            // Unwrap the api's variant; its name says the sector size the proofs were made for.
            let wrapped = value.get_mut("vanilla_proofs").map(Value::take);
            let inner = match wrapped {
                Some(Value::Object(variants)) if variants.len() == 1 => {
                    let (variant, inner) = variants.into_iter().next().expect("one variant");
                    if variant != proof.vanilla_variant() {
                        return Err(FilecoinError::VanillaShape {
                            proof,
                            partition: 0,
                            challenge: 0,
                            detail: format!("the file's vanilla proofs are {variant}'s"),
                        });
                    }
                    inner
                }
                _ => {
                    return Err(FilecoinError::Json(serde::de::Error::custom(
                        "vanilla_proofs is not an object naming one sector size",
                    )))
                }
            };
            value["vanilla_proofs"] = inner;
        }
        with_shape!(proof.sector, typed_json, proof, value)
    }

    /// filecoin-proofs' `SealCommitPhase1Output<Tree>` as bincode, for `proof`.
    pub fn from_bincode(bytes: &[u8], proof: SealProof) -> Result<C1Output, FilecoinError> {
        with_shape!(proof.sector, typed_bincode, proof, bytes)
    }

    /// Wraps a C1 output made in this process (filecoin-proofs' `seal_commit_phase1`).
    pub fn from_typed<Tree: 'static + MerkleTreeTrait>(
        proof: SealProof,
        c1: SealCommitPhase1Output<Tree>,
    ) -> Result<C1Output, FilecoinError> {
        checked(proof, c1)
    }

    pub fn seal_proof(&self) -> SealProof {
        self.proof
    }

    /// The typed output, for the sector's tree shape `Tree` (`None` for another shape).
    pub fn typed<Tree: 'static + MerkleTreeTrait>(&self) -> Option<&SealCommitPhase1Output<Tree>> {
        self.typed.downcast_ref()
    }

    /// filecoin-proofs-api's JSON of this output, as lotus writes it.
    pub fn to_api_json(&self) -> Result<Vec<u8>, FilecoinError> {
        with_shape!(self.proof.sector, api_json, self)
    }
}

fn typed_json<Tree: 'static + MerkleTreeTrait>(proof: SealProof, value: Value) -> Result<C1Output, FilecoinError> {
    let c1: SealCommitPhase1Output<Tree> = serde_json::from_value(value)?;
    checked(proof, c1)
}

fn typed_bincode<Tree: 'static + MerkleTreeTrait>(proof: SealProof, bytes: &[u8]) -> Result<C1Output, FilecoinError> {
    // A length prefix read from a file must not become an allocation: bound them by the input.
    use bincode::Options;
    let options = bincode::DefaultOptions::new().with_fixint_encoding().with_limit(bytes.len() as u64);
    let c1: SealCommitPhase1Output<Tree> = options.deserialize(bytes)?;
    checked(proof, c1)
}

fn api_json<Tree: 'static + MerkleTreeTrait>(c1: &C1Output) -> Result<Vec<u8>, FilecoinError> {
    let typed = c1.typed::<Tree>().expect("held for its own shape");
    let mut value = serde_json::to_value(typed)?;
    let vanilla = value["vanilla_proofs"].take();
    value["vanilla_proofs"] = serde_json::json!({ c1.proof.vanilla_variant(): vanilla });
    value["registered_proof"] = Value::String(c1.proof.to_string());
    Ok(serde_json::to_vec(&value)?)
}

fn tree_of<Tree: 'static + MerkleTreeTrait>() -> TypeId {
    TypeId::of::<Tree>()
}

/// The tree shape, the counts and the nonzero fields filecoin-proofs' C2 insists on, checked
/// before any work. Every `C1Output` is made here, so its typed output is always of its proof's
/// tree shape.
fn checked<Tree: 'static + MerkleTreeTrait>(
    proof: SealProof,
    c1: SealCommitPhase1Output<Tree>,
) -> Result<C1Output, FilecoinError> {
    if TypeId::of::<Tree>() != with_shape!(proof.sector, tree_of) {
        return Err(FilecoinError::VanillaShape {
            proof,
            partition: 0,
            challenge: 0,
            detail: format!("the output was made for the tree {}", std::any::type_name::<Tree>()),
        });
    }
    for (name, bytes) in [("comm_r", &c1.comm_r), ("comm_d", &c1.comm_d), ("seed", &c1.seed)] {
        if bytes.iter().all(|&b| b == 0) {
            return Err(FilecoinError::Zero(name));
        }
    }
    let config = proof.porep_config();
    let expected = usize::from(config.partitions);
    if c1.vanilla_proofs.len() != expected {
        return Err(FilecoinError::PartitionCount { proof, file: c1.vanilla_proofs.len(), expected });
    }
    let challenges = proof.challenges_per_partition()?;
    if let Some((partition, p)) = c1.vanilla_proofs.iter().enumerate().find(|(_, p)| p.len() != challenges) {
        return Err(FilecoinError::ChallengeCount { proof, partition, file: p.len(), expected: challenges });
    }
    Ok(C1Output { proof, typed: Box::new(c1) })
}
