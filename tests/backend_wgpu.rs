//! The conformance suite on the wgpu backend (lavapipe in CI; any Vulkan, Metal or DX12
//! adapter elsewhere), once per arithmetic path: SHADER_INT64 where the adapter has it, and
//! 32-bit limbs forced. `G16_REQUIRE_WGPU=1` makes a missing adapter a failure.
mod conformance;

use g16_core::backend::{open, BackendKind};

conformance_tests!("wgpu", "G16_REQUIRE_WGPU", conformance::Device::Open(open(BackendKind::Wgpu)));

/// The same suite with the 32-bit path forced, whatever the adapter offers.
mod u32_path {
    use super::conformance;
    use crate::conformance_tests;
    use g16_core::backend::{AnyBackend, WgpuBackend};

    conformance_tests!(
        "wgpu (32-bit path)",
        "G16_REQUIRE_WGPU",
        conformance::Device::Open(WgpuBackend::open_with(0, true).map(AnyBackend::Wgpu))
    );
}
