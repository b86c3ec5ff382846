//! `kernels/curve/subgroup.cu` run on the host: compiled with the field and curve headers by the
//! host's C++ compiler (`G16_HOST_EMULATION`), given the constants this layer passes, each
//! point's verdict compared with arkworks' and the kernel's answer (every point a thread of one
//! launch, in turn) with the first point outside. This checks the tests, the chain of |x| and
//! the constants' words without a GPU; the GPU suite checks the same kernels on the device.
//! Without a C++ compiler it says so loudly and passes, unless `G16_REQUIRE_CXX=1`.

use super::*;
use crate::cxx;
use ark_ec::AffineRepr;
use g16_backend::limbs::to_words;
use g16_backend::sample::{g1_with_order_three_part, random_outside_subgroup, random_points, test_rng};
use g16_backend::{G1Projective, G2Projective};
use rand::Rng;

const MAIN: &str = r#"
// Each item's verdict (1: in the subgroup), then the launch's answer: points (affine) or bucket
// sums (XYZZ).
template <class T, class F> static void run(void (*kernel)(const T*, u32, const F*, u32*), unsigned endo_len) {
  const unsigned count = read_u32();
  std::vector<F> endo = read_items<F>(endo_len);
  std::vector<T> items = read_items<T>(count);
  for (unsigned i = 0; i < count; i++) printf("%d ", in_subgroup(items[i], endo.data()) ? 1 : 0);
  u32 first = 0xffffffffu;
  blockDim.x = 1;
  for (unsigned i = 0; i < count; i++) {
    blockIdx.x = i;
    kernel(items.data(), count, endo.data(), &first);
  }
  printf("\n%u\n", first);
}
// The deal's counting sort: the counts, then each bucket's entries in order (a serial launch
// of one thread a block, so a bucket's entries come in point order).
static void run_deal() {
  const unsigned n = read_u32(), bits = read_u32(), passes = read_u32(), words = read_u32();
  std::vector<u64> deal(n * words);
  std::vector<u32> w = read_items<u32>(n * words * 2);
  memcpy(deal.data(), w.data(), deal.size() * 8);
  const unsigned keys = passes << bits;
  std::vector<u32> counts(keys), cursor(keys), sorted(n * passes);
  blockDim.x = 1; gridDim.x = n;
  for (unsigned i = 0; i < n; i++) { blockIdx.x = i; subgroup_deal_count(deal.data(), n, bits, passes, words, counts.data()); }
  for (unsigned k = 0, at = 0; k < keys; k++) { cursor[k] = at; at += counts[k]; }
  for (unsigned i = 0; i < n; i++) { blockIdx.x = i; subgroup_deal_scatter(deal.data(), n, bits, passes, words, cursor.data(), sorted.data()); }
  for (unsigned k = 0; k < keys; k++) printf("%u ", counts[k]);
  printf("\n");
  for (unsigned j = 0; j < n * passes; j++) printf("%u ", sorted[j]);
  printf("\n");
}
int main() {
  char mode[4];
  if (scanf("%3s", mode) != 1) return 2;
  if (!strcmp(mode, "g1")) run(g1_subgroup_check, 1);
  else if (!strcmp(mode, "g2")) run(g2_subgroup_check, 2);
  else if (!strcmp(mode, "s1")) run(g1_subgroup_check_sums, 1);
  else if (!strcmp(mode, "s2")) run(g2_subgroup_check_sums, 2);
  else run_deal();
  return 0;
}
"#;

fn build() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    use crate::compile::{unit, FP, FQ2, SUBGROUP, XYZZ};
    let kernels = unit(&[FP, FQ2, XYZZ, SUBGROUP]);
    let source = format!("{}\n{kernels}\n{}\n{MAIN}", cxx::SERIAL_LAUNCH, cxx::ITEM_READERS);
    cxx::build_in_temp("the host-emulated subgroup kernels", "host-subgroup", &source)
}

fn hex(words: &[u32]) -> String {
    words.iter().map(|w| format!("{w:x}")).collect::<Vec<_>>().join(" ")
}

