//! The conformance suite on the CUDA backend. Where there is no GPU, driver or NVRTC (CI) it
//! prints a loud SKIPPED; on a GPU machine run it with `G16_REQUIRE_CUDA=1` (a missing backend
//! fails) and `G16_CONFORMANCE=large` (the GPU machine's sizes). CUDA-specific checks follow.

use g16_cuda::{
    CudaBackend, CudaOptions, FusedY, MsmAccumulation, MsmScatter, NttBlock, NttTwiddles, TableBuild, MAX_MSM_ENTRIES,
};

/// The defaults, with the compiled kernels cached beside the build: each test opens its own
/// device, and only the first compiles.
fn options() -> CudaOptions {
    let cache_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuda-kernels");
    CudaOptions { cache_dir: Some(cache_dir), ..CudaOptions::default() }
}

g16_backend::conformance_tests!("cuda", "G16_REQUIRE_CUDA", CudaBackend::open(&options()));

// --- CUDA-specific checks: what the shared suite does not reach --------------------------------

use ark_ec::VariableBaseMSM;
use ark_ff::{Field, One, UniformRand};
use g16_backend::conformance::{self, open_or_skip};
use g16_backend::msm_plan::MsmTuning;
use g16_backend::sample::{random_points, random_scalars, test_rng};
use g16_backend::timeline::{Layer, Timeline};
use g16_backend::{Backend, NttKind, Scalars};
use g16_backend::{Fr, G1Projective, G2Projective};

fn cuda() -> Option<CudaBackend> {
    open_or_skip("cuda", "G16_REQUIRE_CUDA", CudaBackend::open(&options()))
}

fn large() -> bool {
    std::env::var("G16_CONFORMANCE").as_deref() == Ok("large")
}

/// A hash circuit's witness: mostly 0 and 1, a few full-width values.
fn bit_heavy(n: usize, rng: &mut rand_chacha::ChaCha20Rng) -> Vec<Fr> {
    (0..n).map(|i| if i % 13 == 7 { Fr::rand(rng) } else { Fr::from(u64::rand(rng) & 1) }).collect()
}

/// 99 % of the scalars one value: one bucket a window holds almost every point (the big-bucket
/// path).
fn skewed(n: usize, rng: &mut rand_chacha::ChaCha20Rng) -> Vec<Fr> {
    let shared = Fr::rand(rng);
    (0..n).map(|i| if i % 100 == 0 { Fr::rand(rng) } else { shared }).collect()
}

/// The conformance suite's G1 and G2 MSMs and errors on `b`, at CI's or the GPU machine's sizes.
fn msm_suite(b: &CudaBackend) {
    let sizes = if large() { conformance::Sizes::large() } else { conformance::Sizes::ci() };
    conformance::msm_g1_matches_arkworks(b, &sizes);
    conformance::msm_g2_matches_arkworks(b, &sizes);
    conformance::msm_ranges_and_errors(b);
}

#[test]
fn ones_split_on_and_off_agree_with_arkworks() {
    let Some(b) = cuda() else { return };
    let mut rng = test_rng("ones_split_on_and_off_agree_with_arkworks");
    let n = if large() { 1 << 20 } else { 1 << 14 };
    let bases = random_points::<G1Projective, _>(n, &mut rng);
    let g2 = random_points::<G2Projective, _>(n / 16, &mut rng);
    let scalars = bit_heavy(n, &mut rng);
    let want = G1Projective::msm_unchecked(&bases, &scalars);
    let want2 = G2Projective::msm_unchecked(&g2, &scalars[..n / 16]);
    let (db, dg2, ds) =
        (b.upload_g1_bases(&bases).unwrap(), b.upload_g2_bases(&g2).unwrap(), b.upload_scalars(&scalars).unwrap());
    for split in [true, false] {
        b.set_ones_split(split);
        assert!(b.msm_g1(&db, Scalars::Device(&ds, 0..n)).unwrap() == want, "G1, split {split}");
        assert!(b.msm_g2(&dg2, Scalars::Device(&ds, 0..n / 16)).unwrap() == want2, "G2, split {split}");
        // All ones: everything goes through the batch addition (or, split off, one bucket).
        let ones = vec![Fr::one(); n];
        let sum: G1Projective = bases.iter().map(|p| G1Projective::from(*p)).sum();
        assert!(b.msm_g1(&db, Scalars::Host(&ones)).unwrap() == sum, "all ones, split {split}");
    }
    b.set_ones_split(true);
}

