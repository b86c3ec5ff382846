//! The conformance suite on the wgpu backend (lavapipe in CI; any Vulkan, Metal or DX12
//! adapter elsewhere), once per arithmetic path: SHADER_INT64 where the adapter has it, and
//! 32-bit limbs forced. `G16_REQUIRE_WGPU=1` makes a missing adapter a failure.

use g16_backend::conformance;
use g16_wgpu::{WgpuBackend, WgpuOptions};

g16_backend::conformance_tests!(
    "wgpu",
    "G16_REQUIRE_WGPU",
    WgpuBackend::open(&WgpuOptions::default()),
    conformance::Sizes::ci_wgpu
);

/// The same suite with the 32-bit path forced, whatever the adapter offers.
mod u32_path {
    use g16_backend::conformance;
    use g16_wgpu::{WgpuBackend, WgpuOptions};

    g16_backend::conformance_tests!(
        "wgpu (32-bit path)",
        "G16_REQUIRE_WGPU",
        WgpuBackend::open(&WgpuOptions { force_u32: true, ..Default::default() }),
        conformance::Sizes::ci_wgpu
    );
}
