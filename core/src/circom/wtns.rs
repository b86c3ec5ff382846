//! A witness, `.wtns` (version 2), as circom's witness generators and `snarkjs wtns calculate`
//! write it.
//!
//! ```text
//! section 1, header  u32 field size n8, the prime (n8 bytes), u32 values
//! section 2, values  n8 bytes each, canonical, little-endian: z = [1, outputs, public inputs, …]
//! ```

use std::path::Path;

use super::binfile::{BinFile, FileKind};
use super::{field, CircomError};
use crate::Fr;

const KIND: FileKind = FileKind::Wtns;
const VERSION: u32 = 2;

/// Reads a witness over BLS12-381's scalar field: the whole assignment z.
pub fn read_wtns(bytes: &[u8]) -> Result<Vec<Fr>, CircomError> {
    let file = BinFile::parse(bytes, KIND, VERSION)?;
    let mut h = file.unique(1, "header")?.cursor(KIND);
    field::expect_fr(&mut h, "the witness's prime")?;
    let count = h.count("the value count")?;
    h.finish("the header")?;
    let mut v = file.unique(2, "values")?.cursor(KIND);
    let at = v.here();
    let bytes = v.items(count as u64, 32, "the values")?;
    v.finish("the values")?;
    bytes
        .chunks_exact(32)
        .enumerate()
        .map(|(i, b)| {
            field::fr(b).ok_or(CircomError::NotCanonical { at: field::element_at(at, i, 32), what: "a value" })
        })
        .collect()
}

/// A witness as circom's generators write it: the same container, header and values, so
/// `snarkjs wtns check` and any `.wtns` reader take it. g16 writes the witnesses of its built-in
/// circuits this way for `g16 prove --compiled`.
pub fn write_wtns(z: &[Fr]) -> Vec<u8> {
    use ark_ff::{BigInteger, PrimeField};
    let prime = Fr::MODULUS.to_bytes_le();
    let mut header = Vec::with_capacity(40);
    header.extend_from_slice(&(prime.len() as u32).to_le_bytes());
    header.extend_from_slice(&prime);
    header.extend_from_slice(&(z.len() as u32).to_le_bytes());
    let values: Vec<u8> = z.iter().flat_map(|v| v.into_bigint().to_bytes_le()).collect();
    let mut out = Vec::with_capacity(12 + 2 * 12 + header.len() + values.len());
    out.extend_from_slice(KIND.magic());
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    for (id, body) in [(1u32, &header), (2, &values)] {
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(body);
    }
    out
}

/// [`read_wtns`] of a file.
pub fn read_wtns_file(path: &Path) -> Result<Vec<Fr>, CircomError> {
    read_wtns(&super::read_file(path)?)
}
