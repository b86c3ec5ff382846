//! `g16 setup`: the circuit-specific setup of a built-in circuit, its scalar multiplications on
//! the backend asked for (the same key as arkworks' setup, byte for byte, on every backend),
//! stored in the key store (where `prove` finds it) and, if asked, written to a file; or, with
//! `--zkey`, a key for a built-in circuit or a circom `.r1cs` written as a snarkjs `.zkey`.

use std::path::{Path, PathBuf};

use g16::backends;
use g16::settings::Settings;
use g16::backend::{Backend, BackendKind};
use g16::circom::{write_new_zkey, R1cs};
use g16::circuits::{BuiltinCircuit, CircuitKind};
use g16::compiled::CompiledCircuit;
use g16::key_store::{self, KeyStore, ToxicWaste};
use g16::prover::Qap;
use g16::{CheckedKey, Timeline};

use crate::cli::{progress, CliError};

pub fn run(
    settings: &Settings,
    circuit: CircuitKind,
    size: u32,
    out: Option<PathBuf>,
    compress: bool,
    seed: Option<u64>,
    backend: BackendKind,
) -> Result<(), CliError> {
    let waste = toxic_waste(seed);
    let started = std::time::Instant::now();
    let device = backends::open(backend, settings)?;
    let on = device.info();
    let tl = Timeline::new();
    let key = {
        let bar = progress::spinner(format!("setup: {circuit} 2^{size} on {}", on.kind));
        let key = key_store::generate_on(&device, circuit, size, waste, &tl);
        bar.finish_and_clear();
        key?
    };
    let store = settings.key_store();
    let stored = store.path(circuit, size);
    let written_in = std::time::Instant::now();
    // The store holds keys from fresh randomness only: a seeded key, which anyone can forge
    // proofs for, goes only where --out says, never silently under `prove`.
    let store_it = waste == ToxicWaste::FromOs;
    if store_it {
        store.store(&key, &stored)?;
    }
    if let Some(out) = &out {
        key.write(out, compress)?;
    }
    let writing = written_in.elapsed().as_secs_f64();
    let written: Vec<String> = [store_it.then(|| stored.clone()), out]
        .into_iter()
        .flatten()
        .map(|p: PathBuf| p.display().to_string())
        .collect();
    let shape = key.shape();
    println!(
        "setup {circuit} 2^{size} on {} ({}): {} variables, {} public inputs, domain 2^{}, {:.1} s; written to {}",
        on.kind,
        on.device,
        shape.num_variables,
        shape.num_instance - 1,
        shape.domain_size.trailing_zeros(),
        started.elapsed().as_secs_f64(),
        if written.is_empty() { "nowhere (give --out)".to_string() } else { written.join(" and ") }
    );
    println!("  {}", phases(&tl, writing));
    Ok(())
}

/// Where a setup's time went: the host's compilation and field work, the backend's scalar
/// multiplications (with their download), and writing the key.
fn phases(tl: &Timeline, writing: f64) -> String {
    let report = g16::timeline::Report::from_events(&tl.events());
    let secs =
        |name: &str| report.spans.iter().filter(|s| s.name == name).map(|s| s.dur_ns()).sum::<u64>() as f64 / 1e9;
    format!(
        "host: compile {:.2} s, QAP at tau {:.2} s; backend, download included: fixed-base G2 {:.2} s, \
         G1 {:.2} s; writing the key {:.2} s",
        secs("setup.compile"),
        secs("setup.qap"),
        secs("setup.fixed_base_g2"),
        secs("setup.fixed_base_g1"),
        writing
    )
}

