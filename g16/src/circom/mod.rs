//! circom's and snarkjs's files, in and out: a circuit's `.r1cs`, a witness's `.wtns`, a
//! Groth16 `.zkey` made by `snarkjs groth16 setup` for BLS12-381, and the `proof.json` and
//! `public.json` that `snarkjs groth16 verify` reads.
//!
//! - [`binfile`]: the iden3 binary container the three binary formats share.
//! - [`r1cs`]: a circuit's constraints, into a [`CompiledCircuit`](crate::compiled::CompiledCircuit).
//! - [`wtns`]: an assignment z = [1, outputs, public inputs, private…].
//! - [`zkey`]: a proving key (checked like any other) and the A and B matrices it carries.
//! - [`json`]: proofs and public signals written as snarkjs writes them.
//! - [`setup`]: a key made here for a circuit, written as a `.zkey` snarkjs proves with.
//!
//! Every reader works on bytes already in memory and checks each count against the bytes
//! that are left before it allocates for it, so a truncated, flipped or hostile file is a
//! [`CircomError`] that names the section and byte offset, never a panic or an allocation of
//! what a header only claims.

pub mod binfile;
mod field;
pub mod json;
pub mod r1cs;
pub mod roots;
pub mod setup;
pub mod wtns;
pub mod zkey;

use crate::compiled::CompileError;
use crate::digest::{self, FileDigest};
use crate::prover::KeyError;

pub use binfile::{At, FileKind};
pub use field::{
    curve_of_base_prime, curve_of_scalar_prime, first_non_canonical, values_from_le, values_to_le, VALUE_BYTES,
};
pub use r1cs::R1cs;
pub use setup::write_new_zkey;
pub use wtns::{read_wtns, write_wtns, wtns_values};
pub use zkey::{Zkey, ZkeyHeader};

