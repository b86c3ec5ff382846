//! What only the engine can show, on a real adapter (lavapipe in CI): bindings split past the
//! storage-binding limit, dispatches past 65535 workgroups, pipeline creation, typed errors,
//! timing. Correctness against arkworks on both arithmetic paths is the conformance suite's
//! (`tests/backend_wgpu.rs` at the workspace root).

use ark_bls12_381::{Fr, G1Projective, G2Projective};
use ark_ec::{CurveGroup, PrimeGroup, VariableBaseMSM};
use ark_ff::{FftField, UniformRand};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use g16_core::backend::NttKind;
use g16_wgpu::shader::{Elem, Module, SPLIT_SLOTS};
use g16_wgpu::{Options, WgpuDevice, WgpuError};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn open(options: Options) -> Option<WgpuDevice> {
    match WgpuDevice::open(&options) {
        Ok(d) => Some(d),
        Err(e) => {
            if std::env::var("G16_REQUIRE_WGPU").as_deref() == Ok("1") {
                panic!("wgpu required (G16_REQUIRE_WGPU=1) but unavailable: {e}");
            }
            eprintln!("\n!!! SKIPPED: wgpu unavailable: {e} (set G16_REQUIRE_WGPU=1 to make this a failure)\n");
            None
        }
    }
}