/// MSMs whose scalars are mostly 0 and 1 are planned for the few that reach the buckets
/// (`msm_g1.count`): exact against arkworks with the shifted bases made (so the shared layout
/// competes with narrow windows), the 0/1 split on and off, down to a handful of other values
/// and none at all.
#[test]
fn mostly_zero_and_one_scalars_are_planned_for_the_rest_and_agree() {
    let Some(b) = with_small_tables(TableBuild::Blocking) else { return };
    let mut rng = test_rng("mostly_zero_and_one_scalars_are_planned_for_the_rest_and_agree");
    let n = if large() { 1 << 20 } else { 1 << 15 };
    let (g1, g2) = (random_points::<G1Projective, _>(n, &mut rng), random_points::<G2Projective, _>(n / 8, &mut rng));
    let (d1, d2) = (b.upload_g1_bases(&g1).unwrap(), b.upload_g2_bases(&g2).unwrap());
    let few = |every: usize, rng: &mut rand_chacha::ChaCha20Rng| -> Vec<Fr> {
        (0..n).map(|i| if i % every == 3 { Fr::rand(rng) } else { Fr::from(u64::rand(rng) & 1) }).collect()
    };
    let bits_only: Vec<Fr> = (0..n).map(|_| Fr::from(u64::rand(&mut rng) & 1)).collect();
    let mut five = vec![Fr::from(0u64); n];
    for i in [0, 1, n / 2, n - 2, n - 1] {
        five[i] = Fr::rand(&mut rng);
    }
    let cases = [
        ("1 in 13 other", bit_heavy(n, &mut rng)),
        ("1 in 997 other", few(997, &mut rng)),
        ("five other", five),
        ("0 and 1 only", bits_only),
    ];
    for (what, scalars) in cases {
        let want1 = G1Projective::msm_unchecked(&g1, &scalars);
        let want2 = G2Projective::msm_unchecked(&g2, &scalars[..n / 8]);
        let ds = b.upload_scalars(&scalars).unwrap();
        for split in [true, false] {
            b.set_ones_split(split);
            assert!(b.msm_g1(&d1, Scalars::Device(&ds, 0..n)).unwrap() == want1, "G1 {what}, split {split}");
            assert!(b.msm_g2(&d2, Scalars::Device(&ds, 0..n / 8)).unwrap() == want2, "G2 {what}, split {split}");
        }
    }
    b.set_ones_split(true);
    let spans = b.drain_device_spans();
    for name in ["msm_g1.count", "msm_g2.count"] {
        assert!(spans.iter().any(|s| s.name == name && s.end_ns > s.start_ns), "no {name} span in {spans:?}");
    }
}

#[test]
fn skewed_scalars_take_the_big_bucket_path_and_agree() {
    let Some(b) = cuda() else { return };
    let mut rng = test_rng("skewed_scalars_take_the_big_bucket_path_and_agree");
    let n = if large() { 1 << 22 } else { 1 << 15 };
    let bases = random_points::<G1Projective, _>(n, &mut rng);
    // 99 % share one value: one bucket per window holds almost every point.
    let scalars = skewed(n, &mut rng);
    let want = G1Projective::msm_unchecked(&bases, &scalars);
    let db = b.upload_g1_bases(&bases).unwrap();
    let ds = b.upload_scalars(&scalars).unwrap();
    assert!(b.msm_g1(&db, Scalars::Device(&ds, 0..n)).unwrap() == want);
}

