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

mod batched_checks {
    use super::super::batched::{each_first_outside, first_outside_with, Plan, SOUNDNESS_BITS};
    use super::*;
    use crate::sample::g1_with_order_three_part;

    fn soundness(plan: Plan) -> u32 {
        plan.bucket_bits * plan.passes
    }

    #[test]
    fn plans_batch_only_where_it_pays_and_keep_the_soundness() {
        assert_eq!(Plan::for_points(0, G1_CHECK_IN_ADDITIONS), None);
        assert_eq!(Plan::for_points(300, G1_CHECK_IN_ADDITIONS), None, "a handful of points: one by one");
        for n in [1 << 12, 1 << 16, 1 << 20, 1 << 26] {
            for cost in [G1_CHECK_IN_ADDITIONS, G2_CHECK_IN_ADDITIONS] {
                let plan = Plan::for_points(n, cost).unwrap_or_else(|| panic!("{n} points batch"));
                assert!(soundness(plan) >= SOUNDNESS_BITS, "{plan:?}");
            }
        }
    }

    /// Whatever the partition, a single bad point is always in a bucket whose sum leaves the
    /// subgroup: even one pass of two buckets finds it, at its index.
    #[test]
    fn a_single_bad_point_is_found_by_any_pass() {
        let mut rng = test_rng("a_single_bad_point_is_found_by_any_pass");
        let mut g1 = random_points::<G1Projective, _>(5000, &mut rng);
        g1[3] = G1Affine::zero();
        let one = Plan { bucket_bits: 1, passes: 1 };
        assert_eq!(first_outside_with(&g1, one), None);
        for _ in 0..20 {
            let at = rng.gen_range(0..g1.len());
            let keep = g1[at];
            g1[at] =
                if rng.gen() { g1_with_order_three_part(keep, rng.gen()) } else { random_outside_subgroup(&mut rng) };
            assert_eq!(first_outside_with(&g1, one), Some(at));
            g1[at] = keep;
        }
        let mut g2 = random_points::<G2Projective, _>(2000, &mut rng);
        assert_eq!(first_outside_with(&g2, one), None);
        g2[1999] = random_outside_subgroup(&mut rng);
        assert_eq!(first_outside_with(&g2, one), Some(1999));
    }

    /// Pairs P + T, Q − T with T of order 3 cancel when they share a bucket: one pass of two
    /// buckets misses a single such pair half the time (what the bound allows), the full plan
    /// never in practice.
    #[test]
    fn cancelling_pairs_are_caught_at_the_plans_soundness() {
        let mut rng = test_rng("cancelling_pairs_are_caught_at_the_plans_soundness");
        let mut g1 = random_points::<G1Projective, _>(4000, &mut rng);
        let (i, j) = (1000, 3000);
        g1[i] = g1_with_order_three_part(g1[i], false);
        g1[j] = g1_with_order_three_part(g1[j], true);
        let sum = (g1[i] + g1[j]).into_affine();
        assert!(sum.is_in_correct_subgroup_assuming_on_curve(), "the pair's sum is in G1");
        let one = Plan { bucket_bits: 1, passes: 1 };
        let missed = (0..200).filter(|_| first_outside_with(&g1, one).is_none()).count();
        assert!((60..=140).contains(&missed), "one pass of two buckets missed the pair {missed} times in 200");
        let plan = Plan::for_points(g1.len(), G1_CHECK_IN_ADDITIONS).unwrap();
        for _ in 0..20 {
            assert_eq!(first_outside_with(&g1, plan), Some(i), "{plan:?}");
        }
        // Many cancelling pairs and random outsiders among them: the lowest is named.
        let mut bad: Vec<usize> = (0..40).map(|_| rng.gen_range(0..g1.len())).collect();
        for (k, &at) in bad.iter().enumerate() {
            g1[at] = g1_with_order_three_part(random_points::<G1Projective, _>(1, &mut rng)[0], k % 2 == 1);
        }
        bad.extend([i, j]);
        assert_eq!(first_outside_with(&g1, plan), bad.iter().min().copied());
        assert_eq!(each_first_outside(&g1), bad.iter().min().copied());
    }

