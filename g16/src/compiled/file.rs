//! The compiled-circuit file: versioned, checksummed, little-endian.
//!
//! ```text
//! magic        8 bytes   "g16circ\0"
//! version      u32       1
//! flags        u32       bit 0: C present; bit 1: snarkjs's QAP; bit 2: a key digest follows
//! counts       3 × u64   instance variables (the constant 1 included), variables, constraints
//! key digest   32 bytes  (bit 2 only) the key store's digest of the proving key made for it
//! matrices     A, B, then C (bit 0): rows u64, entries u64, row starts (rows + 1) × u32,
//!              columns entries × u32, coefficients entries × 32 bytes (canonical Fr)
//! checksum     32 bytes  SHA-256 of everything before it
//! ```
//!
//! A reader checks the checksum (beside the parsing, whose result it overrides) and every count
//! against the bytes that remain before allocating for it, so a truncated, flipped or hostile
//! file is a typed error, never a panic or an allocation of what the file only claims.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use ark_ff::{BigInteger, PrimeField};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::{CompileError, CompiledCircuit};
use g16_backend::SparseMatrix;
use super::shape::Qap;
use crate::curve::Fr;

pub const MAGIC: &[u8; 8] = b"g16circ\0";
pub const VERSION: u32 = 1;
const FLAG_C: u32 = 1;
const FLAG_SNARKJS: u32 = 2;
const FLAG_KEY_DIGEST: u32 = 4;

/// What is wrong with a compiled-circuit file.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("not a compiled circuit (no \"g16circ\" magic)")]
    Magic,
    #[error("compiled-circuit format version {0}; this g16 reads version {VERSION}")]
    Version(u32),
    #[error("the file is truncated: it ends at byte {len} inside {what}")]
    Truncated { len: usize, what: &'static str },
    #[error("the checksum does not match: the file was changed or damaged")]
    Checksum,
    #[error("malformed: {0}")]
    Malformed(String),
}

/// A compiled circuit and, where it was compiled beside a key, that key's digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitFile {
    pub circuit: CompiledCircuit,
    pub key_digest: Option<[u8; 32]>,
}