#[test]
fn large_ntt_round_trips_and_matches_the_cpu() {
    let Some(b) = cuda() else { return };
    let mut rng = test_rng("large_ntt_round_trips_and_matches_the_cpu");
    let log = if large() { 24 } else { 16 };
    let n = 1usize << log;
    let input = random_scalars(n, &mut rng);
    let cpu = g16_backend::CpuBackend::new();
    for kind in [NttKind::CosetForward, NttKind::Inverse] {
        let mut d = b.upload_scalars(&input).unwrap();
        b.ntt(&mut d, kind).unwrap();
        let mut c = cpu.upload_scalars(&input).unwrap();
        cpu.ntt(&mut c, kind).unwrap();
        assert!(b.download_scalars(&d).unwrap() == cpu.download_scalars(&c).unwrap(), "{kind:?} 2^{log}");
    }
    let mut d = b.upload_scalars(&input).unwrap();
    b.ntt(&mut d, NttKind::CosetForward).unwrap();
    b.ntt(&mut d, NttKind::CosetInverse).unwrap();
    assert!(b.download_scalars(&d).unwrap() == input, "coset round trip 2^{log}");
}

/// The NTT with its inter-pass twiddles from split tables (`NttTwiddles::Split`): every size
/// and kind of the suite, and the large round trip's sizes.
#[test]
fn ntt_with_split_twiddles_matches_arkworks() {
    let options = CudaOptions { ntt_twiddles: NttTwiddles::Split, ..options() };
    ntt_under_options_matches_arkworks(&options, "ntt_with_split_twiddles_matches_arkworks");
}

/// The NTT's pass kernel in blocks of 1024 elements (`NttBlock::Elems1024`; the default is
/// 512), likewise.
#[test]
fn ntt_in_blocks_of_1024_matches_arkworks() {
    let options = CudaOptions { ntt_block: NttBlock::Elems1024, ..options() };
    ntt_under_options_matches_arkworks(&options, "ntt_in_blocks_of_1024_matches_arkworks");
}

fn ntt_under_options_matches_arkworks(options: &CudaOptions, seed: &str) {
    let Some(b) = open_or_skip("cuda", "G16_REQUIRE_CUDA", CudaBackend::open(options)) else { return };
    let sizes = if large() { conformance::Sizes::large() } else { conformance::Sizes::ci() };
    conformance::ntt_matches_arkworks(&b, &sizes);
    let mut rng = test_rng(seed);
    let input = random_scalars(1 << if large() { 24 } else { 16 }, &mut rng);
    let mut d = b.upload_scalars(&input).unwrap();
    b.ntt(&mut d, NttKind::CosetForward).unwrap();
    b.ntt(&mut d, NttKind::CosetInverse).unwrap();
    assert!(b.download_scalars(&d).unwrap() == input, "coset round trip");
}

/// The MSM accumulated a bucket a thread (`MsmAccumulation::Buckets`; the default is equal
/// slices of the sorted entries): the suite's MSMs and errors on G1 and G2, a witness of mostly
/// bits (a short list), scalars that put 99 % of the points in one bucket a window (the
/// big-bucket path), and the subgroup check's sums, which take the same accumulation.
#[test]
fn msm_accumulated_a_bucket_a_thread_matches_arkworks() {
    let options = CudaOptions { msm_accumulation: MsmAccumulation::Buckets, ..options() };
    let Some(b) = open_or_skip("cuda", "G16_REQUIRE_CUDA", CudaBackend::open(&options)) else { return };
    msm_suite(&b);
    let sizes = if large() { conformance::Sizes::large() } else { conformance::Sizes::ci() };
    conformance::subgroup_checks_match_the_host(&b, &sizes);
    let mut rng = test_rng("msm_accumulated_a_bucket_a_thread_matches_arkworks");
    let n = if large() { 1 << 22 } else { 1 << 15 };
    let bases = random_points::<G1Projective, _>(n, &mut rng);
    let db = b.upload_g1_bases(&bases).unwrap();
    let bits = bit_heavy(n, &mut rng);
    let skewed = skewed(n, &mut rng);
    for (what, scalars) in [("mostly bits", bits), ("skewed", skewed)] {
        let want = G1Projective::msm_unchecked(&bases, &scalars);
        let ds = b.upload_scalars(&scalars).unwrap();
        assert!(b.msm_g1(&db, Scalars::Device(&ds, 0..n)).unwrap() == want, "{what}");
    }
}

