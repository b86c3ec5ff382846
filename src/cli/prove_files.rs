//! Proofs from files rather than built-in circuits, one proof a command:
//!
//! - `g16 prove --zkey F --wtns F`: a circom circuit, from snarkjs's Groth16 key (which holds
//!   the circuit's A and B) and circom's witness;
//! - `g16 prove --compiled F --witness F --key F`: a circuit compiled by `g16 compile` (or any
//!   compiled-circuit file), its arkworks key, and a witness file (`g16 witness` writes one).
//!
//! Each proof is verified before anything is written; then `DIR/proof.json` and
//! `DIR/public.json` as snarkjs writes them (`snarkjs groth16 verify` reads them), and for an
//! arkworks key also `DIR/proof.bin`, the proof in arkworks' compressed encoding.

use std::path::Path;
use std::time::Instant;

use ark_serialize::CanonicalSerialize;
use g16::backend::{Backend, BackendKind};
use g16::backends::{self, AnyBackend};
use g16::circom::json::{proof_json, public_json};
use g16::circom::wtns::{read_wtns_file, write_wtns};
use g16::circom::CircomError;
use g16::circuits::{BuiltinCircuit, CircuitKind};
use g16::compiled::file::CircuitFile;
use g16::compiled::CompiledCircuit;
use g16::key_store::{key_digest_of, KeyStoreError};
use g16::prover::verify;
use g16::settings::Settings;
use g16::timeline::{Layer, Timeline};
use g16::{CheckedKey, Fr, Proof, ProveError, Prover};

use crate::cli::opening::Opening;
use crate::cli::{io_err, CliError};

/// Proves the witness `wtns` with the key `zkey` on `backend` and writes the proof into `out`.
pub fn prove_zkey(
    settings: &Settings,
    zkey: &Path,
    wtns: &Path,
    out: &Path,
    backend: BackendKind,
) -> Result<(), CliError> {
    let started = Instant::now();
    let settings = &settings.for_one_proof();
    // The key's points are checked on the device that proves (once per file: its digest is
    // recorded, and the same bytes are trusted next time), which opens while the file is read.
    let (backend, zkey) = std::thread::scope(|scope| {
        let opening = Opening::start(scope, || backends::open(backend, settings));
        let loaded = settings.checked_files().load_zkey(zkey, &opening);
        Ok::<_, CliError>((opening.finish()?, loaded?.0))
    })?;
    let z = read_wtns_file(wtns)?;
    let proof = prove_one(&backend, &zkey.key, &zkey.circuit, &z, out, started)?;
    // The key carries no C matrix, so an unsatisfied witness shows as a proof that does not
    // verify (and nothing is written), not as a row before the MSMs.
    write_outputs(out, &proof, &z[1..zkey.circuit.num_instance()], false)
}

/// Proves the witness `witness` of the compiled circuit `compiled` with the arkworks key `key`
/// on `backend` and writes the proof into `out`. A circuit compiled beside another key is
/// refused before any work.
pub fn prove_compiled(
    settings: &Settings,
    compiled: &Path,
    witness: &Path,
    key_path: &Path,
    out: &Path,
    backend: BackendKind,
) -> Result<(), CliError> {
    let started = Instant::now();
    let settings = &settings.for_one_proof();
    // The backend opens and the circuit's file is read while the key's is read and decoded.
    let (backend, file, key) = std::thread::scope(|scope| {
        let opening = Opening::start(scope, || backends::open(backend, settings));
        let file = scope.spawn(|| CircuitFile::read(compiled).map_err(KeyStoreError::from));
        let loaded = settings.checked_files().load_key(key_path, &opening);
        let file = file.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok::<_, CliError>((opening.finish()?, file?, loaded?.0))
    })?;
    if let Some(bound) = file.key_digest {
        if bound != key_digest_of(&key)? {
            return Err(CliError::Usage(format!(
                "{} was compiled beside another proving key than {}: compile it again beside this key",
                compiled.display(),
                key_path.display(),
            )));
        }
    }
    let z = read_wtns_file(witness)?;
    let proof = prove_one(&backend, &key, &file.circuit, &z, out, started)?;
    write_outputs(out, &proof, &z[1..file.circuit.num_instance()], true)
}

