//! What only a real adapter shows (lavapipe in CI), below what the conformance suite
//! (tests/backend.rs) checks: bindings split past the storage-binding limit, dispatches past
//! 65535 workgroups, pipeline creation, the order of the device's spans, shifted bases on
//! small vectors, sparse products and the R1CS check over split bindings, and the NTT's pass
//! planning at every size to 2^20 and on smaller tiles, on both arithmetic paths, the
//! batched subgroup checks in chunks, and uploads through the upload slots.
//! `G16_REQUIRE_WGPU=1` makes a missing adapter a failure.

use std::ops::Range;

use ark_bls12_381::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use ark_ec::{AffineRepr, CurveGroup, PrimeGroup, VariableBaseMSM};
use ark_ff::UniformRand;
use g16_backend::conformance::open_or_skip;
use g16_backend::msm_plan::MsmTuning;
use g16_backend::sample::{random_outside_subgroup, random_points, random_scalars, test_rng};
use g16_backend::sparse::packed::PackedMatrix;
use g16_backend::timeline::{Layer, Timeline};
use g16_backend::{Backend, BackendError, G1Bases, G2Bases, NttKind, ScalarBuffer, Scalars, SparseMatrix};
use g16_wgpu::compile::{Arith, Module, NttTile};
use g16_wgpu::{plan_passes, Elem, G1Buffer, G2Buffer, WgpuBackend, WgpuOptions, SPLIT_SLOTS};
use rand_chacha::ChaCha20Rng;

fn open(options: WgpuOptions) -> Option<WgpuBackend> {
    open_or_skip("wgpu", "G16_REQUIRE_WGPU", WgpuBackend::open(&options))
}

fn reference_ntt(input: &[Fr], kind: NttKind) -> Vec<Fr> {
    let mut v = input.to_vec();
    g16_backend::domain::ntt_in_place(&mut v, kind).expect("a power-of-two length");
    v
}

const MIB: u64 = 1 << 20;

/// Whether the backend's G1 MSM of `scalars[range]` (on the device as `s`) equals arkworks'.
fn g1_agrees(
    b: &WgpuBackend,
    bases: (&G1Bases, &[G1Affine]),
    s: &ScalarBuffer,
    scalars: &[Fr],
    r: Range<usize>,
) -> bool {
    b.msm_g1(bases.0, Scalars::Device(s, r.clone())).unwrap() == G1Projective::msm_unchecked(bases.1, &scalars[r])
}

/// Whether the backend's G2 MSM of `scalars[range]` (on the device as `s`) equals arkworks'.
fn g2_agrees(
    b: &WgpuBackend,
    bases: (&G2Bases, &[G2Affine]),
    s: &ScalarBuffer,
    scalars: &[Fr],
    r: Range<usize>,
) -> bool {
    b.msm_g2(bases.0, Scalars::Device(s, r.clone())).unwrap() == G2Projective::msm_unchecked(bases.1, &scalars[r])
}

