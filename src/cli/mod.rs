//! The commands of `g16`, each in its module, and what they share: the error every command
//! reports plainly, and the parsers of common arguments.

pub mod bench;
pub mod client;
pub mod compile;
pub mod devices;
#[cfg(feature = "filecoin")]
pub mod filecoin;
pub mod inspect;
pub mod opening;
pub mod plan;
pub mod progress;
pub mod prove;
pub mod prove_files;
pub mod report;
pub mod serve;
pub mod setup;
pub mod stamp;

use g16::backend::BackendKind;
use g16::circuits::CircuitKind;

/// Everything the CLI can fail with, reported plainly.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Prove(#[from] g16::ProveError),
    #[error(transparent)]
    Key(#[from] g16::prover::KeyError),
    #[error(transparent)]
    KeyStore(#[from] g16::key_store::KeyStoreError),
    #[error(transparent)]
    Backend(#[from] g16::BackendError),
    #[error(transparent)]
    Circuit(#[from] g16::circuits::CircuitError),
    #[error(transparent)]
    Timeline(#[from] g16::timeline::TimelineError),
    #[error(transparent)]
    Engine(#[from] g16::engine::EngineError),
    #[error(transparent)]
    Settings(#[from] g16::settings::SettingsError),
    #[error(transparent)]
    Circom(#[from] g16::circom::CircomError),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error(transparent)]
    Service(#[from] g16_service::ServiceError),
    #[cfg(feature = "filecoin")]
    #[error(transparent)]
    Filecoin(#[from] g16_filecoin::FilecoinError),
    #[error("{0}")]
    Usage(String),
    /// A file that was read whole but failed its checks (`g16 inspect` of a key with a bad point).
    #[error("{file}: {what}")]
    FailedCheck { file: String, what: String },
}

pub fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> CliError {
    let what = what.into();
    move |source| CliError::Io { what, source }
}

pub fn parse_circuit(s: &str) -> Result<CircuitKind, String> {
    s.parse().map_err(|e: g16::circuits::CircuitError| e.to_string())
}

pub fn parse_backend(s: &str) -> Result<BackendKind, String> {
    s.parse().map_err(|e: g16::BackendError| e.to_string())
}
