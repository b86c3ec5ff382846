//! Field elements and points as circom and snarkjs store them, and the primes that name a
//! file's curve.
//!
//! - `.r1cs` and `.wtns` values: canonical integers below r, little-endian.
//! - `.zkey` points: affine x, y in Montgomery form (x·2^384 mod q), little-endian; the
//!   identity as all zeros (never a point of the curve: y² = x³ + 4 fails at (0, 0)).
//!   A G2 coordinate is c0 then c1.
//! - `.zkey` matrix coefficients: k·R² mod r with R = 2^256 mod r. snarkjs's prover multiplies
//!   them with the witness's canonical values in Montgomery arithmetic (a·b·R⁻¹), which gives
//!   k·z·R, the Montgomery form of the product, without a conversion per entry.

use std::sync::LazyLock;

use ark_bls12_381::{Fq, Fq2};
use ark_ec::AffineRepr;
use ark_ff::{BigInt, BigInteger, Field, PrimeField};

use super::{At, CircomError};
use crate::curve::{Fr, G1Affine, G2Affine};

/// The primes circom compiles for (`--prime`), by the name it gives them.
const SCALAR_PRIMES: &[(&str, &str)] = &[
    ("bn128", "21888242871839275222246405745257275088548364400416034343698204186575808495617"),
    ("bls12381", "52435875175126190479447740508185965837690552500527637822603658699938581184513"),
    ("goldilocks", "18446744069414584321"),
    ("grumpkin", "21888242871839275222246405745257275088696311157297823662689037894645226208583"),
    ("pallas", "28948022309329048855892746252171976963363056481941560715954676764349967630337"),
    ("vesta", "28948022309329048855892746252171976963363056481941647379679742748393362948097"),
    ("secq256r1", "115792089210356248762697446949407573530086143415290314195533631308867097853951"),
    ("bls12377", "8444461749428370424248824938781546531375899335154063827935233455917409239041"),
];

/// The base fields of the curves snarkjs makes keys for.
const BASE_PRIMES: &[(&str, &str)] = &[
    ("bn128", "21888242871839275222246405745257275088696311157297823662689037894645226208583"),
    (
        "bls12381",
        "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129015664037894272559787",
    ),
];

/// The circom name of the scalar field whose prime is `le` (little-endian bytes), if known.
pub fn curve_of_scalar_prime(le: &[u8]) -> Option<&'static str> {
    let d = decimal(le);
    SCALAR_PRIMES.iter().find(|(_, p)| *p == d).map(|(name, _)| *name)
}

/// The snarkjs name of the curve whose base field's prime is `le`, if known.
pub fn curve_of_base_prime(le: &[u8]) -> Option<&'static str> {
    let d = decimal(le);
    BASE_PRIMES.iter().find(|(_, p)| *p == d).map(|(name, _)| *name)
}

/// Reads a field size and prime (`u32 n8`, then n8 bytes) and checks that they are the
/// BLS12-381 field expected, naming the curve (`name_of`) where they are not.
fn check_prime(
    c: &mut super::binfile::Cursor<'_>,
    what: &'static str,
    n8_expected: usize,
    is_expected: impl Fn(&[u8]) -> bool,
    name_of: fn(&[u8]) -> Option<&'static str>,
) -> Result<(), CircomError> {
    let at = c.here();
    let n8 = c.count("a field size")?;
    let prime = c.take(n8, "a prime")?;
    if n8 == n8_expected && is_expected(prime) {
        return Ok(());
    }
    Err(CircomError::WrongField { at, what, curve: name_of(prime), prime: decimal(prime) })
}

/// Checks a field size and prime that must be BLS12-381's scalar field r.
pub(super) fn expect_fr(c: &mut super::binfile::Cursor<'_>, what: &'static str) -> Result<(), CircomError> {
    let r = Fr::MODULUS.to_bytes_le();
    check_prime(c, what, 32, |p| p == r.as_slice(), curve_of_scalar_prime)
}

/// Checks a field size and prime that must be BLS12-381's base field q.
pub(super) fn expect_fq(c: &mut super::binfile::Cursor<'_>, what: &'static str) -> Result<(), CircomError> {
    let q = Fq::MODULUS.to_bytes_le();
    check_prime(c, what, 48, |p| p == q.as_slice(), curve_of_base_prime)
}

fn limbs<const N: usize>(b: &[u8]) -> BigInt<N> {
    let mut l = [0u64; N];
    for (limb, chunk) in l.iter_mut().zip(b.chunks_exact(8)) {
        *limb = u64::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7]]);
    }
    BigInt(l)
}

/// A canonical Fr value (32 bytes, little-endian, below r).
pub(super) fn fr(b: &[u8]) -> Option<Fr> {
    Fr::from_bigint(limbs::<4>(b))
}

/// Bytes of one value in the canonical little-endian form (`.wtns`, `.r1cs`, raw witnesses).
pub const VALUE_BYTES: usize = 32;

/// Values per parallel task: large enough that a task's work (a Montgomery multiplication or
/// a comparison per value) dwarfs its scheduling.
const VALUES_PER_TASK: usize = 1 << 14;

