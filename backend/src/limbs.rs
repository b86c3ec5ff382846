//! Host ↔ device layouts, shared by every GPU backend.
//!
//! arkworks keeps field elements in Montgomery form with R = 2^(64·limbs); as little-endian
//! 32-bit words that is the same number with the same R, so crossing to a device is a
//! reinterpretation of limbs, never arithmetic:
//! Fr = 8 words, Fq = 12; an affine G1 point = x, y (24 words), G2 = x.c0, x.c1, y.c0, y.c1
//! (48 words), the identity as all zeros; an XYZZ point = X, Y, ZZ, ZZZ (x = X/ZZ,
//! y = Y/ZZZ; ZZ = 0 is the identity), 48 words in G1 and 96 in G2.

use ark_bls12_381::{Fq, Fq2};
use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{BigInt, Field, Zero};
use rayon::prelude::*;

use crate::curve::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

pub const FR_WORDS: usize = 8;
pub const FQ_WORDS: usize = 12;
pub const G1_WORDS: usize = 2 * FQ_WORDS;
pub const G2_WORDS: usize = 4 * FQ_WORDS;
pub const G1_XYZZ_WORDS: usize = 4 * FQ_WORDS;
pub const G2_XYZZ_WORDS: usize = 8 * FQ_WORDS;

fn put_u64s(limbs: &[u64], out: &mut [u32]) {
    for (pair, w) in out.chunks_exact_mut(2).zip(limbs) {
        pair[0] = *w as u32;
        pair[1] = (*w >> 32) as u32;
    }
}

fn get_u64s<const N: usize>(words: &[u32]) -> [u64; N] {
    let mut out = [0u64; N];
    for (o, pair) in out.iter_mut().zip(words.chunks_exact(2)) {
        *o = u64::from(pair[0]) | (u64::from(pair[1]) << 32);
    }
    out
}

pub fn fr_to_words(x: &Fr, out: &mut [u32]) {
    put_u64s(&x.0 .0, out);
}

pub fn fr_from_words(w: &[u32]) -> Fr {
    Fr::new_unchecked(BigInt(get_u64s::<4>(w)))
}

pub fn fq_to_words(x: &Fq, out: &mut [u32]) {
    put_u64s(&x.0 .0, out);
}

pub fn fq_from_words(w: &[u32]) -> Fq {
    Fq::new_unchecked(BigInt(get_u64s::<6>(w)))
}

pub fn fq2_to_words(x: &Fq2, out: &mut [u32]) {
    fq_to_words(&x.c0, &mut out[..FQ_WORDS]);
    fq_to_words(&x.c1, &mut out[FQ_WORDS..2 * FQ_WORDS]);
}

pub fn fq2_from_words(w: &[u32]) -> Fq2 {
    Fq2::new(fq_from_words(&w[..FQ_WORDS]), fq_from_words(&w[FQ_WORDS..2 * FQ_WORDS]))
}

/// An affine point as its two coordinates of `per` words each, written by `write`; the
/// identity as zeros.
fn affine_to_words<C: SWCurveConfig>(p: &Affine<C>, out: &mut [u32], per: usize, write: fn(&C::BaseField, &mut [u32])) {
    if p.is_zero() {
        out[..2 * per].fill(0);
    } else {
        write(&p.x, &mut out[..per]);
        write(&p.y, &mut out[per..2 * per]);
    }
}

pub fn g1_to_words(p: &G1Affine, out: &mut [u32]) {
    affine_to_words(p, out, FQ_WORDS, fq_to_words)
}

pub fn g2_to_words(p: &G2Affine, out: &mut [u32]) {
    affine_to_words(p, out, 2 * FQ_WORDS, fq2_to_words)
}

/// An affine point from two coordinates of `per` words each, read by `read`; x = y = 0 is the
/// identity. Not checked on the curve (the caller checks what a device returns).
fn affine_from_words<C: SWCurveConfig>(w: &[u32], per: usize, read: fn(&[u32]) -> C::BaseField) -> Affine<C> {
    if w[..2 * per].iter().all(|&x| x == 0) {
        return Affine::zero();
    }
    Affine::new_unchecked(read(&w[..per]), read(&w[per..2 * per]))
}

pub fn g1_from_words(w: &[u32]) -> G1Affine {
    affine_from_words(w, FQ_WORDS, fq_from_words)
}

pub fn g2_from_words(w: &[u32]) -> G2Affine {
    affine_from_words(w, 2 * FQ_WORDS, fq2_from_words)
}

/// `items` as words, `per` words an item, converted in parallel.
pub fn to_words<T: Sync>(items: &[T], per: usize, convert: fn(&T, &mut [u32])) -> Vec<u32> {
    let mut out = vec![0u32; items.len() * per];
    out.par_chunks_mut(per * 1024).zip(items.par_chunks(1024)).for_each(|(o, i)| {
        for (dst, item) in o.chunks_exact_mut(per).zip(i) {
            convert(item, dst);
        }
    });
    out
}

