//! Where proving keys live between runs: a directory of keys for the built-in circuits, each
//! with the digest of bytes that passed every check, so a reload need not check again what
//! it checked before. The CLI and (later) the proving service share it.
//!
//! Keys are stored per (circuit, size) under `keys-v<CIRCUITS_VERSION>/`. A change to a
//! circuit's constraints must bump [`CIRCUITS_VERSION`], so a stale key is never picked up (the
//! prover's shape check would catch a change of size, not a change of constraints of the same
//! size).
//!
//! Beside each key lies `<key>.sha256`, the digest of a key file that this store generated or
//! fully checked. A load whose bytes match it checks the points' curve equation only; the
//! subgroup checks, most of a load (85 s for a 2^22 key on 32 threads), run again whenever
//! the bytes differ. The digest guards against a changed or corrupted file, not against
//! someone who can rewrite both files: the store is trusted as the user's own.

use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use g16_backend::Backend;
use crate::circuits::{BuiltinCircuit, CircuitError, CircuitKind};
use crate::compiled::file::CircuitFile;
use crate::compiled::{CompileError, CompiledCircuit};
pub use crate::digest::{digest, digest_bytes};
use crate::digest::{from_hex, FileDigest};
use crate::prover::key::{CheckedKey, DecodedKey, KeyError, OnBackend, OnHost, PointChecks, SubgroupCheck};
use crate::prover::setup::{self, SetupError};
use crate::timeline::Timeline;

/// Bump when any built-in circuit's constraint system changes.
pub const CIRCUITS_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum KeyStoreError {
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error(transparent)]
    Circuit(#[from] CircuitError),
    #[error(transparent)]
    Compile(#[from] CompileError),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(
        "the compiled circuit {path} was made beside another key than the one stored: compile it again (delete it)"
    )]
    StaleCircuit { path: PathBuf },
}

/// A directory of proving keys for the built-in circuits.
#[derive(Clone, Debug)]
pub struct KeyStore {
    dir: PathBuf,
}

/// Where a key came from, for whoever reports on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// Read back; its digest matched, so no point was checked again.
    Stored,
    /// Read back and checked in full (no digest, or another one).
    Checked,
    /// Made by arkworks' setup now, and stored.
    Generated,
}

impl KeyStore {
    /// A store in `dir` (created when a key is first stored).
    pub fn new(dir: impl Into<PathBuf>) -> KeyStore {
        KeyStore { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of the key for (circuit, size).
    pub fn path(&self, circuit: CircuitKind, size: u32) -> PathBuf {
        self.dir.join(format!("keys-v{CIRCUITS_VERSION}")).join(format!("{}-{size}.pk", circuit.name()))
    }

    /// The stored key for (circuit, size), generated (its toxic waste from the OS) and stored
    /// on first use; `generating` is told before a generation starts (seconds to minutes).
    pub fn get_or_generate(
        &self,
        circuit: CircuitKind,
        size: u32,
        generating: impl FnOnce(&Path),
    ) -> Result<(CheckedKey, KeySource), KeyStoreError> {
        self.get_or_else(circuit, size, &OnHost, generating, || generate(circuit, size, ToxicWaste::FromOs))
    }

    /// [`KeyStore::get_or_generate`] with the setup's scalar multiplications on `backend`
    /// ([`generate_on`]), and there too the subgroup checks of a stored key whose digest does
    /// not match.
    pub fn get_or_generate_on<B: Backend + ?Sized>(
        &self,
        backend: &B,
        circuit: CircuitKind,
        size: u32,
        generating: impl FnOnce(&Path),
    ) -> Result<(CheckedKey, KeySource), KeyStoreError> {
        self.get_or_else(circuit, size, &OnBackend(backend), generating, || {
            generate_on(backend, circuit, size, ToxicWaste::FromOs, &Timeline::disabled())
        })
    }

    fn get_or_else(
        &self,
        circuit: CircuitKind,
        size: u32,
        checker: &dyn SubgroupCheck,
        generating: impl FnOnce(&Path),
        generate: impl FnOnce() -> Result<CheckedKey, KeyStoreError>,
    ) -> Result<(CheckedKey, KeySource), KeyStoreError> {
        let path = self.path(circuit, size);
        if path.exists() {
            return Ok(self.load_on(&path, checker)?);
        }
        generating(&path);
        let key = generate()?;
        self.store(&key, &path)?;
        Ok((key, KeySource::Generated))
    }

    /// The file of the compiled circuit for (circuit, size), beside its key.
    pub fn circuit_path(&self, circuit: CircuitKind, size: u32) -> PathBuf {
        self.path(circuit, size).with_extension("circ")
    }

    /// The stored compiled circuit for (circuit, size), compiled and stored on first use
    /// (`compiling` is told first), bound to the stored key by the key's digest: a circuit file
    /// made beside another key is refused rather than used with this one.
    pub fn get_or_compile(
        &self,
        circuit: CircuitKind,
        size: u32,
        compiling: impl FnOnce(&Path),
    ) -> Result<CompiledCircuit, KeyStoreError> {
        let path = self.circuit_path(circuit, size);
        let key_digest = self.key_digest(circuit, size);
        if path.exists() {
            let file = CircuitFile::read(&path)?;
            if file.key_digest.is_some() && file.key_digest != key_digest {
                return Err(KeyStoreError::StaleCircuit { path });
            }
            return Ok(file.circuit);
        }
        compiling(&path);
        let compiled = BuiltinCircuit::new(circuit, size, 0)?.compile()?;
        let file = CircuitFile { circuit: compiled, key_digest };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| KeyError::Write { path: dir.to_path_buf(), source })?;
        }
        file.write(&path)?;
        Ok(file.circuit)
    }