    /// What a key's query looks like to the host: a million points, one bad one anywhere, found
    /// by the plan the host picks and named by its index.
    #[test]
    fn one_bad_point_among_a_million_is_named() {
        let mut rng = test_rng("one_bad_point_among_a_million_is_named");
        let n = 1 << 20;
        let mut g1 = random_points::<G1Projective, _>(n, &mut rng);
        assert_eq!(first_outside_g1(&g1), None);
        let at = rng.gen_range(0..n);
        g1[at] = g1_with_order_three_part(g1[at], rng.gen());
        assert_eq!(first_outside_g1(&g1), Some(at));
        let mut g2 = random_points::<G2Projective, _>(1 << 16, &mut rng);
        assert_eq!(first_outside_g2(&g2), None);
        let at = rng.gen_range(0..g2.len());
        g2[at] = random_outside_subgroup(&mut rng);
        assert_eq!(first_outside_g2(&g2), Some(at));
    }

    /// A key's queries as one batch: empty and one-point vectors among long ones, the bad point
    /// named by its vector and its index there.
    #[test]
    fn vectors_checked_as_one_batch_name_the_vector() {
        use super::super::first_outside_g1_among;
        let mut rng = test_rng("vectors_checked_as_one_batch_name_the_vector");
        let a = random_points::<G1Projective, _>(3000, &mut rng);
        let mut b = random_points::<G1Projective, _>(5000, &mut rng);
        let one = random_points::<G1Projective, _>(1, &mut rng);
        let empty: Vec<G1Affine> = Vec::new();
        assert_eq!(first_outside_g1_among(&[&one, &empty, &a, &empty, &b]), None);
        assert_eq!(first_outside_g1_among(&[]), None);
        for at in [0, 1, 2500, 4999] {
            let keep = b[at];
            b[at] = g1_with_order_three_part(keep, rng.gen());
            assert_eq!(first_outside_g1_among(&[&one, &empty, &a, &empty, &b]), Some((4, at)));
            assert_eq!(first_outside_with(&b, Plan { bucket_bits: 1, passes: 1 }), Some(at));
            b[at] = keep;
        }
        let bad_one = [g1_with_order_three_part(one[0], false)];
        b[7] = random_outside_subgroup(&mut rng);
        assert_eq!(first_outside_g1_among(&[&a, &empty, &bad_one, &b]), Some((2, 0)), "the first in order");
    }

    /// The stream a device reads gives each point the buckets the host deals it, from any
    /// start: the layout `Deal` documents, for every plan shape (bits dividing 64 or not).
    #[test]
    fn the_keystream_holds_the_deal() {
        use super::super::batched::Deal;
        for plan in [
            Plan { bucket_bits: 12, passes: 11 },
            Plan { bucket_bits: 16, passes: 8 },
            Plan { bucket_bits: 1, passes: 1 },
            Plan { bucket_bits: 7, passes: 19 },
        ] {
            let deal = Deal::new(plan);
            let words = deal.words_per_point() as usize;
            let per_word = plan.passes_per_word() as usize;
            for (start, len) in [(0, 5000), (12_345, 70_000)] {
                let mut stream = vec![0u32; len * words * 2];
                deal.keystream(start, &mut stream);
                let mut dealt = 0;
                deal.deal(start, len, |i, pass, bucket| {
                    let at = 2 * ((i - start) * words + pass / per_word);
                    let word = u64::from(stream[at]) | u64::from(stream[at + 1]) << 32;
                    let from_stream =
                        (word >> ((pass % per_word) as u32 * plan.bucket_bits)) as usize & (plan.buckets() - 1);
                    assert_eq!(from_stream, bucket, "{plan:?}: point {i}, pass {pass}");
                    dealt += 1;
                });
                assert_eq!(dealt, len * plan.passes as usize);
            }
        }
    }
}