/// Where `--seed` says a setup's toxic waste comes from: the OS without it; with it, a seed
/// that makes the same key anywhere, said loudly on stderr since anyone who knows it can forge
/// proofs for the key.
pub fn toxic_waste(seed: Option<u64>) -> ToxicWaste {
    match seed {
        None => ToxicWaste::FromOs,
        Some(seed) => {
            eprintln!(
                "warning: --seed {seed}: this key's toxic waste is derived from the seed, so anyone who knows it \
                 can forge proofs that the key accepts; use it for tests and benchmarks only"
            );
            ToxicWaste::Seeded(seed)
        }
    }
}

/// The setup of (circuit, size) with its scalar multiplications on `backend`, with a spinner.
pub fn generate_on(
    backend: &impl Backend,
    circuit: CircuitKind,
    size: u32,
    waste: ToxicWaste,
) -> Result<CheckedKey, CliError> {
    let bar = progress::spinner(format!("setup: {circuit} 2^{size} on {}", backend.info().kind));
    let key = key_store::generate_on(backend, circuit, size, waste, &Timeline::disabled());
    bar.finish_and_clear();
    Ok(key?)
}

/// `g16 setup --zkey`: a new key written as a snarkjs `.zkey`, for a built-in circuit or a
/// circom `.r1cs`.
pub fn run_zkey(
    circuit: CircuitKind,
    size: u32,
    r1cs: Option<&Path>,
    out: &Path,
    seed: Option<u64>,
) -> Result<(), CliError> {
    let waste = toxic_waste(seed);
    let started = std::time::Instant::now();
    let compiled = match r1cs {
        Some(path) => R1cs::read(path)?.into_circuit(Qap::Snarkjs)?,
        None => {
            let bar = progress::spinner(format!("compile: {circuit} 2^{size}"));
            let compiled = BuiltinCircuit::new(circuit, size, 0)?.compile();
            bar.finish_and_clear();
            compiled.map_err(g16::circom::CircomError::from)?
        }
    };
    let bar = progress::spinner(format!("setup: {} constraints into {}", compiled.num_constraints(), out.display()));
    let bytes = write_new_zkey(&compiled, &mut waste.rng())?;
    bar.finish_and_clear();
    std::fs::write(out, &bytes).map_err(|e| CliError::Usage(format!("cannot write {}: {e}", out.display())))?;
    println!(
        "wrote {} ({} bytes): {} constraints, {} variables, {} public, domain 2^{}, in {:.1} s",
        out.display(),
        bytes.len(),
        compiled.num_constraints(),
        compiled.num_variables(),
        compiled.num_instance() - 1,
        compiled.domain_size().trailing_zeros(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The stored key for (circuit, size), generated on `backend` and stored on first use (saying
/// so): the same key on every backend, made where its scalar multiplications are fastest.
pub fn stored_or_generated<B: Backend + ?Sized>(
    store: &KeyStore,
    backend: &B,
    circuit: CircuitKind,
    size: u32,
) -> Result<CheckedKey, CliError> {
    let bar = std::cell::RefCell::new(None);
    let on = backend.info().kind;
    let result = store.get_or_generate_on(backend, circuit, size, |path| {
        eprintln!("no stored key for {circuit} 2^{size}: generating one on {on} (saved to {})", path.display());
        *bar.borrow_mut() = Some(progress::spinner(format!("setup: {circuit} 2^{size} on {on}")));
    });
    if let Some(bar) = bar.into_inner() {
        bar.finish_and_clear();
    }
    Ok(result?.0)
}

/// The stored compiled circuit for (circuit, size), compiled and stored on first use.
pub fn stored_or_compiled(store: &KeyStore, circuit: CircuitKind, size: u32) -> Result<CompiledCircuit, CliError> {
    let bar = std::cell::RefCell::new(None);
    let result = store.get_or_compile(circuit, size, |path| {
        eprintln!("no compiled {circuit} 2^{size}: compiling it (saved to {})", path.display());
        *bar.borrow_mut() = Some(progress::spinner(format!("compile: {circuit} 2^{size}")));
    });
    if let Some(bar) = bar.into_inner() {
        bar.finish_and_clear();
    }
    Ok(result?)
}
