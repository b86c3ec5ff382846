//! The backend conformance suite: written once, run for every backend (cargo feature
//! `conformance`).
//!
//! Each check compares a backend's operations with arkworks (the CPU reference) on fresh random
//! inputs and on the edge cases docs/design.md lists, and checks the timing contract every
//! backend's device spans keep. Whole keys and proofs, which need the prover above this crate,
//! are checked by the library's half of the suite (`g16::conformance`). A backend's test file
//! instantiates this half with one line:
//!
//! ```text
//! g16_backend::conformance_tests!("cpu", "G16_REQUIRE_CPU", Ok::<_, BackendError>(CpuBackend::new()));
//! ```
//!
//! Sizes: `Sizes::ci()` by default; `G16_CONFORMANCE=large` selects the sizes of the GPU
//! machine (NTT to 2^24, MSM G1 to 2^24, G2 to 2^20, subgroup checks past 2^22 G1 and 2^21 G2
//! points). The seed of every check is printed; `G16_TEST_SEED` replays it.

use crate::buffer::{DeviceBuffer, Element, Scalars};
use crate::contract::Backend;
use crate::curve::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use crate::domain::NttKind;
use crate::error::{BackendError, BackendResult};
use crate::sample::{random_outside_subgroup, random_points, random_scalars, test_rng};
use crate::sparse::SparseMatrix;
use crate::subgroup;
use crate::timeline::{Layer, Timeline};
use ark_bls12_381::{g1, g2};
use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{Field, UniformRand, Zero};
use rand_chacha::ChaCha20Rng;

pub struct Sizes {
    pub ntt_logs: Vec<u32>,
    pub msm_g1: Vec<usize>,
    pub msm_g2: Vec<usize>,
    /// Points of the long vectors of the subgroup checks, G1 and G2.
    pub subgroup_g1: usize,
    pub subgroup_g2: usize,
}

impl Sizes {
    pub fn ci() -> Sizes {
        Sizes {
            ntt_logs: (1..=14).collect(),
            msm_g1: vec![1, 2, 3, 100, (1 << 10) + 7, 1 << 12],
            msm_g2: vec![1, 2, 3, 100, (1 << 10) + 7],
            subgroup_g1: (1 << 12) + 3,
            subgroup_g2: (1 << 10) + 3,
        }
    }

    /// The wgpu backend's CI sizes (the issue's: NTT to 2^16, MSM G1 to 2^14, G2 to 2^12),
    /// larger than the other backends' where lavapipe is fast enough to afford them.
    pub fn ci_wgpu() -> Sizes {
        Sizes {
            ntt_logs: (1..=16).collect(),
            msm_g1: vec![1, 2, 3, 100, (1 << 10) + 7, 1 << 12, 1 << 14],
            msm_g2: vec![1, 2, 3, 100, (1 << 10) + 7, 1 << 12],
            ..Sizes::ci()
        }
    }

    pub fn large() -> Sizes {
        Sizes {
            ntt_logs: (1..=24).collect(),
            msm_g1: vec![1, 2, 3, 100, (1 << 10) + 7, 1 << 16, 1 << 20, 1 << 24],
            msm_g2: vec![1, 2, 3, 100, (1 << 10) + 7, 1 << 16, 1 << 20],
            // Past 2^22 G1 and 2^21 G2 points: more than one of CUDA's chunks.
            subgroup_g1: (1 << 22) + 5,
            subgroup_g2: (1 << 21) + 5,
        }
    }

    pub fn from_env() -> Sizes {
        Sizes::from_env_or(Sizes::ci)
    }

    /// `large` where `G16_CONFORMANCE=large`, else the backend's CI sizes.
    pub fn from_env_or(ci: fn() -> Sizes) -> Sizes {
        match std::env::var("G16_CONFORMANCE").as_deref() {
            Ok("large") => Sizes::large(),
            _ => ci(),
        }
    }
}

