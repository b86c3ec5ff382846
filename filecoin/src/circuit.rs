//! The PoRep partition circuit on g16: compiled from storage-proofs' blank circuit, its
//! parameter file read against it, each partition's witness made from a C1 output, and the
//! proofs written and verified as filecoin-proofs writes and verifies them.

use std::fs::File;
use std::io::BufWriter;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::{as_safe_commitment, DefaultPieceDomain, DefaultPieceHasher, SealCommitPhase1Output};
use g16::compiled::file::CircuitFile;
use g16::compiled::CompiledCircuit;
use g16::backend::Backend;
use g16::engine::{CircuitKey, Engine, Partition};
use g16::prover::Randomness;
use g16::{CheckedKey, Fr, Proof, ProveError};
use g16_bellperson::scalar::to_fr;
use g16_bellperson::{write_params, write_vk, BellpersonError, DecodedParams};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::{parameter_cache_params_path, parameter_cache_verifying_key_path};
use storage_proofs_core::sector::SectorId;
use storage_proofs_porep::stacked::{self, StackedDrg, Tau};

use crate::c1::C1Output;
use crate::seal_proof::{public_params, with_shape, Compound, SealProof};
use crate::witness;
use crate::FilecoinError;

/// The bytes of one partition's proof in the C2 output (bellperson's encoding).
pub const PARTITION_PROOF_BYTES: usize = g16_bellperson::proof::PROOF_BYTES;

/// A registered proof's partition circuit, compiled for g16: the R1CS that the parameters were
/// made from (storage-proofs' blank circuit, recorded without a witness).
pub struct PoRepCircuit {
    proof: SealProof,
    compiled: CompiledCircuit,
}

impl PoRepCircuit {
    /// Records the blank circuit (no sealed sector needed): seconds at 2 KiB, minutes and
    /// tens of GiB of host memory at 32 GiB.
    pub fn compile(proof: SealProof) -> Result<PoRepCircuit, FilecoinError> {
        let compiled = with_shape!(proof.sector, compile_blank, proof)?;
        Ok(PoRepCircuit { proof, compiled })
    }

    /// A circuit compiled before (a compiled-circuit file), taken as `proof`'s.
    pub fn from_compiled(proof: SealProof, compiled: CompiledCircuit) -> PoRepCircuit {
        PoRepCircuit { proof, compiled }
    }

    pub fn seal_proof(&self) -> SealProof {
        self.proof
    }

    pub fn compiled(&self) -> &CompiledCircuit {
        &self.compiled
    }

    /// The compiled circuit, for an owner that keeps it beside its key (one copy: at 32 GiB it
    /// is tens of GB).
    pub fn into_compiled(self) -> CompiledCircuit {
        self.compiled
    }

    /// The proof's circuit from the cache directory `dir` (`<proof>.circuit`, a checksummed
    /// compiled-circuit file), or recorded from the blank circuit (seconds at 2 KiB, minutes at
    /// 32 GiB) and written there. A cache that cannot be written costs the next caller the
    /// recording, nothing else: the circuit comes back with the reason beside it.
    pub fn cached(proof: SealProof, dir: &Path) -> Result<(PoRepCircuit, Option<FilecoinError>), FilecoinError> {
        let path = dir.join(format!("{proof}.circuit"));
        if let Ok(file) = CircuitFile::read(&path) {
            return Ok((PoRepCircuit::from_compiled(proof, file.circuit), None));
        }
        let circuit = PoRepCircuit::compile(proof)?;
        if let Err(source) = std::fs::create_dir_all(dir) {
            return Ok((circuit, Some(FilecoinError::Io { path: dir.to_path_buf(), source })));
        }
        let file = CircuitFile { circuit: circuit.compiled.clone(), key_digest: None };
        let not_cached = file.write(&path).err().map(FilecoinError::CircuitCache);
        Ok((circuit, not_cached))
    }

    /// The parameter file's name, as filecoin-proofs names it in its parameter cache
    /// (`v28-stacked-proof-of-replication-…-<sha256 of the parameters' identifier>.params`).
    pub fn params_file_name(&self) -> Result<String, FilecoinError> {
        self.cache_file_name(parameter_cache_params_path)
    }

    /// The verifying key's file name beside it (`….vk`).
    pub fn vk_file_name(&self) -> Result<String, FilecoinError> {
        self.cache_file_name(parameter_cache_verifying_key_path)
    }

    fn cache_file_name(&self, path_of: fn(&str) -> PathBuf) -> Result<String, FilecoinError> {
        let id = with_shape!(self.proof.sector, cache_identifier, self.proof)?;
        // The library joins the name to its cache directory; only the name is wanted here.
        let path = path_of(&id);
        Ok(path.file_name().expect("a file name").to_string_lossy().into_owned())
    }

