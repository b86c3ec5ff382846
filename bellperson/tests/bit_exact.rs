//! bellpepper circuits compiled by g16 from their blank instances, their witnesses generated
//! alone, their bellperson parameters read through g16's key loading, proved on every backend
//! this build has: each proof equals bellperson's `create_proof` for the same (r, s), byte for
//! byte, and bellperson's verifier accepts it. `G16_REQUIRE_WGPU=1` / `G16_REQUIRE_CUDA=1` make a
//! missing backend a failure.

mod common;

use common::{mimc, parts, proofs_equal_bellperson, sha};
use g16::backend::CpuBackend;

mod cpu {
    use super::*;

    #[test]
    fn mimc_equals_bellperson() {
        proofs_equal_bellperson(&CpuBackend::new(), mimc(), &[1, 2]);
    }

    #[test]
    fn sha256_equals_bellperson() {
        proofs_equal_bellperson(&CpuBackend::new(), sha(), &[1]);
    }

    #[test]
    fn parts_joined_by_extend_equal_bellperson() {
        proofs_equal_bellperson(&CpuBackend::new(), parts(), &[1, 2, 3]);
    }
}

/// The compiled kernels cached beside the build, so only the first test compiles them.
#[allow(dead_code)] // reason: unused in a build without GPU backends
fn settings() -> g16::settings::Settings {
    g16::settings::Settings {
        cache_dir: Some(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("g16-cache")),
        ..Default::default()
    }
}

/// The three circuits on a GPU backend, opened by `open` or SKIPPED loudly (`require`).
#[allow(unused_macros)] // reason: unused in a build without GPU backends
macro_rules! gpu_tests {
    ($name:literal, $require:literal, $kind:expr) => {
        use super::*;
        use g16::backend::conformance::open_or_skip;

        fn backend() -> Option<g16::AnyBackend> {
            open_or_skip($name, $require, g16::backends::open($kind, &settings()))
        }

        #[test]
        fn mimc_equals_bellperson() {
            let Some(b) = backend() else { return };
            proofs_equal_bellperson(&b, mimc(), &[3]);
        }

        #[test]
        fn sha256_equals_bellperson() {
            let Some(b) = backend() else { return };
            proofs_equal_bellperson(&b, sha(), &[2]);
        }

        #[test]
        fn parts_joined_by_extend_equal_bellperson() {
            let Some(b) = backend() else { return };
            proofs_equal_bellperson(&b, parts(), &[4]);
        }
    };
}

#[cfg(feature = "wgpu")]
mod wgpu {
    gpu_tests!("wgpu", "G16_REQUIRE_WGPU", g16::backend::BackendKind::Wgpu);
}

#[cfg(feature = "cuda")]
mod cuda {
    gpu_tests!("cuda", "G16_REQUIRE_CUDA", g16::backend::BackendKind::Cuda);
}
