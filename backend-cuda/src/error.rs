//! The crate's errors: small and specific, each mapped onto the contract's [`BackendError`]
//! by `From`.

use cudarc::driver::{result::DriverError, sys::CUresult};
use g16_backend::{BackendError, BackendKind};

#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// No driver, no device, or no NVRTC: the backend cannot run here.
    #[error("{0}")]
    Unavailable(String),
    /// NVRTC rejected a kernel source; `log` is NVRTC's own log.
    #[error("NVRTC could not compile the '{program}' kernels for {arch}:\n{log}")]
    Compile { program: &'static str, arch: String, log: String },
    #[error("out of device memory: {what} needs {requested} bytes, {available} available")]
    OutOfMemory { what: String, requested: u64, available: u64 },
    #[error("CUDA driver error in {context}: {message}")]
    Driver { context: String, message: String },
    /// A launch whose arguments do not match its kernel's parameters (compile/kernels.rs): a
    /// fault of the backend, refused before the driver reads them.
    #[error("launching {kernel}: {mismatch}")]
    Arguments { kernel: &'static str, mismatch: ArgumentMismatch },
    #[error("NTT of {len} elements: the length must be a power of two between 2 and 2^{max_log2}")]
    NttSize { len: usize, max_log2: u32 },
}

impl CudaError {
    /// A driver error, with what the backend was doing; out-of-memory gets its own variant.
    pub(crate) fn driver(context: impl Into<String>, e: DriverError) -> CudaError {
        let context = context.into();
        if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            let available = cudarc::driver::result::mem_get_info().map(|(free, _)| free as u64).unwrap_or(0);
            return CudaError::OutOfMemory { what: context, requested: 0, available };
        }
        CudaError::Driver { context, message: format!("{:?}", e.0) }
    }

    /// The error of opening a device: a kernel that does not compile or load makes the backend
    /// unusable here, so it is reported as unavailable, with the reason.
    pub(crate) fn at_open(self) -> BackendError {
        match self {
            CudaError::Compile { .. } | CudaError::Driver { .. } => {
                BackendError::Unavailable { backend: BackendKind::Cuda, reason: self.to_string() }
            }
            other => other.into(),
        }
    }
}

impl From<CudaError> for BackendError {
    fn from(e: CudaError) -> BackendError {
        match e {
            CudaError::Unavailable(reason) => BackendError::Unavailable { backend: BackendKind::Cuda, reason },
            CudaError::OutOfMemory { what, requested, available } => {
                BackendError::OutOfMemory { what, requested, available }
            }
            CudaError::NttSize { len, max_log2 } => BackendError::NttSize { len, max_log2 },
            other @ (CudaError::Compile { .. } | CudaError::Driver { .. } | CudaError::Arguments { .. }) => {
                BackendError::Device(other.to_string())
            }
        }
    }
}

/// How a launch's arguments differ from its kernel's parameters.
#[derive(Debug, thiserror::Error)]
pub enum ArgumentMismatch {
    #[error("{given} arguments given, the kernel takes {expected}")]
    Count { given: usize, expected: usize },
    /// `expected`: what the parameter takes, "a device pointer" or "a u32".
    #[error("argument {index} ({param}) must be {expected}")]
    Kind { index: usize, param: &'static str, expected: &'static str },
}

/// `result.map_err(during("what"))`: a driver error tagged with what was being done.
pub(crate) fn during(what: &'static str) -> impl FnOnce(DriverError) -> CudaError {
    move |e| CudaError::driver(what, e)
}