#[test]
fn arrays_split_over_bindings_past_the_limit() {
    // 1 MiB bindings: 2^15 Fr, 2^13 G1 and 2^12 G2 bases per buffer; MSM temporaries force
    // sub-MSMs. The sizes below need 2 to 4 buffers per array.
    let Some(b) = open(WgpuOptions { max_binding_bytes: Some(MIB), ..Default::default() }) else { return };
    let mut rng = test_rng("arrays_split_over_bindings_past_the_limit");
    assert_eq!(b.device().binding_bytes(), MIB);
    for log in [16u32, 17] {
        for kind in [NttKind::Forward, NttKind::CosetInverse] {
            let input = random_scalars(1 << log, &mut rng);
            let mut buf = b.upload_scalars(&input).unwrap();
            b.ntt(&mut buf, kind).unwrap();
            assert!(b.download_scalars(&buf).unwrap() == reference_ntt(&input, kind), "{kind:?} of 2^{log}");
        }
    }
    let n = (1 << 13) + 1000;
    let scalars = random_scalars(n, &mut rng);
    let s = b.upload_scalars(&scalars).unwrap();
    let g1 = random_points::<G1Projective, _>(n, &mut rng);
    let b1 = b.upload_g1_bases(&g1).unwrap();
    assert!(g1_agrees(&b, (&b1, &g1), &s, &scalars, 0..n), "G1 over split bindings");
    let m = (1 << 12) + 300;
    let g2 = random_points::<G2Projective, _>(m, &mut rng);
    let b2 = b.upload_g2_bases(&g2).unwrap();
    assert!(g2_agrees(&b, (&b2, &g2), &s, &scalars, n - m..n), "G2 over split bindings");
    // Past SPLIT_SLOTS buffers: a typed error, not a panic.
    assert_eq!(b.max_elements(Elem::Fr), (MIB / 32) * SPLIT_SLOTS as u64);
    let too_many = b.max_elements(Elem::Fr) as usize + 1;
    assert!(matches!(b.alloc_scalars(too_many), Err(BackendError::OutOfMemory { .. })));
}

#[test]
fn bases_past_the_split_bindings_are_uploaded_in_groups() {
    // 256 KiB bindings: a group (SPLIT_SLOTS buffers) holds 4096 G2 or 8192 G1 points, so these
    // vectors are three groups each, and their MSMs sub-MSMs that never cross a group's end.
    let Some(b) = open(WgpuOptions { max_binding_bytes: Some(256 << 10), ..Default::default() }) else { return };
    let mut rng = test_rng("bases_past_the_split_bindings_are_uploaded_in_groups");
    let (g1_group, g2_group) = (8192, 4096);
    assert!(b.max_elements(Elem::G1Affine) == g1_group as u64 && b.max_elements(Elem::G2Affine) == g2_group as u64);
    let (n1, n2) = (2 * g1_group + 300, 2 * g2_group + 150);
    let scalars = edge_scalars(n1, &mut rng);
    let s = b.upload_scalars(&scalars).unwrap();
    let g1 = edge_bases::<G1Projective>(n1, &mut rng, &[0, g1_group, n1 - 1], (g1_group - 1, g1_group + 1));
    let b1 = b.upload_g1_bases(&g1).unwrap();
    assert_eq!(b1.len(), n1);
    assert!(g1_agrees(&b, (&b1, &g1), &s, &scalars, 0..n1), "G1 over three groups");
    let across = g1_group - 50..g1_group + 50;
    assert!(g1_agrees(&b, (&b1, &g1), &s, &scalars, across), "G1 over a range across a group's end");
    let g2 = edge_bases::<G2Projective>(n2, &mut rng, &[g2_group - 1, g2_group], (5, 2 * g2_group - 1));
    let b2 = b.upload_g2_bases(&g2).unwrap();
    assert!(g2_agrees(&b, (&b2, &g2), &s, &scalars, 0..n2), "G2 over three groups");
    assert!(g2_agrees(&b, (&b2, &g2), &s, &scalars, 4000..n2), "G2 over a range from the first group to the last");
}