/// Opens the backend or explains loudly why the test did not run; with `require_var` set to 1
/// in the environment (CI, the GPU machine) a missing backend is a failure, never a skip.
pub fn open_or_skip<B>(name: &str, require_var: &str, opened: BackendResult<B>) -> Option<B> {
    match opened {
        Ok(b) => Some(b),
        Err(e) => {
            if std::env::var(require_var).as_deref() == Ok("1") {
                panic!("{name} backend required ({require_var}=1) but unavailable: {e}");
            }
            eprintln!("\n!!! SKIPPED: {name} backend unavailable: {e} (set {require_var}=1 to make this a failure)\n");
            None
        }
    }
}

fn reference_ntt(input: &[Fr], kind: NttKind) -> Vec<Fr> {
    let mut v = input.to_vec();
    crate::domain::ntt_in_place(&mut v, kind).expect("a power-of-two length");
    v
}

pub fn ntt_matches_arkworks<B: Backend + ?Sized>(b: &B, sizes: &Sizes) {
    let mut rng = test_rng("ntt_matches_arkworks");
    for &log in &sizes.ntt_logs {
        let n = 1usize << log;
        for kind in NttKind::ALL {
            let input = random_scalars(n, &mut rng);
            let mut buf = b.upload_scalars(&input).expect("upload");
            b.ntt(&mut buf, kind).expect("ntt");
            let got = b.download_scalars(&buf).expect("download");
            assert!(got == reference_ntt(&input, kind), "{kind:?} of 2^{log} differs from arkworks");
        }
    }
    // Edge inputs: all zero, a single one (a delta), all equal.
    for input in [vec![Fr::zero(); 16], (0..16).map(|i| Fr::from((i == 3) as u64)).collect(), vec![-Fr::ONE; 16]] {
        for kind in NttKind::ALL {
            let mut buf = b.upload_scalars(&input).expect("upload");
            b.ntt(&mut buf, kind).expect("ntt");
            assert_eq!(b.download_scalars(&buf).expect("download"), reference_ntt(&input, kind), "{kind:?} edge");
        }
    }
}

pub fn ntt_rejects_bad_lengths<B: Backend + ?Sized>(b: &B) {
    for n in [0usize, 1, 3, 12, 1000] {
        let mut buf = b.upload_scalars(&vec![Fr::ONE; n]).expect("upload");
        assert!(matches!(b.ntt(&mut buf, NttKind::Forward), Err(BackendError::NttSize { .. })), "length {n}");
    }
}

pub fn pointwise_ops_match<B: Backend + ?Sized>(b: &B) {
    let mut rng = test_rng("pointwise_ops_match");
    for n in [1usize, 7, 1 << 12, (1 << 12) + 3] {
        let (x, y, z) = (random_scalars(n, &mut rng), random_scalars(n, &mut rng), random_scalars(n, &mut rng));
        let k = Fr::rand(&mut rng);
        let (dy, dz) = (b.upload_scalars(&y).unwrap(), b.upload_scalars(&z).unwrap());
        let mut d = b.upload_scalars(&x).unwrap();
        b.mul_assign(&mut d, &dy).unwrap();
        assert_eq!(b.download_scalars(&d).unwrap(), (0..n).map(|i| x[i] * y[i]).collect::<Vec<_>>(), "mul n={n}");
        b.sub_assign(&mut d, &dz).unwrap();
        b.scale(&mut d, k).unwrap();
        let want: Vec<Fr> = (0..n).map(|i| (x[i] * y[i] - z[i]) * k).collect();
        assert_eq!(b.download_scalars(&d).unwrap(), want, "mul/sub/scale n={n}");
        let mut d = b.upload_scalars(&x).unwrap();
        b.quotient(&mut d, &dy, &dz, k).unwrap();
        assert_eq!(b.download_scalars(&d).unwrap(), want, "quotient n={n}");
    }
    let mut d = b.upload_scalars(&[Fr::ONE; 4]).unwrap();
    let short = b.upload_scalars(&[Fr::ONE; 3]).unwrap();
    assert!(matches!(b.mul_assign(&mut d, &short), Err(BackendError::LengthMismatch { .. })));
}