    /// Reads the parameter file from `dir` (where filecoin-proofs keeps it:
    /// `FIL_PROOFS_PARAMETER_CACHE`) against the circuit; its points are checked by the caller's
    /// choice of [`DecodedParams::check`].
    pub fn read_params(&self, dir: &Path) -> Result<DecodedParams, FilecoinError> {
        Ok(DecodedParams::read(&dir.join(self.params_file_name()?), &self.compiled)?)
    }

    /// Writes `key`, made for this circuit (`g16::prover::setup`), into `dir` as the parameter
    /// and verifying-key files filecoin-proofs reads for this proof, each written beside its
    /// name and then renamed, so a file under its name is whole. Parameters from a setup of
    /// one's own are for test sectors and devnets: a production network's proofs verify only
    /// under the parameters of its ceremony.
    pub fn write_params(&self, key: &CheckedKey, dir: &Path) -> Result<PathBuf, FilecoinError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| FilecoinError::Write { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let write = |name: String, bytes: &dyn Fn(&mut BufWriter<File>) -> Result<(), BellpersonError>| {
            let (partial, path) = (dir.join(format!("{name}.partial")), dir.join(name));
            let written = (|| {
                let mut out = BufWriter::new(File::create(&partial).map_err(io(&partial))?);
                bytes(&mut out)?;
                let file = out.into_inner().map_err(|e| io(&partial)(e.into_error()))?;
                file.sync_all().map_err(io(&partial))?;
                std::fs::rename(&partial, &path).map_err(io(&path))
            })();
            if written.is_err() {
                let _ = std::fs::remove_file(&partial);
            }
            written.map(|()| path)
        };
        let params = write(self.params_file_name()?, &|w| write_params(key, &self.compiled, w))?;
        write(self.vk_file_name()?, &|w| write_vk(key.proving_key(), w))?;
        Ok(params)
    }

    /// The host-side R1CS check of a partition's witness: the first constraint that fails.
    /// (The engine checks the same on the device before any MSM; this is for callers that want
    /// the answer without a key.)
    pub fn check_witness(&self, partition: usize, z: &[Fr]) -> Result<(), FilecoinError> {
        self.compiled.check_assignment(z).map_err(|e| FilecoinError::Synthesis { partition, detail: e.to_string() })?;
        let [a, b, c] = self.compiled.evaluate(z);
        use rayon::prelude::*;
        match (0..self.compiled.num_constraints()).into_par_iter().find_first(|&i| a[i] * b[i] != c[i]) {
            Some(row) => Err(FilecoinError::Unsatisfied { partition, row }),
            None => Ok(()),
        }
    }
}

fn compile_blank<Tree: 'static + MerkleTreeTrait>(proof: SealProof) -> Result<CompiledCircuit, FilecoinError> {
    let params = public_params::<Tree>(proof)?;
    let blank = <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::blank_circuit(&params);
    Ok(g16_bellperson::compile(blank)?)
}

fn cache_identifier<Tree: 'static + MerkleTreeTrait>(proof: SealProof) -> Result<String, FilecoinError> {
    proof.porep_config().get_cache_identifier::<Tree>().map_err(FilecoinError::filecoin)
}

/// One partition of a C2: its public inputs, as filecoin-proofs derives them from the C1
/// output's commitments and seed, and the work that makes its witness.
pub struct PoRepPartition {
    pub proof: SealProof,
    pub index: usize,
    pub public_inputs: Vec<Fr>,
    variables: usize,
    make: Box<dyn FnOnce() -> Result<Vec<Fr>, FilecoinError> + Send>,
}

impl PoRepPartition {
    /// The witness z = [1, public inputs…, aux…], held to the circuit's size and to the public
    /// inputs filecoin-proofs expects. Not the R1CS check: the engine makes that on the device.
    pub fn witness(self) -> Result<Vec<Fr>, FilecoinError> {
        let (proof, index, expected, variables) = (self.proof, self.index, self.public_inputs, self.variables);
        // storage-proofs' gadgets assert on malformed paths; a C1 file must not take the
        // process down with it.
        let z = catch_unwind(AssertUnwindSafe(self.make)).map_err(|panic| FilecoinError::Synthesis {
            partition: index,
            detail: panic_message(panic),
        })??;
        if z.len() != variables {
            return Err(FilecoinError::VanillaShape {
                proof,
                partition: index,
                challenge: 0,
                detail: format!("its witness has {} variables, the circuit {variables}", z.len()),
            });
        }
        let Some(inputs) = z.get(1..1 + expected.len()) else {
            return Err(FilecoinError::PublicInputs {
                partition: index,
                index: z.len().saturating_sub(1),
                what: format!("filecoin-proofs derives {} inputs, the witness has {} values", expected.len(), z.len()),
            });
        };
        if let Some(i) = (0..expected.len()).find(|&i| inputs[i] != expected[i]) {
            return Err(FilecoinError::PublicInputs {
                partition: index,
                index: i,
                what: format!("the witness has {}, filecoin-proofs derives {}", inputs[i], expected[i]),
            });
        }
        Ok(z)
    }

