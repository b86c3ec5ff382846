//! `g16 compile`: a built-in circuit's R1CS, compiled once into a file that proofs of any of
//! its instances read instead of synthesizing the constraints again.

use std::path::Path;

use g16::settings::Settings;
use g16::circuits::{BuiltinCircuit, CircuitKind};
use g16::compiled::file::CircuitFile;
use g16::key_store::KeyStoreError;

use crate::cli::{progress, CliError};

pub fn run(settings: &Settings, circuit: CircuitKind, size: u32, out: &Path) -> Result<(), CliError> {
    let started = std::time::Instant::now();
    let instance = BuiltinCircuit::new(circuit, size, 0)?;
    let bar = progress::spinner(format!("compile: {circuit} 2^{size}"));
    let compiled = instance.compile();
    bar.finish_and_clear();
    let compiled = compiled.map_err(KeyStoreError::from)?;
    // Bound to the stored key of the same circuit, where there is one.
    let key_digest = settings.key_store().key_digest(circuit, size);
    let file = CircuitFile { circuit: compiled, key_digest };
    file.write(out).map_err(KeyStoreError::from)?;
    let (a, b, c) = file.circuit.matrices();
    println!(
        "compiled {circuit} 2^{size}: {} constraints, {} variables ({} public inputs), domain 2^{}, {} + {} + {} \
         matrix entries, {:.1} s; written to {}{}",
        file.circuit.num_constraints(),
        file.circuit.num_variables(),
        file.circuit.num_instance() - 1,
        file.circuit.domain_size().trailing_zeros(),
        a.entries(),
        b.entries(),
        c.map_or(0, |c| c.entries()),
        started.elapsed().as_secs_f64(),
        out.display(),
        if key_digest.is_some() { " (bound to the stored key)" } else { "" },
    );
    Ok(())
}
