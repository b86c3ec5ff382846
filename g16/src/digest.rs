//! The digest g16 records for files whose every point it checked (the key store's `.sha256`,
//! the checked-files record, the service's packages): SHA-256 over the file's length and the
//! SHA-256 of each 64 MiB piece. The pieces hash on separate cores, so a 2 GB file takes a
//! fraction of a second, and a reader that streams a file piece by piece digests it on the way.

use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

/// The length of one piece.
pub const PIECE: usize = 64 << 20;

/// A digest as bytes.
pub type FileDigest = [u8; 32];

/// The digest of `bytes`.
pub fn digest_bytes(bytes: &[u8]) -> FileDigest {
    let pieces: Vec<FileDigest> = bytes.par_chunks(PIECE).map(piece).collect();
    combine(bytes.len() as u64, &pieces)
}

/// [`digest_bytes`] in lowercase hex.
pub fn digest(bytes: &[u8]) -> String {
    to_hex(&digest_bytes(bytes))
}

/// The digest of one piece (every piece but the last is [`PIECE`] bytes long).
pub fn piece(bytes: &[u8]) -> FileDigest {
    Sha256::digest(bytes).into()
}

/// Starts the digest of one piece on threads kept for digests; the receiver gets it.
///
/// Not on rayon's global pool: one piece's SHA-256 keeps a core for tens of milliseconds
/// (~60 ms on the H200 host's cores), and a global worker waiting inside a decoder's parallel
/// loop picks queued jobs up while it waits, so one digest there held a whole piece's decode
/// (~10 ms of work) until it finished: a 2^24 key decoded at 1.6 GB/s while its parts ran at
/// 8–30 GB/s. Threads of their own share the cores through the OS scheduler instead.
pub fn piece_in_background(bytes: Arc<Vec<u8>>) -> Receiver<FileDigest> {
    let (done, digest) = sync_channel(1);
    let job = move || {
        let _ = done.send(piece(&bytes));
    };
    match digest_threads() {
        Some(pool) => pool.spawn(job),
        // No threads could be started: the global pool still digests, only more slowly.
        None => rayon::spawn(job),
    }
    digest
}

/// Half the cores (at least two) for digests, started on first use.
fn digest_threads() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        rayon::ThreadPoolBuilder::new()
            .num_threads((cores / 2).max(2))
            .thread_name(|i| format!("g16-digest-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// The file's digest from its length and its pieces' digests, in order.
pub fn combine(len: u64, pieces: &[FileDigest]) -> FileDigest {
    let mut whole = Sha256::new();
    whole.update(len.to_le_bytes());
    for p in pieces {
        whole.update(p);
    }
    whole.finalize().into()
}

pub fn to_hex(d: &FileDigest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// A digest from 64 hex digits (surrounding whitespace ignored), or None.
pub fn from_hex(text: &str) -> Option<FileDigest> {
    let hex = text.trim();
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_differ_with_content_and_length() {
        let a = vec![7u8; 1000];
        let mut b = a.clone();
        b[999] = 8;
        assert_ne!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&a[..999]));
        assert_eq!(digest(&a), digest(&a.clone()));
    }

    #[test]
    fn pieces_combine_to_the_whole_digest() {
        let bytes: Vec<u8> = (0..PIECE + 1000).map(|i| (i * 7 % 251) as u8).collect();
        let pieces = [piece(&bytes[..PIECE]), piece(&bytes[PIECE..])];
        assert_eq!(combine(bytes.len() as u64, &pieces), digest_bytes(&bytes));
    }

    #[test]
    fn pieces_digested_in_the_background_equal_those_digested_here() {
        let pieces: Vec<Vec<u8>> = (0..5u8).map(|k| vec![k; 1000 + k as usize]).collect();
        let pending: Vec<_> = pieces.iter().map(|p| piece_in_background(Arc::new(p.clone()))).collect();
        for (p, rx) in pieces.iter().zip(pending) {
            assert_eq!(rx.recv().unwrap(), piece(p));
        }
    }

    #[test]
    fn hex_round_trips() {
        let d = digest_bytes(b"g16");
        assert_eq!(from_hex(&format!(" {}\n", to_hex(&d))), Some(d));
        assert_eq!(from_hex("00"), None);
        assert_eq!(from_hex(&"zz".repeat(32)), None);
    }
}
