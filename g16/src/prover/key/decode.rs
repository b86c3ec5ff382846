//! An `ark_groth16::ProvingKey` decoded from its canonical encoding, compressed or not, as
//! the file streams in: 64 MiB pieces are read (a file's by [`FILE_READERS`] threads at their
//! offsets, any other source's by one thread in order), each piece is digested on threads of
//! its own while the points already read decode on every core. A key's points are checked on
//! the curve as they decode, but not refused here: `validate` names a bad one (and skips its
//! own curve pass where all passed); only the bytes' form is refused here.
//! The host holds the decoded key and at most a few pieces of the file, never both whole.
//!
//! ```text
//! vk:  α₁ (G1), β₂, γ₂, δ₂ (G2), γ_abc (u64 length, G1 points)
//! β₁, δ₁ (G1); a, b₁ (G1 vectors), b₂ (G2 vector), h, l (G1 vectors)
//! ```
//!
//! Points use the zcash encoding (ark-bls12-381's): big-endian coordinates, the compression
//! and infinity flags in the first byte; every point of a file is compressed or none is.

use std::io::Read;
use std::sync::mpsc::{sync_channel, Receiver};

use ark_ec::short_weierstrass::Affine;
use ark_serialize::{CanonicalDeserialize, Compress, SerializationError, Validate};
use rayon::prelude::*;

use super::{zcash, KeyError};
use crate::curve::{ProvingKey, VerifyingKey};
use crate::digest::{self, FileDigest, PIECE};

/// A key decoded from a file, not yet checked, with the digest of the file's bytes.
pub struct Decoded {
    pub pk: ProvingKey,
    pub digest: FileDigest,
    pub compressed: bool,
    /// Every point was found on the curve as it decoded, while its coordinates were in cache
    /// (`validate` then skips its own pass over them; where one is off, that pass names it).
    pub on_curve: bool,
}

/// Decodes a whole key from `src`: a truncated encoding, a malformed point (named by its
/// query and index) or bytes after the key's end are typed errors.
/// `len`, where known, is the source's length: vectors are then allocated once, at their size.
pub fn decode<R: KeyReader>(src: R, len: Option<u64>) -> Result<Decoded, KeyError> {
    decode_checking_curve(src, len, true)
}

/// [`decode`], the curve equations checked as the points decode or not (`on_curve` is then
/// false: nothing is known).
pub fn decode_checking_curve<R: KeyReader>(src: R, len: Option<u64>, check_curve: bool) -> Result<Decoded, KeyError> {
    decode_key(src, len, check_curve, WHOLE_FILE_UP_TO)
}

/// [`decode_checking_curve`], files up to `whole_up_to` bytes read whole.
fn decode_key<R: KeyReader>(
    src: R,
    len: Option<u64>,
    check_curve: bool,
    whole_up_to: u64,
) -> Result<Decoded, KeyError> {
    let mut compressed = false;
    let mut on_curve = false;
    let (pk, digest) = decode_up_to(src, len, whole_up_to, |s| {
        s.stream.check_curve = check_curve;
        let first = s.stream.peek_byte()?.ok_or(KeyError::Truncated { len: 0, format: "empty file" })?;
        compressed = first & 0x80 != 0;
        let compress = if compressed { Compress::Yes } else { Compress::No };
        s.format = if compressed { "compressed" } else { "uncompressed" };
        let pk = s.stream.key(compress).map_err(|e| e.into_key_error(s.stream.total(), s.format))?;
        on_curve = check_curve && !s.stream.off_curve;
        Ok(pk)
    })?;
    Ok(Decoded { pk, digest, compressed, on_curve })
}

/// Decodes a file of points in any layout as it streams in (`read` walks the layout through
/// a [`PointStream`]), with the digest of its bytes: the machinery of [`decode`] for other
/// formats (bellperson's `.params`). Bytes after what `read` takes are refused.
pub fn decode_with<R: KeyReader, T>(
    src: R,
    len: Option<u64>,
    read: impl FnOnce(&mut PointStream) -> Result<T, KeyError>,
) -> Result<(T, FileDigest), KeyError> {
    decode_up_to(src, len, WHOLE_FILE_UP_TO, read)
}

