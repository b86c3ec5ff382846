//! Key generation for the built-in circuits, and the cache that lets `prove` reuse keys.
//!
//! Keys are cached per (circuit, size) under `$G16_CACHE_DIR`, else `$XDG_CACHE_HOME/g16`,
//! else `~/.cache/g16`. The path carries [`CIRCUITS_VERSION`]: a change to a circuit's
//! constraints must bump it, so a stale key is never picked up (the prover's shape check
//! would catch a change of size, but not a change of constraints of the same size).
//!
//! Beside each cached key lies `<key>.sha256`, the digest of a key file that this cache
//! generated or fully validated. A load whose bytes match it checks the points' curve
//! equation only; the subgroup checks, most of a load (85 s for a 2^22 key on 32 threads),
//! run again whenever the bytes differ. The digest guards against a changed or corrupted file,
//! not against someone who can rewrite both files: the cache is trusted as the user's own.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use ark_groth16::Groth16;
use g16_core::circuits::{BuiltinCircuit, CircuitKind};
use g16_core::prover::key::{load_proving_key, read_proving_key_with, write_proving_key, KeyError, PointChecks};
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
        return Ok((load_cached(&path)?, path));
    }
    eprintln!("no cached key for {circuit} 2^{size}: generating one (saved to {})", path.display());
    let pk = generate(circuit, size, 0)?;
    store_cached(&pk, &path)?;
    Ok((pk, path))
}

/// Writes a key this program generated (valid by construction) into the cache, with its digest.
fn store_cached(pk: &ProvingKey, path: &Path) -> Result<(), CliError> {
    let bytes = write_proving_key(pk, path, false)?;
    write_digest(path, &bytes)
}

/// Reads a cached key: the curve checks alone where the digest beside it matches the bytes,
/// every check otherwise (and then the digest is written, so the next load is quick).
fn load_cached(path: &Path) -> Result<ProvingKey, CliError> {
    let bytes = std::fs::read(path).map_err(|source| KeyError::Io { path: path.to_path_buf(), source })?;
    let recorded = std::fs::read_to_string(digest_path(path)).unwrap_or_default();
    if recorded.trim() == digest(&bytes) {
        return Ok(read_proving_key_with(&bytes, PointChecks::CurveOnly)?);
    }
    let pk = read_proving_key_with(&bytes, PointChecks::Full)?;
    // The digest only speeds up the next load: a cache that cannot take it still serves keys.
    if let Err(e) = write_digest(path, &bytes) {
        eprintln!("note: the key's digest was not saved, so the next load checks every point again: {e}");
    }
    Ok(pk)
}

fn digest_path(key: &Path) -> PathBuf {
    let mut name = key.file_name().unwrap_or_default().to_os_string();
    name.push(".sha256");
    key.with_file_name(name)
}

fn write_digest(key: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let path = digest_path(key);
    std::fs::write(&path, digest(bytes) + "\n").map_err(|source| KeyError::Write { path, source })?;
    Ok(())
}

/// SHA-256 over the SHA-256 of each 64 MiB piece and the length: the pieces hash in parallel,
/// so a 2.4 GB key takes about a second.
fn digest(bytes: &[u8]) -> String {
    const PIECE: usize = 64 << 20;
    let pieces: Vec<[u8; 32]> = bytes.par_chunks(PIECE).map(|piece| Sha256::digest(piece).into()).collect();
    let mut whole = Sha256::new();
    whole.update((bytes.len() as u64).to_le_bytes());
    for piece in &pieces {
        whole.update(piece);
    }
    whole.finalize().iter().map(|b| format!("{b:02x}")).collect()
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
        store_cached(&pk, &cache)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::{Fq, G1Affine};
    use ark_ff::Field;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("g16-keys-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("synthetic-6.pk")
    }

    /// A point on the curve but outside the prime-order subgroup.
    fn g1_outside_subgroup() -> G1Affine {
        let mut x = Fq::from(1u64);
        loop {
            if let Some(p) = G1Affine::get_point_from_x_unchecked(x, false) {
                if !p.is_in_correct_subgroup_assuming_on_curve() {
                    return p;
                }
            }
            x += Fq::ONE;
        }
    }

    #[test]
    fn a_cached_key_loads_back_equal_with_its_digest() {
        let circuit = CircuitKind::Synthetic;
        let path = scratch("round-trip");
        let pk = generate(circuit, circuit.min_size(), 0).unwrap();
        store_cached(&pk, &path).unwrap();
        let recorded = std::fs::read_to_string(digest_path(&path)).unwrap();
        assert_eq!(recorded.trim(), digest(&std::fs::read(&path).unwrap()));
        assert_eq!(load_cached(&path).unwrap(), pk);
        // A stale digest (from other bytes) sends the load through every check, then is renewed.
        std::fs::write(digest_path(&path), "0000\n").unwrap();
        assert_eq!(load_cached(&path).unwrap(), pk);
        assert_eq!(std::fs::read_to_string(digest_path(&path)).unwrap(), recorded);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn a_digest_that_cannot_be_written_does_not_fail_the_load() {
        let circuit = CircuitKind::Synthetic;
        let path = scratch("unwritable-digest");
        let pk = generate(circuit, circuit.min_size(), 0).unwrap();
        write_proving_key(&pk, &path, false).unwrap();
        std::fs::create_dir_all(digest_path(&path)).unwrap(); // a directory where the digest goes
        assert_eq!(load_cached(&path).unwrap(), pk);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn a_changed_cache_file_gets_the_subgroup_checks_again() {
        let circuit = CircuitKind::Synthetic;
        let path = scratch("changed");
        let mut pk = generate(circuit, circuit.min_size(), 0).unwrap();
        store_cached(&pk, &path).unwrap();
        // The file changes under the digest: a point on the curve, outside the subgroup.
        let last = pk.h_query.len() - 1;
        pk.h_query[last] = g1_outside_subgroup();
        write_proving_key(&pk, &path, false).unwrap();
        match load_cached(&path) {
            Err(CliError::Key(KeyError::InvalidPoint { query: "h_query", index, .. })) => assert_eq!(index, last),
            other => panic!("expected h_query[{last}] outside the subgroup, got {other:?}"),
        }
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn digests_differ_with_content_and_length() {
        let a = vec![7u8; 1000];
        let mut b = a.clone();
        b[999] = 8;
        assert_ne!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&a[..999]));
        assert_eq!(digest(&a), digest(&a.clone()));
    }
}
