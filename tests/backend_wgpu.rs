//! The conformance suite on the wgpu backend (lavapipe in CI; any Vulkan, Metal or DX12
//! adapter elsewhere), once per arithmetic path — SHADER_INT64 where the adapter has it, and
//! 32-bit limbs forced — on the default (interpreted) formula path, plus the plain formula
//! path's G1 MSMs. `G16_REQUIRE_WGPU=1` makes a missing adapter a failure.
mod conformance;

use g16_core::backend::{open, BackendKind};

conformance_tests!(
    "wgpu",
    "G16_REQUIRE_WGPU",
    conformance::Device::Open(open(BackendKind::Wgpu)),
    conformance::Sizes::ci_wgpu
);

/// The same suite with the 32-bit path forced, whatever the adapter offers.
mod u32_path {
    use super::conformance;
    use crate::conformance_tests;
    use g16_core::backend::{AnyBackend, WgpuBackend};

    conformance_tests!(
        "wgpu (32-bit path)",
        "G16_REQUIRE_WGPU",
        conformance::Device::Open(WgpuBackend::open_with(0, true, None).map(AnyBackend::Wgpu)),
        conformance::Sizes::ci_wgpu
    );
}

/// The plain formula path (opt-in; `Formulas::Plain` says why it is not the default) on this
/// adapter: its G1 kernels against arkworks, every scalar edge case, on the 64-bit path where
/// the adapter has it. G1 only: llvmpipe compiles the plain G1 module in about 90 s on CI's 2
/// cores and the G2 one in more than 13 minutes (the host test `plain_functions_compute_the_
/// group_law` checks G2's formulas, naga validates its module). On a GPU machine,
/// `G16_WGPU_FORMULAS=plain` runs the whole suite above on this path.
#[test]
fn plain_formulas_msm_g1_matches_arkworks() {
    use g16_core::backend::wgpu::Formulas;
    use g16_core::backend::{AnyBackend, WgpuBackend};
    let device = WgpuBackend::open_with(0, false, Some(Formulas::Plain)).map(AnyBackend::Wgpu);
    if let Some(b) =
        conformance::open_or_skip("wgpu (plain formulas)", "G16_REQUIRE_WGPU", conformance::Device::Open(device))
    {
        let sizes = conformance::Sizes {
            msm_g1: vec![1, 2, 3, 100, (1 << 10) + 7, 1 << 12],
            ..conformance::Sizes::from_env_or(conformance::Sizes::ci_wgpu)
        };
        conformance::msm_g1_matches_arkworks(&b, &sizes);
    }
}
