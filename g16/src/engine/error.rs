//! What can go wrong in the engine, per partition and per engine.

use std::fmt;

use g16_backend::BackendError;
use crate::prover::ProveError;

/// The stage a partition failed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Synthesis,
    Device,
    Finalize,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Synthesis => "synthesis",
            Stage::Device => "device work",
            Stage::Finalize => "finalization",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("job {job}, partition {partition}: {stage} failed: {source}")]
    Partition {
        job: u64,
        partition: u32,
        stage: Stage,
        #[source]
        source: ProveError,
    },
    #[error("job {job}, partition {partition}: {stage} panicked: {message}")]
    Panicked { job: u64, partition: u32, stage: Stage, message: String },
    #[error("job {job}, partition {partition}: the proof does not verify")]
    NotVerified { job: u64, partition: u32 },
    #[error("job {job}, partition {partition}: cancelled: {reason}")]
    Cancelled { job: u64, partition: u32, reason: String },
    #[error("a job needs at least one partition")]
    EmptyJob,
    #[error("the engine is shut down")]
    ShutDown,
    #[error("the engine needs at least one device")]
    NoDevices,
    #[error("device list '{list}': {reason}")]
    DeviceList { list: String, reason: String },
    #[error("engine configuration: {0}")]
    Config(String),
    #[error("device {device}: {source}")]
    Device {
        device: String,
        #[source]
        source: ProveError,
    },
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error("cannot start the synthesis thread pool: {0}")]
    ThreadPool(String),
    #[error("cannot start an engine thread: {0}")]
    Thread(#[source] std::io::Error),
}

impl EngineError {
    /// The (job, partition) a per-partition error is about.
    pub fn partition(&self) -> Option<(u64, u32)> {
        match self {
            EngineError::Partition { job, partition, .. }
            | EngineError::Panicked { job, partition, .. }
            | EngineError::NotVerified { job, partition }
            | EngineError::Cancelled { job, partition, .. } => Some((*job, *partition)),
            _ => None,
        }
    }
}

/// The message of a caught panic (a `&str` or `String` payload, as `panic!` makes them).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}