/// The counting sort's entries written one window after another (`MsmScatter::ByWindow`; the
/// default writes a scalar's windows together): the suite's MSMs and errors on G1 and G2, then
/// random scalars, a witness of mostly bits and skewed scalars (the big-bucket path), also in
/// the windowed layout at c = 18 and 20, the widths `Auto` takes it for (more than 2^19
/// buckets in all).
#[test]
fn msm_scattered_by_window_matches_arkworks() {
    for window in [None, Some(18), Some(20)] {
        let mut options = CudaOptions { msm_scatter: MsmScatter::ByWindow, ..options() };
        options.msm.window = window;
        let Some(b) = open_or_skip("cuda", "G16_REQUIRE_CUDA", CudaBackend::open(&options)) else { return };
        // The suite's many small MSMs once; at c = 18 and 20 (6.8 M buckets an MSM at c = 20)
        // the three vectors below.
        if window.is_none() {
            msm_suite(&b);
        }
        let mut rng = test_rng("msm_scattered_by_window_matches_arkworks");
        let n = if large() { 1 << 22 } else { 1 << 15 };
        let bases = random_points::<G1Projective, _>(n, &mut rng);
        let db = b.upload_g1_bases(&bases).unwrap();
        let skewed = skewed(n, &mut rng);
        for (what, scalars) in
            [("random", random_scalars(n, &mut rng)), ("mostly bits", bit_heavy(n, &mut rng)), ("skewed", skewed)]
        {
            let want = G1Projective::msm_unchecked(&bases, &scalars);
            let ds = b.upload_scalars(&scalars).unwrap();
            assert!(b.msm_g1(&db, Scalars::Device(&ds, 0..n)).unwrap() == want, "{what}, window {window:?}");
        }
    }
}

/// Shifted bases are memory held for speed alone: an allocation that finds too little free
/// takes them back (MSMs then take the windowed layout), so a device holds as many other
/// buffers beside a vector with a table as it did before the vector came.
#[test]
fn shifted_bases_give_their_memory_back_to_allocations() {
    let options = CudaOptions { table_build: TableBuild::Blocking, ..options() };
    let Some(b) = open_or_skip("cuda", "G16_REQUIRE_CUDA", CudaBackend::open(&options)) else { return };
    // Buffers of 1 GiB until the device has no room for another.
    let fill = |b: &CudaBackend| {
        let mut held = Vec::new();
        loop {
            match b.alloc_scalars(1 << 25) {
                Ok(buf) => held.push(buf),
                Err(g16_backend::BackendError::OutOfMemory { .. }) => return held,
                Err(e) => panic!("filling the device: {e}"),
            }
        }
    };
    let room = fill(&b).len();
    b.synchronize().unwrap();
    let mut rng = test_rng("shifted_bases_give_their_memory_back_to_allocations");
    // 2^21 points: 0.2 GB of bases, a table of 13 windows (2.6 GB), made before the upload returns.
    let n = 1 << 21;
    let bases = random_points::<G1Projective, _>(n, &mut rng);
    let db = b.upload_g1_bases(&bases).unwrap();
    let beside = fill(&b);
    assert!(
        beside.len() + 1 >= room,
        "{} GiB filled beside the vector against {room} before it: its table kept its memory",
        beside.len()
    );
    drop(beside);
    b.synchronize().unwrap();
    let scalars = random_scalars(n, &mut rng);
    let want = G1Projective::msm_unchecked(&bases, &scalars);
    assert!(b.msm_g1(&db, Scalars::Host(&scalars)).unwrap() == want, "the MSM after its table was taken back");
}

