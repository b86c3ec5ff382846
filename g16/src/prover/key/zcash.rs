//! Uncompressed points in the zcash encoding (ark-bls12-381's), decoded without arkworks'
//! reader: the same bytes accepted and refused with the same error, a fifth less work a point.
//!
//! A key is almost all uncompressed points, and decoding them is most of reading a trusted
//! key's file. Arkworks copies each coordinate into a temporary, compares whole arrays through
//! `memcmp` and reads through its `Read` trait; here the coordinates go from the file's bytes
//! straight into limbs, and the only arithmetic left is the Montgomery conversion itself.
//!
//! ```text
//! G1: x (48 bytes, big-endian, flags in the top 3 bits of x's first byte), y (48)
//! G2: x.c1, x.c0, y.c1, y.c0 (48 each, the flags in x.c1's first byte)
//! flags: 0x80 compressed (refused here: UnexpectedFlags), 0x40 the identity (every other bit
//!        of the point zero), 0x20 the sign of y (only for compressed points: InvalidData)
//! ```
//! A coordinate not below the modulus is `InvalidData`, as in arkworks. Nothing is checked of
//! the curve equation here (arkworks' `Validate::No` does not either): callers check it.

use ark_ec::short_weierstrass::Affine;
use ark_ec::AffineRepr;
use ark_ff::{AdditiveGroup, BigInt, PrimeField};
use ark_serialize::SerializationError;

use crate::curve::{G1Affine, G2Affine};

type Fq = ark_bls12_381::Fq;
type Fq2 = ark_bls12_381::Fq2;

/// Bytes of one coordinate.
const FQ: usize = 48;
const G1_UNCOMPRESSED: usize = 2 * FQ;
const G2_UNCOMPRESSED: usize = 4 * FQ;

/// The flags' bits in a point's first byte.
const COMPRESSED: u8 = 0x80;
const INFINITY: u8 = 0x40;
const SIGN: u8 = 0x20;

/// An uncompressed G1 point ([`G1_UNCOMPRESSED`] bytes).
pub fn g1(bytes: &[u8]) -> Result<G1Affine, SerializationError> {
    let bytes: &[u8; G1_UNCOMPRESSED] = bytes.try_into().map_err(|_| SerializationError::InvalidData)?;
    if identity(bytes)? {
        return Ok(G1Affine::zero());
    }
    Ok(G1Affine::new_unchecked(fq(bytes, 0, true)?, fq(bytes, 1, false)?))
}

/// An uncompressed G2 point ([`G2_UNCOMPRESSED`] bytes).
pub fn g2(bytes: &[u8]) -> Result<G2Affine, SerializationError> {
    let bytes: &[u8; G2_UNCOMPRESSED] = bytes.try_into().map_err(|_| SerializationError::InvalidData)?;
    if identity(bytes)? {
        return Ok(G2Affine::zero());
    }
    let x = Fq2::new(fq(bytes, 1, false)?, fq(bytes, 0, true)?);
    let y = Fq2::new(fq(bytes, 3, false)?, fq(bytes, 2, false)?);
    Ok(G2Affine::new_unchecked(x, y))
}

/// A curve whose uncompressed points decode here (named by configuration: coherence does not
/// see through the curve's aliases).
pub trait Uncompressed: ark_ec::short_weierstrass::SWCurveConfig {
    /// Bytes of one point.
    const UNCOMPRESSED: usize;
    fn uncompressed(bytes: &[u8]) -> Result<Affine<Self>, SerializationError>;
}

impl Uncompressed for ark_bls12_381::g1::Config {
    const UNCOMPRESSED: usize = G1_UNCOMPRESSED;
    fn uncompressed(bytes: &[u8]) -> Result<G1Affine, SerializationError> {
        g1(bytes)
    }
}

impl Uncompressed for ark_bls12_381::g2::Config {
    const UNCOMPRESSED: usize = G2_UNCOMPRESSED;
    fn uncompressed(bytes: &[u8]) -> Result<G2Affine, SerializationError> {
        g2(bytes)
    }
}

/// Whether the point is the identity, its flags checked as arkworks checks them (in its
/// order: a sign on an uncompressed point before compression itself).
fn identity(bytes: &[u8]) -> Result<bool, SerializationError> {
    let flags = bytes[0];
    if flags & SIGN != 0 && (flags & COMPRESSED == 0 || flags & INFINITY != 0) {
        return Err(SerializationError::InvalidData);
    }
    if flags & COMPRESSED != 0 {
        return Err(SerializationError::UnexpectedFlags);
    }
    if flags & INFINITY == 0 {
        return Ok(false);
    }
    // The identity is written with every coordinate zero; the flags aside, so must it be read.
    match bytes[0] & !(COMPRESSED | INFINITY | SIGN) == 0 && bytes[1..].iter().all(|&b| b == 0) {
        true => Ok(true),
        false => Err(SerializationError::InvalidData),
    }
}

