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

    /// The client's witness does not satisfy the circuit.
    pub const UNSATISFIED: &str = "unsatisfied";
    /// The client's witness is malformed. The API refuses such a witness before queueing it
    /// where it can; what it cannot see until the job runs (a C1 output whose partitions'
    /// witnesses do not have the public inputs its commitments and seed give) fails the job
    /// with this.
    pub const INVALID_WITNESS: &str = "invalid_witness";
    /// The circuit's package cannot be loaded.
    pub const PACKAGE: &str = "package";
    /// Taken and abandoned too often (see `g16_queue::MAX_ATTEMPTS`).
    pub const ATTEMPTS: &str = "attempts";
    /// A device or its backend failed.
    pub const DEVICE: &str = "device";
    /// A fault of the server's own: a bug, or a stored witness changed after it was accepted.
    pub const INTERNAL: &str = "internal";
    pub const CANCELLED: &str = "cancelled";

    pub fn code(reason: &str) -> Code {
        match reason {
            UNSATISFIED => Code::FailedPrecondition,
            INVALID_WITNESS => Code::InvalidArgument,
            PACKAGE => Code::FailedPrecondition,
            ATTEMPTS => Code::Aborted,
            CANCELLED => Code::Cancelled,
            DEVICE | INTERNAL => Code::Internal,
            _ => Code::Internal,
        }
    }
}
