use super::*;
use ark_bls12_381::G1Projective;

fn check(p: &MsmPlan) {
    let l = &p.layout;
    assert!(l.c * l.windows >= 256, "{p:?}");
    assert!(p.segments.is_power_of_two() && p.segments <= l.half().max(1), "{p:?}");
    assert_eq!(l.half() % p.segments, 0, "{p:?}");
    assert!(p.entries() < 1 << 31, "{p:?}");
    // Every fold divides: groups of segments per set are powers of two no larger.
    for threads in [64, 128] {
        let groups = (p.segments / (4 * threads)).max(1);
        assert_eq!(p.segments % groups, 0, "{p:?}");
    }
}

#[test]
fn plans_cover_the_scalar_and_fit_indices() {
    let planner = planner(MsmTuning::default());
    for log in 0..=26 {
        let p = MsmPlan::new(1 << log, planner.windowed(1 << log), 0);
        check(&p);
        assert_eq!((p.layout.sets, p.stride), (p.layout.windows, 0), "{p:?}");
        assert!(p.layout.c <= MAX_WINDOW, "{p:?}");
    }
    assert_eq!(planner.windowed(1 << 24).c, 16, "2^24: c = 16 (measured)");
}

#[test]
fn shared_plans_cover_the_scalar_and_pick_wide_windows_for_long_vectors() {
    // Tables for every length here, to check the plans over them.
    let everywhere = planner(MsmTuning { tables: Some((0, 40)), ..MsmTuning::default() });
    for log in 10..=26 {
        let len = 1usize << log;
        let Some(layout) = everywhere.table(len) else {
            assert!(len as u64 * 13 >= 1 << 31, "2^{log}: no table");
            continue;
        };
        assert!(layout.is_shared() && layout.c * layout.windows >= 256, "2^{log}: {layout:?}");
        // A plan for n ≤ len points uses the table's c, W and stride.
        for n in [len, len / 2 + 3] {
            let p = MsmPlan::new(n, layout, len as u32);
            check(&p);
            assert_eq!((p.layout.sets, p.stride), (1, len as u32));
        }
    }
    let default = planner(MsmTuning::default());
    assert_eq!(default.table(1 << 22), Some(Layout::shared(20)), "2^22: c = 20 (measured)");
    assert_eq!(default.table(1 << 20), Some(Layout::shared(20)), "2^20: c = 20 (measured)");
    assert_eq!(
        default.table(5_242_879),
        Some(Layout::shared(20)),
        "the 2^22 proof's witness queries: c = 20 (measured)"
    );
    assert_eq!(default.table((1 << 18) - 1), None, "below 2^18: none");
    assert_eq!(default.table(1 << 23), None, "from 2^23: none (measured)");
    // At 2^20 and up the shared layout does less work than the windowed one.
    for log in [20, 22, 24] {
        let n = 1usize << log;
        let shared = everywhere.table(n).expect("a table");
        assert!(shared.cost(n, PER_BUCKET) < default.windowed(n).cost(n, PER_BUCKET), "2^{log}");
    }
}

/// The host's half of the reduction: from each set's sum and the ones' sum, `combine` must give
/// Σ_s 2^(c·s)·Σ_b (b+1)·bucket_{s,b} plus the ones, for random buckets (the set sums computed
/// here as the kernels do: running sums over segments, each plus jL times its plain sum).
#[test]
fn combine_recovers_the_weighted_bucket_sums() {
    use ark_ec::PrimeGroup;
    use ark_ff::UniformRand;
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
    let (c, sets, segments) = (5u32, 3usize, 4usize);
    let half = 1usize << (c - 1);
    let len = half / segments;
    let point = |rng: &mut rand_chacha::ChaCha20Rng| G1Projective::generator() * Fr::rand(rng);
    let buckets: Vec<Vec<G1Projective>> = (0..sets).map(|_| (0..half).map(|_| point(&mut rng)).collect()).collect();
    let ones = point(&mut rng);
    let mul = |p: G1Projective, k: usize| p * Fr::from(k as u64);
    let mut want = G1Projective::zero();
    for s in (0..sets).rev() {
        want = mul(want, 1 << c);
        want += (0..half).map(|b| mul(buckets[s][b], b + 1)).sum::<G1Projective>();
    }
    want += ones;
    let layout = Layout { c, windows: sets as u32, sets: sets as u32 };
    let plan = MsmPlan { n: 1, layout, stride: 0, big: 256, segments: segments as u32 };
    let mut sums = Vec::new();
    for bucket in &buckets {
        let seg = |j: usize| &bucket[j * len..(j + 1) * len];
        let t_j = |j: usize| seg(j).iter().enumerate().map(|(i, b)| mul(*b, i + 1)).sum::<G1Projective>();
        let r_j = |j: usize| seg(j).iter().sum::<G1Projective>();
        sums.push((0..segments).map(|j| t_j(j) + mul(r_j(j), j * len)).sum::<G1Projective>());
    }
    sums.push(ones);
    assert_eq!(combine(&plan, &sums).unwrap(), want);
}

/// The cut of a long MSM: consecutive ranges covering every scalar once, each within the bound;
/// one range wherever the whole fits (every size to 2^26 at the default bound, so those MSMs
/// are unchanged); 2^27 and 2^28 points cut in two and four.
#[test]
fn long_msms_are_cut_into_ranges_within_the_entry_bound() {
    let planner = planner(MsmTuning::default());
    let entries = |len: usize| planner.windowed(len).entries(len);
    for log in 0..=26 {
        assert_eq!(cut(1 << log, crate::options::MAX_MSM_ENTRIES, entries), vec![0..1 << log], "2^{log}");
    }
    let max = crate::options::MAX_MSM_ENTRIES;
    // (points, bound, pieces where known: small ranges take narrow windows, many a point)
    for (n, max, pieces) in [(1usize << 27, max, Some(2)), (1 << 28, max, Some(4)), (5000, 4096, None), (7, 1, Some(7))]
    {
        let ranges = cut(n, max, entries);
        if let Some(pieces) = pieces {
            assert_eq!(ranges.len(), pieces, "{n} points, at most {max} entries: {ranges:?}");
        }
        assert_eq!(ranges.first().map(|r| r.start), Some(0));
        assert_eq!(ranges.last().map(|r| r.end), Some(n));
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start), "consecutive");
        assert!(ranges.iter().all(|r| r.len() == 1 || entries(r.len()) <= max), "within the bound");
    }
}