/// The mixed addition's Y₃ products reduced together on both curves or on neither
/// (`CudaOptions::madd_fused_y`; the default, G1 only, runs in every other test): the suite's
/// G1 and G2 MSMs and errors, and a witness of mostly bits.
#[test]
fn msm_with_y_fused_on_both_curves_or_neither_matches_arkworks() {
    for fused in [FusedY::Both, FusedY::Off] {
        let options = CudaOptions { madd_fused_y: fused, ..options() };
        let Some(b) = open_or_skip("cuda", "G16_REQUIRE_CUDA", CudaBackend::open(&options)) else { return };
        msm_suite(&b);
        let mut rng = test_rng("msm_with_y_fused_on_both_curves_or_neither_matches_arkworks");
        let n = if large() { 1 << 22 } else { 1 << 15 };
        let bases = random_points::<G1Projective, _>(n, &mut rng);
        let scalars = bit_heavy(n, &mut rng);
        let want = G1Projective::msm_unchecked(&bases, &scalars);
        let (db, ds) = (b.upload_g1_bases(&bases).unwrap(), b.upload_scalars(&scalars).unwrap());
        assert!(b.msm_g1(&db, Scalars::Device(&ds, 0..n)).unwrap() == want, "{fused:?}");
    }
}

#[test]
fn msm_phases_are_timed_inside_their_host_span() {
    let Some(b) = cuda() else { return };
    let mut rng = test_rng("msm_phases_are_timed_inside_their_host_span");
    let n = 1 << 12;
    let bases = b.upload_g1_bases(&random_points::<G1Projective, _>(n, &mut rng)).unwrap();
    let scalars = b.upload_scalars(&random_scalars(n, &mut rng)).unwrap();
    b.drain_device_spans();
    let tl = Timeline::new();
    let guard = tl.span(Layer::Prover, "outer");
    let (id, host_start) = (guard.id(), g16_backend::timeline::now_ns());
    let _ = b.msm_g1(&bases, Scalars::Device(&scalars, 0..n)).unwrap();
    let host_end = g16_backend::timeline::now_ns();
    drop(guard);
    let spans = b.drain_device_spans();
    for phase in ["msm_g1", "msm_g1.count", "msm_g1.digits", "msm_g1.sort", "msm_g1.accumulate", "msm_g1.reduce"] {
        let s = spans.iter().find(|s| s.name == phase).unwrap_or_else(|| panic!("no {phase} span in {spans:?}"));
        assert_eq!(s.parent, Some(id), "{phase}");
        assert_eq!(s.device, "cuda:0");
        let slack = s.error_bound_ns + 1_000;
        assert!(
            s.start_ns + slack >= host_start && s.end_ns <= host_end + slack,
            "{phase} outside its host span: {s:?}"
        );
        assert!(s.end_ns > s.start_ns, "{phase} has length: {s:?}");
    }
}

/// The MSM checks of the shared suite with shifted bases for vectors from 2^8 points, so that
/// every scalar edge case and sub-ranges of the scalars run through the shared bucket layout at
/// CI sizes too (with the defaults only vectors of 2^18 points and more get them); made before
/// each upload returns, so every MSM has them.
#[test]
fn msms_through_shifted_bases_agree_with_arkworks() {
    let tables = MsmTuning { tables: Some((8, 23)), ..MsmTuning::default() };
    let opened = CudaBackend::open(&CudaOptions { msm: tables, table_build: TableBuild::Blocking, ..options() });
    let Some(b) = open_or_skip("cuda", "G16_REQUIRE_CUDA", opened) else { return };
    conformance::msm_g1_matches_arkworks(&b, &sizes());
    conformance::msm_g2_matches_arkworks(&b, &sizes());
    conformance::msm_ranges_and_errors(&b);
}