    /// The digest recorded beside the stored key of (circuit, size), if there is one.
    pub fn key_digest(&self, circuit: CircuitKind, size: u32) -> Option<FileDigest> {
        from_hex(&std::fs::read_to_string(digest_path(&self.path(circuit, size))).ok()?)
    }

    /// Writes a key into the store with its digest (the key passed every check, or was made
    /// by [`generate`]: a [`CheckedKey`] is one or the other).
    pub fn store(&self, key: &CheckedKey, path: &Path) -> Result<(), KeyError> {
        let bytes = key.write(path, false)?;
        write_digest(path, &digest_bytes(&bytes))
    }

    /// Reads a stored key, every check on the host ([`KeyStore::load_on`]).
    pub fn load(&self, path: &Path) -> Result<(CheckedKey, KeySource), KeyError> {
        self.load_on(path, &OnHost)
    }

    /// Reads a stored key, streamed and digested on the way: no point checked where the digest
    /// beside it matches the bytes ([`PointChecks::Trusted`]), every check otherwise, the
    /// subgroup checks on `checker` (and then the digest is written, so the next load is quick;
    /// a digest that cannot be written only costs that).
    pub fn load_on(&self, path: &Path, checker: &dyn SubgroupCheck) -> Result<(CheckedKey, KeySource), KeyError> {
        let recorded = std::fs::read_to_string(digest_path(path)).ok().and_then(|text| from_hex(&text));
        // With a digest beside it the key is likely to be trusted: its curve equations wait
        // for the digest's verdict rather than run as it decodes.
        let decoded = match recorded {
            Some(_) => DecodedKey::read_expecting_trust(path)?,
            None => DecodedKey::read(path)?,
        };
        let digest = decoded.digest();
        if recorded == Some(digest) {
            return Ok((decoded.check(PointChecks::Trusted)?, KeySource::Stored));
        }
        let key = decoded.check(PointChecks::FullOn(checker))?;
        let _ = write_digest(path, &digest);
        Ok((key, KeySource::Checked))
    }
}

/// Where a setup's toxic waste (τ, α, β, γ, δ) comes from. Whoever knows it can make proofs
/// of false statements that the key's verifier accepts, so a key that protects anything draws it
/// from the operating system and forgets it ([`ToxicWaste::FromOs`], the default); a seed makes
/// the same key again anywhere, which is what tests and benchmarks want and all a forger needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToxicWaste {
    #[default]
    FromOs,
    /// Deterministic in the seed: for tests and benchmarks only.
    Seeded(u64),
}

impl ToxicWaste {
    /// The RNG the setup draws from.
    pub fn rng(self) -> ChaCha20Rng {
        match self {
            ToxicWaste::FromOs => ChaCha20Rng::from_entropy(),
            ToxicWaste::Seeded(seed) => ChaCha20Rng::seed_from_u64(seed ^ 0x5e7u64),
        }
    }
}

/// Generates a key for a built-in circuit with arkworks (circuit-specific setup).
pub fn generate(circuit: CircuitKind, size: u32, waste: ToxicWaste) -> Result<CheckedKey, KeyStoreError> {
    let instance = BuiltinCircuit::new(circuit, size, 0)?;
    Ok(CheckedKey::generate(instance, &mut waste.rng())?)
}

/// [`generate`] with the scalar multiplications on `backend` ([`crate::prover::setup`]): the
/// same key, byte for byte, for the same (circuit, size) and seed.
pub fn generate_on<B: Backend + ?Sized>(
    backend: &B,
    circuit: CircuitKind,
    size: u32,
    waste: ToxicWaste,
    tl: &Timeline,
) -> Result<CheckedKey, KeyStoreError> {
    let compiled = {
        let _g = tl.span(crate::timeline::Layer::Prover, "setup.compile");
        BuiltinCircuit::new(circuit, size, 0)?.compile()?
    };
    Ok(setup::generate_compiled(&compiled, &mut waste.rng(), backend, tl)?)
}

fn digest_path(key: &Path) -> PathBuf {
    let mut name = key.file_name().unwrap_or_default().to_os_string();
    name.push(".sha256");
    key.with_file_name(name)
}

fn write_digest(key: &Path, digest: &FileDigest) -> Result<(), KeyError> {
    let path = digest_path(key);
    std::fs::write(&path, crate::digest::to_hex(digest) + "\n").map_err(|source| KeyError::Write { path, source })
}