/// [`decode_with`], files up to `whole_up_to` bytes read whole.
fn decode_up_to<R: KeyReader, T>(
    src: R,
    len: Option<u64>,
    whole_up_to: u64,
    read: impl FnOnce(&mut PointStream) -> Result<T, KeyError>,
) -> Result<(T, FileDigest), KeyError> {
    let file = src.file();
    if let (Some(file), Some(len)) = (&file, len.filter(|&len| len <= whole_up_to)) {
        let (bytes, digest) = crate::whole_file::read_digested_from(file, len).map_err(Stop::Io)?;
        let mut s = PointStream { stream: Stream::whole(bytes), format: "key" };
        let value = read(&mut s)?;
        return match s.stream.rest()? {
            0 => Ok((value, digest)),
            extra => Err(KeyError::TrailingBytes { extra, used: s.stream.total() - extra, format: s.format }),
        };
    }
    std::thread::scope(|scope| {
        let mut receivers = Vec::new();
        match (&file, len) {
            // Piece k by reader k mod FILE_READERS; the stream takes them in turn.
            (Some(file), Some(len)) => {
                for reader in 0..FILE_READERS {
                    let (tx, rx) = sync_channel::<std::io::Result<Block>>(1);
                    let pieces = (reader..).step_by(FILE_READERS);
                    scope.spawn(move || read_pieces_at(file, len, pieces, |block| tx.send(block).is_ok()));
                    receivers.push(rx);
                }
            }
            _ => {
                let (tx, rx) = sync_channel::<std::io::Result<Block>>(2);
                scope.spawn(move || read_pieces(src, |block| tx.send(block).is_ok()));
                receivers.push(rx);
            }
        }
        let mut stream = Stream::new(receivers);
        stream.len = len;
        let mut s = PointStream { stream, format: "key" };
        let value = read(&mut s)?;
        let extra = s.stream.rest()?;
        if extra > 0 {
            let total = s.stream.total();
            return Err(KeyError::TrailingBytes { extra, used: total - extra, format: s.format });
        }
        let digest = digest::combine(s.stream.total() as u64, &s.stream.piece_digests()?);
        Ok((value, digest))
    })
}

/// A position in a key file streaming in ([`decode_with`]): points, vectors of points and
/// lengths, read in the file's order; errors name the item and the format.
pub struct PointStream {
    stream: Stream,
    format: &'static str,
}

impl PointStream {
    /// Names the format in later errors ("bellperson params", say).
    pub fn set_format(&mut self, format: &'static str) {
        self.format = format;
    }

    fn err(&self, stop: Stop) -> KeyError {
        stop.into_key_error(self.stream.total(), self.format)
    }

    /// One point, `what` naming it in an error.
    pub fn point<P: EncodedPoint>(&mut self, compress: Compress, what: &str) -> Result<P, KeyError> {
        self.stream.point(compress, what).map_err(|e| self.err(e))
    }

    /// `len` points, decoded on every core as pieces arrive; `query` names a bad one with its index.
    pub fn points<P: EncodedPoint>(&mut self, len: u64, compress: Compress, query: &str) -> Result<Vec<P>, KeyError> {
        self.stream.points_n(len, compress, query).map_err(|e| self.err(e))
    }

    /// A big-endian u32 (bellperson's vector lengths).
    pub fn u32_be(&mut self) -> Result<u32, KeyError> {
        let bytes = self.stream.small(4).map_err(|e| self.err(e))?;
        Ok(u32::from_be_bytes(bytes.try_into().expect("four bytes")))
    }
}

/// Files up to this length are read whole, on every core and digested as they are read, then
/// decoded with every vector split over the cores at once: the host then holds the file's
/// bytes beside the decoded points for the moment, a few gigabytes at most. Longer files
/// stream, one copy of the key on the host. A 730 MB key, digest known, is read and digested
/// 99-133 ms after a process starts and decoded by 224-254 ms on a 16-core H100 host
/// (benches/results/h100-keys-again-113359b.txt).
pub const WHOLE_FILE_UP_TO: u64 = 2 << 30;