/// The MSM checks of the shared suite over grouped tables: every vector of 2^8 points and more
/// gets a table of k shifts (the shared range emptied, so the grouped one starts at 2^8) at
/// c = 9 (29 windows: sets of 2, 3 and, for 7 asked, 6 windows, the last set short in each), which the
/// planner's count takes over the windowed layout for the suite's vectors of 1031 and 4096
/// points; then the same cut into ranges of at most 2^16 entries (the 4096 points in four
/// ranges, each reading its part of every shift: `msm::tests::
/// ranges_cut_at_the_gpu_tests_bound_still_read_the_table`).
#[test]
fn msms_over_grouped_tables_agree_with_arkworks() {
    let msm = MsmTuning { tables: Some((8, 8)), table_window: Some(9), ..MsmTuning::default() };
    for (shifts, max_msm_entries) in [(2, MAX_MSM_ENTRIES), (3, MAX_MSM_ENTRIES), (7, MAX_MSM_ENTRIES), (3, 1 << 16)] {
        let options =
            CudaOptions { msm, table_shifts: shifts, table_build: TableBuild::Blocking, max_msm_entries, ..options() };
        let Some(b) = open_or_skip("cuda", "G16_REQUIRE_CUDA", CudaBackend::open(&options)) else { return };
        let sizes = conformance::Sizes::ci();
        conformance::msm_g1_matches_arkworks(&b, &sizes);
        conformance::msm_g2_matches_arkworks(&b, &sizes);
        conformance::msm_ranges_and_errors(&b);
        let spans = b.drain_device_spans();
        for name in ["msm_g1.shift_bases", "msm_g2.shift_bases"] {
            assert!(spans.iter().any(|s| s.name == name), "{shifts} shifts: no {name} span: no table was made");
        }
    }
}

/// MSMs cut into ranges over consecutive bases (an entry bound of 2^12 or 2^16 in place of 2^31, so
/// that the CI sizes' MSMs are cut as 2^27 points are): the shared suite's sums, edge cases and
/// sub-ranges, in the windowed layout and over shifted bases (each range reading its part of
/// every window of the table). With tables the bound is 2^16: at 2^12 the ranges shrink to 64
/// points, which take the windowed layout (`msm::tests::
/// ranges_cut_at_the_gpu_tests_bound_still_read_the_table`).
#[test]
fn msms_cut_into_ranges_agree_with_arkworks() {
    for (msm, table_build, max_msm_entries) in [
        (MsmTuning::default(), TableBuild::Off, 1 << 12),
        (MsmTuning { tables: Some((8, 23)), ..MsmTuning::default() }, TableBuild::Blocking, 1 << 16),
    ] {
        let options = CudaOptions { msm, table_build, max_msm_entries, ..options() };
        let Some(b) = open_or_skip("cuda", "G16_REQUIRE_CUDA", CudaBackend::open(&options)) else { return };
        // CI's sizes whatever G16_CONFORMANCE says: their larger MSMs are already cut into
        // many ranges, while the large sizes' 2^24 points would be tens of thousands of ranges
        // (an H100 did not finish them in 200 s).
        let sizes = conformance::Sizes::ci();
        conformance::msm_g1_matches_arkworks(&b, &sizes);
        conformance::msm_g2_matches_arkworks(&b, &sizes);
        conformance::msm_ranges_and_errors(&b);
    }
}

/// Tables from 2^8 points, made as `build` says.
fn with_small_tables(build: TableBuild) -> Option<CudaBackend> {
    let msm = MsmTuning { tables: Some((8, 23)), ..MsmTuning::default() };
    open_or_skip("cuda", "G16_REQUIRE_CUDA", CudaBackend::open(&CudaOptions { msm, table_build: build, ..options() }))
}

/// Keeps the background stream busy for a few hundred milliseconds: tables of twelve vectors
/// of 2^18 G1 points (each made in about 50 ms on an H200), queued behind one another.
fn busy_background(b: &CudaBackend, rng: &mut rand_chacha::ChaCha20Rng) -> Vec<g16_backend::G1Bases> {
    let points = random_points::<G1Projective, _>(1 << 18, rng);
    (0..12).map(|_| b.upload_g1_bases(&points).unwrap()).collect()
}