#[test]
fn uploads_cross_slots_and_bindings() {
    // Upload slots of 50,000 bytes (1,562 scalars, 520 G1 or 260 G2 points a slot: no slot
    // ends where a binding does) and 256 KiB bindings (8,192 scalars, 2,048 G1 or 1,024 G2
    // points a buffer): pieces cut at both, and each value must land where it belongs.
    let options =
        WgpuOptions { max_binding_bytes: Some(256 << 10), upload_slot_bytes: Some(50_000), ..Default::default() };
    let Some(b) = open(options) else { return };
    let mut rng = test_rng("uploads_cross_slots_and_bindings");
    let n = 20_011;
    let scalars = edge_scalars(n, &mut rng);
    for round in 0..2 {
        // Twice: the second upload finds the slots mapped again after their copies.
        let s = b.upload_scalars(&scalars).unwrap();
        assert!(b.download_scalars(&s).unwrap() == scalars, "scalars through the slots, upload {round}");
    }
    let s = b.upload_scalars(&scalars).unwrap();
    let g1 = edge_bases::<G1Projective>(5_003, &mut rng, &[0, 519, 520, 2047, 2048], (1, 5_002));
    let b1 = b.upload_g1_bases(&g1).unwrap();
    assert!(g1_agrees(&b, (&b1, &g1), &s, &scalars, 0..g1.len()), "G1 bases through the slots");
    let g2 = edge_bases::<G2Projective>(2_777, &mut rng, &[259, 260, 1023, 1024], (3, 2_776));
    let b2 = b.upload_g2_bases(&g2).unwrap();
    assert!(g2_agrees(&b, (&b2, &g2), &s, &scalars, 0..g2.len()), "G2 bases through the slots");
}

#[test]
fn dispatches_past_65535_workgroups_use_two_dimensions() {
    let Some(b) = open(WgpuOptions::default()) else { return };
    let limit = b.device().limits().max_compute_workgroups_per_dimension as usize;
    // One thread per element, 64 per workgroup: a few workgroups more than one dimension holds.
    let n = limit * 64 + 5 * 64 + 3;
    let mut rng = test_rng("dispatches_past_65535_workgroups_use_two_dimensions");
    let host = random_scalars(n, &mut rng);
    let k = Fr::rand(&mut rng);
    let mut buf = b.upload_scalars(&host).unwrap();
    b.scale(&mut buf, k).unwrap();
    let got = b.download_scalars(&buf).unwrap();
    // Every element, the last workgroups' included.
    assert!(got.iter().zip(&host).all(|(g, h)| *g == *h * k), "scale over {n} elements");

    // A sparse product whose output (a thread a row) and long rows (a workgroup a row) both
    // take more workgroups than one dimension holds.
    let long = limit + 3;
    let data: Vec<Vec<(Fr, usize)>> =
        (0..long).map(|r| (0..17).map(|i| (Fr::from(1u64), (r + i) % 64)).collect()).collect();
    let m = SparseMatrix::from_rows(64, data.iter().map(Vec::as_slice)).unwrap();
    let z = &host[..64];
    let mut want = vec![Fr::from(0u64); n];
    m.mul_vector_into(z, &mut want);
    let (dm, dz) = (b.upload_matrix(&m).unwrap(), b.upload_scalars(z).unwrap());
    b.spmv(&dm, &dz, &mut buf).unwrap();
    assert!(b.download_scalars(&buf).unwrap() == want, "spmv of {long} long rows into {n}");
}

#[test]
fn every_pipeline_compiles_and_reports_its_time() {
    let Some(b) = open(WgpuOptions::default()) else { return };
    let ms = b.pipelines().prepare_all().unwrap();
    eprintln!("{}: all pipelines in {ms:.0} ms ({:?} path)", b.device().adapter().name, b.device().arith());
    let times = b.pipelines().times();
    for m in Module::ALL {
        assert!(times.iter().any(|(name, t)| *name == m.name() && *t > 0.0), "{} in {times:?}", m.name());
    }
}

#[test]
fn device_spans_are_tagged_and_in_queue_order() {
    let Some(b) = open(WgpuOptions::default()) else { return };
    let tl = Timeline::new();
    b.drain_device_spans();
    let mut buf = b.upload_scalars(&vec![Fr::from(3u64); 1 << 12]).unwrap();
    let first = tl.span(Layer::Prover, "first");
    b.ntt(&mut buf, NttKind::Forward).unwrap();
    let first_id = first.id();
    drop(first);
    let second = tl.span(Layer::Prover, "second");
    b.ntt(&mut buf, NttKind::Inverse).unwrap();
    let second_id = second.id();
    drop(second);
    b.synchronize().unwrap();
    let spans = b.drain_device_spans();
    assert_eq!(spans.len(), 2, "this backend's two NTTs, whatever other tests queue: {spans:?}");
    assert_eq!((spans[0].name.as_str(), spans[1].name.as_str()), ("ntt", "ntt_inverse"));
    assert_eq!((spans[0].parent, spans[1].parent), (Some(first_id), Some(second_id)));
    assert!(spans[0].end_ns <= spans[1].start_ns + spans[1].error_bound_ns, "queued in order, run in order");
    assert!(spans.iter().all(|s| s.device == "wgpu:0"), "{spans:?}");
}

