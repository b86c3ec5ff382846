//! The iden3 binary container of `.r1cs`, `.wtns` and `.zkey` files.
//!
//! ```text
//! magic      4 bytes   "r1cs", "wtns" or "zkey"
//! version    u32
//! sections   u32       how many follow
//! section    u32 id, u64 size, then size bytes; any order; unknown ids are skipped
//! ```
//!
//! All integers are little-endian. Parsing yields each section as a slice of the file, so
//! nothing is copied or allocated for what a size only claims; a section whose size runs past
//! the end of the file is a truncation, and bytes after the last section are refused.

use std::fmt;

use super::CircomError;

/// The formats that share the container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    R1cs,
    Wtns,
    Zkey,
}

impl FileKind {
    pub fn magic(self) -> &'static [u8; 4] {
        match self {
            FileKind::R1cs => b"r1cs",
            FileKind::Wtns => b"wtns",
            FileKind::Zkey => b"zkey",
        }
    }

    pub(super) fn magic_str(self) -> &'static str {
        std::str::from_utf8(self.magic()).unwrap_or("?")
    }

    /// The format a file's first four bytes name, if any.
    pub fn detect(bytes: &[u8]) -> Option<FileKind> {
        [FileKind::R1cs, FileKind::Wtns, FileKind::Zkey].into_iter().find(|k| bytes.starts_with(k.magic()))
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ".{}", self.magic_str())
    }
}

/// A place in a file: its format, the section (`None`: the container's own header) and the
/// byte offset from the start of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    pub kind: FileKind,
    pub section: Option<u32>,
    pub offset: usize,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.section {
            Some(id) => write!(f, "{} section {id}, byte {}", self.kind, self.offset),
            None => write!(f, "{} header, byte {}", self.kind, self.offset),
        }
    }
}

/// A container of `sections` (id, body), in the order given: what the writers of g16's
/// `.wtns` and `.zkey` files share.
pub(super) fn write(kind: FileKind, version: u32, sections: &[(u32, &[u8])]) -> Vec<u8> {
    let total: usize = sections.iter().map(|(_, body)| 12 + body.len()).sum();
    let mut out = Vec::with_capacity(12 + total);
    out.extend_from_slice(kind.magic());
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    for (id, body) in sections {
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(body);
    }
    out
}

/// One section: its id and its bytes, which start at `offset` in the file.
#[derive(Clone, Copy, Debug)]
pub struct Section<'a> {
    pub id: u32,
    pub offset: usize,
    pub bytes: &'a [u8],
}

impl<'a> Section<'a> {
    /// A reader over the section's bytes.
    pub fn cursor(&self, kind: FileKind) -> Cursor<'a> {
        Cursor { kind, section: Some(self.id), base: self.offset, bytes: self.bytes, at: 0 }
    }
}

/// A parsed container: its version and sections, in file order.
#[derive(Clone, Debug)]
pub struct BinFile<'a> {
    pub kind: FileKind,
    pub version: u32,
    pub sections: Vec<Section<'a>>,
}