/// Checks the witness against the circuit and the circuit against the key, proves on a fresh
/// backend with fresh (r, s), and verifies. `out` is created first, so that an unwritable one
/// fails before the work.
fn prove_one(
    backend: &AnyBackend,
    key: &CheckedKey,
    circuit: &CompiledCircuit,
    z: &[Fr],
    out: &Path,
    started: Instant,
) -> Result<Proof, CliError> {
    if z.len() != circuit.num_variables() {
        return Err(CircomError::WitnessLength { expected: circuit.num_variables(), got: z.len() }.into());
    }
    circuit.check_key(&key.shape()).map_err(g16::ProveError::from)?;
    let read = started.elapsed();
    std::fs::create_dir_all(out).map_err(io_err(format!("cannot create {}", out.display())))?;

    let tl = Timeline::new();
    let prover = Prover::new(backend);
    let (prepared_key, prepared_circuit) = {
        let _g = tl.span(Layer::Prover, "prepare");
        // One proof in this process: no warm-up (it would cost what the proof costs).
        (prover.prepare_for_one_proof(key)?, prover.prepare_circuit(circuit)?)
    };
    let proving = Instant::now();
    let proof = prover.prove_assignment(&prepared_key, &prepared_circuit, z, &mut rand::rngs::OsRng, &tl)?;
    let proved = proving.elapsed();
    let public = &z[1..circuit.num_instance()];
    if !verify(&prepared_key, &proof, public)? {
        return Err(
            ProveError::Verify("the proof does not verify: the witness does not satisfy the circuit".into()).into()
        );
    }
    println!(
        "proof verified: {} constraints, {} public inputs, domain 2^{} on {}; read {:.0} ms, prepared {:.0} ms, proved {:.0} ms",
        circuit.num_constraints(),
        public.len(),
        circuit.domain_size().trailing_zeros(),
        backend.info().device,
        read.as_secs_f64() * 1e3,
        (proving - started).saturating_sub(read).as_secs_f64() * 1e3,
        proved.as_secs_f64() * 1e3,
    );
    Ok(proof)
}

fn write_outputs(out: &Path, proof: &Proof, public: &[Fr], arkworks: bool) -> Result<(), CliError> {
    let mut files =
        vec![("proof.json", proof_json(proof).into_bytes()), ("public.json", public_json(public).into_bytes())];
    if arkworks {
        let mut bytes = Vec::new();
        proof.serialize_compressed(&mut bytes).map_err(|e| CliError::Usage(format!("serializing the proof: {e}")))?;
        files.push(("proof.bin", bytes));
    }
    for (name, bytes) in &files {
        let path = out.join(name);
        std::fs::write(&path, bytes).map_err(io_err(format!("cannot write {}", path.display())))?;
    }
    let names: Vec<String> = files.iter().map(|(n, _)| out.join(n).display().to_string()).collect();
    println!("wrote {}", names.join(", "));
    Ok(())
}

/// `g16 witness`: the witness of one instance of a built-in circuit (chosen by `seed`, as
/// `g16 prove --seed` chooses them), as a `.wtns` file for `g16 prove --compiled`.
pub fn write_witness(circuit: CircuitKind, size: u32, seed: u64, out: &Path) -> Result<(), CliError> {
    let started = Instant::now();
    let instance = BuiltinCircuit::new(circuit, size, seed)?;
    let z = instance.assignment()?;
    std::fs::write(out, write_wtns(&z)).map_err(io_err(format!("cannot write {}", out.display())))?;
    println!(
        "witness of {circuit} 2^{size} (seed {seed}): {} values in {:.0} ms; written to {}",
        z.len(),
        started.elapsed().as_secs_f64() * 1e3,
        out.display()
    );
    Ok(())
}