/// Asserts that the backend's NTT of each kind at each size, over fresh random inputs, equals
/// the CPU backend's.
fn assert_ntts_agree(b: &WgpuBackend, logs: &[u32], kinds: &[NttKind], rng: &mut ChaCha20Rng) {
    let tile = NttTile::of(b.device()).unwrap();
    for &log in logs {
        for &kind in kinds {
            let input = random_scalars(1 << log, rng);
            let mut buf = b.upload_scalars(&input).unwrap();
            b.ntt(&mut buf, kind).unwrap();
            let passes = plan_passes(log, tile.log);
            assert!(
                b.download_scalars(&buf).unwrap() == reference_ntt(&input, kind),
                "{kind:?} of 2^{log} on {tile:?}, passes {passes:?}"
            );
        }
    }
}

const ALL_KINDS: [NttKind; 5] =
    [NttKind::Forward, NttKind::Inverse, NttKind::CosetForward, NttKind::CosetInverse, NttKind::OddCosetForward];

#[test]
fn ntt_passes_match_the_cpu_at_every_size_to_2_20() {
    // The device's own tile (lavapipe: 1024 elements): one pass to 2^10, two to 2^16, three
    // past it, so both parities of the pass count and every split of stages up to 2^20.
    let Some(b) = open(WgpuOptions::default()) else { return };
    let tile = NttTile::of(b.device()).unwrap();
    eprintln!("{}: NTT tile {tile:?}", b.device().adapter().name);
    let mut rng = test_rng("ntt_passes_match_the_cpu_at_every_size_to_2_20");
    assert_ntts_agree(&b, &(1..=20).collect::<Vec<_>>(), &[NttKind::Forward, NttKind::Inverse], &mut rng);
}

#[test]
fn ntt_on_webgpu_default_workgroup_storage() {
    // 16 KiB, WebGPU's default: a tile of 512 and no room for padding; every kind.
    let options = WgpuOptions { max_workgroup_bytes: Some(16 << 10), ..Default::default() };
    let Some(b) = open(options) else { return };
    let tile = NttTile::of(b.device()).unwrap();
    assert_eq!((tile.log, tile.shared), (9, 512));
    let mut rng = test_rng("ntt_on_webgpu_default_workgroup_storage");
    assert_ntts_agree(&b, &[1, 2, 8, 9, 10, 13, 17, 18], &ALL_KINDS, &mut rng);
}

#[test]
fn ntt_with_passes_held_to_fewer_stages() {
    // The device's own tile with passes of at most 3 stages (`ntt_max_pass_stages`): 2^12 in
    // four passes, 2^16 in six.
    let options = WgpuOptions { ntt_max_pass_stages: Some(3), ..Default::default() };
    let Some(b) = open(options) else { return };
    let mut rng = test_rng("ntt_with_passes_held_to_fewer_stages");
    assert_ntts_agree(&b, &[11, 12, 16], &[NttKind::Forward, NttKind::CosetInverse], &mut rng);
}

