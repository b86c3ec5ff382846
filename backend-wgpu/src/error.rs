//! The backend's errors: small and specific, so each maps onto one [`BackendError`] without
//! guessing. wgpu's own validation errors are captured (device.rs) and arrive here as
//! [`WgpuError::Device`], never as panics.

use g16_backend::{BackendError, BackendKind};

#[derive(Debug, thiserror::Error)]
pub enum WgpuError {
    /// No usable adapter, or the adapter refused a device: the backend cannot run here.
    #[error("{0}")]
    NoAdapter(String),
    /// A composed WGSL module that the driver (or wgpu's validation) rejected.
    #[error("shader module {module} ({arith} path) failed to compile: {log}")]
    ShaderCompile { module: String, arith: &'static str, log: String },
    #[error("out of device memory allocating {what} ({requested} bytes)")]
    OutOfMemory { what: String, requested: u64 },
    /// Past a limit of the adapter (a buffer, a binding, a dispatch).
    #[error("{what}: {requested} exceeds the device's limit of {limit}")]
    TooLarge { what: String, requested: u64, limit: u64 },
    /// Arguments the contract refuses (a length, a range, an NTT size): its own error.
    #[error(transparent)]
    Invalid(#[from] BackendError),
    /// An MSM whose result is not a point of the curve: a kernel fault, never returned.
    #[error("{op}: the device's result is not on the curve (a kernel fault); refusing to return it")]
    OffCurve { op: &'static str },
    #[error("device error: {0}")]
    Device(String),
}

impl From<WgpuError> for BackendError {
    fn from(e: WgpuError) -> BackendError {
        match e {
            WgpuError::NoAdapter(reason) => BackendError::Unavailable { backend: BackendKind::Wgpu, reason },
            // wgpu cannot ask how much memory is free.
            WgpuError::OutOfMemory { what, requested } => BackendError::OutOfMemory { what, requested, available: 0 },
            WgpuError::TooLarge { what, requested, limit } => {
                BackendError::OutOfMemory { what, requested, available: limit }
            }
            WgpuError::Invalid(e) => e,
            other @ (WgpuError::ShaderCompile { .. } | WgpuError::OffCurve { .. } | WgpuError::Device(_)) => {
                BackendError::Device(other.to_string())
            }
        }
    }
}
