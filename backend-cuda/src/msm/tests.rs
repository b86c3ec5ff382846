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
        let p = MsmPlan::new((1 << log, 1 << log), planner.windowed(1 << log), 0);
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
            let p = MsmPlan::new((n, n), layout, len as u32);
            check(&p);
            assert_eq!((p.layout.sets, p.stride), (1, len as u32));
        }
    }
    let default = planner(crate::options::CudaOptions::default().msm);
    assert_eq!(default.table(1 << 22), Some(Layout::shared(20)), "2^22: c = 20 (measured)");
    assert_eq!(default.table(1 << 20), Some(Layout::shared(20)), "2^20: c = 20 (measured)");
    assert_eq!(
        default.table(5_242_879),
        Some(Layout::shared(20)),
        "the 2^22 proof's witness queries: c = 20 (measured)"
    );
    assert_eq!(default.table((1 << 18) - 1), None, "below 2^18: none");
    assert_eq!(default.table(1 << 23), Some(Layout::shared(20)), "2^23: c = 20 (measured)");
    assert_eq!(default.table((1 << 24) - 1), Some(Layout::shared(20)), "a 2^24 proof's H: c = 20 (measured)");
    assert_eq!(default.table(1 << 25), None, "from 2^25: none (a G1 table of 42 GB or more)");
    // At 2^20 and up the shared layout does less work than the windowed one.
    for log in [20, 22, 24] {
        let n = 1usize << log;
        let shared = everywhere.table(n).expect("a table");
        assert!(shared.cost(n, PER_BUCKET) < default.windowed(n).cost(n, PER_BUCKET), "2^{log}");
    }
}

/// By default G1 vectors get shifted bases to 2^25 points and G2 vectors below 2^24;
/// `g2_tables_max` moves G2's bound and nothing else.
#[test]
fn g2_vectors_get_tables_below_their_own_bound() {
    use crate::compile::Curve::{G1, G2};
    let options = crate::options::CudaOptions::default();
    let planner = planner(options.msm);
    let below = 1usize << options.g2_tables_max;
    let layout = |group, len, below| table_layout(&planner, group, len, TableBounds { g2_below: below, shifts: 0 });
    assert_eq!(layout(G1, 1 << 23, below), Some(Layout::shared(20)));
    assert_eq!(layout(G1, (1 << 25) - 1, below), Some(Layout::shared(20)));
    assert_eq!(layout(G2, 1 << 23, below), Some(Layout::shared(20)));
    assert_eq!(layout(G2, (1 << 24) - 1, below), Some(Layout::shared(20)));
    assert_eq!(layout(G2, 1 << 24, below), None);
    assert_eq!(layout(G2, 1 << 24, 1 << 25), Some(Layout::shared(20)));
    assert_eq!(layout(G2, 1 << 25, 1 << 30), None, "the planner's range still bounds G2");
    assert_eq!(layout(G1, 1 << 10, below), None, "below the range: none");
}

/// An MSM is planned for the scalars that reach the buckets: a witness query of the 2 KiB PoRep
/// partition (2,674,948 scalars, 1.2 % neither 0 nor 1) takes a narrow windowed layout over its
/// bases instead of its table's 2^19 buckets, and every scalar dense keeps the table; the digit
/// kernels still read all n scalars, and the sorted list holds the dense ones' entries.
#[test]
fn sparse_scalars_are_planned_for_those_that_reach_the_buckets() {
    let planner = planner(MsmTuning::default());
    let n = 2_674_948;
    let table = planner.table(n).map(|layout| (layout, n as u32));
    assert_eq!(table.map(|t| t.0), Some(Layout::shared(20)));
    let full = MsmPlan::least_work(&planner, (n, n), table);
    assert_eq!((full.layout, full.stride), (Layout::shared(20), n as u32), "dense: the table");
    let sparse = MsmPlan::least_work(&planner, (n, 32_100), table);
    assert_eq!((sparse.n, sparse.dense, sparse.stride), (n, 32_100, 0), "{sparse:?}");
    assert_eq!(sparse.layout, planner.windowed(32_100));
    assert!(sparse.buckets() < 1 << 13 && sparse.entries() == 32_100 * sparse.layout.windows as usize, "{sparse:?}");
    check(&sparse);
    // None dense (only 0 and 1): the narrowest layout, no entries.
    let none = MsmPlan::least_work(&planner, (n, 0), table);
    assert_eq!((none.layout.c, none.entries(), none.stride), (4, 0, 0));
    check(&none);
    // Without a table, the window follows the dense count.
    assert_eq!(MsmPlan::least_work(&planner, (1 << 24, 1 << 24), None).layout.c, 16);
    assert_eq!(MsmPlan::least_work(&planner, (1 << 24, 1 << 14), None).layout.c, 9);
}