/// (X, Y, ZZ, ZZZ) as Jacobian (X·ZZ·ZZZ², Y·ZZ³·ZZZ², ZZ·ZZZ): the same point, no inversion.
fn xyzz_to_jacobian<C: SWCurveConfig>(
    x: C::BaseField,
    y: C::BaseField,
    zz: C::BaseField,
    zzz: C::BaseField,
) -> Projective<C> {
    if zz.is_zero() {
        return Projective::zero();
    }
    let zzz2 = zzz.square();
    Projective::new_unchecked(x * zz * zzz2, y * zz.square() * zz * zzz2, zz * zzz)
}

/// An XYZZ point of `per` words a coordinate, read by `read`.
fn xyzz_from_words<C: SWCurveConfig>(w: &[u32], per: usize, read: fn(&[u32]) -> C::BaseField) -> Projective<C> {
    let coordinate = |i: usize| read(&w[i * per..(i + 1) * per]);
    xyzz_to_jacobian::<C>(coordinate(0), coordinate(1), coordinate(2), coordinate(3))
}

pub fn g1_xyzz_to_projective(w: &[u32]) -> G1Projective {
    xyzz_from_words::<ark_bls12_381::g1::Config>(w, FQ_WORDS, fq_from_words)
}

pub fn g2_xyzz_to_projective(w: &[u32]) -> G2Projective {
    xyzz_from_words::<ark_bls12_381::g2::Config>(w, 2 * FQ_WORDS, fq2_from_words)
}

/// Whether a device's result is a point of the curve (or the identity). A kernel fault lands
/// off the curve with overwhelming probability, and a wrong proof must never leave: backends
/// check their MSM results with this before returning them.
pub fn on_curve<C: SWCurveConfig>(p: &Projective<C>) -> bool {
    let a = p.into_affine();
    a.is_zero() || a.is_on_curve()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::UniformRand;
    use ark_std::test_rng;

    #[test]
    fn words_round_trip() {
        let mut rng = test_rng();
        for _ in 0..20 {
            let x = Fr::rand(&mut rng);
            let mut w = [0u32; FR_WORDS];
            fr_to_words(&x, &mut w);
            assert_eq!(fr_from_words(&w), x);
            let q = Fq::rand(&mut rng);
            let mut w = [0u32; FQ_WORDS];
            fq_to_words(&q, &mut w);
            assert_eq!(fq_from_words(&w), q);
        }
        let xs: Vec<Fr> = (0..3000).map(|_| Fr::rand(&mut rng)).collect();
        let words = to_words(&xs, FR_WORDS, fr_to_words);
        assert!(words.chunks(FR_WORDS).map(fr_from_words).eq(xs.iter().copied()));
    }

    /// An affine point's XYZZ words with ZZ = ZZZ = 1 (`one` writes the Montgomery one of a
    /// coordinate of `per` words).
    fn unit_xyzz<A>(p: &A, per: usize, to_words: fn(&A, &mut [u32]), one: fn(&mut [u32])) -> Vec<u32> {
        let mut w = vec![0u32; 4 * per];
        to_words(p, &mut w[..2 * per]);
        one(&mut w[2 * per..3 * per]);
        one(&mut w[3 * per..]);
        w
    }

    #[test]
    fn affine_points_come_back_through_xyzz() {
        let mut rng = test_rng();
        let p = (G1Affine::generator() * Fr::rand(&mut rng)).into_affine();
        let mut w = unit_xyzz(&p, FQ_WORDS, g1_to_words, |o| fq_to_words(&Fq::ONE, o));
        assert_eq!(g1_xyzz_to_projective(&w), p.into_group());
        // A non-trivial Z: (x·z², y·z³, z², z³) is the same point.
        let z = Fq::from(12345u64);
        let mut v = [0u32; G1_XYZZ_WORDS];
        for (k, c) in [p.x * z.square(), p.y * z.square() * z, z.square(), z.square() * z].iter().enumerate() {
            fq_to_words(c, &mut v[k * FQ_WORDS..(k + 1) * FQ_WORDS]);
        }
        assert_eq!(g1_xyzz_to_projective(&v), p.into_group());
        assert!(g1_xyzz_to_projective(&[0u32; G1_XYZZ_WORDS]).is_zero());
        assert!(on_curve(&g1_xyzz_to_projective(&w)));
        w[0] ^= 1; // off the curve now
        assert!(!on_curve(&g1_xyzz_to_projective(&w)));
        let q = (G2Affine::generator() * Fr::rand(&mut rng)).into_affine();
        let w = unit_xyzz(&q, 2 * FQ_WORDS, g2_to_words, |o| fq2_to_words(&Fq2::ONE, o));
        assert_eq!(g2_xyzz_to_projective(&w), q.into_group());
        assert!(g2_xyzz_to_projective(&[0u32; G2_XYZZ_WORDS]).is_zero());
    }
}
