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
use crate::curve::Fr;

const KIND: FileKind = FileKind::Wtns;
const VERSION: u32 = 2;

/// Reads a witness over BLS12-381's scalar field: the whole assignment z.
pub fn read_wtns(bytes: &[u8]) -> Result<Vec<Fr>, CircomError> {
    Ok(field::checked_values_from_le(wtns_values(bytes)?))
}

/// The values section of a witness, every value checked to be below r but left as the file
/// has it (32 bytes, little-endian, canonical): for callers that keep or ship the witness in
/// that form, so it is converted once, where it is used.
pub fn wtns_values(bytes: &[u8]) -> Result<&[u8], CircomError> {
    let file = BinFile::parse(bytes, KIND, VERSION)?;
    let mut h = file.unique(1, "header")?.cursor(KIND);
    field::expect_fr(&mut h, "the witness's prime")?;
    let count = h.count("the value count")?;
    h.finish("the header")?;
    let mut v = file.unique(2, "values")?.cursor(KIND);
    let at = v.here();
    let values = v.items(count as u64, 32, "the values")?;
    v.finish("the values")?;
    match field::first_non_canonical(values) {
        Some(i) => Err(CircomError::NotCanonical { at: field::element_at(at, i, 32), what: "a value" }),
        None => Ok(values),
    }
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
    let values = field::values_to_le(z);
    super::binfile::write(KIND, VERSION, &[(1, &header), (2, &values)])
}

/// [`read_wtns`] of a file.
pub fn read_wtns_file(path: &Path) -> Result<Vec<Fr>, CircomError> {
    read_wtns(&super::read_file(path)?)
}
