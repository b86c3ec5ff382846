//! The conformance suite on the wgpu backend (lavapipe in CI; any Vulkan, Metal or DX12
//! adapter elsewhere), once per arithmetic path — SHADER_INT64 where the adapter has it, and
//! 32-bit limbs forced — and once per formula path: the adapter's default (interpreted on
//! lavapipe, plain on GPUs) and the other one forced, so CI runs both on lavapipe and a GPU
//! machine runs both too. `G16_REQUIRE_WGPU=1` makes a missing adapter a failure.
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

/// The formula path the adapter does not take by default, on both arithmetic paths.
mod other_formulas {
    use super::conformance;
    use g16_core::backend::wgpu::Formulas;
    use g16_core::backend::{AnyBackend, BackendError, WgpuBackend};

    /// The path `open` would not take on adapter 0.
    fn other(force_u32: bool) -> Result<AnyBackend, BackendError> {
        let default = WgpuBackend::open_with(0, force_u32, None)?.device().formulas();
        let other = match default {
            Formulas::Plain => Formulas::Interpreted,
            Formulas::Interpreted => Formulas::Plain,
        };
        WgpuBackend::open_with(0, force_u32, Some(other)).map(AnyBackend::Wgpu)
    }

    mod int64 {
        use super::conformance;
        use crate::conformance_tests;
        conformance_tests!(
            "wgpu (other formula path)",
            "G16_REQUIRE_WGPU",
            conformance::Device::Open(super::other(false)),
            conformance::Sizes::ci_wgpu
        );
    }

    mod u32 {
        use super::conformance;
        use crate::conformance_tests;
        conformance_tests!(
            "wgpu (other formula path, 32-bit)",
            "G16_REQUIRE_WGPU",
            conformance::Device::Open(super::other(true)),
            conformance::Sizes::ci_wgpu
        );
    }
}