/// What is wrong with a circom or snarkjs file.
#[derive(Debug, thiserror::Error)]
pub enum CircomError {
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("not a {kind} file: it starts with {found:?}, not {:?}", kind.magic_str())]
    Magic { kind: FileKind, found: String },
    #[error("{kind} format version {version}; g16 reads version {supported}")]
    Version { kind: FileKind, version: u32, supported: u32 },
    #[error("{at}: the file is truncated: {what} needs {needed} bytes, {left} are left")]
    Truncated { at: At, what: &'static str, needed: u64, left: usize },
    #[error("{kind}: section {section} ({name}) is missing")]
    MissingSection { kind: FileKind, section: u32, name: &'static str },
    #[error("{kind}: section {section} ({name}) appears {count} times")]
    DuplicateSection { kind: FileKind, section: u32, name: &'static str, count: usize },
    #[error("{at}: {extra} bytes after {what}")]
    TrailingBytes { at: At, what: &'static str, extra: usize },
    #[error("{at}: {what} is the prime of {}; g16 proves over BLS12-381 only", curve.unwrap_or("an unknown field"))]
    WrongField { at: At, what: &'static str, curve: Option<&'static str>, prime: String },
    #[error("{at}: {what} is not below the field's prime")]
    NotCanonical { at: At, what: &'static str },
    #[error("{at}: {detail}")]
    Malformed { at: At, detail: String },
    #[error("the zkey is for {name} (protocol {id}); g16 proves Groth16 (protocol 1) only")]
    Protocol { id: u32, name: &'static str },
    #[error("the circuit uses custom gates (sections 4 and 5), which only PLONK proves")]
    CustomGates,
    #[error("the witness has {got} values, the circuit {expected} variables")]
    WitnessLength { expected: usize, got: usize },
    #[error("the zkey: {0}")]
    Key(#[from] KeyError),
    #[error(transparent)]
    Circuit(#[from] CompileError),
}

/// Reads a whole file for one of the readers, naming it in the error: pieces of a large file
/// on rayon's pool (a zkey is up to gigabytes, and one thread copies from the page cache at
/// about 2 GB/s).
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>, CircomError> {
    read_in_pieces(path).map_err(|source| CircomError::Io { path: path.display().to_string(), source })
}

/// [`read_file`] with the file's digest ([`crate::digest`]), each piece digested as it is read
/// while its bytes are still in the core's cache (a second pass over a 868 MB zkey cost the
/// 2-core machine ~0.35 s).
pub fn read_file_digested(path: &std::path::Path) -> Result<(Vec<u8>, FileDigest), CircomError> {
    read_digested(path).map_err(|source| CircomError::Io { path: path.display().to_string(), source })
}

fn read_in_pieces(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use rayon::prelude::*;
    use std::io::Read;
    use std::os::unix::fs::FileExt;
    const PIECE: usize = 16 << 20;
    let mut file = std::fs::File::open(path)?;
    let len = usize::try_from(file.metadata()?.len()).map_err(|_| std::io::ErrorKind::OutOfMemory)?;
    if len <= PIECE {
        let mut bytes = Vec::with_capacity(len);
        file.read_to_end(&mut bytes)?;
        return Ok(bytes);
    }
    let mut bytes = vec![0u8; len];
    bytes.par_chunks_mut(PIECE).enumerate().try_for_each(|(k, piece)| file.read_exact_at(piece, (k * PIECE) as u64))?;
    Ok(bytes)
}

fn read_digested(path: &std::path::Path) -> std::io::Result<(Vec<u8>, FileDigest)> {
    use rayon::prelude::*;
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::FileExt;
    /// Read and hashed in turn, small enough to stay in a core's cache in between.
    const SLICE: usize = 1 << 20;
    let file = std::fs::File::open(path)?;
    let len = usize::try_from(file.metadata()?.len()).map_err(|_| std::io::ErrorKind::OutOfMemory)?;
    let mut bytes = vec![0u8; len];
    // The digest's pieces are the units of work: each is read and hashed by one task.
    let pieces: Vec<FileDigest> = bytes
        .par_chunks_mut(digest::PIECE)
        .enumerate()
        .map(|(k, piece)| {
            let mut hash = Sha256::new();
            for (j, slice) in piece.chunks_mut(SLICE).enumerate() {
                file.read_exact_at(slice, (k * digest::PIECE + j * SLICE) as u64)?;
                hash.update(&*slice);
            }
            Ok(hash.finalize().into())
        })
        .collect::<std::io::Result<_>>()?;
    Ok((bytes, digest::combine(len as u64, &pieces)))
}

#[cfg(test)]
mod tests {
    use rand::RngCore;

    /// Files read whole, in pieces on the pool past one piece: the same bytes as a plain read,
    /// at lengths around the pieces' boundaries; a missing file is an error that names it.
    #[test]
    fn files_read_in_pieces_are_the_files_bytes() {
        let dir = std::env::temp_dir().join(format!("g16-read-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rng = g16_backend::sample::test_rng("files_read_in_pieces_are_the_files_bytes");
        let piece = 16 << 20;
        for len in [0, 1, piece - 1, piece, piece + 1, 3 * piece + 12_345] {
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            let path = dir.join(format!("{len}.bin"));
            std::fs::write(&path, &bytes).unwrap();
            assert!(super::read_file(&path).unwrap() == bytes, "{len} bytes");
        }
        let missing = dir.join("missing.zkey");
        let err = super::read_file(&missing).unwrap_err().to_string();
        assert!(err.contains("missing.zkey"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Files read with their digest: the file's bytes and the digest of those bytes, around the
    /// boundaries of the digest's pieces and of the slices read inside them.
    #[test]
    fn files_read_digested_are_the_files_bytes_and_their_digest() {
        let dir = std::env::temp_dir().join(format!("g16-read-digested-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rng = g16_backend::sample::test_rng("files_read_digested_are_the_files_bytes_and_their_digest");
        let piece = crate::digest::PIECE;
        for len in [0, 1, (1 << 20) - 1, (1 << 20) + 1, piece, piece + 12_345] {
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            let path = dir.join(format!("{len}.bin"));
            std::fs::write(&path, &bytes).unwrap();
            let (read, digest) = super::read_file_digested(&path).unwrap();
            assert!(read == bytes, "{len} bytes");
            assert_eq!(digest, crate::digest::digest_bytes(&bytes), "{len} bytes");
            std::fs::remove_file(&path).unwrap();
        }
        let err = super::read_file_digested(&dir.join("missing.zkey")).unwrap_err().to_string();
        assert!(err.contains("missing.zkey"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
