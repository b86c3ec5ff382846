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
use std::sync::OnceLock;
use std::time::{Duration, Instant};

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
use g16::prover::{verify, PreparedCircuit, PreparedKey};
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
    let mut timings = Timings::start();
    let settings = &settings.for_one_proof();
    // The key's points are checked on the device that proves (once per file: its digest is
    // recorded, and the same bytes are trusted next time), which opens while the file is read;
    // the witness is read beside them.
    let (backend, zkey, z) = std::thread::scope(|scope| {
        let opening = Opening::start(scope, || timings.open(|| backends::open(backend, settings)));
        let z = scope.spawn(|| read_wtns_file(wtns));
        let loaded = settings.checked_files().load_zkey(zkey, &opening);
        let z = joined(z);
        Ok::<_, CliError>((opening.finish()?, loaded?.0, z?))
    })?;
    timings.mark("key");
    let proof = prove_one(&backend, &zkey.key, &zkey.circuit, (None, None), &z, out, &mut timings)?;
    // The key carries no C matrix, so an unsatisfied witness shows as a proof that does not
    // verify (and nothing is written), not as a row before the MSMs.
    write_outputs(out, &proof, &z[1..zkey.circuit.num_instance()], false)?;
    timings.mark("outputs");
    drop((zkey, z, backend));
    timings.mark("released");
    println!("{}", timings.line());
    Ok(())
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
    let mut timings = Timings::start();
    let settings = &settings.for_one_proof();
    // While the key's file is read and decoded: the backend opens, the circuit's file is read
    // and its matrices made resident once the backend is open, and the witness is read.
    let (backend, (file, resident), key, z) = std::thread::scope(|scope| {
        let opening = Opening::start(scope, || timings.open(|| backends::open(backend, settings)));
        // A scope of their own: the circuit's thread borrows the opening, which outlives it.
        let (circuit, z, loaded) = std::thread::scope(|beside| {
            let circuit = beside.spawn(|| {
                let file = CircuitFile::read(compiled).map_err(KeyStoreError::from)?;
                // No backend: `finish` below reports why.
                let resident = opening
                    .backend()
                    .map(|b| Prover::new(b).prepare_circuit_for_one_proof(&file.circuit))
                    .transpose()?;
                Ok::<_, CliError>((file, resident))
            });
            let z = beside.spawn(|| read_wtns_file(witness));
            // The key goes to the device as soon as it and the backend are in, beside the
            // circuit's upload rather than after it.
            let loaded =
                settings.checked_files().load_key(key_path, &opening).map_err(CliError::from).and_then(|(key, _)| {
                    let uploaded = opening.backend().map(|b| Prover::new(b).prepare_for_one_proof(&key)).transpose()?;
                    Ok((key, uploaded))
                });
            (joined(circuit), joined(z), loaded)
        });
        Ok::<_, CliError>((opening.finish()?, circuit?, loaded?, z?))
    })?;
    let (key, prepared_key) = key;
    timings.mark("key");
    if let Some(bound) = file.key_digest {
        if bound != key_digest_of(&key)? {
            return Err(CliError::Usage(format!(
                "{} was compiled beside another proving key than {}: compile it again beside this key",
                compiled.display(),
                key_path.display(),
            )));
        }
    }
    let proof = prove_one(&backend, &key, &file.circuit, (prepared_key, resident), &z, out, &mut timings)?;
    write_outputs(out, &proof, &z[1..file.circuit.num_instance()], true)?;
    timings.mark("outputs");
    drop((key, file, z, backend));
    timings.mark("released");
    println!("{}", timings.line());
    Ok(())
}

/// A scoped thread's result; its panic goes on in the caller.
fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Where a one-proof command's time went, printed as one line at its end: the phases in order
/// on the command's own clock, and the backend's opening, which runs beside the key's reading.
/// A fresh process's wall clock less the line's total is its start and exit. (Ending without
/// the release only moves its time: on an H100 host a 2^20 zkey's command released in 67-85
/// ms and exited in ~75; without the release it exited in ~130-137 ms, the same wall clock.)
struct Timings {
    started: Instant,
    last: Instant,
    phases: Vec<(&'static str, Duration)>,
    opened_in: OnceLock<Duration>,
}

impl Timings {
    fn start() -> Timings {
        let now = Instant::now();
        Timings { started: now, last: now, phases: Vec::new(), opened_in: OnceLock::new() }
    }

    /// Runs `open` (on the opening thread), recording how long it took.
    fn open<T>(&self, open: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let opened = open();
        let _ = self.opened_in.set(t.elapsed());
        opened
    }

    /// Ends the phase `name` now.
    fn mark(&mut self, name: &'static str) {
        let now = Instant::now();
        self.phases.push((name, now - self.last));
        self.last = now;
    }

    fn line(&self) -> String {
        let ms = |d: &Duration| d.as_secs_f64() * 1e3;
        let phases: Vec<String> = self.phases.iter().map(|(name, d)| format!("{name} {:.0}", ms(d))).collect();
        let opened = self
            .opened_in
            .get()
            .map_or(String::new(), |d| format!(" (the backend opened in {:.0} beside the key)", ms(d)));
        format!("timings, ms: {}{opened}; {:.0} in all", phases.join(", "), ms(&(self.last - self.started)))
    }
}

/// Checks the witness against the circuit and the circuit against the key, proves on a fresh
/// backend with fresh (r, s), and verifies. `out` is created first, so that an unwritable one
/// fails before the work. `uploaded` and `resident`: the key's bases and the circuit's
/// matrices, if they were made resident on `backend` already.
fn prove_one(
    backend: &AnyBackend,
    key: &CheckedKey,
    circuit: &CompiledCircuit,
    (uploaded, resident): (Option<PreparedKey>, Option<PreparedCircuit>),
    z: &[Fr],
    out: &Path,
    timings: &mut Timings,
) -> Result<Proof, CliError> {
    if z.len() != circuit.num_variables() {
        return Err(CircomError::WitnessLength { expected: circuit.num_variables(), got: z.len() }.into());
    }
    circuit.check_key(&key.shape()).map_err(g16::ProveError::from)?;
    std::fs::create_dir_all(out).map_err(io_err(format!("cannot create {}", out.display())))?;

    let tl = Timeline::new();
    let prover = Prover::new(backend);
    let (prepared_key, prepared_circuit) = {
        let _g = tl.span(Layer::Prover, "prepare");
        // One proof in this process: no warm-up (it would cost what the proof costs).
        let prepared_circuit = match resident {
            Some(resident) => resident,
            None => prover.prepare_circuit_for_one_proof(circuit)?,
        };
        let prepared_key = match uploaded {
            Some(uploaded) => uploaded,
            None => prover.prepare_for_one_proof(key)?,
        };
        (prepared_key, prepared_circuit)
    };
    timings.mark("prepare");
    let proof = prover.prove_assignment(&prepared_key, &prepared_circuit, z, &mut rand::rngs::OsRng, &tl)?;
    timings.mark("proof");
    let public = &z[1..circuit.num_instance()];
    if !verify(&prepared_key, &proof, public)? {
        return Err(
            ProveError::Verify("the proof does not verify: the witness does not satisfy the circuit".into()).into()
        );
    }
    timings.mark("verify");
    println!(
        "proof verified: {} constraints, {} public inputs, domain 2^{} on {}",
        circuit.num_constraints(),
        public.len(),
        circuit.domain_size().trailing_zeros(),
        backend.info().device,
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
