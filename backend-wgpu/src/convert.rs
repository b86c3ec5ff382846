//! Host ↔ device layouts. arkworks keeps field elements in Montgomery form with R = 2^(64·limbs),
//! which as 32-bit limbs is the same number with the same R, so conversion is a reinterpretation
//! of limbs, never arithmetic. Affine identities are stored as x = y = 0 (see curve.wgsl).

use ark_bls12_381::{Fq, Fq2, Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use ark_ec::AffineRepr;
use ark_ff::{BigInt, Field, Zero};
use rayon::prelude::*;

pub const FR_WORDS: usize = 8;
pub const FQ_WORDS: usize = 12;

fn push_u64s(out: &mut [u32], limbs: &[u64]) {
    for (pair, w) in out.chunks_exact_mut(2).zip(limbs) {
        pair[0] = *w as u32;
        pair[1] = (*w >> 32) as u32;
    }
}

fn u64s<const N: usize>(words: &[u32]) -> [u64; N] {
    let mut out = [0u64; N];
    for (o, pair) in out.iter_mut().zip(words.chunks_exact(2)) {
        *o = u64::from(pair[0]) | (u64::from(pair[1]) << 32);
    }
    out
}

pub fn fr_to_words(x: &Fr, out: &mut [u32]) {
    push_u64s(out, &(x.0).0);
}

pub fn fr_from_words(w: &[u32]) -> Fr {
    Fr::new_unchecked(BigInt(u64s::<4>(w)))
}

fn fq_to_words(x: &Fq, out: &mut [u32]) {
    push_u64s(out, &(x.0).0);
}

fn fq_from_words(w: &[u32]) -> Fq {
    Fq::new_unchecked(BigInt(u64s::<6>(w)))
}

fn fq2_from_words(w: &[u32]) -> Fq2 {
    Fq2::new(fq_from_words(&w[..FQ_WORDS]), fq_from_words(&w[FQ_WORDS..2 * FQ_WORDS]))
}

pub fn g1_to_words(p: &G1Affine, out: &mut [u32]) {
    if p.is_zero() {
        out.fill(0);
    } else {
        fq_to_words(&p.x, &mut out[..FQ_WORDS]);
        fq_to_words(&p.y, &mut out[FQ_WORDS..2 * FQ_WORDS]);
    }
}

pub fn g2_to_words(p: &G2Affine, out: &mut [u32]) {
    if p.is_zero() {
        out.fill(0);
    } else {
        let w = FQ_WORDS;
        fq_to_words(&p.x.c0, &mut out[..w]);
        fq_to_words(&p.x.c1, &mut out[w..2 * w]);
        fq_to_words(&p.y.c0, &mut out[2 * w..3 * w]);
        fq_to_words(&p.y.c1, &mut out[3 * w..4 * w]);
    }
}

/// Converts `items` to words, `words` per item, in parallel.
pub fn to_words<T: Sync>(items: &[T], words: usize, f: fn(&T, &mut [u32])) -> Vec<u32> {
    let mut out = vec![0u32; items.len() * words];
    out.par_chunks_mut(words * 1024).zip(items.par_chunks(1024)).for_each(|(o, i)| {
        for (dst, item) in o.chunks_exact_mut(words).zip(i) {
            f(item, dst);
        }
    });
    out
}

/// An XYZZ point (x = X/ZZ, y = Y/ZZZ; ZZ = 0 is the identity) as an arkworks point.
fn xyzz_to_affine<F: Field>(x: F, y: F, zz: F, zzz: F) -> Option<(F, F)> {
    let zz_inv = zz.inverse()?;
    let zzz_inv = zzz.inverse()?;
    Some((x * zz_inv, y * zzz_inv))
}

pub fn g1_xyzz_from_words(w: &[u32]) -> G1Projective {
    let f = |k: usize| fq_from_words(&w[k * FQ_WORDS..(k + 1) * FQ_WORDS]);
    match xyzz_to_affine(f(0), f(1), f(2), f(3)) {
        Some((x, y)) => G1Affine::new_unchecked(x, y).into_group(),
        None => G1Projective::zero(),
    }
}

pub fn g2_xyzz_from_words(w: &[u32]) -> G2Projective {
    let f = |k: usize| fq2_from_words(&w[k * 2 * FQ_WORDS..(k + 1) * 2 * FQ_WORDS]);
    match xyzz_to_affine(f(0), f(1), f(2), f(3)) {
        Some((x, y)) => G2Affine::new_unchecked(x, y).into_group(),
        None => G2Projective::zero(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::{CurveGroup, PrimeGroup};
    use ark_ff::UniformRand;

    #[test]
    fn layouts_round_trip() {
        let mut rng = ark_std::test_rng();
        let x = Fr::rand(&mut rng);
        let mut w = [0u32; 8];
        fr_to_words(&x, &mut w);
        assert_eq!(fr_from_words(&w), x);

        let p = (G1Projective::generator() * Fr::rand(&mut rng)).into_affine();
        let mut w = [0u32; 48];
        g1_to_words(&p, &mut w[..24]);
        // As XYZZ with ZZ = ZZZ = 1 (Montgomery one).
        fq_to_words(&Fq::ONE, &mut w[24..36]);
        fq_to_words(&Fq::ONE, &mut w[36..48]);
        assert_eq!(g1_xyzz_from_words(&w), p.into_group());

        let q = (G2Projective::generator() * Fr::rand(&mut rng)).into_affine();
        let mut w = [0u32; 96];
        g2_to_words(&q, &mut w[..48]);
        fq_to_words(&Fq::ONE, &mut w[48..60]);
        fq_to_words(&Fq::ONE, &mut w[72..84]);
        assert_eq!(g2_xyzz_from_words(&w), q.into_group());
        assert!(g2_xyzz_from_words(&[0u32; 96]).is_zero());
    }
}