    /// The partition as a job's partition on g16's engine: its witness is made on a
    /// synthesis worker; a refusal fails the job with this crate's error inside.
    pub fn into_engine_partition(self) -> Partition {
        Partition::assignment_from(move || self.witness().map_err(|e| ProveError::Witness(Box::new(e))))
    }
}

fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    match panic.downcast::<String>() {
        Ok(s) => *s,
        Err(panic) => panic.downcast_ref::<&str>().map_or("a panic".to_string(), |s| s.to_string()),
    }
}

impl C1Output {
    /// The partitions of this C1 output for `circuit`: their public inputs now, their witnesses
    /// when run (on the engine's synthesis workers, one partition each).
    pub fn partitions(&self, circuit: &PoRepCircuit) -> Result<Vec<PoRepPartition>, FilecoinError> {
        self.partitions_for(circuit.proof, circuit.compiled.num_variables())
    }

    /// [`C1Output::partitions`] for the circuit of `proof` with `variables` variables, for a
    /// caller that holds the compiled circuit elsewhere (beside its key on an engine).
    pub fn partitions_for(&self, proof: SealProof, variables: usize) -> Result<Vec<PoRepPartition>, FilecoinError> {
        if proof != self.seal_proof() {
            return Err(FilecoinError::SealProofMismatch { file: self.seal_proof(), asked: proof });
        }
        with_shape!(self.seal_proof().sector, partitions_of, self, variables)
    }

    /// Asks filecoin-proofs whether it accepts `proof_bytes` as this sector's C2 output
    /// (`verify_seal`, which needs the sector's prover and sector ids besides the C1 output).
    pub fn verify_seal(&self, prover_id: [u8; 32], sector_id: u64, proof_bytes: &[u8]) -> Result<bool, FilecoinError> {
        with_shape!(self.seal_proof().sector, verify_of, self, prover_id, sector_id, proof_bytes)
    }
}

fn partitions_of<Tree: 'static + MerkleTreeTrait>(
    c1: &C1Output,
    variables: usize,
) -> Result<Vec<PoRepPartition>, FilecoinError> {
    let proof = c1.seal_proof();
    let SealCommitPhase1Output { vanilla_proofs, comm_d, comm_r, replica_id, seed, ticket: _ } =
        c1.typed::<Tree>().expect("held for its own shape");
    let (comm_d, comm_r, replica_id, seed) = (*comm_d, *comm_r, *replica_id, *seed);
    let params = Arc::new(public_params::<Tree>(proof)?);
    let inputs = Arc::new(stacked::PublicInputs {
        replica_id,
        tau: Some(Tau {
            comm_d: DefaultPieceDomain::try_from_bytes(&comm_d).map_err(FilecoinError::filecoin)?,
            comm_r: as_safe_commitment::<<Tree::Hasher as Hasher>::Domain, _>(&comm_r, "comm_r")
                .map_err(FilecoinError::filecoin)?,
        }),
        k: None,
        seed: Some(seed),
    });
    vanilla_proofs
        .iter()
        .enumerate()
        .map(|(index, vanilla)| {
            // Each partition's witness is made on a worker thread of its own: it owns a copy.
            let vanilla = vanilla.clone();
            let public_inputs = <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::generate_public_inputs(
                &inputs,
                &params,
                Some(index),
            )
            .map_err(FilecoinError::filecoin)?;
            let (params, inputs) = (Arc::clone(&params), Arc::clone(&inputs));
            let counts = (1 + public_inputs.len(), variables);
            let make = move || -> Result<Vec<Fr>, FilecoinError> {
                let refuse = |detail: String| FilecoinError::Synthesis { partition: index, detail };
                // storage-proofs runs a partition's challenges one after another: each is
                // synthesized alone, on every core (witness.rs says why that is the same witness).
                witness::by_challenge(index, vanilla.len(), counts, |challenge| {
                    let circuit = <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::circuit(
                        &inputs,
                        (),
                        &vanilla[challenge..=challenge].to_vec(),
                        &params,
                        Some(index),
                    )
                    .map_err(|e| refuse(format!("{e:#}")))?;
                    g16_bellperson::witness_parts(circuit).map_err(|e| refuse(e.to_string()))
                })
            };
            Ok(PoRepPartition {
                proof,
                index,
                public_inputs: public_inputs.iter().map(to_fr).collect(),
                variables,
                make: Box::new(make),
            })
        })
        .collect()
}