impl CircuitFile {
    pub fn to_bytes(&self) -> Vec<u8> {
        let c = &self.circuit;
        let (a, b, cm) = c.matrices();
        let mut flags = 0;
        if cm.is_some() {
            flags |= FLAG_C;
        }
        if c.qap() == Qap::Snarkjs {
            flags |= FLAG_SNARKJS;
        }
        if self.key_digest.is_some() {
            flags |= FLAG_KEY_DIGEST;
        }
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&flags.to_le_bytes());
        for n in [c.num_instance(), c.num_variables(), c.num_constraints()] {
            out.extend_from_slice(&(n as u64).to_le_bytes());
        }
        if let Some(d) = &self.key_digest {
            out.extend_from_slice(d);
        }
        for m in [Some(a), Some(b), cm].into_iter().flatten() {
            let (starts, cols, coeffs) = m.parts();
            out.extend_from_slice(&(m.rows() as u64).to_le_bytes());
            out.extend_from_slice(&(m.entries() as u64).to_le_bytes());
            starts.iter().for_each(|s| out.extend_from_slice(&s.to_le_bytes()));
            cols.iter().for_each(|c| out.extend_from_slice(&c.to_le_bytes()));
            coeffs.iter().for_each(|k| out.extend_from_slice(&k.into_bigint().to_bytes_le()));
        }
        let sum = Sha256::digest(&out);
        out.extend_from_slice(&sum);
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<CircuitFile, CompileError> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(8, "the magic")? != MAGIC {
            return Err(FileError::Magic.into());
        }
        let version = r.u32("the version")?;
        if version != VERSION {
            return Err(FileError::Version(version).into());
        }
        if bytes.len() < 32 + r.at {
            return Err(FileError::Truncated { len: bytes.len(), what: "the checksum" }.into());
        }
        let (body, sum) = bytes.split_at(bytes.len() - 32);
        // The checksum (one SHA-256 over the file, a core's work: ~1 s for a 2^24 circuit)
        // runs beside the parsing, which every count bounds against the bytes left, so a
        // damaged file costs nothing worse than an error; its result is the checksum's error
        // where the sums differ, whatever the parsing found.
        let (matches, parsed) = rayon::join(|| Sha256::digest(body).as_slice() == sum, || Self::parse(body, r.at));
        if !matches {
            return Err(FileError::Checksum.into());
        }
        parsed
    }

    /// The body behind the version (its checksum checked by the caller).
    fn parse(body: &[u8], at: usize) -> Result<CircuitFile, CompileError> {
        let mut r = Reader { bytes: body, at };
        let flags = r.u32("the flags")?;
        if flags & !(FLAG_C | FLAG_SNARKJS | FLAG_KEY_DIGEST) != 0 {
            return Err(FileError::Malformed(format!("unknown flags {flags:#x}")).into());
        }
        let num_instance = r.count("the instance count")?;
        let num_variables = r.count("the variable count")?;
        let num_constraints = r.count("the constraint count")?;
        let key_digest = match flags & FLAG_KEY_DIGEST {
            0 => None,
            _ => Some(r.take(32, "the key digest")?.try_into().map_err(|_| FileError::Malformed("key digest".into()))?),
        };
        let a = r.matrix("A", num_variables)?;
        let b = r.matrix("B", num_variables)?;
        let c = if flags & FLAG_C != 0 { Some(r.matrix("C", num_variables)?) } else { None };
        if r.at != body.len() {
            return Err(FileError::Malformed(format!("{} bytes after the last matrix", body.len() - r.at)).into());
        }
        let qap = if flags & FLAG_SNARKJS != 0 { Qap::Snarkjs } else { Qap::Libsnark };
        let circuit = CompiledCircuit::with_input_rows(num_instance, num_constraints, a, b, c, qap)?;
        Ok(CircuitFile { circuit, key_digest })
    }

    pub fn write(&self, path: &Path) -> Result<(), CompileError> {
        let io = |source| FileError::Io { path: path.display().to_string(), source };
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, self.to_bytes()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)?;
        Ok(())
    }

    /// Reads the file in pieces on every core (as a zkey is read).
    pub fn read(path: &Path) -> Result<CircuitFile, CompileError> {
        let bytes = crate::whole_file::read(path)
            .map_err(|source| FileError::Io { path: path.display().to_string(), source })?;
        Self::from_bytes(&bytes)
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], FileError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(FileError::Truncated { len: self.bytes.len(), what })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, FileError> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().map_err(|_| FileError::Truncated { len: 0, what })?))
    }

    /// A u64 count that fits the address space.
    fn count(&mut self, what: &'static str) -> Result<usize, FileError> {
        let v = u64::from_le_bytes(self.take(8, what)?.try_into().map_err(|_| FileError::Truncated { len: 0, what })?);
        usize::try_from(v).map_err(|_| FileError::Malformed(format!("{what} {v} is too large")))
    }

    /// `n` items of `size` bytes, checked against what is left before anything is allocated.
    fn items(&mut self, n: usize, size: usize, what: &'static str) -> Result<&'a [u8], FileError> {
        let bytes = n.checked_mul(size).ok_or_else(|| FileError::Malformed(format!("{what}: {n} items")))?;
        self.take(bytes, what)
    }

    fn matrix(&mut self, name: &'static str, columns: usize) -> Result<SparseMatrix, CompileError> {
        let rows = self.count("a matrix's row count")?;
        let entries = self.count("a matrix's entry count")?;
        let words =
            |b: &[u8]| b.par_chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect::<Vec<_>>();
        let starts = words(self.items(rows.saturating_add(1), 4, "row starts")?);
        let cols = words(self.items(entries, 4, "columns")?);
        let coeff_bytes = self.items(entries, 32, "coefficients")?;
        // On every core: a 2^24 circuit holds tens of millions of coefficients.
        // Straight into place (a Result collect would go through lists and a serial append);
        // the first coefficient that is not canonical, by position, is named.
        let first_bad = AtomicUsize::new(usize::MAX);
        let mut coeffs = crate::huge_pages::vec_with_capacity(entries);
        coeff_bytes
            .par_chunks_exact(32)
            .enumerate()
            .map(|(i, b)| {
                let limbs =
                    std::array::from_fn(|k| u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().expect("8 bytes")));
                // Canonical only: a value ≥ r would read back as another one.
                Fr::from_bigint(ark_ff::BigInt(limbs)).unwrap_or_else(|| {
                    first_bad.fetch_min(i, Ordering::Relaxed);
                    Fr::from(0u64)
                })
            })
            .collect_into_vec(&mut coeffs);
        if let i @ 0..usize::MAX = first_bad.into_inner() {
            return Err(FileError::Malformed(format!("matrix {name}: coefficient {i} is not below r")).into());
        }
        SparseMatrix::from_parts(columns, starts, cols, coeffs)
            .map_err(|source| CompileError::Matrix { matrix: name, source })
    }
}