/// Threads that read a file's pieces at their offsets: one copies out of the page cache at
/// about 2 GB/s, slower than the pool decodes.
pub const FILE_READERS: usize = 4;

/// A key's bytes: any reader, read in order; a file, read at offsets by several threads.
pub trait KeyReader: Read + Send {
    /// The file to read at offsets (a handle of its own), where the source is one.
    fn file(&self) -> Option<std::fs::File> {
        None
    }
}

impl KeyReader for std::fs::File {
    fn file(&self) -> Option<std::fs::File> {
        self.try_clone().ok()
    }
}

impl KeyReader for &[u8] {}

/// One piece of the file and the receiver of its digest (computed on the pool).
struct Block {
    bytes: std::sync::Arc<Vec<u8>>,
    digest: Receiver<FileDigest>,
}

/// Reads `src` in pieces of [`PIECE`] bytes (the last may be shorter), starts each piece's
/// digest on the pool and hands the piece on; stops at the end, on a read error, or when the
/// receiving side has gone (`send` false). A piece's buffer is reused once the decoder and the
/// digest are done with it: a fresh 64 MiB buffer a piece cost more in page faults than the
/// copy out of the page cache.
fn read_pieces(mut src: impl Read, mut send: impl FnMut(std::io::Result<Block>) -> bool) {
    let mut buffers = Buffers::default();
    loop {
        let mut bytes = buffers.take();
        match (&mut src).take(PIECE as u64).read_to_end(&mut bytes) {
            Err(e) => {
                send(Err(e));
                return;
            }
            Ok(0) => return,
            Ok(_) => {}
        }
        let full = bytes.len() == PIECE;
        if !send(Ok(buffers.hand_on(bytes))) || !full {
            return;
        }
    }
}

/// [`read_pieces`] of a file of `len` bytes, the pieces numbered `pieces` alone, each read at
/// its offset: several such readers share a file.
fn read_pieces_at(
    file: &std::fs::File,
    len: u64,
    pieces: impl Iterator<Item = usize>,
    mut send: impl FnMut(std::io::Result<Block>) -> bool,
) {
    use std::os::unix::fs::FileExt;
    let mut buffers = Buffers::default();
    for k in pieces {
        let start = (k * PIECE) as u64;
        if start >= len {
            return;
        }
        let mut bytes = buffers.take();
        bytes.resize((len - start).min(PIECE as u64) as usize, 0);
        if let Err(e) = file.read_exact_at(&mut bytes, start) {
            send(Err(e));
            return;
        }
        if !send(Ok(buffers.hand_on(bytes))) {
            return;
        }
    }
}

/// A reader's piece buffers: a piece's buffer is reused once the decoder and the digest are
/// done with it, since a fresh 64 MiB buffer a piece cost more in page faults than the copy
/// out of the page cache.
#[derive(Default)]
struct Buffers {
    sent: Vec<std::sync::Arc<Vec<u8>>>,
}

impl Buffers {
    /// An empty buffer, reused where one is free.
    fn take(&mut self) -> Vec<u8> {
        let reusable = self.sent.iter().position(|b| std::sync::Arc::strong_count(b) == 1);
        match reusable.map(|i| std::sync::Arc::try_unwrap(self.sent.swap_remove(i))) {
            Some(Ok(mut buffer)) => {
                buffer.clear();
                buffer
            }
            _ => Vec::with_capacity(PIECE),
        }
    }

    /// The piece, its digest started on the digest threads ([`digest::piece_in_background`]
    /// says why not on the pool that decodes).
    fn hand_on(&mut self, bytes: Vec<u8>) -> Block {
        let bytes = std::sync::Arc::new(bytes);
        let digest = digest::piece_in_background(bytes.clone());
        self.sent.push(bytes.clone());
        Block { bytes, digest }
    }
}