#[test]
fn ntt_on_small_tiles_with_many_passes() {
    // Tiles of 128 (5 KiB: passes of at most 6 stages, padded where a pass has 4 columns or
    // more) and of 4 (128 B: one stage a pass, radix 2 alone), so pass counts of both parities
    // and odd stage counts, with every kind, on both arithmetic paths.
    for (bytes, force_u32, logs) in [(5u32 << 10, false, vec![7, 8, 12, 13, 15]), (128, true, vec![1, 2, 3, 6, 7])] {
        let options = WgpuOptions { max_workgroup_bytes: Some(bytes), force_u32, ..Default::default() };
        let Some(b) = open(options) else { return };
        let mut rng = test_rng("ntt_on_small_tiles_with_many_passes");
        assert_ntts_agree(&b, &logs, &ALL_KINDS, &mut rng);
    }
}

/// Scalars of every kind the shared layout's digits meet: random, zero, one (the ones
/// bucket), r − 1 (every window's digit negative with carries), small, and one value repeated
/// (one bucket a window takes every point).
fn edge_scalars(n: usize, rng: &mut ChaCha20Rng) -> Vec<Fr> {
    let repeated = Fr::rand(rng);
    (0..n)
        .map(|i| match i % 7 {
            0 => Fr::from(0u64),
            1 => Fr::from(1u64),
            2 => -Fr::from(1u64),
            3 => Fr::from(i as u64),
            4 => repeated,
            _ => Fr::rand(rng),
        })
        .collect()
}

/// n random points, the identity at `identities`, and point `from` repeated at `to`.
fn edge_bases<P: CurveGroup + PrimeGroup>(
    n: usize,
    rng: &mut ChaCha20Rng,
    identities: &[usize],
    (from, to): (usize, usize),
) -> Vec<P::Affine> {
    let mut bases = random_points::<P, _>(n, rng);
    for &i in identities {
        bases[i] = P::Affine::zero();
    }
    bases[to] = bases[from];
    bases
}

/// Tables on every base vector from 2^4 points on.
fn small_tables() -> MsmTuning {
    MsmTuning { tables: Some((4, 40)), ..MsmTuning::default() }
}

#[test]
fn shifted_bases_msm_matches_arkworks() {
    // Tables forced onto small vectors, with 1 MiB bindings so that a table spans several
    // buffers and is built over several launches. Bases: random points, the identity twice,
    // one point repeated; MSMs over the whole vector and over a range.
    let options = WgpuOptions { msm: small_tables(), max_binding_bytes: Some(MIB), ..Default::default() };
    let Some(b) = open(options) else { return };
    let mut rng = test_rng("shifted_bases_msm_matches_arkworks");

    let n1 = (1 << 10) + 7;
    let g1 = edge_bases::<G1Projective>(n1, &mut rng, &[5, n1 - 1], (8, 9));
    let b1 = b.upload_g1_bases(&g1).unwrap();
    let c1 = b1.storage::<G1Buffer>(b.id()).unwrap().shifted_window().expect("a G1 table for 2^10 + 7 points");
    let table_entries = g1.len() as u64 * u64::from(256u32.div_ceil(c1));
    assert!(table_entries * Elem::G1Affine.bytes() > MIB, "the table must span several buffers");
    let scalars = edge_scalars(n1, &mut rng);
    let s = b.upload_scalars(&scalars).unwrap();
    assert!(g1_agrees(&b, (&b1, &g1), &s, &scalars, 0..n1), "G1 MSM of {n1} points over shifted bases (c = {c1})");
    assert!(g1_agrees(&b, (&b1, &g1), &s, &scalars, 100..700), "G1 MSM over a range, shifted bases");

    let n2 = 100;
    let g2 = edge_bases::<G2Projective>(n2, &mut rng, &[0], (2, 3));
    let b2 = b.upload_g2_bases(&g2).unwrap();
    let c2 = b2.storage::<G2Buffer>(b.id()).unwrap().shifted_window().expect("a G2 table for 100 points");
    let scalars = edge_scalars(n2, &mut rng);
    let s = b.upload_scalars(&scalars).unwrap();
    assert!(g2_agrees(&b, (&b2, &g2), &s, &scalars, 0..n2), "G2 MSM of {n2} points over shifted bases (c = {c2})");

    // Below the range, and with tables off: the windowed layout.
    let few = b.upload_g1_bases(&g1[..8]).unwrap();
    assert_eq!(few.storage::<G1Buffer>(b.id()).unwrap().shifted_window(), None);
    let off = WgpuOptions { msm: MsmTuning { tables: None, ..MsmTuning::default() }, ..Default::default() };
    let Some(off) = open(off) else { return };
    let all = off.upload_g1_bases(&g1).unwrap();
    assert_eq!(all.storage::<G1Buffer>(off.id()).unwrap().shifted_window(), None);
}

