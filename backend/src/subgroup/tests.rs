//! The host's checks against arkworks' point by point, and the constants a device takes against
//! arkworks' own subgroup test: the devices' test written with them on the host gives the same
//! verdict on points in and outside the subgroup.

use super::*;
use crate::curve::{G1Projective, G2Projective};
use crate::sample::{random_outside_subgroup, random_points, test_rng};
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::Field;
use rand::Rng;

/// The devices' G1 test with [`X_ABS`] and [`G1_BETA`]: φ(P) = −[x²]P, a point with
/// [|x|]P = P outside (arkworks' early out).
fn g1_model(p: &G1Affine) -> bool {
    if p.is_zero() {
        return true;
    }
    let xp = p.mul_bigint([X_ABS]);
    if xp == *p {
        return false;
    }
    let minus_x2p = -xp.into_affine().mul_bigint([X_ABS]);
    minus_x2p == G1Affine::new_unchecked(G1_BETA * p.x, p.y)
}

/// The devices' G2 test with [`G2_PSI_X`] and [`G2_PSI_Y`]: ψ(P) = [x]P = −[|x|]P.
fn g2_model(p: &G2Affine) -> bool {
    if p.is_zero() {
        return true;
    }
    let conj = |v: Fq2| Fq2::new(v.c0, -v.c1);
    let psi = G2Affine::new_unchecked(conj(p.x) * G2_PSI_X, conj(p.y) * G2_PSI_Y);
    -p.mul_bigint([X_ABS]) == psi
}

#[test]
fn the_constants_give_arkworks_verdicts() {
    let mut rng = test_rng("the_constants_give_arkworks_verdicts");
    assert_eq!(X_ABS, <ark_bls12_381::Config as ark_ec::bls12::Bls12Config>::X[0]);
    assert_eq!(G1_BETA.pow([3]), Fq::ONE, "β is a cube root of unity");
    for p in random_points::<G1Projective, _>(20, &mut rng) {
        assert!(g1_model(&p), "a subgroup point of G1");
    }
    for p in random_points::<G2Projective, _>(20, &mut rng) {
        assert!(g2_model(&p), "a subgroup point of G2");
    }
    for _ in 0..20 {
        let p: G1Affine = random_outside_subgroup(&mut rng);
        assert_eq!(g1_model(&p), p.is_in_correct_subgroup_assuming_on_curve());
        let q: G2Affine = random_outside_subgroup(&mut rng);
        assert_eq!(g2_model(&q), q.is_in_correct_subgroup_assuming_on_curve());
    }
    assert!(g1_model(&G1Affine::zero()) && g2_model(&G2Affine::zero()));
}

#[test]
fn the_first_point_outside_is_found() {
    let mut rng = test_rng("the_first_point_outside_is_found");
    assert_eq!(first_outside_g1(&[]), None);
    assert_eq!(first_outside_g2(&[]), None);
    let mut g1 = random_points::<G1Projective, _>(3000, &mut rng);
    g1[7] = G1Affine::zero();
    assert_eq!(first_outside_g1(&g1), None, "subgroup points and the identity");
    let bad: Vec<usize> = (0..3).map(|_| rng.gen_range(100..3000)).collect();
    for &i in &bad {
        g1[i] = random_outside_subgroup(&mut rng);
    }
    assert_eq!(first_outside_g1(&g1), bad.iter().min().copied(), "the lowest of {bad:?}");
    let mut g2 = random_points::<G2Projective, _>(300, &mut rng);
    assert_eq!(first_outside_g2(&g2), None);
    g2[299] = random_outside_subgroup(&mut rng);
    g2[0] = G2Affine::zero();
    assert_eq!(first_outside_g2(&g2), Some(299), "the last point");
}