/// The index of the first value of `bytes` (whole 32-byte values) that is not below r.
/// Compares only, in parallel: a witness of 2^22 values is checked in milliseconds.
pub fn first_non_canonical(bytes: &[u8]) -> Option<usize> {
    use rayon::prelude::*;
    let modulus = Fr::MODULUS;
    bytes.par_chunks(VALUES_PER_TASK * VALUE_BYTES).enumerate().find_map_first(|(task, chunk)| {
        chunk.chunks_exact(VALUE_BYTES).position(|b| limbs::<4>(b) >= modulus).map(|i| task * VALUES_PER_TASK + i)
    })
}

/// Canonical little-endian values into field elements, in parallel; `Err(i)` names the first
/// value that is not below r. `bytes` holds whole values (the callers check its length).
pub fn values_from_le(bytes: &[u8]) -> Result<Vec<Fr>, usize> {
    match first_non_canonical(bytes) {
        Some(i) => Err(i),
        None => Ok(checked_values_from_le(bytes)),
    }
}

/// [`values_from_le`] of values already checked by [`first_non_canonical`].
pub(super) fn checked_values_from_le(bytes: &[u8]) -> Vec<Fr> {
    use rayon::prelude::*;
    bytes
        .par_chunks_exact(VALUE_BYTES)
        .with_min_len(VALUES_PER_TASK)
        // Canonical, so `from_bigint` refuses none: the default is never taken.
        .map(|b| Fr::from_bigint(limbs::<4>(b)).unwrap_or_default())
        .collect()
}

/// Field elements as canonical little-endian values, in parallel.
pub fn values_to_le(values: &[Fr]) -> Vec<u8> {
    use rayon::prelude::*;
    let mut out = vec![0u8; values.len() * VALUE_BYTES];
    out.par_chunks_exact_mut(VALUE_BYTES).zip(values.par_iter()).with_min_len(VALUES_PER_TASK).for_each(|(slot, v)| {
        for (dst, limb) in slot.chunks_exact_mut(8).zip(v.into_bigint().0) {
            dst.copy_from_slice(&limb.to_le_bytes());
        }
    });
    out
}

/// R² for R = 2^256 mod r: a `.zkey` coefficient is its value times this.
static R2: LazyLock<Fr> = LazyLock::new(|| Fr::from(2u64).pow([256]).square());

/// R⁻²: what turns a `.zkey` coefficient back into its value.
static R2_INV: LazyLock<Fr> = LazyLock::new(|| R2.inverse().unwrap_or_default());

/// A `.zkey` matrix coefficient: stored as k·R² mod r, canonical.
pub(super) fn zkey_coefficient(b: &[u8]) -> Option<Fr> {
    fr(b).map(|stored| stored * *R2_INV)
}

/// An Fq coordinate in Montgomery form (48 bytes, little-endian, below q).
fn fq_montgomery(b: &[u8]) -> Option<Fq> {
    let m = limbs::<6>(b);
    // Fq keeps its elements in Montgomery form with the same R = 2^384: the bytes are its own
    // representation once they are known to be below q.
    (m < Fq::MODULUS).then(|| Fq::new_unchecked(m))
}

/// A G1 point as snarkjs stores it (96 bytes). `None`: a coordinate is not below q. The
/// point is not checked against the curve here ([`crate::prover::CheckedKey`] does that).
pub(super) fn g1_montgomery(b: &[u8]) -> Option<G1Affine> {
    if b.iter().all(|&x| x == 0) {
        return Some(G1Affine::zero());
    }
    Some(G1Affine::new_unchecked(fq_montgomery(&b[..48])?, fq_montgomery(&b[48..96])?))
}

/// A G2 point as snarkjs stores it (192 bytes: x.c0, x.c1, y.c0, y.c1).
pub(super) fn g2_montgomery(b: &[u8]) -> Option<G2Affine> {
    if b.iter().all(|&x| x == 0) {
        return Some(G2Affine::zero());
    }
    let fq2 = |b: &[u8]| Some(Fq2::new(fq_montgomery(&b[..48])?, fq_montgomery(&b[48..96])?));
    Some(G2Affine::new_unchecked(fq2(&b[..96])?, fq2(&b[96..192])?))
}

/// [`g1_montgomery`]'s inverse: a point as snarkjs stores it.
pub(super) fn put_g1_montgomery(out: &mut Vec<u8>, p: &G1Affine) {
    match p.xy() {
        None => out.extend_from_slice(&[0u8; 96]),
        Some((x, y)) => {
            for c in [x, y] {
                put_fq_montgomery(out, &c);
            }
        }
    }
}

/// [`g2_montgomery`]'s inverse.
pub(super) fn put_g2_montgomery(out: &mut Vec<u8>, p: &G2Affine) {
    match p.xy() {
        None => out.extend_from_slice(&[0u8; 192]),
        Some((x, y)) => {
            for c in [x.c0, x.c1, y.c0, y.c1] {
                put_fq_montgomery(out, &c);
            }
        }
    }
}

