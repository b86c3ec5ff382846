//! Witnesses as jobs carry them: uploaded as a circom `.wtns` file or raw, kept in the store
//! raw — the assignment z, 32 bytes little-endian per element, every element checked to be
//! below the field's modulus — so the worker that proves it only copies.

use ark_ff::{BigInt, PrimeField};
use g16_client::proto::WitnessFormat;
use g16_core::circom::wtns::read_wtns;
use g16_core::Fr;

const ELEMENT: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    #[error("the witness file: {0}")]
    Wtns(#[from] g16_core::circom::CircomError),
    #[error("a raw witness is a whole number of 32-byte elements; {0} bytes is not")]
    RawLength(usize),
    #[error("witness element {0} is not below the scalar field's modulus")]
    NotInField(usize),
    #[error("the witness has {got} values, the circuit {expected} variables")]
    Length { expected: usize, got: usize },
    #[error("the witness does not start with the constant 1")]
    Constant,
}

/// Parses an uploaded witness and checks it against the circuit's variable count.
pub fn parse(format: WitnessFormat, bytes: &[u8], num_variables: usize) -> Result<Vec<Fr>, WitnessError> {
    let z = match format {
        WitnessFormat::Wtns => read_wtns(bytes)?,
        WitnessFormat::Raw => from_raw(bytes)?,
    };
    if z.len() != num_variables {
        return Err(WitnessError::Length { expected: num_variables, got: z.len() });
    }
    if z.first() != Some(&Fr::from(1u64)) {
        return Err(WitnessError::Constant);
    }
    Ok(z)
}

/// The store's form of an assignment (also the raw upload format).
pub fn to_raw(z: &[Fr]) -> Vec<u8> {
    let mut out = Vec::with_capacity(z.len() * ELEMENT);
    for x in z {
        for limb in x.into_bigint().0 {
            out.extend_from_slice(&limb.to_le_bytes());
        }
    }
    out
}

pub fn from_raw(bytes: &[u8]) -> Result<Vec<Fr>, WitnessError> {
    if !bytes.len().is_multiple_of(ELEMENT) {
        return Err(WitnessError::RawLength(bytes.len()));
    }
    bytes
        .chunks_exact(ELEMENT)
        .enumerate()
        .map(|(i, chunk)| {
            let mut limbs = [0u64; 4];
            for (limb, b) in limbs.iter_mut().zip(chunk.chunks_exact(8)) {
                *limb = u64::from_le_bytes(b.try_into().expect("8 bytes"));
            }
            Fr::from_bigint(BigInt(limbs)).ok_or(WitnessError::NotInField(i))
        })
        .collect()
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
        assert_eq!(parse(WitnessFormat::Raw, &raw, z.len()).unwrap(), z);
        assert!(matches!(parse(WitnessFormat::Raw, &raw, z.len() + 1), Err(WitnessError::Length { .. })));
        assert!(matches!(from_raw(&raw[..raw.len() - 1]), Err(WitnessError::RawLength(_))));
        let mut over = raw.clone();
        over[32..64].fill(0xff);
        assert!(matches!(from_raw(&over), Err(WitnessError::NotInField(1))));
        let mut no_one = raw;
        no_one[0] = 2;
        assert!(matches!(parse(WitnessFormat::Raw, &no_one, z.len()), Err(WitnessError::Constant)));
    }
}
