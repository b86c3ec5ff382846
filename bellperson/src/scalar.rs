//! blstrs' scalars and arkworks' `Fr` hold the same Montgomery form (R = 2^256 modulo the same
//! prime, four little-endian 64-bit limbs), so a value crosses over as its limbs: no reduction,
//! no multiplication. The tests hold this against the canonical byte encodings.

use blst::blst_fr;
use blstrs::Scalar;
use g16::Fr;

/// A bellperson scalar as g16's field element.
pub fn to_fr(s: &Scalar) -> Fr {
    Fr::new_unchecked(ark_ff::BigInt(blst_fr::from(*s).l))
}

/// A g16 field element as a bellperson scalar.
pub fn from_fr(f: &Fr) -> Scalar {
    Scalar::from(blst_fr { l: f.0 .0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::{BigInteger, PrimeField};
    use ff::{Field, PrimeField as _};
    use rand_chacha::rand_core::SeedableRng;

    /// The limb crossing agrees with the canonical encodings (blstrs' little-endian repr,
    /// arkworks' big integer) both ways, on edge values and random ones.
    #[test]
    fn limbs_cross_as_the_same_value() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        let mut values = vec![Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(2u64), Scalar::ROOT_OF_UNITY];
        values.extend((0..200).map(|_| Scalar::random(&mut rng)));
        for s in values {
            let f = to_fr(&s);
            let canonical = Fr::from_le_bytes_mod_order(&s.to_repr());
            assert_eq!(f, canonical);
            assert_eq!(f.into_bigint().to_bytes_le(), s.to_repr().to_vec());
            assert_eq!(from_fr(&f), s);
        }
    }
}