#[test]
fn shifted_bases_on_the_32_bit_path_and_across_sub_msms() {
    // The table kernel and the shared layout on the 32-bit path (adapters without
    // SHADER_INT64), with 64 KiB bindings: tables of 4 buffers built over several launches,
    // and G2's MSM temporaries too large for one binding, so it runs as sub-MSMs whose base
    // offsets index into the table (entry w·len + offset + i): 30 points at c = 8 are 960
    // entries, whose partials (60 tasks + 129 buckets, 384 bytes each) exceed 64 KiB, so two
    // sub-MSMs of 15. Small sizes: the 32-bit path is the slower one on lavapipe.
    let options =
        WgpuOptions { force_u32: true, msm: small_tables(), max_binding_bytes: Some(64 << 10), ..Default::default() };
    let Some(b) = open(options) else { return };
    assert_eq!(b.device().arith(), Arith::U32);
    let mut rng = test_rng("shifted_bases_on_the_32_bit_path_and_across_sub_msms");

    let n1 = 60;
    let g1 = edge_bases::<G1Projective>(n1, &mut rng, &[7], (10, 11));
    let b1 = b.upload_g1_bases(&g1).unwrap();
    assert!(b1.storage::<G1Buffer>(b.id()).unwrap().shifted_window().is_some(), "a G1 table for {n1} points");
    let scalars = edge_scalars(n1, &mut rng);
    let s = b.upload_scalars(&scalars).unwrap();
    assert!(g1_agrees(&b, (&b1, &g1), &s, &scalars, 0..n1), "G1 MSM of {n1} points over shifted bases, 32-bit path");

    let n2 = 30;
    let g2 = edge_bases::<G2Projective>(n2, &mut rng, &[4], (20, 21));
    let b2 = b.upload_g2_bases(&g2).unwrap();
    assert!(b2.storage::<G2Buffer>(b.id()).unwrap().shifted_window().is_some(), "a G2 table for {n2} points");
    let scalars = edge_scalars(n2, &mut rng);
    let s = b.upload_scalars(&scalars).unwrap();
    assert!(g2_agrees(&b, (&b2, &g2), &s, &scalars, 0..n2), "G2 MSM of {n2} points in sub-MSMs, 32-bit path");
    assert!(g2_agrees(&b, (&b2, &g2), &s, &scalars, 3..27), "G2 MSM over a range, shifted bases, 32-bit path");
}

/// A compiled circuit's rows: 0–4 entries mostly, every 2000th row 1000 entries (a long row,
/// one workgroup's), every 2000th + 1 just past the long-row threshold; coefficients 1, −1, 0
/// and now and then a random one.
fn circuit_rows(rows: usize, columns: usize, rng: &mut ChaCha20Rng) -> Vec<Vec<(Fr, usize)>> {
    let below = |rng: &mut ChaCha20Rng, n: u64| (u64::rand(rng) % n) as usize;
    (0..rows)
        .map(|r| {
            let len = match r % 2000 {
                7 => 1000,
                8 => 17,
                _ => below(rng, 5),
            };
            (0..len)
                .map(|_| {
                    let k = match below(rng, 8) {
                        0 => Fr::from(0u64),
                        1 => -Fr::from(1u64),
                        2 => Fr::rand(rng),
                        _ => Fr::from(1u64),
                    };
                    (k, below(rng, columns as u64))
                })
                .collect()
        })
        .collect()
}

