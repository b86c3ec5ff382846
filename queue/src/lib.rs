//! g16-queue: where a proving service keeps its jobs, circuits and blobs (witnesses, proofs).
//!
//! One contract, [`JobStore`], two stores:
//! - [`MemoryStore`]: one server's queue, in its memory (lost with the process);
//! - [`PgStore`]: a fleet's queue in PostgreSQL, shared by any number of servers on any number of
//!   hosts. Work is taken with `FOR UPDATE SKIP LOCKED` under a lease that the taking worker's
//!   heartbeat renews; a lease that expires (its worker died) is taken again by another worker.
//!
//! Rules every store keeps (the contract tests check them on both):
//! - A job is settled exactly once: the first [`JobStore::complete`] of a live lease wins; a
//!   second one, or one from a worker whose lease expired and was taken again, changes nothing
//!   and returns `false`.
//! - [`JobStore::take`] hands out the queued jobs of the highest priority first, oldest first
//!   within a priority, preferring (within the highest priority that has any) the circuits the
//!   worker holds resident; a queued job whose deadline passed is settled `Expired`, never taken.
//! - A cancelled job is never taken; a running one is settled `Cancelled` and its worker's
//!   [`JobStore::renew`] no longer lists it, so the worker drops it.
//! - A job whose lease expired is taken again (its attempt counted); one whose lease expires
//!   after [`MAX_ATTEMPTS`] takes is settled `Failed` with code `attempts` instead, so a witness
//!   that kills its worker takes down at most that many workers, not the whole fleet in turn.
//! - Nothing here knows what a witness or a proof is: they are bytes.

use std::time::{Duration, SystemTime};

use async_trait::async_trait;

pub use uuid::Uuid;

mod memory;
mod postgres;
#[cfg(feature = "testing")]
pub mod testing;

pub use memory::MemoryStore;
pub use postgres::PgStore;

/// How many times a job is taken before an expired lease settles it `Failed` (code
/// [`ATTEMPTS_EXHAUSTED`]).
pub const MAX_ATTEMPTS: u32 = 3;

/// The failure code of a job abandoned [`MAX_ATTEMPTS`] times.
pub const ATTEMPTS_EXHAUSTED: &str = "attempts";

/// A job's identity, chosen by the server that accepts it.
pub type JobId = Uuid;

/// How urgent a job is: higher runs first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    Low = 0,
    Normal = 1,
    High = 2,
    Urgent = 3,
}

impl Priority {
    pub const ALL: [Priority; 4] = [Priority::Low, Priority::Normal, Priority::High, Priority::Urgent];

    pub fn from_level(level: i16) -> Option<Priority> {
        Priority::ALL.get(usize::try_from(level).ok()?).copied()
    }

    pub fn level(self) -> i16 {
        self as i16
    }

    pub fn name(self) -> &'static str {
        ["low", "normal", "high", "urgent"][self as usize]
    }
}

/// Where a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobState {
    Queued,
    /// Leased to a worker.
    Running,
    Succeeded,
    Failed,
    Cancelled,
    /// Its deadline passed before a worker took it.
    Expired,
}

impl JobState {
    pub const ALL: [JobState; 6] = [
        JobState::Queued,
        JobState::Running,
        JobState::Succeeded,
        JobState::Failed,
        JobState::Cancelled,
        JobState::Expired,
    ];

    pub fn name(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
            JobState::Expired => "expired",
        }
    }

    pub fn from_name(name: &str) -> Option<JobState> {
        JobState::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Settled: no further change.
    pub fn is_final(self) -> bool {
        !matches!(self, JobState::Queued | JobState::Running)
    }
}

/// A registered circuit: a name and its package (the compiled circuit and its proving key, as
/// the service encodes them), with the package's SHA-256.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitRecord {
    pub name: String,
    pub digest: [u8; 32],
    pub package: Vec<u8>,
}

/// What a listing says of a circuit (without its package).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitSummary {
    pub name: String,
    pub digest: [u8; 32],
    pub package_bytes: u64,
    pub registered: SystemTime,
}

/// A job as submitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewJob {
    pub id: JobId,
    pub circuit: String,
    pub priority: Priority,
    /// Not taken after this; settled `Expired` instead.
    pub deadline: Option<SystemTime>,
    pub witness: Vec<u8>,
}