/// The host's half of the reduction: from each set's sum and the ones' sum, `combine` must give
/// Σ_s 2^(c·k·s)·Σ_b (b+1)·bucket_{s,b} plus the ones, k the windows a set (1 windowed, 2 and 3
/// grouped), for random buckets (the set sums computed here as the kernels do: running sums over
/// segments, each plus jL times its plain sum).
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
    let mul = |p: G1Projective, k: usize| p * Fr::from(k as u64);
    for shifts in [1u32, 2, 3] {
        let buckets: Vec<Vec<G1Projective>> = (0..sets).map(|_| (0..half).map(|_| point(&mut rng)).collect()).collect();
        let ones = point(&mut rng);
        let mut want = G1Projective::zero();
        for s in (0..sets).rev() {
            want = mul(want, 1 << (c * shifts));
            want += (0..half).map(|b| mul(buckets[s][b], b + 1)).sum::<G1Projective>();
        }
        want += ones;
        let layout = Layout { c, windows: sets as u32 * shifts, sets: sets as u32, shifts };
        let plan = MsmPlan { n: 1, dense: 1, layout, stride: 0, big: 256, segments: segments as u32 };
        let mut sums = Vec::new();
        for bucket in &buckets {
            let seg = |j: usize| &bucket[j * len..(j + 1) * len];
            let t_j = |j: usize| seg(j).iter().enumerate().map(|(i, b)| mul(*b, i + 1)).sum::<G1Projective>();
            let r_j = |j: usize| seg(j).iter().sum::<G1Projective>();
            sums.push((0..segments).map(|j| t_j(j) + mul(r_j(j), j * len)).sum::<G1Projective>());
        }
        sums.push(ones);
        assert_eq!(combine(&plan, &sums).unwrap(), want, "{shifts} windows a set");
    }
}

/// Past the shared layout's range, vectors get the grouped layout where `table_shifts` asks
/// for it: G1 from 2^25, G2 from its own bound; none with 0 or 1 shifts.
#[test]
fn grouped_tables_follow_the_shared_range() {
    use crate::compile::Curve::{G1, G2};
    let options = crate::options::CudaOptions::default();
    let planner = planner(options.msm);
    let below = 1usize << options.g2_tables_max;
    let bounds = |shifts| TableBounds { g2_below: below, shifts };
    let layout = |group, len, shifts| table_layout(&planner, group, len, bounds(shifts));
    assert_eq!(layout(G1, (1 << 25) - 1, 4), Some(Layout::shared(20)), "inside the range: shared");
    assert_eq!(layout(G1, 1 << 25, 4), Some(Layout::grouped(20, 4)));
    assert_eq!(layout(G1, 1 << 27, 3), Some(Layout::grouped(20, 3)), "a 32 GiB PoRep partition's H");
    assert_eq!(layout(G2, below - 1, 4), Some(Layout::shared(20)));
    assert_eq!(layout(G2, below, 4), Some(Layout::grouped(20, 4)), "G2 past its own bound");
    assert_eq!(layout(G2, 1 << 25, 2), Some(Layout::grouped(20, 2)));
    for shifts in [0, 1] {
        assert_eq!(layout(G1, 1 << 25, shifts), None, "{shifts} shifts: none");
        assert_eq!(layout(G2, below, shifts), None, "{shifts} shifts: none");
    }
    assert_eq!(layout(G1, 1 << 10, 4), None, "below the range: none");
    // A plan over a grouped table: its sets, stride and entries.
    let grouped = Layout::grouped(20, 4);
    let p = MsmPlan::least_work(&planner, (1 << 25, 1 << 25), Some((grouped, 1 << 25)));
    assert_eq!((p.layout, p.stride, p.buckets()), (grouped, 1 << 25, 4 << 19), "{p:?}");
    check(&p);
    // Mostly 0/1 scalars still take a narrow windowed layout over the bases.
    let sparse = MsmPlan::least_work(&planner, (1 << 25, 1 << 18), Some((grouped, 1 << 25)));
    assert_eq!((sparse.stride, sparse.layout.shifts), (0, 1), "{sparse:?}");
}