#[test]
fn sparse_products_and_the_check_split_over_bindings() {
    // 256 KiB bindings: 8192 Fr or 65536 words a buffer. The output spans 3 buffers, z 2, the
    // matrix's words 3 (an entry's column and slot may lie in two), and the check runs one
    // dispatch a chunk of its vectors. Both arithmetic paths.
    const BINDING: u64 = 256 << 10;
    for force_u32 in [false, true] {
        let options = WgpuOptions { force_u32, max_binding_bytes: Some(BINDING), ..Default::default() };
        let Some(b) = open(options) else { return };
        let mut rng = test_rng("sparse_products_and_the_check_split_over_bindings");
        let (rows, columns, out_len) = (20_000, 10_000, 20_500);
        let data = circuit_rows(rows, columns, &mut rng);
        let m = SparseMatrix::from_rows(columns, data.iter().map(Vec::as_slice)).unwrap();
        let words = PackedMatrix::new(&m, 16).unwrap().words.len() as u64;
        assert!(words > 2 * BINDING / 4 && words < 4 * BINDING / 4, "{words} words: 3 or 4 buffers");
        let z = random_scalars(columns, &mut rng);
        let mut want = vec![Fr::from(0u64); out_len];
        m.mul_vector_into(&z, &mut want);
        let dm = b.upload_matrix(&m).unwrap();
        let dz = b.upload_scalars(&z).unwrap();
        let mut out = b.upload_scalars(&random_scalars(out_len, &mut rng)).unwrap();
        b.drain_device_spans();
        let tl = Timeline::new();
        let guard = tl.span(Layer::Prover, "outer");
        let id = guard.id();
        b.spmv(&dm, &dz, &mut out).unwrap();
        let first = want.iter().take(8).position(|x| *x * x != *x);
        assert_eq!(b.first_unsatisfied([&out, &out, &out], 8).unwrap(), first, "the first row whose a·a ≠ a");
        drop(guard);
        let spans = b.drain_device_spans();
        for name in ["spmv", "r1cs_check"] {
            assert!(spans.iter().any(|s| s.name == name && s.parent == Some(id)), "{name} in {spans:?}");
        }
        assert!(b.download_scalars(&out).unwrap() == want, "spmv over split bindings, u32 path {force_u32}");

        // The check over 3 chunks: failures in one chunk or several, rows ending inside a
        // chunk and at its end.
        let per = (BINDING / 32) as usize;
        let (x, y) = (random_scalars(rows, &mut rng), random_scalars(rows, &mut rng));
        let xy: Vec<Fr> = x.iter().zip(&y).map(|(p, q)| *p * q).collect();
        let (dx, dy) = (b.upload_scalars(&x).unwrap(), b.upload_scalars(&y).unwrap());
        let dxy = b.upload_scalars(&xy).unwrap();
        assert_eq!(b.first_unsatisfied([&dx, &dy, &dxy], rows).unwrap(), None);
        for (first, later) in [(per + 5, Some(2 * per + 1)), (2 * per, None), (per - 1, Some(per)), (0, Some(rows - 1))]
        {
            let mut broken = xy.clone();
            broken[first] += Fr::from(1u64);
            if let Some(l) = later {
                broken[l] += Fr::from(1u64);
            }
            let dc = b.upload_scalars(&broken).unwrap();
            assert_eq!(b.first_unsatisfied([&dx, &dy, &dc], rows).unwrap(), Some(first), "u32 path {force_u32}");
            assert_eq!(b.first_unsatisfied([&dx, &dy, &dc], first).unwrap(), None, "rows below {first}");
        }
        for cut in [per, per + 1, 2 * per] {
            let mut broken = xy.clone();
            broken[cut] += Fr::from(1u64);
            let dc = b.upload_scalars(&broken).unwrap();
            assert_eq!(b.first_unsatisfied([&dx, &dy, &dc], cut).unwrap(), None, "rows ending at {cut}");
            assert_eq!(b.first_unsatisfied([&dx, &dy, &dc], cut + 1).unwrap(), Some(cut));
        }

        // A matrix past the split bindings' words: a typed error.
        let ones: Vec<Vec<(Fr, usize)>> = (0..100_000).map(|r| vec![(Fr::from(1u64), r % columns)]).collect();
        let big = SparseMatrix::from_rows(columns, ones.iter().map(Vec::as_slice)).unwrap();
        assert!(matches!(b.upload_matrix(&big), Err(BackendError::OutOfMemory { .. })));
    }
}