fn verify_of<Tree: 'static + MerkleTreeTrait>(
    c1: &C1Output,
    prover_id: [u8; 32],
    sector_id: u64,
    proof_bytes: &[u8],
) -> Result<bool, FilecoinError> {
    let typed = c1.typed::<Tree>().expect("held for its own shape");
    filecoin_proofs::verify_seal::<Tree>(
        &c1.seal_proof().porep_config(),
        typed.comm_r,
        typed.comm_d,
        prover_id,
        SectorId::from(sector_id),
        typed.ticket,
        typed.seed,
        proof_bytes,
    )
    .map_err(FilecoinError::filecoin)
}

/// Proves `partitions` as one job on `engine` — their witnesses made on its synthesis workers
/// while earlier partitions are on the devices — with `circuit`'s resident key (`None`: the
/// devices' pinned key), and returns the C2 output. `randomness` gives a partition a chosen
/// (r, s) for bit-exact tests; `None` draws each from the OS. Every proof is verified by the
/// engine against the public inputs filecoin-proofs derives, or the job fails.
pub fn prove_on<B: Backend + 'static>(
    engine: &Engine<B>,
    circuit: Option<Arc<CircuitKey>>,
    partitions: Vec<PoRepPartition>,
    randomness: Option<&dyn Fn(usize) -> Randomness>,
) -> Result<Vec<u8>, FilecoinError> {
    let count = partitions.len();
    let jobs = partitions
        .into_iter()
        .map(|p| {
            let index = p.index;
            let partition = p.into_engine_partition();
            match randomness {
                Some(pick) => partition.with_randomness(pick(index)),
                None => partition,
            }
        })
        .collect();
    let output = engine.submit_with(jobs, circuit, None)?.wait()?;
    // A C2 output is only ever returned verified (filecoin-proofs' own C2 runs verify_seal).
    if output.proofs.len() != count || output.proofs.iter().any(|p| !p.verified) {
        return Err(FilecoinError::NotVerified {
            verified: output.proofs.iter().filter(|p| p.verified).count(),
            partitions: count,
        });
    }
    let proofs: Vec<Proof> = output.proofs.into_iter().map(|p| p.proof).collect();
    Ok(c2_output(&proofs))
}

/// The C2 output (`SealCommitOutput::proof`): the partitions' proofs in bellperson's encoding,
/// one after another in partition order, as filecoin-proofs' `MultiProof::write` lays them.
pub fn c2_output(proofs: &[Proof]) -> Vec<u8> {
    proofs.iter().flat_map(g16_bellperson::proof::to_bytes).collect()
}

/// Reads a C2 output back into its partitions' proofs.
pub fn read_c2_output(bytes: &[u8], partitions: usize) -> Result<Vec<Proof>, FilecoinError> {
    let expected = partitions * PARTITION_PROOF_BYTES;
    if bytes.len() != expected {
        return Err(FilecoinError::ProofLength { got: bytes.len(), expected, partitions });
    }
    bytes.chunks(PARTITION_PROOF_BYTES).map(|p| Ok(g16_bellperson::proof::from_bytes(p)?)).collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use filecoin_proofs::SectorShape2KiB;

    use super::*;

    /// The partition's witness made challenge by challenge on every core equals storage-proofs'
    /// own run of the whole circuit on one thread, value for value (the sealed 2 KiB sector of
    /// the fixtures: two challenges).
    #[test]
    fn the_witness_by_challenge_equals_the_circuits_own_run() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/c1-2KiB-V1_1.json");
        let c1 = C1Output::read(&path, None).unwrap();
        let typed = c1.typed::<SectorShape2KiB>().unwrap();
        assert!(typed.vanilla_proofs[0].len() >= 2, "the fixture's partition has several challenges");
        let params = public_params::<SectorShape2KiB>(c1.seal_proof()).unwrap();
        let inputs = stacked::PublicInputs {
            replica_id: typed.replica_id,
            tau: Some(Tau {
                comm_d: DefaultPieceDomain::try_from_bytes(&typed.comm_d).unwrap(),
                comm_r: as_safe_commitment(&typed.comm_r, "comm_r").unwrap(),
            }),
            k: None,
            seed: Some(typed.seed),
        };
        let circuit = <Compound<SectorShape2KiB> as CompoundProof<StackedDrg<'_, SectorShape2KiB, DefaultPieceHasher>, _>>::circuit(
            &inputs,
            (),
            &typed.vanilla_proofs[0],
            &params,
            Some(0),
        )
        .unwrap();
        let whole = g16_bellperson::witness(circuit).unwrap();
        let partition = c1.partitions_for(c1.seal_proof(), whole.len()).unwrap().remove(0);
        let by_challenge = partition.witness().unwrap();
        assert_eq!(by_challenge.len(), whole.len());
        if let Some(i) = (0..whole.len()).find(|&i| by_challenge[i] != whole[i]) {
            panic!("value {i} of {} differs", whole.len());
        }
    }
}
