//! Random inputs for tests and benchmarks: scalars, and many curve points cheaply.

use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::UniformRand;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use crate::curve::Fr;

pub fn random_scalars<R: Rng>(n: usize, rng: &mut R) -> Vec<Fr> {
    (0..n).map(|_| Fr::rand(rng)).collect()
}

/// n scalars mixed like a circuit's witness, 30 % zeros, 30 % ones and 40 % random full-width
/// values, in parallel stretches each seeded from `seed` and its index (so any n is quick).
pub fn witness_like_scalars(n: usize, seed: u64) -> Vec<Fr> {
    const STRETCH: usize = 1 << 14;
    (0..n.div_ceil(STRETCH))
        .into_par_iter()
        .flat_map_iter(|k| {
            let mut rng = ChaCha20Rng::seed_from_u64(seed ^ (k as u64).rotate_left(32));
            (k * STRETCH..((k + 1) * STRETCH).min(n)).map(move |_| match rng.gen_range(0..10u32) {
                0..=2 => Fr::from(0u64),
                3..=5 => Fr::from(1u64),
                _ => Fr::rand(&mut rng),
            })
        })
        .collect()
}

/// n distinct points `P + i·Q` for random P and Q: an addition each instead of a scalar
/// multiplication each, so 2^24 bases take seconds, not hours. An MSM's cost and correctness
/// do not depend on how its bases relate (the tests mix in identities and repeats on purpose).
pub fn random_points<P: CurveGroup + PrimeGroup, R: Rng>(n: usize, rng: &mut R) -> Vec<P::Affine> {
    let p = P::generator() * P::ScalarField::rand(rng);
    let q = P::generator() * P::ScalarField::rand(rng);
    const CHUNK: usize = 4096;
    let projective: Vec<P> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|c| {
            let start = c * CHUNK;
            let mut acc = p + q * P::ScalarField::from(start as u64);
            (start..(start + CHUNK).min(n)).map(move |_| {
                let out = acc;
                acc += q;
                out
            })
        })
        .collect();
    P::normalize_batch(&projective)
}

/// An RNG seeded from `G16_TEST_SEED` when set (to replay a failure), else from entropy; the
/// seed is printed so any run can be replayed.
pub fn test_rng(label: &str) -> ChaCha20Rng {
    let seed: u64 = std::env::var("G16_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    eprintln!("{label}: G16_TEST_SEED={seed}");
    ChaCha20Rng::seed_from_u64(seed)
}

/// A point on the curve but outside the prime-order subgroup, for the tests of point checks
/// (the cofactor is large, so the first x that lands on the curve almost surely gives one;
/// the loop checks).
pub fn g1_outside_subgroup() -> crate::curve::G1Affine {
    let mut x = ark_bls12_381::Fq::from(1u64);
    loop {
        if let Some(p) = crate::curve::G1Affine::get_point_from_x_unchecked(x, false) {
            if !p.is_in_correct_subgroup_assuming_on_curve() {
                return p;
            }
        }
        x += ark_bls12_381::Fq::from(1u64);
    }
}

/// A random point on the curve of `C` outside its prime-order subgroup: a random x with
/// y = ±√(x³ + b), not multiplied by the cofactor, so it lies in the subgroup only with
/// probability 1/cofactor (the loop checks).
pub fn random_outside_subgroup<C: SWCurveConfig, R: Rng>(rng: &mut R) -> Affine<C> {
    loop {
        let x = C::BaseField::rand(rng);
        if let Some(p) = Affine::<C>::get_point_from_x_unchecked(x, rng.gen()) {
            if !p.is_in_correct_subgroup_assuming_on_curve() {
                return p;
            }
        }
    }
}

/// A G1 point outside the subgroup whose outside part has order 3, the smallest the cofactor
/// allows: `P + T` for `P` in G1 and `T = (0, 2)` (`−T` when `minus`), a point of order 3 on
/// y² = x³ + 4. Random linear combinations miss such points a third of the time; pairs `P + T`,
/// `Q − T` cancel in any sum holding both.
pub fn g1_with_order_three_part(p: crate::curve::G1Affine, minus: bool) -> crate::curve::G1Affine {
    let t = crate::curve::G1Affine::new_unchecked(ark_bls12_381::Fq::from(0u64), ark_bls12_381::Fq::from(2u64));
    let t = if minus { -t } else { t };
    (p + t).into_affine()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::G1Projective;

    #[test]
    fn random_points_are_distinct_and_in_the_subgroup() {
        let pts = random_points::<G1Projective, _>(5000, &mut test_rng("random_points"));
        assert_eq!(pts.len(), 5000);
        assert!(pts.iter().all(|p| p.is_on_curve() && p.is_in_correct_subgroup_assuming_on_curve()));
        let mut xs: Vec<_> = pts.iter().map(|p| p.x).collect();
        xs.sort();
        xs.dedup();
        assert_eq!(xs.len(), 5000);
    }
}
