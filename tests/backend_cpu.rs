//! The conformance suite on the CPU backend (it compares arkworks with arkworks underneath,
//! so it mostly checks the suite and the staging and range logic around it).

use g16_core::backend::{BackendError, CpuBackend};

g16_core::conformance_tests!("cpu", "G16_REQUIRE_CPU", Ok::<_, BackendError>(CpuBackend::new()));
