//! Key generation for the built-in circuits, and the cache that lets `prove` reuse keys.
//!
//! Keys are cached per (circuit, size) under `$G16_CACHE_DIR`, else `$XDG_CACHE_HOME/g16`,
//! else `~/.cache/g16`. The path carries [`CIRCUITS_VERSION`]: a change to a circuit's
//! constraints must bump it, so a stale key is never picked up (the prover's shape check
//! would catch a change of size, but not a change of constraints of the same size).

use std::path::{Path, PathBuf};

use ark_groth16::Groth16;
use g16_core::circuits::{BuiltinCircuit, CircuitKind};
use g16_core::prover::key::{load_proving_key, write_proving_key};
use g16_core::{Curve, ProvingKey};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::{progress, CliError};

/// Bump when any built-in circuit's constraint system changes.
pub const CIRCUITS_VERSION: u32 = 1;

pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("G16_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("g16");
    }
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(home).join(".cache").join("g16"),
        None => PathBuf::from(".g16-cache"),
    }
}

pub fn cached_key_path(circuit: CircuitKind, size: u32) -> PathBuf {
    cache_dir().join(format!("keys-v{CIRCUITS_VERSION}")).join(format!("{}-{size}.pk", circuit.name()))
}

/// Generates a key with arkworks (circuit-specific setup, deterministic in `seed`).
pub fn generate(circuit: CircuitKind, size: u32, seed: u64) -> Result<ProvingKey, CliError> {
    let instance = BuiltinCircuit::new(circuit, size, seed)?;
    let bar = progress::spinner(format!("setup: {circuit} 2^{size}"));
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5e7u64);
    let pk = Groth16::<Curve>::generate_random_parameters_with_reduction(instance, &mut rng)
        .map_err(|e| CliError::Setup(e.to_string()));
    bar.finish_and_clear();
    pk
}

/// The cached key for (circuit, size), generated and saved on first use.
pub fn cached_or_generate(circuit: CircuitKind, size: u32) -> Result<(ProvingKey, PathBuf), CliError> {
    let path = cached_key_path(circuit, size);
    if path.exists() {
        return Ok((load_proving_key(&path)?, path));
    }
    eprintln!("no cached key for {circuit} 2^{size}: generating one (saved to {})", path.display());
    let pk = generate(circuit, size, 0)?;
    write_proving_key(&pk, &path, false)?;
    Ok((pk, path))
}

pub fn setup_command(
    circuit: CircuitKind,
    size: u32,
    out: Option<PathBuf>,
    compress: bool,
    seed: u64,
) -> Result<(), CliError> {
    let started = std::time::Instant::now();
    let pk = generate(circuit, size, seed)?;
    let cache = cached_key_path(circuit, size);
    // The cache holds the seed-0 key that `prove` expects; other seeds go only where asked.
    if seed == 0 {
        write_proving_key(&pk, &cache, false)?;
    }
    if let Some(out) = &out {
        write_proving_key(&pk, out, compress)?;
    }
    let written: Vec<String> = [(seed == 0).then(|| cache.clone()), out]
        .into_iter()
        .flatten()
        .map(|p: PathBuf| p.display().to_string())
        .collect();
    println!(
        "setup {circuit} 2^{size}: {} variables, {} public inputs, domain 2^{}, {:.1} s; written to {}",
        pk.a_query.len(),
        pk.vk.gamma_abc_g1.len() - 1,
        (pk.h_query.len() + 1).trailing_zeros(),
        started.elapsed().as_secs_f64(),
        if written.is_empty() { "nowhere (give --out)".to_string() } else { written.join(" and ") }
    );
    Ok(())
}

pub fn load(path: &Path) -> Result<ProvingKey, CliError> {
    Ok(load_proving_key(path)?)
}
