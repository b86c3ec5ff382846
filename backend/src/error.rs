//! What every backend operation can fail with, and the backends by name.

/// Which backend to run on. `Auto` takes the fastest one available: CUDA, then wgpu, then CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    Auto,
    Cpu,
    Cuda,
    Wgpu,
}

impl BackendKind {
    /// The concrete backends, in the order `Auto` tries them.
    pub const PREFERENCE: [BackendKind; 3] = [BackendKind::Cuda, BackendKind::Wgpu, BackendKind::Cpu];
    pub const ALL: [BackendKind; 4] = [BackendKind::Auto, BackendKind::Cpu, BackendKind::Cuda, BackendKind::Wgpu];

    /// The names, in declaration order (a kind's discriminant indexes them).
    const NAMES: [&'static str; 4] = ["auto", "cpu", "cuda", "wgpu"];

    pub fn name(&self) -> &'static str {
        Self::NAMES[*self as usize]
    }
}

named_choice!(BackendKind, name, BackendError, |s: &str| BackendError::UnknownBackend(s.trim().to_ascii_lowercase()));

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("unknown backend '{0}' (expected auto, cpu, cuda or wgpu)")]
    UnknownBackend(String),
    #[error("{backend} backend unavailable: {reason}")]
    Unavailable { backend: BackendKind, reason: String },
    #[error("no backend available: {0}")]
    NoneAvailable(String),
    #[error("buffer belongs to another backend instance (made by #{owner}, used on #{user})")]
    ForeignBuffer { owner: u64, user: u64 },
    #[error("{op}: length mismatch: expected {expected}, got {got}")]
    LengthMismatch { op: &'static str, expected: usize, got: usize },
    #[error("{op}: range {start}..{end} is outside a buffer of {len} elements")]
    OutOfRange { op: &'static str, start: usize, end: usize, len: usize },
    #[error("NTT of {len} elements: the length must be a power of two between 2 and 2^{max_log2}")]
    NttSize { len: usize, max_log2: u32 },
    #[error("out of device memory: {what} needs {requested} bytes, {available} available")]
    OutOfMemory { what: String, requested: u64, available: u64 },
    #[error("{op} is not supported by the {backend} backend")]
    Unsupported { backend: BackendKind, op: &'static str },
    #[error("device error: {0}")]
    Device(String),
}

/// What every operation of a backend returns.
pub type BackendResult<T> = Result<T, BackendError>;