/// An MSM's sum is the same before its bases' table is made (the windowed layout), after (the
/// shared one) and with tables off, on G1 and G2; `synchronize` does not wait for the tables,
/// and their builds are device spans.
#[test]
fn msms_agree_before_and_after_their_tables_are_made_and_without_them() {
    let Some(b) = with_small_tables(TableBuild::Background) else { return };
    let Some(off) = with_small_tables(TableBuild::Off) else { return };
    let mut rng = test_rng("msms_agree_before_and_after_their_tables_are_made_and_without_them");
    let n = 1 << 12;
    let (g1, g2) = (random_points::<G1Projective, _>(n, &mut rng), random_points::<G2Projective, _>(n, &mut rng));
    let scalars = random_scalars(n, &mut rng);
    let want1 = G1Projective::msm(&g1, &scalars).unwrap();
    let want2 = G2Projective::msm(&g2, &scalars).unwrap();
    let on_device = b.upload_scalars(&scalars).unwrap();
    let busy = busy_background(&b, &mut rng);
    let (bases1, bases2) = (b.upload_g1_bases(&g1).unwrap(), b.upload_g2_bases(&g2).unwrap());
    b.synchronize().unwrap();
    assert!(b.tables_building(), "synchronize waited for the tables");
    let before = (
        b.msm_g1(&bases1, Scalars::Device(&on_device, 0..n)).unwrap(),
        b.msm_g2(&bases2, Scalars::Host(&scalars)).unwrap(),
    );
    // Still building after both MSMs: each began before its table was made.
    assert!(b.tables_building(), "the tables were made before the MSMs: nothing tested before them");
    assert_eq!(before, (want1, want2), "before the tables are made");
    b.wait_for_tables().unwrap();
    assert!(!b.tables_building());
    let after = (
        b.msm_g1(&bases1, Scalars::Device(&on_device, 0..n)).unwrap(),
        b.msm_g2(&bases2, Scalars::Host(&scalars)).unwrap(),
    );
    assert_eq!(after, (want1, want2), "after the tables are made");
    let spans = b.drain_device_spans();
    for name in ["msm_g1.shift_bases", "msm_g2.shift_bases"] {
        let s = spans.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no {name} span in {spans:?}"));
        assert!(s.end_ns > s.start_ns, "{s:?}");
    }
    assert_eq!(spans.iter().filter(|s| s.name == "msm_g1.shift_bases").count(), busy.len() + 1);
    let (off1, off2) = (off.upload_g1_bases(&g1).unwrap(), off.upload_g2_bases(&g2).unwrap());
    assert!(!off.tables_building());
    let without =
        (off.msm_g1(&off1, Scalars::Host(&scalars)).unwrap(), off.msm_g2(&off2, Scalars::Host(&scalars)).unwrap());
    assert_eq!(without, (want1, want2), "without tables");
    assert!(!off.drain_device_spans().iter().any(|s| s.name.ends_with("shift_bases")));
}

/// Bases dropped while their table is being made are freed behind the build: the device stays
/// healthy and later MSMs, with and without tables, are exact.
#[test]
fn bases_dropped_while_their_table_is_made_free_safely() {
    let Some(b) = with_small_tables(TableBuild::Background) else { return };
    let mut rng = test_rng("bases_dropped_while_their_table_is_made_free_safely");
    drop(busy_background(&b, &mut rng));
    let n = 1 << 12;
    let points = random_points::<G1Projective, _>(n, &mut rng);
    let scalars = random_scalars(n, &mut rng);
    let want = G1Projective::msm(&points, &scalars).unwrap();
    let dropped = b.upload_g1_bases(&points).unwrap();
    let kept = b.upload_g1_bases(&points).unwrap();
    assert!(b.tables_building(), "the tables were made before the drop: nothing tested");
    drop(dropped);
    assert_eq!(b.msm_g1(&kept, Scalars::Host(&scalars)).unwrap(), want, "before its table");
    b.wait_for_tables().unwrap();
    b.synchronize().unwrap();
    assert_eq!(b.msm_g1(&kept, Scalars::Host(&scalars)).unwrap(), want, "after its table");
    // Fresh memory after the frees: another vector, and its table, in the same places.
    let again = b.upload_g1_bases(&points).unwrap();
    drop(kept);
    b.wait_for_tables().unwrap();
    assert_eq!(b.msm_g1(&again, Scalars::Host(&scalars)).unwrap(), want, "after the frees");
}

