//! g16-wgpu: g16's WGSL backend, on wgpu.
//!
//! Design rules:
//! - It implements `g16_core`'s `Backend` trait ([`WgpuBackend`]) and depends on nothing of
//!   g16 but that contract.
//! - One WGSL source per job in `shaders/`, composed per arithmetic path (SHADER_INT64 or
//!   32-bit limbs) and validated by naga in the tests; modules are small and compiled lazily.
//! - No binding exceeds the adapter's limit: large arrays are split over several bindings,
//!   large MSMs over several launches; dispatches past 65535 workgroups use two dimensions.
//! - Every operation is timed by the device itself (timestamp queries), mapped onto the
//!   caller's clock with an error bound, and tagged with the caller's span.
//! - Every failure is a typed [`WgpuError`]; wgpu's validation errors are captured, never
//!   turned into panics.

mod backend;
mod cache;
pub mod device;
mod field_wgsl;
pub mod formulas;
pub mod msm;
pub mod ntt;
mod scratch;
pub mod shader;
pub mod timing;

pub use backend::{device_count, hardware_device_count, WgpuBackend, ARITH_ENV};
pub use device::{list_adapters, AdapterSummary, Options, WgpuDevice, MSM_TABLES_DEFAULT};
pub use msm::{G1Buffer, G2Buffer};
pub use ntt::FrBuffer;
pub use shader::{Arith, Formulas};
pub use timing::SpanRecord;

#[derive(Debug, thiserror::Error)]
pub enum WgpuError {
    #[error("{0}")]
    NoAdapter(String),
    #[error("shader module {module} ({arith} path) failed to compile: {log}")]
    ShaderCompile { module: String, arith: &'static str, log: String },
    #[error("out of device memory allocating {what} ({requested} bytes)")]
    OutOfMemory { what: String, requested: u64 },
    #[error("{what}: {requested} exceeds the device's limit of {limit}")]
    TooLarge { what: String, requested: u64, limit: u64 },
    #[error("{op}: length mismatch: expected {expected}, got {got}")]
    LengthMismatch { op: String, expected: usize, got: usize },
    #[error("{op}: range {start}..{end} is outside a buffer of {len} elements")]
    OutOfRange { op: String, start: usize, end: usize, len: usize },
    #[error("NTT of {len} elements: the length must be a power of two between 2 and 2^{max_log2}")]
    NttSize { len: usize, max_log2: u32 },
    #[error("device error: {0}")]
    Device(String),
}

impl WgpuDevice {
    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<(), WgpuError> {
        self.wait()?;
        self.check_errors("synchronize")
    }

    /// Device spans of all work finished or queued so far (waits for the queued work).
    pub fn drain_spans(&self) -> Result<Vec<SpanRecord>, WgpuError> {
        self.timing.drain(self)
    }
}
