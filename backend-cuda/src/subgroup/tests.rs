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
use g16_backend::sample::{random_outside_subgroup, random_points, test_rng};
use g16_backend::{G1Projective, G2Projective};
use rand::Rng;

const MAIN: &str = r#"
// Each point's verdict (1: in the subgroup), then the launch's answer.
template <class F> static void run(void (*kernel)(const Affine<F>*, u32, const F*, u32*), unsigned endo_len) {
  const unsigned count = read_u32();
  std::vector<F> endo = read_items<F>(endo_len);
  std::vector<Affine<F>> points = read_items<Affine<F>>(count);
  for (unsigned i = 0; i < count; i++) printf("%d ", in_subgroup(points[i], endo.data()) ? 1 : 0);
  u32 first = 0xffffffffu;
  blockDim.x = 1;
  for (unsigned i = 0; i < count; i++) {
    blockIdx.x = i;
    kernel(points.data(), count, endo.data(), &first);
  }
  printf("\n%u\n", first);
}
int main() {
  char mode[4];
  if (scanf("%3s", mode) != 1) return 2;
  if (!strcmp(mode, "g1")) run<Fq>(g1_subgroup_check, 1); else run<Fq2>(g2_subgroup_check, 2);
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

/// The emulated launch over `points`, against arkworks point by point and the first outside.
fn check<C: SWCurveConfig>(exe: &std::path::Path, curve: &SubgroupCurve<C>, points: &[Affine<C>]) {
    let mode = if curve.affine_words == limbs::G1_WORDS { "g1" } else { "g2" };
    let input = format!(
        "{mode} {}\n{}\n{}\n",
        points.len(),
        hex(&(curve.endo_words)()),
        hex(&to_words(points, curve.affine_words, curve.to_words))
    );
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
    check(&exe, &G1, &mixed::<g1::Config>(40, &mut rng));
    check(&exe, &G1, &random_points::<G1Projective, _>(5, &mut rng));
    check(&exe, &G2, &mixed::<g2::Config>(16, &mut rng));
    check(&exe, &G2, &random_points::<G2Projective, _>(3, &mut rng));
    let _ = std::fs::remove_dir_all(dir);
}
