//! What can go wrong in the service, and the gRPC status each becomes.

use g16_queue::StoreError;
use tonic::{Code, Status};

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("refusing to listen on {0} without a token: off loopback, set one (--token-file)")]
    OpenBind(std::net::SocketAddr),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: std::net::SocketAddr, source: std::io::Error },
    #[error("the engine did not start: {0}")]
    Engine(#[from] g16::engine::EngineError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the gRPC server failed: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// The status a store failure becomes.
pub fn store_status(e: StoreError) -> Status {
    let code = match &e {
        StoreError::UnknownCircuit(_) => Code::NotFound,
        StoreError::CircuitConflict(_) | StoreError::DuplicateJob(_) => Code::AlreadyExists,
        StoreError::Unavailable(_) => Code::Unavailable,
        StoreError::Corrupt(_) => Code::Internal,
    };
    Status::new(code, e.to_string())
}

/// Machine-readable reasons a job failed (stored with it), and their statuses.
pub mod reason {
    use tonic::Code;

    pub const UNSATISFIED: &str = "unsatisfied";
    pub const INVALID_WITNESS: &str = "invalid_witness";
    pub const PACKAGE: &str = "package";
    pub const ATTEMPTS: &str = "attempts";
    pub const DEVICE: &str = "device";
    pub const CANCELLED: &str = "cancelled";

    pub fn code(reason: &str) -> Code {
        match reason {
            UNSATISFIED => Code::FailedPrecondition,
            INVALID_WITNESS => Code::InvalidArgument,
            PACKAGE => Code::FailedPrecondition,
            ATTEMPTS => Code::Aborted,
            CANCELLED => Code::Cancelled,
            _ => Code::Internal,
        }
    }
}