/// Why decoding stopped: the stream ended, a read failed, or the bytes were wrong.
enum Stop {
    End,
    Io(std::io::Error),
    Bad { what: String, error: SerializationError },
}

impl Stop {
    fn into_key_error(self, len: usize, format: &'static str) -> KeyError {
        match self {
            Stop::End => KeyError::Truncated { len, format },
            Stop::Io(source) => KeyError::Io { path: "(key stream)".into(), source },
            Stop::Bad { what, error } => KeyError::Malformed { format, detail: format!("{what}: {}", describe(error)) },
        }
    }
}

impl From<Stop> for KeyError {
    fn from(stop: Stop) -> KeyError {
        stop.into_key_error(0, "stream")
    }
}

/// The pieces as they arrive, and a position in the current one.
struct Stream {
    /// The readers' channels, piece k from receiver k mod their number.
    rx: Vec<Receiver<std::io::Result<Block>>>,
    /// Shared with the piece's digest while that runs: no copy.
    block: std::sync::Arc<Vec<u8>>,
    pos: usize,
    /// Bytes of the pieces before the current one.
    consumed: usize,
    pieces: Vec<Receiver<FileDigest>>,
    eof: bool,
    /// The source's length, where known.
    len: Option<u64>,
    /// Whether points are checked on the curve as they decode, and whether one was off.
    check_curve: bool,
    off_curve: bool,
}

impl Stream {
    fn new(rx: Vec<Receiver<std::io::Result<Block>>>) -> Stream {
        Stream {
            rx,
            block: Default::default(),
            pos: 0,
            consumed: 0,
            pieces: Vec::new(),
            eof: false,
            len: None,
            check_curve: false,
            off_curve: false,
        }
    }

    /// A stream of one piece that is the whole source, its digest already known (the caller's).
    fn whole(bytes: Vec<u8>) -> Stream {
        let mut stream = Stream::new(Vec::new());
        stream.len = Some(bytes.len() as u64);
        stream.block = std::sync::Arc::new(bytes);
        stream.eof = true;
        stream
    }

    /// The next piece, or false at the end.
    fn next_block(&mut self) -> Result<bool, Stop> {
        if self.eof {
            return Ok(false);
        }
        match self.rx[self.pieces.len() % self.rx.len()].recv() {
            Ok(Ok(block)) => {
                self.consumed += self.block.len();
                self.block = block.bytes;
                self.pos = 0;
                self.pieces.push(block.digest);
                Ok(true)
            }
            Ok(Err(e)) => Err(Stop::Io(e)),
            Err(_) => {
                self.eof = true;
                Ok(false)
            }
        }
    }

    fn available(&self) -> &[u8] {
        &self.block[self.pos..]
    }

    /// Bytes read so far (past the position: what a truncated encoding reports).
    fn total(&self) -> usize {
        self.consumed + self.block.len()
    }

    fn peek_byte(&mut self) -> Result<Option<u8>, Stop> {
        while self.available().is_empty() {
            if !self.next_block()? {
                return Ok(None);
            }
        }
        Ok(Some(self.available()[0]))
    }

