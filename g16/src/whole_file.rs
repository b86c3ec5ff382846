//! Whole files read into memory for the readers that parse from bytes (zkeys, compiled
//! circuits, witnesses): pieces of a large file read on every core into huge pages (one thread
//! copies from the page cache at about 2 GB/s, and a file is up to gigabytes), and where a
//! digest is wanted, each piece digested as it is read, while its bytes are in the core's cache
//! (a second pass over an 868 MB zkey cost the 2-core machine ~0.35 s).

use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::digest::{self, FileDigest};

/// The pieces of a plain read.
const PIECE: usize = 16 << 20;
/// Read and hashed in turn inside a digest's piece, small enough to stay in a core's cache.
const SLICE: usize = 1 << 20;

/// The file's bytes.
pub fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    let len = usize::try_from(file.metadata()?.len()).map_err(|_| std::io::ErrorKind::OutOfMemory)?;
    if len <= PIECE {
        let mut bytes = Vec::with_capacity(len);
        file.read_to_end(&mut bytes)?;
        return Ok(bytes);
    }
    let mut bytes = crate::huge_pages::zeroed_bytes(len);
    bytes.par_chunks_mut(PIECE).enumerate().try_for_each(|(k, piece)| file.read_exact_at(piece, (k * PIECE) as u64))?;
    Ok(bytes)
}

/// The file's bytes and their digest ([`crate::digest`]).
pub fn read_digested(path: &Path) -> std::io::Result<(Vec<u8>, FileDigest)> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    read_digested_from(&file, len)
}

/// [`read_digested`] of an open file of `len` bytes.
pub fn read_digested_from(file: &std::fs::File, len: u64) -> std::io::Result<(Vec<u8>, FileDigest)> {
    let len = usize::try_from(len).map_err(|_| std::io::ErrorKind::OutOfMemory)?;
    let mut bytes = crate::huge_pages::zeroed_bytes(len);
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
    /// at lengths around the pieces' boundaries; a missing file is an error.
    #[test]
    fn files_read_in_pieces_are_the_files_bytes() {
        let dir = std::env::temp_dir().join(format!("g16-read-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rng = g16_backend::sample::test_rng("files_read_in_pieces_are_the_files_bytes");
        let piece = super::PIECE;
        for len in [0, 1, piece - 1, piece, piece + 1, 3 * piece + 12_345] {
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            let path = dir.join(format!("{len}.bin"));
            std::fs::write(&path, &bytes).unwrap();
            assert!(super::read(&path).unwrap() == bytes, "{len} bytes");
            std::fs::remove_file(&path).unwrap();
        }
        assert!(super::read(&dir.join("missing")).is_err());
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
        for len in [0, 1, super::SLICE - 1, super::SLICE + 1, piece, piece + 12_345] {
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            let path = dir.join(format!("{len}.bin"));
            std::fs::write(&path, &bytes).unwrap();
            let (read, digest) = super::read_digested(&path).unwrap();
            assert!(read == bytes, "{len} bytes");
            assert_eq!(digest, crate::digest::digest_bytes(&bytes), "{len} bytes");
            std::fs::remove_file(&path).unwrap();
        }
        assert!(super::read_digested(&dir.join("missing")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
