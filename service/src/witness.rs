//! Witnesses as jobs carry them: uploaded as a circom `.wtns` file or raw, kept in the store
//! raw — the assignment z, 32 bytes little-endian per element, every element checked to be
//! below the field's modulus. Accepting one only compares and copies; the worker that proves
//! it turns it into field elements once, on all its cores.

use g16_client::proto::WitnessFormat;
use g16::circom::{first_non_canonical, values_from_le, values_to_le, wtns_values, VALUE_BYTES};
use g16::Fr;

#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    #[error("the witness file: {0}")]
    Wtns(#[from] g16::circom::CircomError),
    #[error("a raw witness is a whole number of 32-byte elements; {0} bytes is not")]
    RawLength(usize),
    #[error("witness element {0} is not below the scalar field's modulus")]
    NotInField(usize),
    #[error("the witness has {got} values, the circuit {expected} variables")]
    Length { expected: usize, got: usize },
    #[error("the witness does not start with the constant 1")]
    Constant,
    #[error("a C1 output is the witness of a Filecoin PoRep circuit, not an assignment")]
    NotAnAssignment,
}

/// An uploaded witness in the store's raw form, checked (every element in the field, the
/// count the circuit's, the constant 1 first) but not converted.
pub fn to_stored(format: WitnessFormat, bytes: Vec<u8>, num_variables: usize) -> Result<Vec<u8>, WitnessError> {
    let raw = match format {
        WitnessFormat::Wtns => {
            // The values, moved to the front of the upload's own buffer: no second buffer of
            // the witness's size to allocate and fault in.
            let values = wtns_values(&bytes)?;
            let (start, len) = (values.as_ptr() as usize - bytes.as_ptr() as usize, values.len());
            let mut bytes = bytes;
            bytes.truncate(start + len);
            bytes.drain(..start);
            bytes
        }
        WitnessFormat::Raw => {
            check_raw(&bytes)?;
            bytes
        }
        WitnessFormat::FilecoinC1 => return Err(WitnessError::NotAnAssignment),
    };
    let got = raw.len() / VALUE_BYTES;
    if got != num_variables {
        return Err(WitnessError::Length { expected: num_variables, got });
    }
    let mut one = [0u8; VALUE_BYTES];
    one[0] = 1;
    if raw.get(..VALUE_BYTES) != Some(&one[..]) {
        return Err(WitnessError::Constant);
    }
    Ok(raw)
}

fn check_raw(bytes: &[u8]) -> Result<(), WitnessError> {
    if !bytes.len().is_multiple_of(VALUE_BYTES) {
        return Err(WitnessError::RawLength(bytes.len()));
    }
    match first_non_canonical(bytes) {
        Some(i) => Err(WitnessError::NotInField(i)),
        None => Ok(()),
    }
}

/// The store's form of an assignment (also the raw upload format).
pub fn to_raw(z: &[Fr]) -> Vec<u8> {
    values_to_le(z)
}

pub fn from_raw(bytes: &[u8]) -> Result<Vec<Fr>, WitnessError> {
    if !bytes.len().is_multiple_of(VALUE_BYTES) {
        return Err(WitnessError::RawLength(bytes.len()));
    }
    values_from_le(bytes).map_err(WitnessError::NotInField)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::UniformRand;

    #[test]
    fn raw_round_trips_and_rejects_what_is_not_an_element() {
        let mut rng = rand::thread_rng();
        let z: Vec<Fr> = std::iter::once(Fr::from(1u64)).chain((0..20).map(|_| Fr::rand(&mut rng))).collect();
        let raw = to_raw(&z);
        assert_eq!(from_raw(&raw).unwrap(), z);
        assert_eq!(to_stored(WitnessFormat::Raw, raw.clone(), z.len()).unwrap(), raw);
        let wtns = g16::circom::write_wtns(&z);
        assert_eq!(to_stored(WitnessFormat::Wtns, wtns.clone(), z.len()).unwrap(), raw);
        assert!(matches!(to_stored(WitnessFormat::Wtns, wtns, z.len() - 1), Err(WitnessError::Length { .. })));
        assert!(matches!(to_stored(WitnessFormat::Raw, raw.clone(), z.len() + 1), Err(WitnessError::Length { .. })));
        assert!(matches!(from_raw(&raw[..raw.len() - 1]), Err(WitnessError::RawLength(_))));
        let mut over = raw.clone();
        over[32..64].fill(0xff);
        assert!(matches!(from_raw(&over), Err(WitnessError::NotInField(1))));
        assert!(matches!(to_stored(WitnessFormat::Raw, over, z.len()), Err(WitnessError::NotInField(1))));
        let mut no_one = raw;
        no_one[0] = 2;
        assert!(matches!(to_stored(WitnessFormat::Raw, no_one, z.len()), Err(WitnessError::Constant)));
    }
}
