//! The conformance suite on the wgpu backend (lavapipe in CI; any Vulkan, Metal or DX12
//! adapter elsewhere), once per arithmetic path — SHADER_INT64 where the adapter has it, and
//! 32-bit limbs forced — on the default (interpreted) formula path, plus the plain formula
//! path's G1 MSMs, and the lazy Fq2 product's G2 MSMs on both arithmetic paths.
//! `G16_REQUIRE_WGPU=1` makes a missing adapter a failure.

use g16_core::backend::conformance::{self, open_or_skip};
use g16_wgpu::WgpuBackend;

g16_core::conformance_tests!("wgpu", "G16_REQUIRE_WGPU", WgpuBackend::open(0), conformance::Sizes::ci_wgpu);

/// The same suite with the 32-bit path forced, whatever the adapter offers.
mod u32_path {
    use g16_core::backend::conformance;
    use g16_wgpu::WgpuBackend;

    g16_core::conformance_tests!(
        "wgpu (32-bit path)",
        "G16_REQUIRE_WGPU",
        WgpuBackend::open_with(0, true, None),
        conformance::Sizes::ci_wgpu
    );

    #[test]
    fn fq2_lazy_msm_g2_matches_arkworks() {
        super::fq2_lazy_msm_g2(true);
    }
}

/// The lazy Fq2 product (`G16_WGPU_FQ2_LAZY=1`; off by default until it is measured on a GPU)
/// on the 64-bit path where the adapter has it: G2 MSMs against arkworks with every scalar
/// edge case (zero, one, r − 1, bits, skewed, ...), the identity and repeated bases. Both the
/// accumulation (mixed additions) and the window reduction (XYZZ additions and doublings) run
/// the lazy programs. The device is opened with the option, not the environment variable, so
/// no test races another on process-wide state. The edge operands of the Fq2 product itself
/// (limbs p − 1, zero, one, c0's negative case) are checked on the host, limb for limb, by
/// g16-wgpu's `formulas::tests::fq2_products_on_edge_operands`.
#[test]
fn fq2_lazy_msm_g2_matches_arkworks() {
    fq2_lazy_msm_g2(false);
}

fn ci_int64() -> conformance::Sizes {
    conformance::Sizes { msm_g2: vec![1, 2, 3, 100, (1 << 10) + 7], ..conformance::Sizes::ci_wgpu() }
}

fn ci_u32() -> conformance::Sizes {
    conformance::Sizes { msm_g2: vec![1, 2, 3, 100], ..conformance::Sizes::ci_wgpu() }
}

fn fq2_lazy_msm_g2(force_u32: bool) {
    use g16_wgpu::Formulas;
    let device = WgpuBackend::open_with(0, force_u32, Some(Formulas::InterpretedLazy));
    let name = if force_u32 { "wgpu (lazy Fq2, 32-bit path)" } else { "wgpu (lazy Fq2)" };
    if let Some(w) = open_or_skip(name, "G16_REQUIRE_WGPU", device) {
        assert_eq!(w.device().formulas(), Formulas::InterpretedLazy);
        let u32_path = w.device().arith().name() == "u32";
        assert_eq!(u32_path, force_u32 || !w.device().adapter().shader_int64);
        let b = w;
        // CI: G2 to 2^10 + 7 on the 64-bit path (2^12 adds ~the same again on lavapipe and
        // nothing new), to 100 on the 32-bit one (it differs only in `mac`, which every size
        // exercises); G16_CONFORMANCE=large: the large sizes (to 2^20) on both.
        let ci = if force_u32 { ci_u32 } else { ci_int64 };
        let sizes = conformance::Sizes::from_env_or(ci);
        conformance::msm_g2_matches_arkworks(&b, &sizes);
    }
}

/// The plain formula path (opt-in; `Formulas::Plain` says why it is not the default) on this
/// adapter: its G1 kernels against arkworks, every scalar edge case, on the 64-bit path where
/// the adapter has it. G1 only: llvmpipe compiles the plain G1 module in about 90 s on CI's 2
/// cores and the G2 one in more than 13 minutes (the host test `plain_functions_compute_the_
/// group_law` checks G2's formulas, naga validates its module). On a GPU machine,
/// `G16_WGPU_FORMULAS=plain` runs the whole suite above on this path.
#[test]
fn plain_formulas_msm_g1_matches_arkworks() {
    use g16_wgpu::Formulas;
    let device = WgpuBackend::open_with(0, false, Some(Formulas::Plain));
    if let Some(b) = open_or_skip("wgpu (plain formulas)", "G16_REQUIRE_WGPU", device) {
        let sizes = conformance::Sizes {
            msm_g1: vec![1, 2, 3, 100, (1 << 10) + 7, 1 << 12],
            ..conformance::Sizes::from_env_or(conformance::Sizes::ci_wgpu)
        };
        conformance::msm_g1_matches_arkworks(&b, &sizes);
    }
}