fn reference_msm<P>(bases: &[P::MulBase], scalars: &[Fr]) -> P
where
    P: VariableBaseMSM<ScalarField = Fr>,
{
    P::msm_unchecked(bases, scalars)
}

/// The scalar patterns every MSM must get right.
fn scalar_cases(n: usize, rng: &mut ChaCha20Rng) -> Vec<(&'static str, Vec<Fr>)> {
    let minus_one = -Fr::ONE; // r − 1
    let shared = Fr::rand(rng);
    let bits: Vec<Fr> = (0..n).map(|_| Fr::from(u64::rand(rng) & 1)).collect();
    vec![
        ("random", random_scalars(n, rng)),
        ("zero", vec![Fr::zero(); n]),
        ("one", vec![Fr::ONE; n]),
        ("r-1", vec![minus_one; n]),
        ("all equal", vec![shared; n]),
        // Mostly 0/1 with a few full-width values: a hash circuit's witness.
        ("bits", bits.iter().enumerate().map(|(i, b)| if i % 17 == 5 { Fr::rand(rng) } else { *b }).collect()),
        // Skewed: 90 % share one value (so one bucket per window is enormous).
        ("skewed", (0..n).map(|i| if i % 10 == 9 { Fr::rand(rng) } else { shared }).collect()),
        (
            "mixed edges",
            (0..n).map(|i| [Fr::zero(), Fr::ONE, minus_one, Fr::from(2u64), Fr::rand(rng)][i % 5]).collect(),
        ),
    ]
}

/// Random bases with the identity and repeated points woven in.
fn bases_with_edges<P: CurveGroup + ark_ec::PrimeGroup>(n: usize, rng: &mut ChaCha20Rng) -> Vec<P::Affine> {
    let mut bases = random_points::<P, _>(n, rng);
    if n > 2 {
        bases[1] = P::Affine::zero();
        bases[2] = bases[0];
    }
    if n > 100 {
        let repeated = bases[50];
        for b in bases.iter_mut().skip(60).step_by(7) {
            *b = repeated;
        }
    }
    bases
}