/// A job handed to a worker, with its lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub job: JobId,
    pub circuit: String,
    pub priority: Priority,
    /// Shared, not copied: a store that keeps the witness in memory hands out the same bytes.
    pub witness: std::sync::Arc<Vec<u8>>,
    /// How many times the job has been taken, this time included (> 1: a worker died with it).
    pub attempt: u32,
}

/// How a worker settles a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Proved {
        proof: Vec<u8>,
        public_inputs: Vec<u8>,
        /// The job's timeline, as the service renders it (may be empty).
        timeline: Vec<u8>,
    },
    /// `code` is a short machine-readable reason (`unsatisfied`, `invalid_witness`, …).
    Failed { code: String, message: String },
}

/// All a store knows of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    pub id: JobId,
    pub circuit: String,
    pub priority: Priority,
    pub state: JobState,
    pub deadline: Option<SystemTime>,
    pub submitted: SystemTime,
    pub started: Option<SystemTime>,
    pub finished: Option<SystemTime>,
    /// The worker holding or last holding it.
    pub worker: Option<String>,
    pub attempts: u32,
    /// Set when `Succeeded` or `Failed`.
    pub outcome: Option<Outcome>,
}

/// Jobs waiting, by priority, and running.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Depth {
    /// Indexed by [`Priority::level`].
    pub queued: [u64; 4],
    pub running: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("circuit '{0}' is registered already with another package")]
    CircuitConflict(String),
    #[error("unknown circuit '{0}'")]
    UnknownCircuit(String),
    #[error("a job with id {0} exists already")]
    DuplicateJob(JobId),
    /// The database is unreachable or refused a statement; retrying later may succeed.
    #[error("the job database is unavailable: {0}")]
    Unavailable(String),
    #[error("the job database holds something this store cannot read: {0}")]
    Corrupt(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

#[async_trait]
pub trait JobStore: Send + Sync + 'static {
    /// Registers a circuit. The same name with the same digest again is a no-op; with another
    /// digest, [`StoreError::CircuitConflict`].
    async fn put_circuit(&self, circuit: CircuitRecord) -> StoreResult<()>;
    async fn circuit(&self, name: &str) -> StoreResult<Option<CircuitRecord>>;
    async fn circuits(&self) -> StoreResult<Vec<CircuitSummary>>;

    /// Queues a job of a registered circuit ([`StoreError::UnknownCircuit`] otherwise).
    async fn submit(&self, job: NewJob) -> StoreResult<()>;
    /// Up to `limit` queued jobs for `worker`, each leased for `lease` (see the crate rules for
    /// the order); `prefer` names the circuits the worker holds resident.
    async fn take(&self, worker: &str, prefer: &[String], lease: Duration, limit: usize) -> StoreResult<Vec<Lease>>;
    /// Extends `worker`'s leases on `jobs` by `lease`; returns the jobs it still holds (a job
    /// missing from the answer was cancelled, or its lease expired and was taken again).
    async fn renew(&self, worker: &str, jobs: &[JobId], lease: Duration) -> StoreResult<Vec<JobId>>;
    /// Settles a job `worker` holds; `false` (and no change) where it no longer holds it or
    /// the job is settled already.
    async fn complete(&self, worker: &str, job: JobId, outcome: Outcome) -> StoreResult<bool>;
    /// Cancels a queued or running job; returns its state after (a settled job keeps its own),
    /// or `None` for an unknown job.
    async fn cancel(&self, job: JobId) -> StoreResult<Option<JobState>>;
    async fn job(&self, job: JobId) -> StoreResult<Option<JobRecord>>;
    async fn depth(&self) -> StoreResult<Depth>;
    /// Forgets settled jobs that finished before `settled_before` (their proofs and timelines
    /// with them); returns how many. Queued and running jobs are never purged.
    async fn purge(&self, settled_before: SystemTime) -> StoreResult<u64>;
    /// Returns once `job` may have changed state (or after `timeout`): a watcher calls
    /// [`JobStore::job`] again after it. Spurious wakeups are allowed.
    async fn changed(&self, job: JobId, timeout: Duration);
}