impl<'a> BinFile<'a> {
    /// Parses the container of a `kind` file whose version is `version`.
    pub fn parse(bytes: &'a [u8], kind: FileKind, version: u32) -> Result<BinFile<'a>, CircomError> {
        let mut c = Cursor { kind, section: None, base: 0, bytes, at: 0 };
        let magic = c.take(4, "the magic")?;
        if magic != kind.magic() {
            return Err(CircomError::Magic { kind, found: String::from_utf8_lossy(magic).into_owned() });
        }
        let found = c.u32("the version")?;
        if found != version {
            return Err(CircomError::Version { kind, version: found, supported: version });
        }
        let count = c.u32("the section count")?;
        // Grown one parsed section at a time: a claimed count allocates nothing.
        let mut sections = Vec::new();
        for _ in 0..count {
            let id = c.u32("a section id")?;
            let size = c.u64("a section size")?;
            let offset = c.offset();
            let bytes = c.take_u64(size, "a section")?;
            sections.push(Section { id, offset, bytes });
        }
        c.finish("the last section")?;
        Ok(BinFile { kind, version, sections })
    }

    /// The one section `id` (`name` says what it holds, for the error).
    pub fn unique(&self, id: u32, name: &'static str) -> Result<Section<'a>, CircomError> {
        match self.optional(id, name)? {
            Some(s) => Ok(s),
            None => Err(CircomError::MissingSection { kind: self.kind, section: id, name }),
        }
    }

    /// Section `id` where there is one; twice is an error.
    pub fn optional(&self, id: u32, name: &'static str) -> Result<Option<Section<'a>>, CircomError> {
        let mut found = self.sections.iter().filter(|s| s.id == id);
        match (found.next(), found.count()) {
            (first, 0) => Ok(first.copied()),
            (_, more) => Err(CircomError::DuplicateSection { kind: self.kind, section: id, name, count: more + 1 }),
        }
    }
}

/// Reads little-endian values from a slice of a file, each read checked against what is left.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    kind: FileKind,
    section: Option<u32>,
    /// The offset of `bytes` in the file.
    base: usize,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    /// Where the next read starts.
    pub fn here(&self) -> At {
        At { kind: self.kind, section: self.section, offset: self.offset() }
    }

    fn offset(&self) -> usize {
        self.base + self.at
    }

    pub fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], CircomError> {
        self.take_u64(n as u64, what)
    }

    fn take_u64(&mut self, n: u64, what: &'static str) -> Result<&'a [u8], CircomError> {
        let left = self.left();
        match usize::try_from(n) {
            Ok(n) if n <= left => {
                let s = &self.bytes[self.at..self.at + n];
                self.at += n;
                Ok(s)
            }
            _ => Err(CircomError::Truncated { at: self.here(), what, needed: n, left }),
        }
    }

    /// `count` items of `size` bytes each, checked against what is left before any is read.
    pub fn items(&mut self, count: u64, size: usize, what: &'static str) -> Result<&'a [u8], CircomError> {
        let needed = count.saturating_mul(size as u64);
        self.take_u64(needed, what)
    }

    pub fn u32(&mut self, what: &'static str) -> Result<u32, CircomError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u64(&mut self, what: &'static str) -> Result<u64, CircomError> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    /// A u32 count, as an index.
    pub fn count(&mut self, what: &'static str) -> Result<usize, CircomError> {
        // u32 always fits usize on the 32- and 64-bit targets g16 builds for.
        Ok(self.u32(what)? as usize)
    }

    /// Errors where bytes are left after what was read (`what`: the last thing read).
    pub fn finish(&self, what: &'static str) -> Result<(), CircomError> {
        match self.left() {
            0 => Ok(()),
            extra => Err(CircomError::TrailingBytes { at: self.here(), what, extra }),
        }
    }

    /// An error at the cursor's place.
    pub fn malformed(&self, detail: impl Into<String>) -> CircomError {
        CircomError::Malformed { at: self.here(), detail: detail.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The writer's container under any four-byte magic (the tests also write wrong ones).
    fn container(magic: &[u8; 4], version: u32, sections: &[(u32, &[u8])]) -> Vec<u8> {
        let mut out = write(FileKind::Wtns, version, sections);
        out[..4].copy_from_slice(magic);
        out
    }

    #[test]
    fn sections_are_slices_of_the_file_at_their_offsets() {
        let bytes = container(b"wtns", 2, &[(2, b"abcd"), (1, b"xy"), (9, b"")]);
        let file = BinFile::parse(&bytes, FileKind::Wtns, 2).unwrap();
        assert_eq!(file.sections.len(), 3);
        let s = file.unique(1, "header").unwrap();
        assert_eq!((s.bytes, s.offset), (&b"xy"[..], 12 + 12 + 4 + 12));
        assert_eq!(&bytes[s.offset..s.offset + 2], b"xy");
        assert!(file.optional(3, "x").unwrap().is_none());
        assert!(matches!(file.unique(3, "x"), Err(CircomError::MissingSection { section: 3, .. })));
        assert_eq!(FileKind::detect(&bytes), Some(FileKind::Wtns));
    }

    #[test]
    fn damaged_containers_are_typed_errors() {
        let good = container(b"zkey", 1, &[(1, &[1, 0, 0, 0]), (2, &[7; 20])]);
        fn parse(b: &[u8]) -> Result<BinFile<'_>, CircomError> {
            BinFile::parse(b, FileKind::Zkey, 1)
        }
        assert!(parse(&good).is_ok());
        for cut in 0..good.len() {
            assert!(parse(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut long = good.clone();
        long.push(0);
        assert!(matches!(parse(&long), Err(CircomError::TrailingBytes { extra: 1, .. })));
        assert!(matches!(parse(&container(b"r1cs", 1, &[])), Err(CircomError::Magic { .. })));
        assert!(matches!(parse(&container(b"zkey", 3, &[])), Err(CircomError::Version { version: 3, .. })));
        // A section that claims 2^64 − 1 bytes.
        let mut huge = container(b"zkey", 1, &[(1, b"")]);
        let at = huge.len() - 8;
        huge[at..].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(parse(&huge), Err(CircomError::Truncated { needed: u64::MAX, .. })));
        // A count of sections the file does not hold.
        let mut many = container(b"zkey", 1, &[]);
        many[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(parse(&many), Err(CircomError::Truncated { .. })));
        let dup = container(b"zkey", 1, &[(4, b""), (4, b"")]);
        let file = parse(&dup).unwrap();
        assert!(matches!(file.unique(4, "c"), Err(CircomError::DuplicateSection { count: 2, .. })));
    }

    #[test]
    fn cursors_check_counts_before_reading() {
        let bytes = [1u8, 0, 0, 0, 5, 6];
        let s = Section { id: 4, offset: 100, bytes: &bytes };
        let mut c = s.cursor(FileKind::R1cs);
        assert_eq!(c.u32("n").unwrap(), 1);
        assert_eq!(c.here().offset, 104);
        let e = c.items(u64::MAX, 32, "values").unwrap_err();
        assert!(matches!(e, CircomError::Truncated { left: 2, .. }), "{e}");
        assert!(e.to_string().contains(".r1cs section 4, byte 104"), "{e}");
        assert!(c.finish("n").is_err());
        c.take(2, "rest").unwrap();
        c.finish("rest").unwrap();
    }
}