fn rng() -> ChaCha20Rng {
    let seed: u64 = std::env::var("G16_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    eprintln!("G16_TEST_SEED={seed}");
    ChaCha20Rng::seed_from_u64(seed)
}

fn points<P: CurveGroup + PrimeGroup>(n: usize, rng: &mut ChaCha20Rng) -> Vec<P::Affine> {
    let p = P::generator() * P::ScalarField::rand(rng);
    let q = P::generator() * P::ScalarField::rand(rng);
    let v: Vec<P> = (0..n).map(|i| p + q * P::ScalarField::from(i as u64)).collect();
    P::normalize_batch(&v)
}

fn reference_ntt(input: &[Fr], kind: NttKind) -> Vec<Fr> {
    let d = Radix2EvaluationDomain::<Fr>::new(input.len()).unwrap();
    let c = d.get_coset(Fr::GENERATOR).unwrap();
    match kind {
        NttKind::Forward => d.fft(input),
        NttKind::Inverse => d.ifft(input),
        NttKind::CosetForward => c.fft(input),
        NttKind::CosetInverse => c.ifft(input),
    }
}

const MIB: u64 = 1 << 20;

#[test]
fn arrays_split_over_bindings_past_the_limit() {
    // 1 MiB bindings: 2^15 Fr, 2^13 G1 and 2^12 G2 bases per buffer; MSM temporaries force
    // sub-MSMs. The sizes below need 2 to 4 buffers per array.
    let Some(dev) = open(Options { max_binding_bytes: Some(MIB), ..Default::default() }) else { return };
    let mut rng = rng();
    assert_eq!(dev.binding_bytes(), MIB);
    for log in [16u32, 17] {
        for kind in [NttKind::Forward, NttKind::CosetInverse] {
            let input: Vec<Fr> = (0..1usize << log).map(|_| Fr::rand(&mut rng)).collect();
            let mut buf = dev.upload_fr(&input).unwrap();
            dev.ntt(&mut buf, kind, "ntt", None).unwrap();
            assert!(
                dev.download_fr(&buf).unwrap() == reference_ntt(&input, kind),
                "{kind:?} of 2^{log} over split bindings"
            );
        }
    }
    let n = (1 << 13) + 1000;
    let scalars: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    let s = dev.upload_fr(&scalars).unwrap();
    let g1 = points::<G1Projective>(n, &mut rng);
    let b1 = dev.upload_g1(&g1).unwrap();
    assert!(
        dev.msm_g1(&b1, &s, 0..n, None).unwrap() == G1Projective::msm_unchecked(&g1, &scalars),
        "G1 over split bindings"
    );
    let m = (1 << 12) + 300;
    let g2 = points::<G2Projective>(m, &mut rng);
    let b2 = dev.upload_g2(&g2).unwrap();
    let range = n - m..n;
    assert!(
        dev.msm_g2(&b2, &s, range.clone(), None).unwrap() == G2Projective::msm_unchecked(&g2, &scalars[range]),
        "G2 over split bindings"
    );
    // Past SPLIT_SLOTS buffers: a typed error, not a panic.
    let too_many = dev.max_elements(Elem::Fr) as usize + 1;
    assert!(matches!(dev.alloc_fr(too_many), Err(WgpuError::TooLarge { .. })));
    assert_eq!(dev.max_elements(Elem::Fr), (MIB / 32) * SPLIT_SLOTS as u64);
}

#[test]
fn dispatches_past_65535_workgroups_use_two_dimensions() {
    let Some(dev) = open(Options::default()) else { return };
    let limit = dev.limits().max_compute_workgroups_per_dimension as usize;
    // One thread per element, 64 per workgroup: a few workgroups more than one dimension holds.
    let n = limit * 64 + 5 * 64 + 3;
    let mut rng = rng();
    let host: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    let k = Fr::rand(&mut rng);
    let mut buf = dev.upload_fr(&host).unwrap();
    dev.scale(&mut buf, k, None).unwrap();
    let got = dev.download_fr(&buf).unwrap();
    // Every element, the last workgroups' included.
    assert!(got.iter().zip(&host).all(|(g, h)| *g == *h * k), "scale over {n} elements");
}

#[test]
fn every_pipeline_compiles_and_reports_its_time() {
    let Some(dev) = open(Options::default()) else { return };
    let ms = dev.prepare_all_pipelines().unwrap();
    eprintln!("{}: all pipelines in {ms:.0} ms ({:?} path)", dev.adapter().name, dev.arith());
    let times = dev.pipeline_times();
    for m in Module::ALL {
        assert!(times.iter().any(|(name, t)| *name == m.name() && *t > 0.0), "{} in {times:?}", m.name());
    }
}

#[test]
fn bad_input_gives_typed_errors() {
    let Some(dev) = open(Options::default()) else { return };
    for n in [0usize, 1, 3, 12] {
        let mut buf = dev.upload_fr(&vec![Fr::from(1u64); n]).unwrap();
        assert!(matches!(dev.ntt(&mut buf, NttKind::Forward, "ntt", None), Err(WgpuError::NttSize { .. })), "{n}");
    }
    let s = dev.upload_fr(&[Fr::from(2u64); 8]).unwrap();
    let b = dev.upload_g1(&points::<G1Projective>(4, &mut rng())).unwrap();
    assert!(matches!(dev.msm_g1(&b, &s, 0..8, None), Err(WgpuError::LengthMismatch { .. })));
    assert!(matches!(dev.msm_g1(&b, &s, 6..10, None), Err(WgpuError::OutOfRange { .. })));
    let mut a = dev.upload_fr(&[Fr::from(2u64); 8]).unwrap();
    let short = dev.upload_fr(&[Fr::from(2u64); 7]).unwrap();
    assert!(matches!(dev.mul_assign(&mut a, &short, None), Err(WgpuError::LengthMismatch { .. })));
}

#[test]
fn device_spans_are_tagged_ordered_and_on_the_host_clock() {
    let Some(dev) = open(Options::default()) else { return };
    let before = Options::default().clock;
    let t0 = before();
    let mut buf = dev.upload_fr(&vec![Fr::from(3u64); 1 << 12]).unwrap();
    dev.ntt(&mut buf, NttKind::Forward, "ntt", Some(7)).unwrap();
    dev.ntt(&mut buf, NttKind::Inverse, "ntt_inverse", Some(8)).unwrap();
    dev.synchronize().unwrap();
    let t1 = before();
    let spans = dev.drain_spans().unwrap();
    let ntt: Vec<_> = spans.iter().filter(|s| s.name.starts_with("ntt")).collect();
    assert_eq!(ntt.len(), 2, "{spans:?}");
    assert_eq!((ntt[0].tag, ntt[1].tag), (Some(7), Some(8)));
    for s in &ntt {
        assert!(s.start_ns <= s.end_ns);
        // Within the host window that enclosed the work, up to the calibration's error bound.
        assert!(s.start_ns + s.error_bound_ns >= t0 && s.end_ns <= t1 + s.error_bound_ns, "{s:?} not in [{t0}, {t1}]");
    }
    assert!(ntt[0].end_ns <= ntt[1].start_ns + ntt[1].error_bound_ns, "queued in order, run in order");
    assert!(dev.drain_spans().unwrap().is_empty(), "drain empties");
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

#[test]
fn shifted_bases_msm_matches_arkworks() {
    // Tables forced onto small vectors (2^4 points and up), with 1 MiB bindings so that a
    // table spans several buffers and is built over several launches. Bases: random points,
    // the identity twice, one point repeated; MSMs over the whole vector and over a range.
    let options = Options { msm_tables: Some((4, 40)), max_binding_bytes: Some(MIB), ..Default::default() };
    let Some(dev) = open(options) else { return };
    let mut rng = rng();

    let n1 = (1 << 10) + 7;
    let mut g1 = points::<G1Projective>(n1, &mut rng);
    g1[5] = Default::default();
    g1[n1 - 1] = Default::default();
    g1[9] = g1[8];
    let b1 = dev.upload_g1(&g1).unwrap();
    let c1 = b1.shifted_window().expect("a G1 table for 2^10 + 7 points");
    let table_entries = g1.len() as u64 * u64::from(255u32.div_ceil(c1));
    assert!(table_entries * Elem::G1Affine.bytes() > MIB, "the table must span several buffers");
    let scalars = edge_scalars(n1, &mut rng);
    let s = dev.upload_fr(&scalars).unwrap();
    assert!(
        dev.msm_g1(&b1, &s, 0..n1, None).unwrap() == G1Projective::msm_unchecked(&g1, &scalars),
        "G1 MSM of {n1} points over shifted bases (c = {c1})"
    );
    let range = 100..700;
    assert!(
        dev.msm_g1(&b1, &s, range.clone(), None).unwrap() == G1Projective::msm_unchecked(&g1, &scalars[range]),
        "G1 MSM over a range, shifted bases"
    );

    let n2 = 100;
    let mut g2 = points::<G2Projective>(n2, &mut rng);
    g2[0] = Default::default();
    g2[3] = g2[2];
    let b2 = dev.upload_g2(&g2).unwrap();
    let c2 = b2.shifted_window().expect("a G2 table for 100 points");
    let scalars = edge_scalars(n2, &mut rng);
    let s = dev.upload_fr(&scalars).unwrap();
    assert!(
        dev.msm_g2(&b2, &s, 0..n2, None).unwrap() == G2Projective::msm_unchecked(&g2, &scalars),
        "G2 MSM of {n2} points over shifted bases (c = {c2})"
    );

    // Below the range, and with tables off: the windowed layout, the same results.
    let few = dev.upload_g1(&g1[..8]).unwrap();
    assert_eq!(few.shifted_window(), None);
    let Some(off) = open(Options { msm_tables: Some((0, 0)), ..Default::default() }) else { return };
    assert_eq!(off.upload_g1(&g1).unwrap().shifted_window(), None);
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
        Options { force_u32: true, msm_tables: Some((4, 40)), max_binding_bytes: Some(64 << 10), ..Default::default() };
    let Some(dev) = open(options) else { return };
    assert_eq!(dev.arith(), g16_wgpu::Arith::U32);
    let mut rng = rng();

    let n1 = 60;
    let mut g1 = points::<G1Projective>(n1, &mut rng);
    g1[7] = Default::default();
    g1[11] = g1[10];
    let b1 = dev.upload_g1(&g1).unwrap();
    assert!(b1.shifted_window().is_some(), "a G1 table for {n1} points");
    let scalars = edge_scalars(n1, &mut rng);
    let s = dev.upload_fr(&scalars).unwrap();
    assert!(
        dev.msm_g1(&b1, &s, 0..n1, None).unwrap() == G1Projective::msm_unchecked(&g1, &scalars),
        "G1 MSM of {n1} points over shifted bases, 32-bit path"
    );

    let n2 = 30;
    let mut g2 = points::<G2Projective>(n2, &mut rng);
    g2[4] = Default::default();
    g2[21] = g2[20];
    let b2 = dev.upload_g2(&g2).unwrap();
    assert!(b2.shifted_window().is_some(), "a G2 table for {n2} points");
    let scalars = edge_scalars(n2, &mut rng);
    let s = dev.upload_fr(&scalars).unwrap();
    assert!(
        dev.msm_g2(&b2, &s, 0..n2, None).unwrap() == G2Projective::msm_unchecked(&g2, &scalars),
        "G2 MSM of {n2} points over shifted bases in sub-MSMs, 32-bit path"
    );
    let range = 3..27;
    assert!(
        dev.msm_g2(&b2, &s, range.clone(), None).unwrap() == G2Projective::msm_unchecked(&g2, &scalars[range]),
        "G2 MSM over a range, shifted bases, 32-bit path"
    );
}
