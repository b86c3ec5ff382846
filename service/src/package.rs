//! Circuit packages: what a client registers (a snarkjs zkey, a g16 compiled circuit and its
//! arkworks key, or a Filecoin PoRep circuit's seal proof and parameter file), how the store
//! keeps it (one byte string), and the circuit a server loads from it.
//!
//! Stored form: `kind` (1 byte: 1 zkey, 2 compiled, 3 Filecoin PoRep), the circuit file's
//! length (8 bytes little endian; 0 for the others), then the bytes as registered (for a
//! Filecoin package, a reference to its parameter file: see `filecoin.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use g16::circom::Zkey;
use g16::compiled::file::CircuitFile;
use g16::compiled::CompiledCircuit;
use g16::digest::FileDigest;
use g16::engine::CircuitKey;
use g16::key_store::key_digest_of;
use g16::prover::PointChecks;
use g16::CheckedKey;
use g16_client::proto::{CircuitInfo, PackageKind};

/// Why a package cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error("unknown package kind {0} (expected a zkey or a compiled circuit and its key)")]
    Kind(i32),
    #[error("the package is truncated: {0}")]
    Truncated(&'static str),
    #[error("the circuit file's length ({circuit}) exceeds the package's ({package})")]
    CircuitLength { circuit: u64, package: u64 },
    #[error("the zkey: {0}")]
    Zkey(#[from] g16::circom::CircomError),
    #[error("the compiled circuit: {0}")]
    Circuit(#[from] g16::compiled::CompileError),
    #[error("the proving key: {0}")]
    Key(#[from] g16::prover::KeyError),
    #[error("the compiled circuit was made beside another proving key than the one registered with it")]
    KeyDigest,
    #[error("the circuit does not fit its key: {0}")]
    Mismatch(#[from] g16::ProveError),
    #[error(transparent)]
    Path(#[from] PathError),
    /// A Filecoin package read without the server's package directory to find its files in.
    #[error("a Filecoin PoRep package refers to a parameter file on the server's disk: it is loaded with the server's package directory")]
    ByReference,
    /// A package of a kind this build does not prove.
    #[error("this server was built without Filecoin support (cargo feature `filecoin`)")]
    NoFilecoin,
    #[cfg(feature = "filecoin")]
    #[error(transparent)]
    Filecoin(#[from] g16_filecoin::FilecoinError),
    #[error("the parameter file's path {0} is not UTF-8")]
    ParamsPath(String),
    /// A server's copy of a registered parameter file is not the file registered.
    #[error("the parameter file {path} is not the one registered (its digest differs)")]
    ParamsDigest { path: String },
}

/// Why a path on the server's disk may not be read as a package.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("this server reads no packages from its disk (no --package-dir)")]
    NoPackageDir,
    #[error("the package directory {dir}: {source}")]
    Dir { dir: PathBuf, source: std::io::Error },
    #[error("{path}: {source}")]
    Missing { path: PathBuf, source: std::io::Error },
    #[error("{path} is outside the package directory")]
    Outside { path: PathBuf },
}

/// `path` inside the package directory `dir` (after resolving links and `..`): a package is
/// read from the server's disk only from there.
pub fn inside(dir: Option<&Path>, path: &Path) -> Result<PathBuf, PathError> {
    let dir = dir.ok_or(PathError::NoPackageDir)?;
    let dir = dir.canonicalize().map_err(|source| PathError::Dir { dir: dir.to_path_buf(), source })?;
    let full =
        dir.join(path).canonicalize().map_err(|source| PathError::Missing { path: path.to_path_buf(), source })?;
    if full.starts_with(&dir) {
        Ok(full)
    } else {
        Err(PathError::Outside { path: path.to_path_buf() })
    }
}

/// A package as the store keeps it: [`header`], then the bytes.
pub fn encode(kind: PackageKind, circuit_bytes: u64, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + bytes.len());
    out.extend_from_slice(&header(kind, circuit_bytes));
    out.extend_from_slice(bytes);
    out
}

/// A package from files on this server's disk (a zkey; or a compiled circuit, then its key),
/// read straight behind the stored header: pieces of each file on the pool, since one thread
/// copies from the page cache at about 2 GB/s and a 2^22 zkey is 3.5 GB. A file whose length
/// changes while it is read is an error.
pub fn read_files(kind: PackageKind, paths: &[&Path]) -> std::io::Result<Vec<u8>> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt;
    const PIECE: usize = 16 << 20;
    let named = |path: &Path| {
        let shown = path.display().to_string();
        move |e: std::io::Error| std::io::Error::new(e.kind(), format!("{shown}: {e}"))
    };
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let file = std::fs::File::open(path).map_err(named(path))?;
        let len = file.metadata().map_err(named(path))?.len();
        let len = usize::try_from(len).map_err(|_| named(path)(std::io::ErrorKind::OutOfMemory.into()))?;
        files.push((file, len, *path));
    }
    let circuit_bytes = if kind == PackageKind::Compiled { files.first().map_or(0, |f| f.1 as u64) } else { 0 };
    let total = HEADER_BYTES + files.iter().map(|f| f.1).sum::<usize>();
    let mut stored = Vec::new();
    stored.try_reserve_exact(total).map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
    stored.extend_from_slice(&header(kind, circuit_bytes));
    stored.resize(total, 0);
    let mut rest = &mut stored[HEADER_BYTES..];
    for (file, len, path) in &files {
        let (into, after) = rest.split_at_mut(*len);
        into.par_chunks_mut(PIECE)
            .enumerate()
            .try_for_each(|(k, piece)| file.read_exact_at(piece, (k * PIECE) as u64))
            .map_err(named(path))?;
        if file.metadata().map_err(named(path))?.len() != *len as u64 {
            return Err(named(path)(std::io::Error::other("the file changed length while it was read")));
        }
        rest = after;
    }
    Ok(stored)
}

/// Bytes of a stored package's header.
pub const HEADER_BYTES: usize = 9;

/// A stored package's header: its kind, and the length of the compiled circuit before the key
/// (0 for a zkey).
pub fn header(kind: PackageKind, circuit_bytes: u64) -> [u8; HEADER_BYTES] {
    let mut out = [0u8; HEADER_BYTES];
    out[0] = kind as u8;
    out[1..].copy_from_slice(&circuit_bytes.to_le_bytes());
    out
}

/// A circuit a server has loaded: its key (and compiled circuit) checked and ready to prepare.
pub struct Loaded {
    pub info: CircuitInfo,
    pub key: Arc<CircuitKey>,
    pub witnesses: Witnesses,
}

/// What a job's witness is for a circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Witnesses {
    /// The assignment z (a circom `.wtns` or raw), proven as one proof.
    Assignment,
    /// A sector's C1 output for this seal proof, proven as its partitions.
    #[cfg(feature = "filecoin")]
    FilecoinC1(g16_filecoin::SealProof),
}

impl Loaded {
    /// A package's key and circuit, once checked, as the engine and the API hold them.
    /// `package_bytes`: the length of the package as stored.
    pub(crate) fn new(
        name: &str,
        kind: PackageKind,
        digest: &FileDigest,
        package_bytes: usize,
        key: CheckedKey,
        circuit: CompiledCircuit,
        witnesses: Witnesses,
    ) -> Result<Loaded, PackageError> {
        let (seal_proof, partitions) = match witnesses {
            Witnesses::Assignment => (String::new(), 0),
            #[cfg(feature = "filecoin")]
            Witnesses::FilecoinC1(proof) => (proof.to_string(), usize::from(proof.porep_config().partitions) as u32),
        };
        let info = CircuitInfo {
            name: name.to_string(),
            kind: kind.into(),
            digest: hex(digest),
            package_bytes: package_bytes as u64,
            constraints: circuit.num_constraints() as u64,
            variables: circuit.num_variables() as u64,
            public_inputs: (circuit.num_instance() - 1) as u64,
            domain_size: circuit.domain_size() as u64,
            seal_proof,
            partitions,
        };
        let key = Arc::new(CircuitKey::new(name, key, Some(circuit))?);
        Ok(Loaded { info, key, witnesses })
    }

    /// Variables of an assignment (the constant 1 included).
    pub fn num_variables(&self) -> usize {
        self.info.variables as usize
    }

    pub fn num_instance(&self) -> usize {
        self.info.public_inputs as usize + 1
    }
}

/// Reads a stored package. `checks`: [`PointChecks::Full`] for a package being registered
/// (every point of its key: seconds to minutes for a large one); [`PointChecks::CurveOnly`] for
/// one read back from the store, which holds only packages that passed the full checks when
/// they were registered (a fleet's database is as trusted as the servers that share it).
/// `digest`: the package's ([`g16::key_store::digest_bytes`]), which its caller has already made.
/// A Filecoin package names files on the server's disk: `state.rs` loads it through
/// `filecoin.rs` with the server's configuration, and it is refused here.
pub fn load(name: &str, stored: &[u8], digest: &FileDigest, checks: PointChecks) -> Result<Loaded, PackageError> {
    if stored.len() < HEADER_BYTES {
        return Err(PackageError::Truncated("no header"));
    }
    let kind = kind_of(stored)?;
    let circuit_bytes = u64::from_le_bytes(stored[1..9].try_into().expect("8 bytes"));
    let bytes = &stored[HEADER_BYTES..];
    let (key, circuit) = match kind {
        PackageKind::Zkey => {
            let zkey = Zkey::from_bytes_with(bytes, checks)?;
            (zkey.key, zkey.circuit)
        }
        PackageKind::Compiled => {
            let split = usize::try_from(circuit_bytes)
                .ok()
                .filter(|&n| n <= bytes.len())
                .ok_or(PackageError::CircuitLength { circuit: circuit_bytes, package: bytes.len() as u64 })?;
            let file = CircuitFile::from_bytes(&bytes[..split])?;
            let key = CheckedKey::read_with(&bytes[split..], checks)?;
            if let Some(bound) = file.key_digest {
                if bound != key_digest_of(&key)? {
                    return Err(PackageError::KeyDigest);
                }
            }
            (key, file.circuit)
        }
        PackageKind::FilecoinPorep => return Err(PackageError::ByReference),
        PackageKind::Unspecified => return Err(PackageError::Kind(0)),
    };
    Loaded::new(name, kind, digest, stored.len(), key, circuit, Witnesses::Assignment)
}

/// A stored package's kind, from its header.
pub fn kind_of(stored: &[u8]) -> Result<PackageKind, PackageError> {
    let first = *stored.first().ok_or(PackageError::Truncated("no header"))?;
    PackageKind::try_from(i32::from(first)).map_err(|_| PackageError::Kind(i32::from(first)))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_serialize::CanonicalSerialize;
    use g16::circuits::{BuiltinCircuit, CircuitKind};
    use g16::sample::g1_outside_subgroup;

    /// Files read behind the header in pieces are the package an upload of them makes, at
    /// lengths around the pieces' boundaries; the compiled circuit's length goes in the header.
    #[test]
    fn packages_read_from_files_equal_the_uploaded_package() {
        use rand::RngCore;
        let dir = std::env::temp_dir().join(format!("g16-package-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let piece = 16 << 20;
        for (first, second) in [(0, 5), (1, piece - 1), (piece, piece + 1), (2 * piece + 7, 12_345)] {
            let mut a = vec![0u8; first];
            let mut b = vec![0u8; second];
            rand::rngs::OsRng.fill_bytes(&mut a);
            rand::rngs::OsRng.fill_bytes(&mut b);
            let (pa, pb) = (dir.join("a"), dir.join("b"));
            std::fs::write(&pa, &a).unwrap();
            std::fs::write(&pb, &b).unwrap();
            let read = read_files(PackageKind::Compiled, &[&pa, &pb]).unwrap();
            assert!(read == encode(PackageKind::Compiled, first as u64, &[a.clone(), b].concat()), "{first}, {second}");
            let read = read_files(PackageKind::Zkey, &[&pa]).unwrap();
            assert!(read == encode(PackageKind::Zkey, 0, &a), "{first}");
        }
        let missing = read_files(PackageKind::Zkey, &[&dir.join("gone")]).unwrap_err();
        assert!(missing.to_string().contains("gone"), "{missing}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn registration_checks_every_point_and_a_package_read_back_from_the_store_only_the_curve() {
        let circuit = BuiltinCircuit::new(CircuitKind::Synthetic, 5, 1).unwrap();
        let compiled = g16::compiled::compile(circuit.clone()).unwrap();
        let mut pk = CheckedKey::generate(circuit, &mut rand::rngs::OsRng).unwrap().into_inner();
        pk.a_query[1] = g1_outside_subgroup();
        let mut key = Vec::new();
        pk.serialize_uncompressed(&mut key).unwrap();
        let file = CircuitFile { circuit: compiled, key_digest: None }.to_bytes();
        let stored = encode(PackageKind::Compiled, file.len() as u64, &[file, key].concat());
        let digest = g16::key_store::digest_bytes(&stored);
        let refused = load("bad", &stored, &digest, PointChecks::Full).err().expect("a point outside the subgroup");
        assert!(refused.to_string().contains("a_query"), "{refused}");
        // What the store holds passed these checks when it was registered: only the curve
        // equation is checked again.
        assert!(load("bad", &stored, &digest, PointChecks::CurveOnly).is_ok());
    }
}
