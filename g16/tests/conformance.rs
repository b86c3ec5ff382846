//! The conformance suite through the library, on every backend this build has: the operations'
//! half (the contract's, `g16_backend::conformance`) on the CPU backend, whose GPU siblings run it
//! in their own crates, and the proofs' half (`g16::conformance`: keys and proofs made on the
//! backend, bit for bit arkworks') on the CPU, wgpu (both arithmetic paths) and CUDA.
//! `G16_REQUIRE_WGPU=1` / `G16_REQUIRE_CUDA=1` make a missing backend a failure.

use g16::backend::{BackendError, BackendKind, CpuBackend};
use g16::settings::Settings;

/// The defaults, with compiled kernels cached beside the build, so only the first test compiles.
#[allow(dead_code)] // reason: unused in a build without GPU backends
fn settings() -> Settings {
    Settings { cache_dir: Some(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("g16-cache")), ..Settings::default() }
}

/// The operations' half on the CPU backend (it compares arkworks with arkworks underneath, so it
/// mostly checks the suite and the staging and range logic around it).
mod cpu_operations {
    use super::*;
    g16::backend::conformance_tests!("cpu", "G16_REQUIRE_CPU", Ok::<_, BackendError>(CpuBackend::new()));
}

mod cpu_proofs {
    use super::*;
    g16::proof_conformance_tests!("cpu", "G16_REQUIRE_CPU", Ok::<_, BackendError>(CpuBackend::new()));
}

#[cfg(feature = "wgpu")]
mod wgpu_proofs {
    use super::*;
    g16::proof_conformance_tests!("wgpu", "G16_REQUIRE_WGPU", g16::backends::open(BackendKind::Wgpu, &settings()));

    /// The 32-bit path forced, whatever the adapter offers.
    mod u32_path {
        use super::*;
        fn u32_settings() -> Settings {
            let mut s = settings();
            s.wgpu.force_u32 = true;
            s
        }
        g16::proof_conformance_tests!(
            "wgpu (32-bit path)",
            "G16_REQUIRE_WGPU",
            g16::backends::open(BackendKind::Wgpu, &u32_settings())
        );
    }
}

#[cfg(feature = "cuda")]
mod cuda_proofs {
    use super::*;
    g16::proof_conformance_tests!("cuda", "G16_REQUIRE_CUDA", g16::backends::open(BackendKind::Cuda, &settings()));
}