#[test]
fn subgroup_checks_run_on_the_device_in_chunks_and_name_the_first_bad_point() {
    // 2 MiB bindings: the batched check's keys and partials cut 2^14 G1 points into chunks of a
    // few thousand and 2^12 G2 points into chunks of about a thousand; each chunk's buckets are
    // summed on the device (a `subgroup_g1` / `_g2` device span a chunk), lavapipe included.
    let options =
        WgpuOptions { max_binding_bytes: Some(2 * MIB), subgroup_on_device: Some(true), ..Default::default() };
    let Some(b) = open(options) else { return };
    let mut rng = test_rng("subgroup_checks_run_on_the_device_in_chunks_and_name_the_first_bad_point");
    let sums_spans = |b: &WgpuBackend, name: &str| b.drain_device_spans().iter().filter(|s| s.name == name).count();
    let n = (1 << 14) + 7;
    let mut g1 = random_points::<G1Projective, _>(n, &mut rng);
    g1[3] = G1Affine::zero();
    b.drain_device_spans();
    assert_eq!(b.first_outside_subgroup_g1(&g1).unwrap(), None, "G1: {n} subgroup points");
    let chunks = sums_spans(&b, "subgroup_g1");
    assert!(chunks >= 2, "G1: {chunks} chunks summed on the device");
    // One bad point near the end, in the last chunk; then an earlier one, and a pair whose
    // parts outside the subgroup cancel, both before it.
    let last = n - 2;
    g1[last] = random_outside_subgroup(&mut rng);
    assert_eq!(b.first_outside_subgroup_g1(&g1).unwrap(), Some(last), "G1: one bad point in the last chunk");
    let (i, j) = (n / 3, n / 3 + 5);
    g1[i] = g16_backend::sample::g1_with_order_three_part(g1[i], false);
    g1[j] = g16_backend::sample::g1_with_order_three_part(g1[j], true);
    assert_eq!(b.first_outside_subgroup_g1(&g1).unwrap(), Some(i), "G1: a cancelling pair mid-way");
    let m = (1 << 12) + 5;
    let mut g2 = random_points::<G2Projective, _>(m, &mut rng);
    b.drain_device_spans();
    assert_eq!(b.first_outside_subgroup_g2(&g2).unwrap(), None, "G2: {m} subgroup points");
    let chunks = sums_spans(&b, "subgroup_g2");
    assert!(chunks >= 2, "G2: {chunks} chunks summed on the device");
    let bad = m / 2 + 1;
    g2[bad] = random_outside_subgroup(&mut rng);
    g2[m - 1] = random_outside_subgroup(&mut rng);
    assert_eq!(b.first_outside_subgroup_g2(&g2).unwrap(), Some(bad), "G2: the first of two bad points");
}

/// The conformance suite's subgroup checks with the checks on the device, which a software
/// adapter leaves to the host by default, on both arithmetic paths.
#[test]
fn subgroup_checks_on_the_device_match_the_host() {
    for force_u32 in [false, true] {
        let options = WgpuOptions { force_u32, subgroup_on_device: Some(true), ..Default::default() };
        let Some(b) = open(options) else { return };
        g16_backend::conformance::subgroup_checks_match_the_host(&b, &g16_backend::conformance::Sizes::ci_wgpu());
    }
}