/// MSMs of every size in `sizes` against arkworks, with every scalar case (random scalars only
/// above 2^16, where each arkworks reference is costly); host scalars too up to `host_up_to`.
/// `upload` and `msm` are the backend's calls for the group `P`, named `group`.
fn msm_matches_arkworks<P, B, T>(
    b: &B,
    (group, sizes, host_up_to): (&str, &[usize], usize),
    upload: impl Fn(&B, &[P::Affine]) -> BackendResult<DeviceBuffer<T>>,
    msm: impl Fn(&B, &DeviceBuffer<T>, Scalars<'_>) -> BackendResult<P>,
) where
    P: CurveGroup<ScalarField = Fr> + ark_ec::PrimeGroup + VariableBaseMSM<MulBase = P::Affine>,
    B: Backend + ?Sized,
    T: Element,
{
    let mut rng = test_rng(&format!("msm_{}_matches_arkworks", group.to_lowercase()));
    for &n in sizes {
        let bases = bases_with_edges::<P>(n, &mut rng);
        let dev_bases = upload(b, &bases).expect("upload bases");
        let cases = if n > 1 << 16 {
            scalar_cases(n, &mut rng).into_iter().take(1).collect()
        } else {
            scalar_cases(n, &mut rng)
        };
        for (name, scalars) in cases {
            let want: P = reference_msm(&bases, &scalars);
            let dev = b.upload_scalars(&scalars).expect("upload scalars");
            let got = msm(b, &dev_bases, Scalars::Device(&dev, 0..n)).expect("msm");
            assert!(got == want, "{group} MSM n={n} '{name}' differs");
            if n <= host_up_to {
                let host = msm(b, &dev_bases, Scalars::Host(&scalars)).expect("msm");
                assert!(host == want, "{group} MSM of host scalars n={n} '{name}' differs");
            }
        }
    }
}

pub fn msm_g1_matches_arkworks<B: Backend + ?Sized>(b: &B, sizes: &Sizes) {
    let sizes = ("G1", &sizes.msm_g1[..], 1 << 12);
    msm_matches_arkworks::<G1Projective, _, _>(b, sizes, |b, p| b.upload_g1_bases(p), |b, d, s| b.msm_g1(d, s));
}

pub fn msm_g2_matches_arkworks<B: Backend + ?Sized>(b: &B, sizes: &Sizes) {
    let sizes = ("G2", &sizes.msm_g2[..], 0);
    msm_matches_arkworks::<G2Projective, _, _>(b, sizes, |b, p| b.upload_g2_bases(p), |b, d, s| b.msm_g2(d, s));
}

/// The scalars every fixed-base multiplication must get right: 0, 1, 2, −1 = r − 1, r − 2,
/// values whose bits end at 32- and 64-bit word boundaries (where windows straddle words),
/// then random ones.
fn fixed_base_scalars(n: usize, rng: &mut ChaCha20Rng) -> Vec<Fr> {
    let edges = [
        Fr::zero(),
        Fr::ONE,
        Fr::from(2u64),
        -Fr::ONE,
        -Fr::from(2u64),
        Fr::from(u64::from(u32::MAX)),
        Fr::from(u64::MAX),
        Fr::from(2u64).pow([128]) - Fr::ONE,
        Fr::from(2u64).pow([254]),
    ];
    (0..n).map(|i| edges.get(i).copied().unwrap_or_else(|| Fr::rand(rng))).collect()
}

/// s·P by double-and-add, independent of any windowed method.
fn naive_fixed_base<P: CurveGroup<ScalarField = Fr>>(base: P, scalars: &[Fr]) -> Vec<P::Affine> {
    P::normalize_batch(&scalars.iter().map(|s| base * s).collect::<Vec<_>>())
}

/// Fixed-base multiplications against double-and-add on fresh random bases: the edge scalars,
/// several batches in one call (one table for all), an empty batch, lengths that are not
/// powers of two, and the identity as the base.
pub fn fixed_base_matches_arkworks<B: Backend + ?Sized>(b: &B) {
    let mut rng = test_rng("fixed_base_matches_arkworks");
    let (x, y, z) =
        (fixed_base_scalars(300, &mut rng), fixed_base_scalars(9, &mut rng), fixed_base_scalars(1037, &mut rng));
    let batches: [&[Fr]; 4] = [&x, &[], &y, &z];
    let g1 = G1Projective::rand(&mut rng);
    let got = b.fixed_base_g1(g1, &batches).expect("fixed_base_g1");
    assert_eq!(got.len(), batches.len());
    for (k, (g, s)) in got.iter().zip(batches).enumerate() {
        assert!(*g == naive_fixed_base(g1, s), "G1 batch {k} of {} scalars differs", s.len());
    }
    let g2 = G2Projective::rand(&mut rng);
    let got = b.fixed_base_g2(g2, &[&z[..257], &y]).expect("fixed_base_g2");
    assert!(got[0] == naive_fixed_base(g2, &z[..257]), "G2 differs");
    assert!(got[1] == naive_fixed_base(g2, &y), "G2 edge scalars differ");
    let zero = b.fixed_base_g1(G1Projective::zero(), &[&y]).expect("identity base");
    assert!(zero[0].iter().all(|p| p.is_zero()), "multiples of the identity");
    assert!(b.fixed_base_g2(g2, &[]).expect("no batches").is_empty());
}

/// MSMs over sub-ranges of device scalars against longer bases, as the prover runs L and H.
pub fn msm_ranges_and_errors<B: Backend + ?Sized>(b: &B) {
    let mut rng = test_rng("msm_ranges_and_errors");
    let n = 300;
    let bases = random_points::<G1Projective, _>(n, &mut rng);
    let g2 = random_points::<G2Projective, _>(n, &mut rng);
    let scalars = random_scalars(n, &mut rng);
    let (db, dg2, ds) =
        (b.upload_g1_bases(&bases).unwrap(), b.upload_g2_bases(&g2).unwrap(), b.upload_scalars(&scalars).unwrap());
    for range in [0..0, 0..1, 17..300, 299..300, 5..250] {
        let len = range.len();
        let want1: G1Projective = reference_msm(&bases[..len], &scalars[range.clone()]);
        let want2: G2Projective = reference_msm(&g2[..len], &scalars[range.clone()]);
        assert!(b.msm_g1(&db, Scalars::Device(&ds, range.clone())).unwrap() == want1, "G1 range {range:?}");
        assert!(b.msm_g2(&dg2, Scalars::Device(&ds, range.clone())).unwrap() == want2, "G2 range {range:?}");
    }
    assert!(matches!(b.msm_g1(&db, Scalars::Device(&ds, 290..310)), Err(BackendError::OutOfRange { .. })));
    let short = b.upload_g1_bases(&bases[..10]).unwrap();
    assert!(matches!(b.msm_g1(&short, Scalars::Device(&ds, 0..11)), Err(BackendError::LengthMismatch { .. })));
    let empty: Vec<G1Affine> = Vec::new();
    let db0 = b.upload_g1_bases(&empty).unwrap();
    assert!(b.msm_g1(&db0, Scalars::Host(&[])).unwrap().is_zero());
    let _: Vec<G2Affine> = Vec::new();
}

/// Random sparse rows over `columns`: empty rows, single entries, long rows (a thousand
/// entries, as a hash circuit's packing rows), repeated columns, and coefficients 0, 1, r − 1
/// and random.
fn sparse_rows(rows: usize, columns: usize, rng: &mut ChaCha20Rng) -> Vec<Vec<(Fr, usize)>> {
    use rand::Rng;
    let coeff = |rng: &mut ChaCha20Rng| match rng.gen_range(0..6u32) {
        0 => Fr::zero(),
        1 | 2 => Fr::ONE,
        3 => -Fr::ONE,
        _ => Fr::rand(rng),
    };
    (0..rows)
        .map(|r| {
            let len = match r % 97 {
                0 => 0,
                1 => 1000,
                2 => 3,
                _ => rng.gen_range(0..6),
            };
            let mut row: Vec<(Fr, usize)> = (0..len).map(|_| (coeff(rng), rng.gen_range(0..columns))).collect();
            if r % 97 == 2 {
                row[1].1 = row[0].1; // a repeated column: its products add up
            }
            row
        })
        .collect()
}

/// `spmv` against the host's product, on shapes that stress a device's row mapping: rows not a
/// power of two, an output longer than the matrix (its tail becomes zero), a narrow matrix over
/// a longer vector; and the operands' errors.
pub fn spmv_matches_the_host<B: Backend + ?Sized>(b: &B) {
    let mut rng = test_rng("spmv_matches_the_host");
    for (rows, columns, out_len) in [(1, 1, 1), (5, 3, 8), (1000, 700, 1024), (4099, 5000, 8192)] {
        let rows_data = sparse_rows(rows, columns, &mut rng);
        let m = SparseMatrix::from_rows(columns, rows_data.iter().map(Vec::as_slice)).expect("matrix");
        let z = random_scalars(columns + 3, &mut rng);
        let mut want = vec![Fr::zero(); out_len];
        m.mul_vector_into(&z, &mut want);
        let dm = b.upload_matrix(&m).expect("upload matrix");
        assert_eq!(dm.len(), rows);
        let dz = b.upload_scalars(&z).expect("upload z");
        // The output starts as garbage: rows past the matrix must be cleared.
        let mut out = b.upload_scalars(&random_scalars(out_len, &mut rng)).expect("upload out");
        b.spmv(&dm, &dz, &mut out).expect("spmv");
        assert!(b.download_scalars(&out).expect("download") == want, "spmv {rows}x{columns} into {out_len}");
    }
    let m = SparseMatrix::from_rows(4, [&[(Fr::ONE, 3)][..], &[]]).expect("matrix");
    let dm = b.upload_matrix(&m).expect("upload");
    let short_z = b.upload_scalars(&[Fr::ONE; 3]).unwrap();
    let mut out = b.upload_scalars(&[Fr::ONE; 2]).unwrap();
    assert!(matches!(b.spmv(&dm, &short_z, &mut out), Err(BackendError::LengthMismatch { .. })), "z too short");
    let z = b.upload_scalars(&[Fr::ONE; 4]).unwrap();
    let mut short_out = b.upload_scalars(&[Fr::ONE; 1]).unwrap();
    assert!(matches!(b.spmv(&dm, &z, &mut short_out), Err(BackendError::LengthMismatch { .. })), "out too short");
}

/// `first_unsatisfied` finds the first row where a·b ≠ c, looks no further than `rows`, and
/// finds none in a satisfied system.
pub fn first_unsatisfied_finds_the_first_row<B: Backend + ?Sized>(b: &B) {
    use rand::Rng;
    let mut rng = test_rng("first_unsatisfied_finds_the_first_row");
    for n in [1usize, 7, 4096, 70_001] {
        let a = random_scalars(n, &mut rng);
        let bv = random_scalars(n, &mut rng);
        let c: Vec<Fr> = a.iter().zip(&bv).map(|(x, y)| *x * y).collect();
        let (da, db) = (b.upload_scalars(&a).unwrap(), b.upload_scalars(&bv).unwrap());
        let dc = b.upload_scalars(&c).unwrap();
        assert_eq!(b.first_unsatisfied([&da, &db, &dc], n).unwrap(), None, "satisfied, n={n}");
        let first = rng.gen_range(0..n);
        let mut broken = c.clone();
        broken[first] += Fr::ONE;
        if first + 1 < n {
            let later = rng.gen_range(first + 1..n);
            broken[later] += Fr::ONE;
        }
        let dc = b.upload_scalars(&broken).unwrap();
        assert_eq!(b.first_unsatisfied([&da, &db, &dc], n).unwrap(), Some(first), "n={n}");
        assert_eq!(b.first_unsatisfied([&da, &db, &dc], first).unwrap(), None, "rows below the first failure");
        assert!(b.first_unsatisfied([&da, &db, &dc], n + 1).is_err(), "rows past the vectors");
    }
}

/// `first_outside_subgroup_g1` and `_g2` against the host's checks on fresh random points: none,
/// the identity alone, short vectors that mix subgroup points, identities and points on the
/// curve outside the subgroup; then one outsider in the middle of `sizes.subgroup_g1` (`_g2`)
/// points, found at its index, and several, of which the lowest is found; and a pair of G1
/// points whose parts outside the subgroup cancel, found at the first.
pub fn subgroup_checks_match_the_host<B: Backend + ?Sized>(b: &B, sizes: &Sizes) {
    let mut rng = test_rng("subgroup_checks_match_the_host");
    let g1 = ("G1", sizes.subgroup_g1);
    subgroup_check_matches::<g1::Config, _>(b, g1, &mut rng, |b, p| b.first_outside_subgroup_g1(p));
    let g2 = ("G2", sizes.subgroup_g2);
    subgroup_check_matches::<g2::Config, _>(b, g2, &mut rng, |b, p| b.first_outside_subgroup_g2(p));
    // A pair whose parts outside G1 cancel (P + T and Q − T, T of order 3): a batched check
    // that put both in one bucket in every pass would pass it.
    use rand::Rng;
    let n = sizes.subgroup_g1;
    let mut points = random_points::<G1Projective, _>(n, &mut rng);
    let (i, j) = (rng.gen_range(0..n / 2), rng.gen_range(n / 2..n));
    points[i] = crate::sample::g1_with_order_three_part(points[i], false);
    points[j] = crate::sample::g1_with_order_three_part(points[j], true);
    assert!((points[i] + points[j]).into_affine().is_in_correct_subgroup_assuming_on_curve());
    assert_eq!(
        b.first_outside_subgroup_g1(&points).expect("subgroup check"),
        Some(i),
        "G1: a cancelling pair among {n} points"
    );
}

fn subgroup_check_matches<C: SWCurveConfig, B: Backend + ?Sized>(
    b: &B,
    (group, n): (&str, usize),
    rng: &mut ChaCha20Rng,
    check: impl Fn(&B, &[Affine<C>]) -> BackendResult<Option<usize>>,
) {
    use rand::Rng;
    let first = |points: &[Affine<C>]| check(b, points).expect("subgroup check");
    assert_eq!(first(&[]), None, "{group}: no points");
    assert_eq!(first(&[Affine::zero()]), None, "{group}: the identity");
    let inside = random_points::<Projective<C>, _>(64, rng);
    assert_eq!(first(&inside), None, "{group}: subgroup points");
    for len in [1, 2, 3, 31, 64, 200] {
        let points: Vec<Affine<C>> = (0..len)
            .map(|_| match rng.gen_range(0..16u32) {
                0 => Affine::zero(),
                1 => random_outside_subgroup(rng),
                _ => inside[rng.gen_range(0..inside.len())],
            })
            .collect();
        assert_eq!(first(&points), subgroup::first_outside(&points), "{group}: {len} mixed points");
    }
    let mut points = random_points::<Projective<C>, _>(n, rng);
    points[1] = Affine::zero();
    let middle = n / 2;
    points[middle] = random_outside_subgroup(rng);
    assert_eq!(first(&points), Some(middle), "{group}: one outsider among {n} points");
    let (earlier, later) = (rng.gen_range(2..middle), rng.gen_range(middle..n));
    for i in [n - 1, later, earlier] {
        points[i] = random_outside_subgroup(rng);
    }
    assert_eq!(first(&points), Some(earlier), "{group}: the lowest of several outsiders among {n} points");
}

/// The timing contract, which the report relies on to name unattributed time:
/// - an empty window is empty: a host span that queues no device work gets no device span,
///   and a drain right after a drain returns nothing;
/// - real work is measured: an NTT's device span is under the host span that queued it, has
///   length, and lies inside that host span's window (give or take its error bound);
/// - a parent covers its children: where an operation reports phases (`msm_g1.digits`, …)
///   beside its whole span (`msm_g1`), the whole span holds the union of the phases.
pub fn timing_contract<B: Backend + ?Sized>(b: &B) {
    let mut rng = test_rng("timing_contract");
    let tl = Timeline::new();
    let n = 1 << 10;
    let bases = b.upload_g1_bases(&random_points::<G1Projective, _>(n, &mut rng)).unwrap();
    let scalars = b.upload_scalars(&random_scalars(n, &mut rng)).unwrap();
    b.synchronize().unwrap();
    b.drain_device_spans();
    assert!(b.drain_device_spans().is_empty(), "a drain after a drain is empty");

    let empty = tl.span(Layer::Prover, "empty");
    let empty_id = empty.id();
    drop(empty);
    b.synchronize().unwrap();
    let spans = b.drain_device_spans();
    assert!(spans.iter().all(|s| s.parent != Some(empty_id)), "an empty window has no device span: {spans:?}");

    let outer = tl.span(Layer::Prover, "outer");
    let (id, host_start) = (outer.id(), crate::timeline::now_ns());
    let mut buf = b.upload_scalars(&random_scalars(n, &mut rng)).unwrap();
    b.ntt(&mut buf, NttKind::Forward).unwrap();
    let _ = b.msm_g1(&bases, Scalars::Device(&scalars, 0..n)).unwrap();
    b.synchronize().unwrap();
    let host_end = crate::timeline::now_ns();
    drop(outer);
    let spans = b.drain_device_spans();
    let ntt = spans.iter().find(|s| s.name == "ntt").unwrap_or_else(|| panic!("no ntt span in {spans:?}"));
    let msm = spans.iter().find(|s| s.name == "msm_g1").unwrap_or_else(|| panic!("no msm_g1 span in {spans:?}"));
    for s in [ntt, msm] {
        assert_eq!(s.parent, Some(id), "{s:?}");
        assert!(s.end_ns >= s.start_ns, "{s:?}");
        let slack = s.error_bound_ns + 1_000;
        assert!(s.start_ns + slack >= host_start && s.end_ns <= host_end + slack, "outside its host window: {s:?}");
    }
    let phases: Vec<_> = spans.iter().filter(|s| s.name.starts_with("msm_g1.")).collect();
    for p in &phases {
        let slack = p.error_bound_ns + msm.error_bound_ns;
        assert!(
            p.start_ns + slack >= msm.start_ns && p.end_ns <= msm.end_ns + slack,
            "a phase outside its MSM: {p:?} in {msm:?}"
        );
    }
    let covered: u64 = union_ns(phases.iter().map(|p| (p.start_ns, p.end_ns)));
    assert!(msm.end_ns - msm.start_ns + 2 * msm.error_bound_ns >= covered, "the MSM shorter than its phases");
}

/// The length of the union of intervals.
fn union_ns(intervals: impl Iterator<Item = (u64, u64)>) -> u64 {
    let mut v: Vec<(u64, u64)> = intervals.collect();
    v.sort_unstable();
    let (mut total, mut end) = (0u64, 0u64);
    for (s, e) in v {
        let s = s.max(end);
        if e > s {
            total += e - s;
            end = e;
        }
    }
    total
}

pub fn device_spans_are_reported<B: Backend + ?Sized>(b: &B) {
    let tl = Timeline::new();
    b.drain_device_spans();
    let guard = tl.span(Layer::Prover, "outer");
    let mut buf = b.upload_scalars(&[Fr::from(3u64); 1 << 10]).unwrap();
    b.ntt(&mut buf, NttKind::Forward).unwrap();
    b.synchronize().unwrap();
    let id = guard.id();
    drop(guard);
    let spans = b.drain_device_spans();
    let ntt: Vec<_> = spans.iter().filter(|s| s.name.starts_with("ntt")).collect();
    assert!(!ntt.is_empty(), "an NTT span is reported: {spans:?}");
    assert!(ntt.iter().all(|s| s.parent == Some(id) && s.end_ns >= s.start_ns), "{ntt:?}");
}

/// One `#[test]` per check, for the backend `open` yields (a `Result<B, BackendError>`).
/// `require` names the variable that turns "unavailable" into a failure; `ci`, if given, the
/// backend's CI sizes (default `Sizes::ci`).
#[macro_export]
macro_rules! conformance_tests {
    ($name:literal, $require:literal, $open:expr) => {
        $crate::conformance_tests!($name, $require, $open, $crate::conformance::Sizes::ci);
    };
    ($name:literal, $require:literal, $open:expr, $ci:expr) => {
        fn backend() -> Option<impl $crate::contract::Backend> {
            $crate::conformance::open_or_skip($name, $require, $open)
        }
        fn sizes() -> $crate::conformance::Sizes {
            $crate::conformance::Sizes::from_env_or($ci)
        }
        use $crate::conformance as __suite;
        $crate::__conformance_checks!(
            ntt_matches_arkworks(sizes),
            ntt_rejects_bad_lengths,
            pointwise_ops_match,
            msm_g1_matches_arkworks(sizes),
            msm_g2_matches_arkworks(sizes),
            msm_ranges_and_errors,
            fixed_base_matches_arkworks,
            spmv_matches_the_host,
            first_unsatisfied_finds_the_first_row,
            subgroup_checks_match_the_host(sizes),
            device_spans_are_reported,
            timing_contract,
        );
    };
}

/// A `#[test]` for each check named, on the caller's `backend()` and, where the check takes
/// sizes, its `sizes()`: `__suite::check(&backend, &sizes())`, where the caller has brought its
/// suite's module in as `__suite` (this one's, or the library's half).
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_checks {
    ($($check:ident $(($sizes:ident))?),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                if let Some(b) = backend() {
                    __suite::$check(&b $(, &$sizes())?);
                }
            }
        )*
    };
}