/// A shared table that does not fit half the free memory gives way to a grouped one of
/// `table_shifts` shifts where that fits: G1 2^24 on a card with 20 GB free (a 24 GB card),
/// whose full table (13 copies of 96-byte points) is 21 GB, takes 4 shifts (6.4 GB); a card
/// with less free takes none, and no shifts asked means no fallback.
#[test]
fn shared_tables_too_large_for_the_card_fall_back_to_grouped_ones() {
    use super::table::table_bytes;
    let planner = planner(crate::options::CudaOptions::default().msm);
    let (len, g1) = (1usize << 24, (G1_WORDS, FQ_WORDS));
    let shared = table_layout(&planner, crate::compile::Curve::G1, len, TableBounds { g2_below: 0, shifts: 0 });
    assert_eq!(shared, Some(Layout::shared(20)));
    let shared = shared.unwrap();
    let half_of = |free: u64| move |l: Layout| table_bytes(g1, len, l) <= free / 2;
    let half_at = |n: usize, free: u64| move |l: Layout| table_bytes(g1, n, l) <= free / 2;
    let gb = 1_000_000_000;
    assert!(table_bytes(g1, len, shared) > 20 * gb && table_bytes(g1, len, shared) < 22 * gb);
    assert_eq!(fitting_layout(&planner, len, (shared, 4), half_of(80 * gb)), Some(shared), "room: shared");
    assert_eq!(fitting_layout(&planner, len, (shared, 4), half_of(20 * gb)), Some(Layout::grouped(20, 4)));
    assert!(table_bytes(g1, len, Layout::grouped(20, 4)) < 7 * gb);
    assert_eq!(fitting_layout(&planner, len, (shared, 4), half_of(12 * gb)), None, "no room for 4 shifts");
    assert_eq!(fitting_layout(&planner, len, (shared, 2), half_of(12 * gb)), Some(Layout::grouped(20, 2)));
    assert_eq!(fitting_layout(&planner, len, (shared, 0), half_of(20 * gb)), None, "grouped tables off");
    // A grouped layout that does not fit has nothing smaller to fall to.
    let grouped = Layout::grouped(20, 4);
    assert_eq!(fitting_layout(&planner, 1 << 26, (grouped, 4), half_at(1 << 26, 40 * gb)), None);
    assert_eq!(fitting_layout(&planner, 1 << 26, (grouped, 4), half_at(1 << 26, 60 * gb)), Some(grouped));
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

/// The MSM's accumulations run on the host, `kernels/msm/bucket.cu`'s thread a bucket and
/// `kernels/msm/balanced.cu`'s slices of the sorted list: compiled with the field and curve
/// headers by the host's C++ compiler (`G16_HOST_EMULATION`), a launch's threads one after
/// another, each bucket's sum against arkworks' sum of its signed bases; buckets above `big`
/// are left for the big-bucket path and recorded. This checks the kernels' loops, loads, signs
/// and (slices) the hand-over at buckets' edges without a GPU (the GPU suite checks the whole
/// MSM on the device). Without a C++ compiler it says so loudly and passes, unless
/// `G16_REQUIRE_CXX=1`.
mod host_emulation {
    use crate::cxx;
    use ark_ec::AffineRepr;
    use ark_ff::Zero;
    use g16_backend::limbs::{
        g1_to_words, g1_xyzz_to_projective, g2_to_words, g2_xyzz_to_projective, to_words, G1_WORDS, G1_XYZZ_WORDS,
        G2_WORDS, G2_XYZZ_WORDS,
    };
    use g16_backend::sample::{random_points, test_rng};
    use g16_backend::{G1Affine, G1Projective, G2Affine, G2Projective};
    use rand::Rng;

    const MAIN: &str = r#"
// The launch's input (bases, sorted entries, each bucket's offset and count, and whether the
// slices take the fused kernel); then either one launch of a thread a bucket (chunk_min 0) or
// the balanced accumulation's two launches of buckets + 1 threads; out: the big buckets
// recorded, then each bucket's sum (XYZZ words).
// The curve's sliced accumulation with Y₃'s products reduced together.
template <class F> static auto fused_chunks() {
  if constexpr (sizeof(F) == sizeof(Fq)) return g1_accumulate_chunks_fused;
  else return g2_accumulate_chunks_fused;
}
template <class F>
static void run(void (*accumulate)(const Affine<F>*, const u32*, const u32*, const u32*, u32, u32, Xyzz<F>*,
                                   BigBucket*, u32*),
                void (*chunks)(const Affine<F>*, const u32*, const u32*, const u32*, u32, u32, u32, Xyzz<F>*,
                               Xyzz<F>*, u32*, BigBucket*, u32*),
                void (*carries)(const u32*, const u32*, u32, u32, const u32*, const Xyzz<F>*, Xyzz<F>*),
                void (*empties)(const u32*, u32, Xyzz<F>*)) {
  const unsigned n = read_u32(), buckets = read_u32(), entries = read_u32(), big = read_u32();
  const unsigned chunk_min = read_u32(), fused = read_u32();
  if (fused) chunks = fused_chunks<F>();
  std::vector<Affine<F>> bases = read_items<Affine<F>>(n);
  std::vector<u32> sorted = read_items<u32>(entries), offsets = read_items<u32>(buckets);
  std::vector<u32> counts = read_items<u32>(buckets);
  std::vector<Xyzz<F>> out(buckets), slice_carries(buckets + 1);
  std::vector<u32> tails(buckets + 1);
  // Poisoned, so that a sum the kernels never write cannot pass for the identity.
  memset(out.data(), 0x5a, out.size() * sizeof(Xyzz<F>));
  memset(slice_carries.data(), 0x5a, slice_carries.size() * sizeof(Xyzz<F>));
  std::vector<BigBucket> big_list(buckets);
  u32 big_count = 0;
  blockDim.x = 1; threadIdx.x = 0;
  if (chunk_min == 0) {
    gridDim.x = buckets;
    for (unsigned k = 0; k < buckets; k++) {
      blockIdx.x = k;
      accumulate(bases.data(), sorted.data(), offsets.data(), counts.data(), buckets, big, out.data(),
                 big_list.data(), &big_count);
    }
  } else {
    gridDim.x = buckets;
    for (unsigned k = 0; k < buckets; k++) {
      blockIdx.x = k;
      empties(counts.data(), buckets, out.data());
    }
    gridDim.x = buckets + 1;
    for (unsigned t = 0; t <= buckets; t++) {
      blockIdx.x = t;
      chunks(bases.data(), sorted.data(), offsets.data(), counts.data(), buckets, chunk_min, big, out.data(),
             slice_carries.data(), tails.data(), big_list.data(), &big_count);
    }
    for (unsigned t = 0; t <= buckets; t++) {
      blockIdx.x = t;
      carries(offsets.data(), counts.data(), buckets, chunk_min, tails.data(), slice_carries.data(), out.data());
    }
  }
  printf("%u", big_count);
  for (unsigned j = 0; j < big_count; j++) printf(" %u %u %u", big_list[j].key, big_list[j].start, big_list[j].count);
  printf("\n");
  for (unsigned k = 0; k < buckets; k++) {
    u32 w[sizeof(Xyzz<F>) / 4];
    memcpy(w, &out[k], sizeof w);
    for (u32 x : w) printf("%x ", x);
    printf("\n");
  }
}
int main() {
  char curve[3];
  if (scanf("%2s", curve) != 1) return 2;
  if (!strcmp(curve, "g1")) run(g1_accumulate, g1_accumulate_chunks, g1_chunk_carries, g1_empty_buckets);
  else run(g2_accumulate, g2_accumulate_chunks, g2_chunk_carries, g2_empty_buckets);
  return 0;
}
"#;

    /// Emulation-only stand-ins for what the MSM's other kernels use from CUDA.
    const EXTRA: &str = r#"
#include <algorithm>
using std::max;
using std::min;
#define __shared__ static
#define __syncthreads() ((void)0)
static int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
// A serial launch's thread is a warp of one: no other lane to read.
static unsigned __shfl_down_sync(unsigned, unsigned, unsigned) { return 0; }
"#;

    fn build() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
        use crate::compile::{unit, BALANCED, BUCKET, FP, FQ2, SCAN, SORT, XYZZ};
        let kernels = unit(&[FP, FQ2, XYZZ, SCAN, SORT, BUCKET, BALANCED]);
        let source = format!("{}{EXTRA}\n{kernels}\n{}\n{MAIN}", cxx::SERIAL_LAUNCH, cxx::ITEM_READERS);
        cxx::build_in_temp("the host-emulated MSM accumulation", "host-msm-accumulate", &source)
    }

    /// Buckets of random signed entries of every length 0 … 9, one above `BIG`, and two edge
    /// cases: a base added to itself (the addition doubles) and a base and its negation (the
    /// sum is the identity); empty buckets first and last, and runs of them in between, some
    /// before buckets of one entry.
    fn buckets(n: usize, rng: &mut impl Rng) -> Vec<Vec<u32>> {
        let mut entry = || rng.gen_range(0..n as u32) | if rng.gen() { 1 << 31 } else { 0 };
        let mut buckets: Vec<Vec<u32>> = (0..10).map(|len| (0..len).map(|_| entry()).collect()).collect();
        buckets.push((0..BIG + 3).map(|_| entry()).collect());
        buckets.extend([vec![], vec![], vec![]]);
        buckets.push(vec![5, 5, 5]);
        buckets.push((0..BIG).map(|_| entry()).collect());
        buckets.push(vec![7, 7 | 1 << 31, 9]);
        // A run of empty buckets ending at buckets of one entry: a slice's search past the run
        // must land on the one holding its next entry.
        buckets.extend([vec![], vec![], vec![3 | 1 << 31], vec![4], vec![], vec![6]]);
        buckets.push(vec![]);
        buckets
    }

    const BIG: u32 = 12;

    /// How the accumulation is launched: a thread a bucket, or slices of at least `chunk_min`
    /// entries (the 81 entries in 24 buckets here make slices of 4 entries at chunk_min 1: many
    /// buckets cut, some across three slices).
    #[derive(Clone, Copy, Debug)]
    enum Launch {
        Buckets,
        Chunks {
            chunk_min: u32,
        },
        /// Slices with Y₃'s products reduced together.
        ChunksFused {
            chunk_min: u32,
        },
    }

    /// Words of a bucket sum (XYZZ) and their reading back as a point.
    type SumWords<A> = (usize, fn(&[u32]) -> <A as AffineRepr>::Group);

    /// Runs one curve's accumulation on the host and checks every bucket.
    fn check<A: AffineRepr>(
        exe: &std::path::Path,
        (curve, launch): (&str, Launch),
        bases: &[A],
        (base_words, to): (usize, fn(&A, &mut [u32])),
        (xyzz_words, from): SumWords<A>,
        buckets: &[Vec<u32>],
    ) {
        let sorted: Vec<u32> = buckets.concat();
        let counts: Vec<u32> = buckets.iter().map(|b| b.len() as u32).collect();
        let offsets: Vec<u32> = counts.iter().scan(0, |at, c| Some(std::mem::replace(at, *at + c))).collect();
        let hex = |w: &[u32]| w.iter().map(|x| format!("{x:x}")).collect::<Vec<_>>().join(" ");
        let chunk_min = match launch {
            Launch::Buckets => 0,
            Launch::Chunks { chunk_min } | Launch::ChunksFused { chunk_min } => chunk_min,
        };
        let fused = u32::from(matches!(launch, Launch::ChunksFused { .. }));
        let mut input =
            format!("{curve} {} {} {} {BIG} {chunk_min} {fused}\n", bases.len(), buckets.len(), sorted.len());
        input.push_str(&hex(&to_words(bases, base_words, to)));
        for list in [&sorted, &offsets, &counts] {
            input.push('\n');
            input.push_str(&hex(list));
        }
        input.push('\n');
        let output = cxx::run(exe, &input);
        let mut lines = output.lines();
        let big: Vec<u32> =
            lines.next().expect("big line").split_whitespace().map(|x| x.parse().expect("u32")).collect();
        let big_keys: Vec<usize> = (0..buckets.len()).filter(|&k| buckets[k].len() as u32 > BIG).collect();
        let want_big: Vec<u32> = std::iter::once(big_keys.len() as u32)
            .chain(big_keys.iter().flat_map(|&k| [k as u32, offsets[k], counts[k]]))
            .collect();
        assert_eq!(big, want_big, "{curve} {launch:?}: the big buckets");
        let mut seen = 0;
        for (k, line) in lines.enumerate() {
            let words: Vec<u32> = line.split_whitespace().map(|x| u32::from_str_radix(x, 16).expect("hex")).collect();
            assert_eq!(words.len(), xyzz_words, "{curve} {launch:?} bucket {k}");
            seen += 1;
            if big_keys.contains(&k) {
                continue; // left for the big-bucket path, which writes it
            }
            let got = from(&words);
            let want = buckets[k].iter().fold(A::Group::zero(), |acc, &e| {
                let p = bases[(e & 0x7fff_ffff) as usize].into_group();
                if e >> 31 == 1 {
                    acc - p
                } else {
                    acc + p
                }
            });
            assert!(
                got == want,
                "{curve} {launch:?} bucket {k} ({:?}): the kernel's sum differs from arkworks'",
                buckets[k]
            );
        }
        assert_eq!(seen, buckets.len(), "{curve} {launch:?}: a sum a bucket");
    }

    #[test]
    fn accumulation_on_the_host_sums_each_bucket_as_arkworks_does() {
        let Some((dir, exe)) = build() else { return };
        let mut rng = test_rng("accumulation_on_the_host_sums_each_bucket_as_arkworks_does");
        let g1: Vec<G1Affine> = random_points::<G1Projective, _>(32, &mut rng);
        let g2: Vec<G2Affine> = random_points::<G2Projective, _>(32, &mut rng);
        let launches = [
            Launch::Buckets,
            Launch::Chunks { chunk_min: 1 },
            Launch::Chunks { chunk_min: 7 },
            Launch::Chunks { chunk_min: 64 },
            Launch::ChunksFused { chunk_min: 1 },
        ];
        let (g1_words, g2_words) = (
            (G1_WORDS, g1_to_words as fn(&G1Affine, &mut [u32])),
            (G2_WORDS, g2_to_words as fn(&G2Affine, &mut [u32])),
        );
        let (g1_xyzz, g2_xyzz) = (
            (G1_XYZZ_WORDS, g1_xyzz_to_projective as fn(&[u32]) -> G1Projective),
            (G2_XYZZ_WORDS, g2_xyzz_to_projective as fn(&[u32]) -> G2Projective),
        );
        for launch in launches {
            let lists = buckets(32, &mut rng);
            check(&exe, ("g1", launch), &g1, g1_words, g1_xyzz, &lists);
            check(&exe, ("g2", launch), &g2, g2_words, g2_xyzz, &lists);
            // No entries at all: every bucket the identity.
            let empty = vec![vec![]; 9];
            check(&exe, ("g1", launch), &g1, g1_words, g1_xyzz, &empty);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The counting sort's kernels (kernels/msm/sort.cu) run on the host: the digit counts, then
/// both scatters from the same offsets. Every scalar's entries must add back up to the scalar
/// (Σ ±|d_w|·2^(c·w) over its windows, as integers), the scatters must fill each bucket with the
/// same entries, and the 0/1 split must list exactly the ones.
mod host_sort {
    use crate::cxx;
    use ark_ff::{BigInt, BigInteger, PrimeField};
    use g16_backend::limbs::{fr_to_words, to_words, FR_WORDS};
    use g16_backend::msm_plan::windows;
    use g16_backend::sample::test_rng;
    use g16_backend::Fr;
    use rand::Rng;

    const MAIN: &str = r#"
// Input: n c windows stride shifts split per_window grid, then n scalars (Montgomery words). Output:
// the ones' count and list; the buckets' counts; the entries by msm_scatter; the entries by
// msm_scatter_by_window (each as its bucket's slots in order).
int main() {
  const unsigned n = read_u32(), c = read_u32(), windows = read_u32(), stride = read_u32();
  const unsigned shifts = read_u32(), split = read_u32(), per_window = read_u32(), grid = read_u32();
  std::vector<Fr> scalars = read_items<Fr>(n);
  const unsigned half = 1u << (c - 1), buckets = (windows + shifts - 1) / shifts * half;
  std::vector<u32> counts(buckets, 0), ones(n + 1, 0), ones_count(1, 0);
  blockDim.x = 1; threadIdx.x = 0;
  gridDim.x = grid;
  for (unsigned b = 0; b < grid; b++) {
    blockIdx.x = b;
    msm_count(scalars.data(), n, c, windows, stride, shifts, counts.data(), ones.data(), ones_count.data(), split);
  }
  std::vector<u32> offsets(buckets, 0);
  u32 entries = 0;
  for (unsigned k = 0; k < buckets; k++) { offsets[k] = entries; entries += counts[k]; }
  std::vector<u32> by_scalar(entries + 1, 0xffffffffu), by_window(entries + 1, 0xffffffffu);
  std::vector<u32> cursor = offsets;
  for (unsigned b = 0; b < grid; b++) {
    blockIdx.x = b;
    msm_scatter(scalars.data(), n, c, windows, stride, shifts, cursor.data(), by_scalar.data(), split);
  }
  cursor = offsets;
  gridDim.x = per_window * windows;
  for (unsigned b = 0; b < gridDim.x; b++) {
    blockIdx.x = b;
    msm_scatter_by_window(scalars.data(), n, c, windows, stride, shifts, cursor.data(), by_window.data(),
                          split, per_window);
  }
  printf("%u", ones_count[0]);
  for (unsigned j = 0; j < ones_count[0]; j++) printf(" %u", ones[j]);
  printf("\n");
  for (u32 x : counts) printf("%u ", x);
  printf("\n");
  for (unsigned j = 0; j < entries; j++) printf("%u ", by_scalar[j]);
  printf("\n");
  for (unsigned j = 0; j < entries; j++) printf("%u ", by_window[j]);
  printf("\n");
  return 0;
}
"#;

    /// Emulation-only stand-ins for what the sort's kernels use from CUDA.
    const EXTRA: &str = r#"
// A serial launch's thread is a warp of one: no other lane to read.
static unsigned __shfl_down_sync(unsigned, unsigned, unsigned) { return 0; }
"#;

    fn build() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
        use crate::compile::{unit, FP, SORT};
        let kernels = unit(&[FP, SORT]);
        let source = format!("{}{EXTRA}\n{kernels}\n{}\n{MAIN}", cxx::SERIAL_LAUNCH, cxx::ITEM_READERS);
        cxx::build_in_temp("the host-emulated MSM sort", "host-msm-sort", &source)
    }

    /// One layout: window width; windowed (stride 0, one shift), shared (stride: the table's
    /// points a shift; every window a shift) or grouped (fewer shifts than windows).
    #[derive(Clone, Copy, Debug)]
    struct Case {
        c: u32,
        stride: u32,
        shifts: u32,
        split: bool,
        per_window: u32,
        grid: u32,
    }

    fn numbers(line: &str) -> Vec<u32> {
        line.split_whitespace().map(|x| x.parse().expect("u32")).collect()
    }

    /// Σ ±mag·2^(c·w) of one scalar's entries, as (positive part, negative part).
    type Parts = (BigInt<5>, BigInt<5>);

    fn add_shifted(acc: &mut BigInt<5>, mag: u32, shift: u32) {
        let term = BigInt::<5>::from(u64::from(mag)) << shift;
        assert!(!acc.add_with_carry(&term), "no carry out of 320 bits");
    }

    fn check(exe: &std::path::Path, case: Case, scalars: &[Fr]) {
        let n = scalars.len();
        let w = windows(case.c);
        let half = 1u32 << (case.c - 1);
        let shifts = case.shifts.clamp(1, w);
        let mut input = format!(
            "{n} {} {w} {} {shifts} {} {} {}\n",
            case.c,
            case.stride,
            u32::from(case.split),
            case.per_window,
            case.grid
        );
        let words = to_words(scalars, FR_WORDS, fr_to_words);
        input.push_str(&words.iter().map(|x| format!("{x:x}")).collect::<Vec<_>>().join(" "));
        input.push('\n');
        let output = cxx::run(exe, &input);
        let mut lines = output.lines();
        let ones = numbers(lines.next().expect("ones"));
        let counts = numbers(lines.next().expect("counts"));
        let by_scalar = numbers(lines.next().unwrap_or(""));
        let by_window = numbers(lines.next().unwrap_or(""));

        let is_one = |s: &Fr| *s == Fr::from(1u64);
        let mut want_ones: Vec<u32> = (0..n as u32).filter(|&i| case.split && is_one(&scalars[i as usize])).collect();
        let mut got_ones = ones[1..].to_vec();
        got_ones.sort_unstable();
        want_ones.sort_unstable();
        assert_eq!((ones[0] as usize, got_ones), (want_ones.len(), want_ones), "{case:?}: the ones");

        let buckets = (w.div_ceil(shifts) * half) as usize;
        assert_eq!(counts.len(), buckets, "{case:?}: a count a bucket");
        let entries: usize = counts.iter().map(|&x| x as usize).sum();
        assert_eq!((by_scalar.len(), by_window.len()), (entries, entries), "{case:?}: every slot written once");

        let mut parts: Vec<Parts> = vec![(BigInt::zero(), BigInt::zero()); n];
        let mut seen = std::collections::HashSet::new();
        let mut at = 0;
        for (key, &count) in counts.iter().enumerate() {
            let range = at..at + count as usize;
            at = range.end;
            let (mut a, mut b) = (by_scalar[range.clone()].to_vec(), by_window[range].to_vec());
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "{case:?}: bucket {key} holds different entries by window");
            for e in a {
                let (point, negative) = (e & 0x7fff_ffff, e >> 31 == 1);
                let (shift, i) = match case.stride {
                    0 => (0, point),
                    stride => (point / stride, point % stride),
                };
                assert!(shift < shifts, "{case:?}: entry {e:#x} reads shift {shift} of {shifts}");
                let (window, mag) = ((key as u32 / half) * shifts + shift, key as u32 % half + 1);
                assert!((i as usize) < n && window < w, "{case:?}: entry {e:#x} of bucket {key} out of range");
                assert!(seen.insert((i, window)), "{case:?}: scalar {i} has two digits in window {window}");
                let part = &mut parts[i as usize];
                add_shifted(if negative { &mut part.1 } else { &mut part.0 }, mag, case.c * window);
            }
        }
        for (i, (s, (mut positive, negative))) in scalars.iter().zip(parts).enumerate() {
            if case.split && is_one(s) {
                assert!(positive.is_zero() && negative.is_zero(), "{case:?}: a split one has digits");
                continue;
            }
            assert!(!positive.sub_with_borrow(&negative), "{case:?}: scalar {i} sums below zero");
            let plain = s.into_bigint();
            let want = BigInt::<5>([plain.0[0], plain.0[1], plain.0[2], plain.0[3], 0]);
            assert_eq!(positive, want, "{case:?}: scalar {i}'s digits do not add up to it");
        }
    }

    /// Random scalars and the edges of the digits: 0, 1, 2, r − 1, 2^254, and the values where a
    /// window's digit is exactly 2^(c−1), one above it (negative, with a carry), all ones (a carry
    /// up every window), in the low and in higher windows.
    fn scalars(c: u32, rng: &mut impl Rng) -> Vec<Fr> {
        let mut out: Vec<Fr> = (0..40).map(|_| Fr::from_bigint(BigInt(rng.gen())).unwrap_or(Fr::from(7u64))).collect();
        let half = 1u64 << (c - 1);
        out.extend([0u64, 1, 2, half, half + 1, (1 << c) - 1, (half + 1) << c].map(Fr::from));
        out.push(-Fr::from(1u64));
        let top = BigInt::<4>::from(1u64) << 254u32;
        out.push(Fr::from_bigint(top).expect("2^254 < r"));
        let ones = BigInt::<4>([u64::MAX; 4]) >> 3u32; // 253 bits of ones: every window's digit carries
        out.push(Fr::from_bigint(ones).expect("below r"));
        out.extend([Fr::from(1u64), Fr::from(1u64)]);
        out
    }

    #[test]
    fn both_scatters_sort_every_digit_into_its_bucket() {
        let Some((dir, exe)) = build() else { return };
        let mut rng = test_rng("both_scatters_sort_every_digit_into_its_bucket");
        let cases = [
            Case { c: 4, stride: 0, shifts: 1, split: true, per_window: 2, grid: 3 },
            Case { c: 7, stride: 0, shifts: 1, split: false, per_window: 1, grid: 1 },
            Case { c: 9, stride: 0, shifts: 1, split: true, per_window: 5, grid: 4 },
            // Shared: every window a shift of the table.
            Case { c: 8, stride: 61, shifts: 32, split: true, per_window: 3, grid: 2 },
            Case { c: 11, stride: 64, shifts: 24, split: false, per_window: 2, grid: 5 },
            // Grouped: 24 windows in sets of 5 (the last of 4); 22 in sets of 3 (the last of 1).
            Case { c: 11, stride: 64, shifts: 5, split: true, per_window: 2, grid: 3 },
            Case { c: 12, stride: 59, shifts: 3, split: false, per_window: 1, grid: 2 },
        ];
        for case in cases {
            let s = scalars(case.c, &mut rng);
            check(&exe, case, &s);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The GPU tests of MSMs cut into ranges over tables (`backend-cuda/tests/backend.rs`) bound the
/// entries at 2^16: every range of the suite's 4096-point vector then still takes its table
/// (shared at the planner's width, grouped at c = 9 over 3 shifts), where at 2^12 its ranges
/// shrink to 64 points and take the windowed layout.
#[test]
fn ranges_cut_at_the_gpu_tests_bound_still_read_the_table() {
    let n = 1usize << 12;
    let shared = planner(MsmTuning { tables: Some((8, 23)), ..MsmTuning::default() });
    let grouped_planner = planner(MsmTuning { tables: Some((8, 8)), table_window: Some(9), ..MsmTuning::default() });
    let grouped = grouped_planner.grouped(n, 3).expect("a grouped table");
    for (planner, layout) in [(shared, shared.table(n).expect("a shared table")), (grouped_planner, grouped)] {
        let entries = |len: usize| planner.windowed(len).entries(len).max(layout.entries(len));
        let plans = |max: u64| -> Vec<MsmPlan> {
            cut(n, max, entries)
                .into_iter()
                .map(|r| MsmPlan::least_work(&planner, (r.len(), r.len()), Some((layout, n as u32))))
                .collect()
        };
        let at_16 = plans(1 << 16);
        assert!(at_16.len() > 1, "{layout:?}: cut at 2^16");
        assert!(at_16.iter().all(|p| p.layout == layout && p.stride == n as u32), "{layout:?}: {at_16:?}");
        assert!(plans(1 << 12).iter().all(|p| p.stride == 0), "{layout:?}: at 2^12 every range is windowed");
    }
}