/// A compiled circuit's products and check at a size the shared suite leaves out (2^20 rows
/// with `G16_CONFORMANCE=large`), with rows of 1000 entries among short ones, each timed as a
/// device span under its host span: `upload_matrix` (the copy stream), `spmv`, `r1cs_check`.
#[test]
fn sparse_products_and_the_check_are_exact_and_timed() {
    let Some(b) = cuda() else { return };
    let mut rng = test_rng("sparse_products_and_the_check_are_exact_and_timed");
    let rows = if large() { 1 << 20 } else { 1 << 14 };
    let data: Vec<Vec<(Fr, usize)>> = (0..rows)
        .map(|r| {
            let len = if r % 4099 == 11 { 1000 } else { (u64::rand(&mut rng) % 6) as usize };
            let k =
                |rng: &mut rand_chacha::ChaCha20Rng| if u64::rand(rng) % 4 == 0 { Fr::rand(rng) } else { Fr::one() };
            (0..len).map(|_| (k(&mut rng), (u64::rand(&mut rng) % rows as u64) as usize)).collect()
        })
        .collect();
    let m = g16_backend::SparseMatrix::from_rows(rows, data.iter().map(Vec::as_slice)).unwrap();
    let z = random_scalars(rows, &mut rng);
    let mut want = vec![Fr::from(0u64); rows];
    m.mul_vector_into(&z, &mut want);
    b.drain_device_spans();
    let tl = Timeline::new();
    let guard = tl.span(Layer::Prover, "outer");
    let id = guard.id();
    let dm = b.upload_matrix(&m).unwrap();
    let dz = b.upload_scalars(&z).unwrap();
    let mut a = b.alloc_scalars(rows).unwrap();
    b.spmv(&dm, &dz, &mut a).unwrap();
    let c: Vec<Fr> = want.iter().map(|x| x.square()).collect();
    let dc = b.upload_scalars(&c).unwrap();
    assert_eq!(b.first_unsatisfied([&a, &a, &dc], rows).unwrap(), None, "a∘a = c");
    b.synchronize().unwrap();
    drop(guard);
    assert!(b.download_scalars(&a).unwrap() == want, "spmv of {rows} rows");
    let spans = b.drain_device_spans();
    for name in ["upload_matrix", "spmv", "r1cs_check"] {
        let s = spans.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no {name} span in {spans:?}"));
        assert_eq!(s.parent, Some(id), "{name}");
        eprintln!("{name}: {:.3} ms ({rows} rows, {} entries)", (s.end_ns - s.start_ns) as f64 / 1e6, m.entries());
    }
}

/// Indices stay global past the first chunk of points (2^22 G1, 2^21 G2): an outsider only in a
/// later chunk is found at its own index, and each chunk's check is a device span under the
/// caller's. Past-a-chunk vectors at the GPU machine's sizes only.
#[test]
fn subgroup_checks_find_outsiders_in_later_chunks_and_are_timed() {
    use g16_backend::sample::random_outside_subgroup;
    let Some(b) = cuda() else { return };
    let mut rng = test_rng("subgroup_checks_find_outsiders_in_later_chunks_and_are_timed");
    let (n1, n2) = if large() { ((1 << 22) + 1000, (1 << 21) + 100) } else { (1000, 100) };
    let mut g1 = random_points::<G1Projective, _>(n1, &mut rng);
    let mut g2 = random_points::<G2Projective, _>(n2, &mut rng);
    b.drain_device_spans();
    let tl = Timeline::new();
    let guard = tl.span(Layer::Prover, "outer");
    let id = guard.id();
    assert_eq!(b.first_outside_subgroup_g1(&g1).unwrap(), None, "{n1} G1 points");
    assert_eq!(b.first_outside_subgroup_g2(&g2).unwrap(), None, "{n2} G2 points");
    b.synchronize().unwrap();
    drop(guard);
    let spans = b.drain_device_spans();
    for name in ["subgroup_g1", "subgroup_g2"] {
        let s = spans.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no {name} span in {spans:?}"));
        assert_eq!(s.parent, Some(id), "{name}");
    }
    let (at1, at2) = (n1 - 983, n2 - 97);
    g1[at1] = random_outside_subgroup(&mut rng);
    g2[at2] = random_outside_subgroup(&mut rng);
    assert_eq!(b.first_outside_subgroup_g1(&g1).unwrap(), Some(at1), "G1, the last chunk");
    assert_eq!(b.first_outside_subgroup_g2(&g2).unwrap(), Some(at2), "G2, the last chunk");
}