fn put_fq_montgomery(out: &mut Vec<u8>, x: &Fq) {
    // The element's own limbs are its Montgomery form (see `fq_montgomery`).
    for limb in x.0 .0 {
        out.extend_from_slice(&limb.to_le_bytes());
    }
}

/// [`zkey_coefficient`]'s inverse: k·R² mod r, canonical.
pub(super) fn put_zkey_coefficient(out: &mut Vec<u8>, k: &Fr) {
    out.extend_from_slice(&(*k * *R2).into_bigint().to_bytes_le());
}

/// An unsigned little-endian integer in decimal.
pub(super) fn decimal(le: &[u8]) -> String {
    // Base-10^19 digits by long division of 32-bit words, most significant first.
    let mut words: Vec<u32> =
        le.chunks(4).rev().map(|c| c.iter().rev().fold(0u32, |acc, &b| (acc << 8) | b as u32)).collect();
    let mut digits = Vec::new();
    const BASE: u64 = 10_000_000_000_000_000_000;
    loop {
        let mut rem = 0u128;
        for w in words.iter_mut() {
            let cur = (rem << 32) | *w as u128;
            *w = (cur / BASE as u128) as u32;
            rem = cur % BASE as u128;
        }
        digits.push(rem as u64);
        if words.iter().all(|&w| w == 0) {
            break;
        }
    }
    let mut out = digits.pop().unwrap_or(0).to_string();
    for d in digits.iter().rev() {
        out.push_str(&format!("{d:019}"));
    }
    out
}

/// Where an element of a section starts, for errors.
pub(super) fn element_at(section_start: At, index: usize, size: usize) -> At {
    At { offset: section_start.offset + index * size, ..section_start }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::CurveGroup;
    use ark_ff::UniformRand;

    #[test]
    fn values_convert_in_parallel_and_name_the_first_value_out_of_the_field() {
        let mut rng = rand::thread_rng();
        // Past one task's worth, so the task boundaries are crossed.
        let n = 2 * VALUES_PER_TASK + 7;
        let z: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
        let le = values_to_le(&z);
        let sequential: Vec<u8> = z.iter().flat_map(|v| v.into_bigint().to_bytes_le()).collect();
        assert_eq!(le, sequential);
        assert_eq!(values_from_le(&le).unwrap(), z);
        assert_eq!(first_non_canonical(&le), None);
        let mut bad = le.clone();
        for i in [n - 1, VALUES_PER_TASK + 3] {
            // r itself is the smallest value out of the field.
            bad[i * VALUE_BYTES..(i + 1) * VALUE_BYTES].copy_from_slice(&Fr::MODULUS.to_bytes_le());
        }
        assert_eq!(first_non_canonical(&bad), Some(VALUES_PER_TASK + 3));
        assert_eq!(values_from_le(&bad), Err(VALUES_PER_TASK + 3));
        assert_eq!(values_from_le(&[]), Ok(vec![]));
    }

    #[test]
    fn decimal_matches_arkworks() {
        let mut rng = ark_std::test_rng();
        for _ in 0..50 {
            let x = Fq::rand(&mut rng);
            assert_eq!(decimal(&x.into_bigint().to_bytes_le()), x.to_string());
        }
        assert_eq!(decimal(&[]), "0");
        assert_eq!(decimal(&[0, 0]), "0");
        assert_eq!(decimal(&[0xff; 8]), u64::MAX.to_string());
        assert_eq!(curve_of_scalar_prime(&Fr::MODULUS.to_bytes_le()), Some("bls12381"));
        assert_eq!(curve_of_base_prime(&Fq::MODULUS.to_bytes_le()), Some("bls12381"));
        assert_eq!(curve_of_scalar_prime(&[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]), Some("goldilocks"));
    }

    #[test]
    fn montgomery_points_and_double_montgomery_coefficients_decode() {
        let mut rng = ark_std::test_rng();
        let r_fq = Fq::from(2u64).pow([384]);
        let mont = |x: Fq| (x * r_fq).into_bigint().to_bytes_le();
        let p = (G1Affine::generator() * Fr::rand(&mut rng)).into_affine();
        let bytes = [mont(p.x), mont(p.y)].concat();
        assert_eq!(g1_montgomery(&bytes), Some(p));
        assert_eq!(g1_montgomery(&[0; 96]), Some(G1Affine::zero()));
        assert_eq!(g1_montgomery(&[0xff; 96]), None, "coordinates above q");
        let q = (G2Affine::generator() * Fr::rand(&mut rng)).into_affine();
        let bytes = [mont(q.x.c0), mont(q.x.c1), mont(q.y.c0), mont(q.y.c1)].concat();
        assert_eq!(g2_montgomery(&bytes), Some(q));
        let k = Fr::rand(&mut rng);
        let r_fr = Fr::from(2u64).pow([256]);
        assert_eq!(zkey_coefficient(&(k * r_fr * r_fr).into_bigint().to_bytes_le()), Some(k));
        assert_eq!(fr(&Fr::MODULUS.to_bytes_le()), None, "r itself is not canonical");
    }
}