/// The digest the store records for `key` (of its uncompressed encoding), whatever file it
/// was read from: what a compiled circuit is bound to.
pub fn key_digest_of(key: &CheckedKey) -> Result<FileDigest, KeyError> {
    key.encoded_digest()
}

#[cfg(test)]
mod tests {
    use super::*;
    use g16_backend::sample::g1_outside_subgroup;

    fn scratch(name: &str) -> KeyStore {
        let dir = std::env::temp_dir().join(format!("g16-key-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        KeyStore::new(dir)
    }

    #[test]
    fn a_stored_key_loads_back_equal_with_its_digest() {
        let store = scratch("round-trip");
        let circuit = CircuitKind::Synthetic;
        let (key, source) = store.get_or_generate(circuit, circuit.min_size(), |_| {}).unwrap();
        assert_eq!(source, KeySource::Generated);
        let path = store.path(circuit, circuit.min_size());
        let recorded = std::fs::read_to_string(digest_path(&path)).unwrap();
        assert_eq!(recorded.trim(), digest(&std::fs::read(&path).unwrap()));
        let (again, source) =
            store.get_or_generate(circuit, circuit.min_size(), |_| panic!("generated twice")).unwrap();
        assert_eq!((again, source), (key.clone(), KeySource::Stored));
        // A stale digest (from other bytes) sends the load through every check, then is renewed.
        std::fs::write(digest_path(&path), "0000\n").unwrap();
        assert_eq!(store.load(&path).unwrap(), (key, KeySource::Checked));
        assert_eq!(std::fs::read_to_string(digest_path(&path)).unwrap(), recorded);
        let _ = std::fs::remove_dir_all(store.dir());
    }

    #[test]
    fn a_digest_that_cannot_be_written_does_not_fail_the_load() {
        let store = scratch("unwritable-digest");
        let circuit = CircuitKind::Synthetic;
        let key = generate(circuit, circuit.min_size(), ToxicWaste::Seeded(0)).unwrap();
        let path = store.path(circuit, circuit.min_size());
        key.write(&path, false).unwrap();
        std::fs::create_dir_all(digest_path(&path)).unwrap(); // a directory where the digest goes
        assert_eq!(store.load(&path).unwrap().0, key);
        let _ = std::fs::remove_dir_all(store.dir());
    }

    #[test]
    fn a_changed_file_gets_the_subgroup_checks_again() {
        let store = scratch("changed");
        let circuit = CircuitKind::Synthetic;
        let (key, _) = store.get_or_generate(circuit, circuit.min_size(), |_| {}).unwrap();
        let path = store.path(circuit, circuit.min_size());
        // The file changes under the digest: a point on the curve, outside the subgroup.
        let mut pk = key.into_inner();
        let last = pk.h_query.len() - 1;
        pk.h_query[last] = g1_outside_subgroup();
        let mut bytes = Vec::new();
        ark_serialize::CanonicalSerialize::serialize_uncompressed(&pk, &mut bytes).unwrap();
        std::fs::write(&path, bytes).unwrap();
        match store.load(&path) {
            Err(KeyError::InvalidPoint { query: "h_query", index, .. }) => assert_eq!(index, last),
            other => panic!("expected h_query[{last}] outside the subgroup, got {other:?}"),
        }
        let _ = std::fs::remove_dir_all(store.dir());
    }

    #[test]
    fn a_compiled_circuit_is_stored_beside_its_key_and_bound_to_it() {
        let store = scratch("compiled");
        let (kind, size) = (CircuitKind::Synthetic, CircuitKind::Synthetic.min_size());
        let (key, _) = store.get_or_generate(kind, size, |_| {}).unwrap();
        let compiled = store.get_or_compile(kind, size, |_| {}).unwrap();
        compiled.check_key(&key.shape()).unwrap();
        let again = store.get_or_compile(kind, size, |_| panic!("compiled twice")).unwrap();
        assert_eq!(again, compiled);
        // Another key under the same name: the stored circuit is refused, not used with it.
        std::fs::write(digest_path(&store.path(kind, size)), format!("{}\n", "ab".repeat(32))).unwrap();
        assert!(matches!(store.get_or_compile(kind, size, |_| {}), Err(KeyStoreError::StaleCircuit { .. })));
        let _ = std::fs::remove_dir_all(store.dir());
    }

    #[test]
    fn a_key_made_on_a_backend_is_the_stored_arkworks_key() {
        let (kind, size) = (CircuitKind::Synthetic, CircuitKind::Synthetic.min_size() + 1);
        let cpu = g16_backend::CpuBackend::new();
        let ours = generate_on(&cpu, kind, size, ToxicWaste::Seeded(4), &Timeline::disabled()).unwrap();
        assert_eq!(ours.to_bytes(false).unwrap(), generate(kind, size, ToxicWaste::Seeded(4)).unwrap().to_bytes(false).unwrap());
    }
}