    /// The next `n` bytes (a small item: a length or one point), across pieces if need be.
    fn small(&mut self, n: usize) -> Result<Vec<u8>, Stop> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            if self.available().is_empty() && !self.next_block()? {
                return Err(Stop::End);
            }
            let take = (n - out.len()).min(self.available().len());
            out.extend_from_slice(&self.available()[..take]);
            self.pos += take;
        }
        Ok(out)
    }

    fn point<P: EncodedPoint>(&mut self, compress: Compress, what: &str) -> Result<P, Stop> {
        let bytes = self.small(P::default_size(compress))?;
        let p = P::decode(&bytes, compress).map_err(|error| Stop::Bad { what: what.to_string(), error })?;
        self.off_curve |= self.check_curve && !p.on_curve();
        Ok(p)
    }

    /// A vector: its u64 length, then its points.
    fn points<P: EncodedPoint>(&mut self, compress: Compress, query: &str) -> Result<Vec<P>, Stop> {
        let len = u64::from_le_bytes(self.small(8)?.try_into().expect("eight bytes"));
        self.points_n(len, compress, query)
    }

    /// `len` points, those inside a piece decoded in parallel.
    fn points_n<P: EncodedPoint>(&mut self, len: u64, compress: Compress, query: &str) -> Result<Vec<P>, Stop> {
        let size = P::default_size(compress);
        // A length that lies runs into the end of the stream: reserve no more than the bytes
        // left can back (a piece's worth where the source's length is unknown).
        let left = self.len.map_or(PIECE as u64, |total| total.saturating_sub((self.consumed + self.pos) as u64));
        let mut out: Vec<P> = crate::huge_pages::vec_with_capacity(len.min(left / size as u64) as usize);
        while (out.len() as u64) < len {
            let whole = (self.available().len() / size).min((len - out.len() as u64) as usize);
            if whole == 0 {
                let at = out.len();
                out.push(self.point(compress, &format!("{query}[{at}]"))?);
                continue;
            }
            let first = out.len();
            // Decoded straight into place; the first malformed point (lowest index) is kept.
            let bad = std::sync::Mutex::new(None::<(usize, SerializationError)>);
            let (check_curve, off_curve) = (self.check_curve, std::sync::atomic::AtomicBool::new(false));
            out.par_extend(self.available()[..whole * size].par_chunks_exact(size).enumerate().map(|(i, b)| {
                let p = P::decode(b, compress).unwrap_or_else(|e| {
                    let mut bad = bad.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    if bad.as_ref().is_none_or(|(j, _)| i < *j) {
                        *bad = Some((i, e));
                    }
                    P::default()
                });
                if check_curve && !p.on_curve() {
                    off_curve.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                p
            }));
            self.off_curve |= off_curve.into_inner();
            if let Some((i, error)) = bad.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
                return Err(Stop::Bad { what: format!("{query}[{}]", first + i), error });
            }
            self.pos += whole * size;
        }
        Ok(out)
    }

    fn key(&mut self, c: Compress) -> Result<ProvingKey, Stop> {
        let vk = VerifyingKey {
            alpha_g1: self.point(c, "alpha_g1")?,
            beta_g2: self.point(c, "beta_g2")?,
            gamma_g2: self.point(c, "gamma_g2")?,
            delta_g2: self.point(c, "delta_g2")?,
            gamma_abc_g1: self.points(c, "gamma_abc_g1")?,
        };
        Ok(ProvingKey {
            vk,
            beta_g1: self.point(c, "beta_g1")?,
            delta_g1: self.point(c, "delta_g1")?,
            a_query: self.points(c, "a_query")?,
            b_g1_query: self.points(c, "b_g1_query")?,
            b_g2_query: self.points(c, "b_g2_query")?,
            h_query: self.points(c, "h_query")?,
            l_query: self.points(c, "l_query")?,
        })
    }

    /// Bytes left after the key (the rest of the stream is read to count them).
    fn rest(&mut self) -> Result<usize, KeyError> {
        let mut extra = self.available().len();
        self.pos = self.block.len();
        while self.next_block()? {
            extra += self.block.len();
            self.pos = self.block.len();
        }
        Ok(extra)
    }

    fn piece_digests(&mut self) -> Result<Vec<FileDigest>, KeyError> {
        self.pieces
            .iter()
            .map(|rx| rx.recv().map_err(|_| KeyError::Inconsistent("a piece's digest was lost".into())))
            .collect()
    }
}

/// A point a [`PointStream`] decodes: its encoded size, which arkworks knows per instance only,
/// and its decoder (uncompressed points through [`super::zcash`], which accepts and refuses
/// what arkworks does, with less work).
pub trait EncodedPoint: CanonicalDeserialize + Send + Default {
    fn default_size(compress: Compress) -> usize;
    /// The point in `bytes` (exactly its size), not checked on the curve.
    fn decode(bytes: &[u8], compress: Compress) -> Result<Self, SerializationError>;
    /// On the curve (the identity counts as on it).
    fn on_curve(&self) -> bool;
}

