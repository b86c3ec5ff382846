//! Host ↔ device layouts. Field elements cross as their Montgomery limbs unchanged (arkworks
//! and the kernels use the same R), as little-endian 32-bit words:
//! Fr = 8 words; an affine G1 point = x, y (24 words), G2 = x.c0, x.c1, y.c0, y.c1 (48 words),
//! the identity as all zeros; an XYZZ result = X, Y, ZZ, ZZZ.

use ark_bls12_381::{Fq, Fq2, Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::AffineRepr;
use ark_ff::{BigInt, Field, Zero};

pub const FR_WORDS: usize = 8;
pub const FQ_WORDS: usize = 12;
pub const G1_WORDS: usize = 2 * FQ_WORDS;
pub const G2_WORDS: usize = 4 * FQ_WORDS;
pub const G1_XYZZ_WORDS: usize = 4 * FQ_WORDS;
pub const G2_XYZZ_WORDS: usize = 8 * FQ_WORDS;

fn put_u64s(words: &[u64], out: &mut [u32]) {
    for (i, w) in words.iter().enumerate() {
        out[2 * i] = *w as u32;
        out[2 * i + 1] = (*w >> 32) as u32;
    }
}

fn get_u64s<const N: usize>(words: &[u32]) -> [u64; N] {
    let mut r = [0u64; N];
    for (i, limb) in r.iter_mut().enumerate() {
        *limb = u64::from(words[2 * i]) | (u64::from(words[2 * i + 1]) << 32);
    }
    r
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

fn fq2_to_words(x: &Fq2, out: &mut [u32]) {
    fq_to_words(&x.c0, &mut out[..FQ_WORDS]);
    fq_to_words(&x.c1, &mut out[FQ_WORDS..2 * FQ_WORDS]);
}

fn fq2_from_words(w: &[u32]) -> Fq2 {
    Fq2::new(fq_from_words(&w[..FQ_WORDS]), fq_from_words(&w[FQ_WORDS..2 * FQ_WORDS]))
}

pub fn g1_to_words(p: &G1Affine, out: &mut [u32]) {
    if p.is_zero() {
        out[..G1_WORDS].fill(0);
    } else {
        fq_to_words(&p.x, &mut out[..FQ_WORDS]);
        fq_to_words(&p.y, &mut out[FQ_WORDS..G1_WORDS]);
    }
}

pub fn g2_to_words(p: &G2Affine, out: &mut [u32]) {
    if p.is_zero() {
        out[..G2_WORDS].fill(0);
    } else {
        fq2_to_words(&p.x, &mut out[..2 * FQ_WORDS]);
        fq2_to_words(&p.y, &mut out[2 * FQ_WORDS..G2_WORDS]);
    }
}

/// (X/ZZ, Y/ZZZ), or the identity when ZZ = 0.
fn xyzz_to_affine<C: SWCurveConfig>(
    x: C::BaseField,
    y: C::BaseField,
    zz: C::BaseField,
    zzz: C::BaseField,
) -> Affine<C> {
    match (zz.inverse(), zzz.inverse()) {
        (Some(zz_inv), Some(zzz_inv)) => Affine::new_unchecked(x * zz_inv, y * zzz_inv),
        _ => Affine::identity(),
    }
}

/// An XYZZ sum from the device; `None` when it is not on the curve (a kernel fault: a wrong
/// sum lands off the curve with overwhelming probability, and a wrong proof must never leave).
pub fn g1_xyzz_from_words(w: &[u32]) -> Option<G1Projective> {
    let f = |i: usize| fq_from_words(&w[i * FQ_WORDS..(i + 1) * FQ_WORDS]);
    let p = xyzz_to_affine::<ark_bls12_381::g1::Config>(f(0), f(1), f(2), f(3));
    p.is_on_curve().then(|| p.into_group())
}

pub fn g2_xyzz_from_words(w: &[u32]) -> Option<G2Projective> {
    let f = |i: usize| fq2_from_words(&w[2 * i * FQ_WORDS..2 * (i + 1) * FQ_WORDS]);
    let p = xyzz_to_affine::<ark_bls12_381::g2::Config>(f(0), f(1), f(2), f(3));
    p.is_on_curve().then(|| p.into_group())
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

pub fn g1_xyzz_to_projective(w: &[u32]) -> G1Projective {
    let f = |i: usize| fq_from_words(&w[i * FQ_WORDS..(i + 1) * FQ_WORDS]);
    xyzz_to_jacobian::<ark_bls12_381::g1::Config>(f(0), f(1), f(2), f(3))
}

pub fn g2_xyzz_to_projective(w: &[u32]) -> G2Projective {
    let f = |i: usize| fq2_from_words(&w[2 * i * FQ_WORDS..2 * (i + 1) * FQ_WORDS]);
    xyzz_to_jacobian::<ark_bls12_381::g2::Config>(f(0), f(1), f(2), f(3))
}

/// An affine point is on its curve, or the identity.
pub trait OnCurve {
    fn is_on_curve_or_zero(&self) -> bool;
}

impl<C: SWCurveConfig> OnCurve for Affine<C> {
    fn is_on_curve_or_zero(&self) -> bool {
        self.is_zero() || self.is_on_curve()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::CurveGroup;
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
    }

    #[test]
    fn affine_points_come_back_through_xyzz() {
        let mut rng = test_rng();
        let p = (G1Affine::generator() * Fr::rand(&mut rng)).into_affine();
        let mut w = [0u32; G1_XYZZ_WORDS];
        g1_to_words(&p, &mut w[..G1_WORDS]);
        // ZZ = ZZZ = 1 in Montgomery form.
        fq_to_words(&Fq::ONE, &mut w[2 * FQ_WORDS..3 * FQ_WORDS]);
        fq_to_words(&Fq::ONE, &mut w[3 * FQ_WORDS..]);
        assert_eq!(g1_xyzz_from_words(&w), Some(p.into_group()));
        // A non-trivial Z: (x·z², y·z³, z², z³) is the same point.
        let z = Fq::from(12345u64);
        let mut v = [0u32; G1_XYZZ_WORDS];
        fq_to_words(&(p.x * z.square()), &mut v[..FQ_WORDS]);
        fq_to_words(&(p.y * z.square() * z), &mut v[FQ_WORDS..2 * FQ_WORDS]);
        fq_to_words(&z.square(), &mut v[2 * FQ_WORDS..3 * FQ_WORDS]);
        fq_to_words(&(z.square() * z), &mut v[3 * FQ_WORDS..]);
        assert_eq!(g1_xyzz_to_projective(&v), p.into_group());
        assert_eq!(g1_xyzz_from_words(&v), Some(p.into_group()));
        let zero = [0u32; G1_XYZZ_WORDS];
        assert!(g1_xyzz_from_words(&zero).unwrap().is_zero());
        w[0] ^= 1; // off the curve now
        assert!(g1_xyzz_from_words(&w).is_none());
        let q = (G2Affine::generator() * Fr::rand(&mut rng)).into_affine();
        let mut w = [0u32; G2_XYZZ_WORDS];
        g2_to_words(&q, &mut w[..G2_WORDS]);
        fq2_to_words(&Fq2::ONE, &mut w[4 * FQ_WORDS..6 * FQ_WORDS]);
        fq2_to_words(&Fq2::ONE, &mut w[6 * FQ_WORDS..]);
        assert_eq!(g2_xyzz_from_words(&w), Some(q.into_group()));
        assert_eq!(g2_xyzz_to_projective(&w), q.into_group());
    }
}