/// Coordinate `k` of a point's bytes (big-endian), in Montgomery form; `flagged` for the one
/// whose first byte carries the flags, which are not part of it.
fn fq(bytes: &[u8], k: usize, flagged: bool) -> Result<Fq, SerializationError> {
    let be = &bytes[k * FQ..(k + 1) * FQ];
    let mut limbs = [0u64; 6];
    for (i, limb) in limbs.iter_mut().enumerate() {
        // Limb 0 is the least significant: the last eight bytes.
        let at = FQ - 8 * (i + 1);
        *limb = u64::from_be_bytes(be[at..at + 8].try_into().expect("eight bytes"));
    }
    if flagged {
        limbs[5] &= (1u64 << 61) - 1;
    }
    if limbs.iter().fold(0, |acc, l| acc | l) == 0 {
        return Ok(Fq::ZERO);
    }
    if !below_modulus(&limbs) {
        return Err(SerializationError::InvalidData);
    }
    // x·R mod p from x: one Montgomery product with R² (what `from_bigint` does, less its checks).
    Ok(Fq::new_unchecked(BigInt(limbs)) * Fq::new_unchecked(Fq::R2))
}

fn below_modulus(limbs: &[u64; 6]) -> bool {
    let p = Fq::MODULUS.0;
    for i in (0..6).rev() {
        if limbs[i] != p[i] {
            return limbs[i] < p[i];
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::CurveGroup;
    use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Validate};
    use proptest::prelude::*;

    fn ark_g1(bytes: &[u8]) -> Result<G1Affine, SerializationError> {
        G1Affine::deserialize_with_mode(bytes, Compress::No, Validate::No)
    }

    fn ark_g2(bytes: &[u8]) -> Result<G2Affine, SerializationError> {
        G2Affine::deserialize_with_mode(bytes, Compress::No, Validate::No)
    }

    /// Both decoders' verdicts, the error's kind compared (SerializationError has no `PartialEq`).
    fn same<P: PartialEq + std::fmt::Debug>(ours: Result<P, SerializationError>, ark: Result<P, SerializationError>) {
        match (ours, ark) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
            (a, b) => panic!("ours {a:?}, arkworks {b:?}"),
        }
    }

    fn encoded<P: CanonicalSerialize>(p: &P) -> Vec<u8> {
        let mut bytes = Vec::new();
        p.serialize_uncompressed(&mut bytes).unwrap();
        bytes
    }

    fn points(seed: u64) -> (G1Affine, G2Affine) {
        use ark_std::UniformRand;
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
        (
            crate::curve::G1Projective::rand(&mut rng).into_affine(),
            crate::curve::G2Projective::rand(&mut rng).into_affine(),
        )
    }

    /// Real points, the identities, and the edge values of a coordinate (zero, p − 1, p, all
    /// ones) decode exactly as arkworks decodes them.
    #[test]
    fn edge_cases_decode_as_arkworks_decodes_them() {
        let (p1, p2) = points(1);
        let mut cases1 = vec![encoded(&p1), encoded(&G1Affine::zero())];
        let mut cases2 = vec![encoded(&p2), encoded(&G2Affine::zero())];
        let p_minus_1 = {
            let mut m = Fq::MODULUS;
            m.0[0] -= 1;
            m
        };
        let be = |limbs: [u64; 6]| limbs.iter().rev().flat_map(|l| l.to_be_bytes()).collect::<Vec<u8>>();
        for value in [be([0; 6]), be(p_minus_1.0), be(Fq::MODULUS.0), vec![0xff; 48]] {
            for k in 0..2 {
                let mut b = encoded(&p1);
                b[k * 48..(k + 1) * 48].copy_from_slice(&value);
                cases1.push(b);
            }
            for k in 0..4 {
                let mut b = encoded(&p2);
                b[k * 48..(k + 1) * 48].copy_from_slice(&value);
                cases2.push(b);
            }
        }
        for b in &cases1 {
            same(g1(b), ark_g1(b));
        }
        for b in &cases2 {
            same(g2(b), ark_g2(b));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Any bytes at all: the same point or the same error.
        #[test]
        fn random_bytes_decode_as_arkworks_decodes_them(b1 in proptest::collection::vec(any::<u8>(), 96),
                                                       b2 in proptest::collection::vec(any::<u8>(), 192)) {
            same(g1(&b1), ark_g1(&b1));
            same(g2(&b2), ark_g2(&b2));
        }

        /// A real point's encoding with its flags set any way and one byte changed: the flags'
        /// rules, the identity's zero coordinates and out-of-range coordinates, hit far more
        /// often than random bytes hit them.
        #[test]
        fn edited_points_decode_as_arkworks_decodes_them(seed in any::<u64>(), flags in 0u8..8, at in 0usize..192,
                                                        byte in any::<u8>(), identity in any::<bool>()) {
            let (p1, p2) = points(seed);
            let (mut b1, mut b2) = if identity {
                (encoded(&G1Affine::zero()), encoded(&G2Affine::zero()))
            } else {
                (encoded(&p1), encoded(&p2))
            };
            b1[0] = (b1[0] & 0x1f) | (flags << 5);
            b2[0] = (b2[0] & 0x1f) | (flags << 5);
            same(g1(&b1), ark_g1(&b1));
            same(g2(&b2), ark_g2(&b2));
            b1[at % 96] = byte;
            b2[at] = byte;
            same(g1(&b1), ark_g1(&b1));
            same(g2(&b2), ark_g2(&b2));
        }
    }
}