impl<C: zcash::Uncompressed> EncodedPoint for Affine<C> {
    fn default_size(compress: Compress) -> usize {
        match compress {
            Compress::No => C::UNCOMPRESSED,
            Compress::Yes => C::UNCOMPRESSED / 2,
        }
    }

    fn decode(bytes: &[u8], compress: Compress) -> Result<Self, SerializationError> {
        match compress {
            Compress::No => C::uncompressed(bytes),
            Compress::Yes => Self::deserialize_with_mode(bytes, compress, Validate::No),
        }
    }

    fn on_curve(&self) -> bool {
        self.is_on_curve()
    }
}

pub(super) fn describe(e: SerializationError) -> String {
    match e {
        SerializationError::InvalidData => {
            "invalid data (a coordinate out of range or a compressed point off the curve)".to_string()
        }
        SerializationError::UnexpectedFlags => {
            "unexpected point flags (mixed compressed and uncompressed points?)".to_string()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::AffineRepr;
    use ark_serialize::CanonicalSerialize;

    fn key() -> ProvingKey {
        let circuit = crate::circuits::BuiltinCircuit::new(crate::circuits::CircuitKind::Synthetic, 4, 0).unwrap();
        let mut rng = g16_backend::sample::test_rng("decode");
        super::super::CheckedKey::generate(circuit, &mut rng).unwrap().into_inner()
    }

    #[test]
    fn decodes_what_arkworks_encodes_with_its_digest() {
        let pk = key();
        for compress in [Compress::No, Compress::Yes] {
            let mut bytes = Vec::new();
            pk.serialize_with_mode(&mut bytes, compress).unwrap();
            let d = decode(&bytes[..], Some(bytes.len() as u64)).unwrap();
            assert_eq!(d.pk, pk);
            assert_eq!(d.compressed, compress == Compress::Yes);
            assert_eq!(d.digest, digest::digest_bytes(&bytes));
        }
    }

    /// The decoder's curve verdict: every point on it for a real key; a point moved off it
    /// (uncompressed, so it still decodes) in a vector, or alone, makes the verdict false.
    #[test]
    fn points_off_the_curve_are_noticed_as_they_decode() {
        let pk = key();
        let encode = |pk: &ProvingKey| {
            let mut bytes = Vec::new();
            pk.serialize_with_mode(&mut bytes, Compress::No).unwrap();
            bytes
        };
        let good = encode(&pk);
        assert!(decode(&good[..], Some(good.len() as u64)).unwrap().on_curve);
        let off = |p: crate::curve::G1Affine| crate::curve::G1Affine::new_unchecked(p.x, p.y + p.y);
        let mut in_vector = pk.clone();
        let i = in_vector.h_query.iter().rposition(|p| !p.is_zero()).expect("a point that is not the identity");
        in_vector.h_query[i] = off(in_vector.h_query[i]);
        let mut alone = pk.clone();
        alone.delta_g1 = off(alone.delta_g1);
        let mut g2 = pk.clone();
        let i = g2.b_g2_query.iter().rposition(|p| !p.is_zero()).expect("a point that is not the identity");
        let q = g2.b_g2_query[i];
        g2.b_g2_query[i] = crate::curve::G2Affine::new_unchecked(q.x, q.y + q.y);
        for bad in [in_vector, alone, g2] {
            assert!(
                !(bad.h_query.iter().all(|p| p.is_on_curve())
                    && bad.delta_g1.is_on_curve()
                    && bad.b_g2_query.iter().all(|p| p.is_on_curve()))
            );
            let bytes = encode(&bad);
            let d = decode(&bytes[..], Some(bytes.len() as u64)).unwrap();
            assert!(!d.on_curve);
            assert_eq!(d.pk, bad, "decoded as written");
        }
    }

    #[test]
    fn points_straddling_pieces_decode_and_digest_like_whole_files() {
        // Pieces of 1000 bytes: boundaries fall inside points and inside lengths.
        let pk = key();
        let mut bytes = Vec::new();
        pk.serialize_uncompressed(&mut bytes).unwrap();
        // One reader, and three taking the pieces in turn as a file's readers do.
        for readers in [1, 3] {
            let channels: Vec<_> = (0..readers).map(|_| sync_channel(bytes.len() / 1000 + 1)).collect();
            for (k, chunk) in bytes.chunks(1000).enumerate() {
                let (done, digest) = sync_channel(1);
                done.send(digest::piece(chunk)).unwrap();
                channels[k % readers].0.send(Ok(Block { bytes: std::sync::Arc::new(chunk.to_vec()), digest })).unwrap();
            }
            let mut s = Stream::new(channels.into_iter().map(|(_, rx)| rx).collect());
            assert_eq!(s.key(Compress::No).ok().unwrap(), pk, "{readers} readers");
            assert_eq!(s.rest().unwrap(), 0);
        }
    }

    /// A file of several pieces, read whole and read at offsets by several threads: the key
    /// and the digest of the same bytes read in order; the same error for a padded file, a
    /// truncated one, and a coordinate out of range in a point that straddles two pieces.
    #[test]
    fn files_read_whole_or_at_offsets_decode_and_digest_like_streams() {
        let mut pk = key();
        // Over two pieces and a part of points (96 bytes each, uncompressed).
        pk.h_query = vec![pk.h_query[0]; 2 * PIECE / 96 + 12_345];
        let mut bytes = Vec::new();
        pk.serialize_uncompressed(&mut bytes).unwrap();
        let path = std::env::temp_dir().join(format!("g16-decode-offsets-{}.key", std::process::id()));
        let from_stream = decode(&bytes[..], None).unwrap();
        let read = |whole_up_to: u64| {
            let file = std::fs::File::open(&path).unwrap();
            let len = file.metadata().unwrap().len();
            decode_key(file, Some(len), true, whole_up_to)
        };
        let h_start = bytes.len() - 96 * pk.l_query.len() - 8 - 96 * pk.h_query.len();
        // The first point of h that starts before the second piece and ends after its start.
        let straddling = (PIECE - h_start) / 96;
        assert!(h_start + 96 * straddling < PIECE && h_start + 96 * (straddling + 1) > PIECE);
        let mut bad_point = bytes.clone();
        bad_point[h_start + 96 * straddling + 48..][..48].fill(0xff);
        std::fs::write(&path, &bytes).unwrap();
        for whole_up_to in [0, u64::MAX] {
            std::fs::write(&path, &bytes).unwrap();
            let from_file = read(whole_up_to).unwrap();
            assert!(from_file.pk == pk, "the key read (whole up to {whole_up_to})");
            assert!(from_file.on_curve);
            assert_eq!(from_file.digest, from_stream.digest);
            std::fs::write(&path, [&bytes[..], &[0u8; 7]].concat()).unwrap();
            assert!(matches!(read(whole_up_to), Err(KeyError::TrailingBytes { extra: 7, .. })));
            std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
            match read(whole_up_to) {
                Err(KeyError::Truncated { len, .. }) => assert_eq!(len, bytes.len() - 100),
                other => panic!("expected a truncation, got {:?}", other.err()),
            }
            std::fs::write(&path, &bad_point).unwrap();
            match read(whole_up_to) {
                Err(KeyError::Malformed { detail, .. }) => {
                    assert!(detail.starts_with(&format!("h_query[{straddling}]:")), "{detail}")
                }
                other => panic!("expected h_query[{straddling}] malformed, got {:?}", other.err()),
            }
        }
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_length_that_lies_is_a_truncation_not_an_allocation() {
        let pk = key();
        let mut bytes = Vec::new();
        pk.serialize_uncompressed(&mut bytes).unwrap();
        // The last vector's (l's) length, set to 2^64 − 1: its points run into the end.
        let at = bytes.len() - 96 * pk.l_query.len() - 8;
        bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        match decode(&bytes[..], None) {
            Err(KeyError::Truncated { len, .. }) => assert_eq!(len, bytes.len()),
            other => panic!("expected a truncation, got {:?}", other.err()),
        }
    }
}