#[test]
fn constants_agree_with_the_kernel_source() {
    let source = crate::compile::SUBGROUP.text;
    for (name, value) in [
        ("SUBGROUP_X_ABS", format!("{:#x}ull", g16_backend::subgroup::X_ABS)),
        ("SUBGROUP_THREADS", THREADS.to_string()),
    ] {
        assert!(source.contains(&format!("#define {name} {value}\n")), "subgroup.cu: #define {name} {value}");
    }
    assert!(CHUNK_WORDS % limbs::G2_WORDS == 0 && CHUNK_WORDS / limbs::G1_WORDS < NONE_OUTSIDE as usize);
}

/// A field element's words, as the kernels read them.
type FieldWords<C> = fn(&<C as ark_ec::CurveConfig>::BaseField, &mut [u32]);

/// The emulated launch over `points`, against arkworks point by point and the first outside;
/// with `sums` (the field's words, the rng for Z), the points given as XYZZ bucket sums.
fn check<C: SWCurveConfig>(
    exe: &std::path::Path,
    curve: &SubgroupCurve<C>,
    points: &[Affine<C>],
    sums: Option<(FieldWords<C>, &mut rand_chacha::ChaCha20Rng)>,
) {
    let g1 = curve.affine_words == limbs::G1_WORDS;
    let (mode, words) = match sums {
        None => (if g1 { "g1" } else { "g2" }, to_words(points, curve.affine_words, curve.to_words)),
        Some((field, rng)) => (if g1 { "s1" } else { "s2" }, xyzz_words(points, curve.affine_words / 2, field, rng)),
    };
    let input = format!("{mode} {}\n{}\n{}\n", points.len(), hex(&(curve.endo_words)()), hex(&words));
    let out = cxx::run(exe, &input);
    let mut lines = out.lines();
    let verdicts: Vec<bool> = lines.next().unwrap_or("").split_whitespace().map(|v| v == "1").collect();
    let want: Vec<bool> = points.iter().map(|p| p.is_in_correct_subgroup_assuming_on_curve()).collect();
    assert_eq!(verdicts, want, "{mode}: each point's verdict");
    let first: u32 = lines.next().and_then(|l| l.trim().parse().ok()).expect("the launch's answer");
    let want_first = want.iter().position(|&inside| !inside).map_or(NONE_OUTSIDE, |i| i as u32);
    assert_eq!(first, want_first, "{mode}: the first point outside");
}

/// Subgroup points, identities and points outside, shuffled together.
fn mixed<C: SWCurveConfig>(n: usize, rng: &mut rand_chacha::ChaCha20Rng) -> Vec<Affine<C>>
where
    ark_ec::short_weierstrass::Projective<C>: ark_ec::PrimeGroup,
{
    let mut points = random_points::<ark_ec::short_weierstrass::Projective<C>, _>(n, rng);
    for _ in 0..n / 4 {
        let i = rng.gen_range(0..n);
        points[i] = random_outside_subgroup(rng);
    }
    points[rng.gen_range(0..n)] = Affine::zero();
    points
}

#[test]
fn the_kernels_on_the_host_give_arkworks_verdicts() {
    let Some((dir, exe)) = build() else { return };
    let mut rng = test_rng("the_kernels_on_the_host_give_arkworks_verdicts");
    check(&exe, &G1, &mixed::<g1::Config>(40, &mut rng), None);
    check(&exe, &G1, &random_points::<G1Projective, _>(5, &mut rng), None);
    check(&exe, &G2, &mixed::<g2::Config>(16, &mut rng), None);
    check(&exe, &G2, &random_points::<G2Projective, _>(3, &mut rng), None);
    let _ = std::fs::remove_dir_all(dir);
}

