//! The conformance suite on the CPU backend (it compares arkworks with arkworks underneath,
//! so it mostly checks the suite and the staging and range logic around it).
mod conformance;

use g16_core::backend::{open, BackendKind};

conformance_tests!("cpu", "G16_REQUIRE_CPU", conformance::Device::Open(open(BackendKind::Cpu)));
