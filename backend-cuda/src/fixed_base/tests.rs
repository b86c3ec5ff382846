//! `kernels/msm/fixed_base.cu` run on the host: compiled with the field and curve headers by
//! the host's C++ compiler (`G16_HOST_EMULATION`), every thread of a launch run in turn, and
//! its points compared with arkworks' s·P. This checks the digits (windows that straddle
//! words), the table's indexing, the thread's stride over the points and the batch inversion
//! (identities among the points) without a GPU; the GPU suite checks the same kernels on the
//! device. Without a C++ compiler it says so loudly and passes, unless `G16_REQUIRE_CXX=1`.

use super::*;
use crate::cxx;
use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::{Field, UniformRand, Zero};
use g16_backend::limbs::to_words;
use g16_backend::sample::test_rng;
use g16_backend::{G1Projective, G2Projective};

const MAIN: &str = r#"
// One launch: every thread in turn.
template <class F> static void run() {
  const unsigned c = read_u32(), windows = read_u32(), per_window = read_u32(), count = read_u32();
  const unsigned threads = read_u32(), table_len = read_u32();
  std::vector<Affine<F>> table = read_items<Affine<F>>(table_len);
  std::vector<u32> scalars = read_items<u32>(count * 8);
  std::vector<Xyzz<F>> sums(count);
  std::vector<F> prefixes(count);
  std::vector<Affine<F>> out(count);
  for (unsigned t = 0; t < threads; t++)
    fixed_base_thread<F>(t, scalars.data(), table.data(), c, windows, per_window, count, threads, sums.data(),
                         prefixes.data(), out.data());
  for (unsigned i = 0; i < count; i++) {
    const u32* w = (const u32*)&out[i];
    for (unsigned k = 0; k < sizeof(Affine<F>) / 4; k++) printf("%x ", w[k]);
    printf("\n");
  }
}
int main() {
  char mode[4];
  if (scanf("%3s", mode) != 1) return 2;
  if (!strcmp(mode, "g1")) run<Fq>(); else run<Fq2>();
  return 0;
}
"#;

fn build() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    use crate::compile::{unit, FIXED_BASE, FP, FQ2, XYZZ};
    let kernels = unit(&[FP, FQ2, XYZZ, FIXED_BASE]);
    let source = format!("{}\n{kernels}\n{}\n{MAIN}", cxx::SERIAL_LAUNCH, cxx::ITEM_READERS);
    cxx::build_in_temp("the host-emulated fixed-base kernel", "host-fixed-base", &source)
}

fn hex(words: &[u32]) -> String {
    words.iter().map(|w| format!("{w:x}")).collect::<Vec<_>>().join(" ")
}

/// The emulated launch of `scalars` with `threads` threads, against s·base.
fn check<C: SWCurveConfig<ScalarField = Fr>>(
    exe: &std::path::Path,
    curve: &FixedBaseCurve<C>,
    base: Projective<C>,
    (c, threads): (u32, u32),
    scalars: &[Fr],
) {
    let plan = FixedBasePlan::with_window(c);
    let table = fixed_base::table(base, plan);
    let mode = if curve.affine_words == limbs::G1_WORDS { "g1" } else { "g2" };
    let input = format!(
        "{mode} {} {} {} {} {threads} {}\n{}\n{}\n",
        plan.c,
        plan.windows,
        plan.per_window(),
        scalars.len(),
        table.len(),
        hex(&to_words(&table, curve.affine_words, curve.to_words)),
        hex(&fixed_base::scalar_words(scalars)),
    );
    let got: Vec<Affine<C>> = cxx::run(exe, &input)
        .lines()
        .map(|l| {
            let w: Vec<u32> = l.split_whitespace().map(|x| u32::from_str_radix(x, 16).expect("hex")).collect();
            (curve.from_words)(&w)
        })
        .collect();
    let want: Vec<Affine<C>> = scalars.iter().map(|s| (base * s).into_affine()).collect();
    assert!(got == want, "{mode}, c = {c}, {threads} threads over {} points", scalars.len());
}

#[test]
fn the_kernel_on_the_host_gives_arkworks_multiples() {
    let Some((dir, exe)) = build() else { return };
    let mut rng = test_rng("the_kernel_on_the_host_gives_arkworks_multiples");
    let edges = [Fr::zero(), Fr::ONE, -Fr::ONE, -Fr::from(2u64), Fr::from(u64::MAX), Fr::from(2u64).pow([254])];
    let scalars: Vec<Fr> = (0..40).map(|i| edges.get(i % 9).copied().unwrap_or_else(|| Fr::rand(&mut rng))).collect();
    let g1 = G1Projective::rand(&mut rng);
    // Windows of 1, 5 and 13 bits (13 straddles words), threads of one point, of several, and
    // more threads than points.
    for (c, threads) in [(1, 40), (5, 3), (13, 8), (13, 64)] {
        check(&exe, &G1, g1, (c, threads), &scalars);
    }
    check(&exe, &G2, G2Projective::generator() * Fr::rand(&mut rng), (7, 4), &scalars[..12]);
    let _ = std::fs::remove_dir_all(dir);
}