/// Points as bucket sums arrive: XYZZ with a random Z (X = x·z², Y = y·z³, ZZ = z², ZZZ = z³),
/// the identity as (1, 1, 0, 0).
fn xyzz_words<C: SWCurveConfig>(
    points: &[Affine<C>],
    field_words: usize,
    to_words: fn(&C::BaseField, &mut [u32]),
    rng: &mut rand_chacha::ChaCha20Rng,
) -> Vec<u32> {
    use ark_ff::{Field, One, UniformRand, Zero};
    let mut words = vec![0u32; points.len() * 4 * field_words];
    for (p, out) in points.iter().zip(words.chunks_mut(4 * field_words)) {
        let coords = match p.xy() {
            None => [C::BaseField::one(), C::BaseField::one(), C::BaseField::zero(), C::BaseField::zero()],
            Some((x, y)) => {
                let z = C::BaseField::rand(rng);
                let zz = z.square();
                let zzz = zz * z;
                [x * zz, y * zzz, zz, zzz]
            }
        };
        for (c, w) in coords.iter().zip(out.chunks_mut(field_words)) {
            to_words(c, w);
        }
    }
    words
}

#[test]
fn the_sums_kernels_on_the_host_give_arkworks_verdicts() {
    let Some((dir, exe)) = build() else { return };
    let mut rng = test_rng("the_sums_kernels_on_the_host_give_arkworks_verdicts");
    let (fq, fq2) = (limbs::fq_to_words as fn(&_, &mut [u32]), limbs::fq2_to_words as fn(&_, &mut [u32]));
    let g1 = [
        mixed::<g1::Config>(40, &mut rng),
        random_points::<G1Projective, _>(5, &mut rng),
        random_points::<G1Projective, _>(4, &mut rng).into_iter().map(|p| g1_with_order_three_part(p, true)).collect(),
    ];
    for points in g1 {
        check(&exe, &G1, &points, Some((fq, &mut rng)));
    }
    for points in [mixed::<g2::Config>(16, &mut rng), random_points::<G2Projective, _>(3, &mut rng)] {
        check(&exe, &G2, &points, Some((fq2, &mut rng)));
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The deal's count and scatter kernels put each point in the bucket the keystream's layout
/// (`batched::Deal`) gives it, each pass a window of 2^bits buckets, for plans whose bits divide
/// 64 and plans whose do not.
#[test]
fn the_deal_kernels_on_the_host_sort_by_the_keystream() {
    use g16_backend::subgroup::batched::{Deal, Plan};
    let Some((dir, exe)) = build() else { return };
    for (plan, n) in [
        (Plan { bucket_bits: 12, passes: 11 }, 3000),
        (Plan { bucket_bits: 4, passes: 16 }, 500),
        (Plan { bucket_bits: 7, passes: 19 }, 700),
    ] {
        let deal = Deal::new(plan);
        let (words, per_word) = (deal.words_per_point() as usize, plan.passes_per_word() as usize);
        let mut stream = vec![0u32; n * words * 2];
        deal.keystream(0, &mut stream);
        let input = format!("dl {n} {} {} {words}\n{}\n", plan.bucket_bits, plan.passes, hex(&stream));
        let out = cxx::run(&exe, &input);
        let mut lines = out.lines();
        let parse = |l: Option<&str>| -> Vec<usize> {
            l.unwrap_or("").split_whitespace().map(|v| v.parse().unwrap()).collect()
        };
        let (counts, sorted) = (parse(lines.next()), parse(lines.next()));
        let mut want: Vec<Vec<usize>> = vec![Vec::new(); plan.passes as usize * plan.buckets()];
        for i in 0..n {
            for pass in 0..plan.passes as usize {
                let at = 2 * (i * words + pass / per_word);
                let word = u64::from(stream[at]) | u64::from(stream[at + 1]) << 32;
                let bucket = (word >> ((pass % per_word) as u32 * plan.bucket_bits)) as usize & (plan.buckets() - 1);
                want[pass * plan.buckets() + bucket].push(i);
            }
        }
        assert_eq!(counts, want.iter().map(Vec::len).collect::<Vec<_>>(), "{plan:?}: the counts");
        assert_eq!(sorted, want.concat(), "{plan:?}: the entries by bucket");
    }
    let _ = std::fs::remove_dir_all(dir);
}
