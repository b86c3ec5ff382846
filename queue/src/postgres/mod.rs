//! [`PgStore`]: a fleet's queue in PostgreSQL.
//!
//! Every time that decides a lease is the database's (`now()`), never a host's: the hosts of a
//! fleet disagree on the time, the database is one clock. Every database failure is
//! [`StoreError::Unavailable`]; the pool replaces connections that broke, so the store works
//! again once the database is back.

mod listen;
mod migrate;
mod sql;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime};
use tokio::sync::oneshot;
use tokio_postgres::error::SqlState;
use tokio_postgres::NoTls;

use crate::{
    CircuitRecord, CircuitSummary, Depth, JobId, JobRecord, JobState, JobStore, Lease, NewJob, Outcome, StoreError,
    StoreResult, ATTEMPTS_EXHAUSTED, MAX_ATTEMPTS,
};
use listen::Watchers;

/// Connections per store: a server's workers and its request handlers share them.
const POOL_SIZE: usize = 16;
/// How long a call waits for a connection (free, new or checked) before it is `Unavailable`.
const POOL_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a watcher polls while notifications are not heard.
const POLL: Duration = Duration::from_millis(100);

/// A fleet's queue in PostgreSQL; any number of servers on any number of hosts share one.
pub struct PgStore {
    pool: Pool,
    watchers: Arc<Watchers>,
    /// Dropping it stops the listening connection.
    _listener: oneshot::Sender<()>,
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`, or
    /// key=value pairs; no TLS) and brings its schema up to date. Must be called within a Tokio
    /// runtime, which then also runs the connection that hears job changes.
    pub async fn connect(url: &str) -> StoreResult<PgStore> {
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e| StoreError::Unavailable(format!("bad database URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(POOL_TIMEOUT);
        }
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            // `Fast` drops connections whose socket closed; one that broke unnoticed fails one
            // call (Unavailable) and is dropped then.
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(POOL_TIMEOUT))
            .create_timeout(Some(POOL_TIMEOUT))
            .recycle_timeout(Some(POOL_TIMEOUT))
            .build()
            .map_err(|e| StoreError::Unavailable(format!("connection pool: {e}")))?;
        let mut client = pool.get().await.map_err(pool_error)?;
        migrate::apply(&mut client).await?;
        drop(client);
        let watchers = Arc::new(Watchers::default());
        let listener = listen::start(config, Arc::clone(&watchers));
        Ok(PgStore { pool, watchers, _listener: listener })
    }

    async fn client(&self) -> StoreResult<Object> {
        self.pool.get().await.map_err(pool_error)
    }

    async fn state(&self, job: JobId) -> StoreResult<Option<JobState>> {
        let client = self.client().await?;
        let row = client.query_opt(sql::STATE, &[&job]).await.map_err(db_error)?;
        row.map(|row| sql::state(&row, 0)).transpose()
    }
}

/// A statement that failed: the database refused it or could not be reached.
pub(super) fn db_error(e: tokio_postgres::Error) -> StoreError {
    StoreError::Unavailable(match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => match std::error::Error::source(&e) {
            Some(cause) => format!("{e}: {cause}"),
            None => e.to_string(),
        },
    })
}

fn pool_error(e: PoolError) -> StoreError {
    match e {
        PoolError::Backend(e) => db_error(e),
        e => StoreError::Unavailable(format!("no database connection: {e}")),
    }
}

fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

#[async_trait]
impl JobStore for PgStore {
    async fn put_circuit(&self, circuit: CircuitRecord) -> StoreResult<()> {
        let client = self.client().await?;
        let digest = circuit.digest.as_slice();
        let inserted =
            client.execute(sql::PUT_CIRCUIT, &[&circuit.name, &digest, &circuit.package]).await.map_err(db_error)?;
        if inserted == 1 {
            return Ok(());
        }
        let row = client.query_opt(sql::CIRCUIT_DIGEST, &[&circuit.name]).await.map_err(db_error)?;
        match row.map(|row| sql::digest(&row, 0)).transpose()? {
            Some(known) if known == circuit.digest => Ok(()),
            Some(_) => Err(StoreError::CircuitConflict(circuit.name)),
            // Registered and gone between the two statements: circuits are never deleted.
            None => Err(StoreError::Corrupt(format!("circuit '{}' vanished", circuit.name))),
        }
    }

    async fn circuit(&self, name: &str) -> StoreResult<Option<CircuitRecord>> {
        let client = self.client().await?;
        let row = client.query_opt(sql::CIRCUIT, &[&name]).await.map_err(db_error)?;
        row.map(|row| sql::circuit(&row)).transpose()
    }

    async fn circuits(&self) -> StoreResult<Vec<CircuitSummary>> {
        let client = self.client().await?;
        let rows = client.query(sql::CIRCUITS, &[]).await.map_err(db_error)?;
        rows.iter().map(sql::circuit_summary).collect()
    }

    async fn submit(&self, job: NewJob) -> StoreResult<()> {
        let client = self.client().await?;
        let result = client
            .execute(sql::SUBMIT, &[&job.id, &job.circuit, &job.priority.level(), &job.deadline, &job.witness])
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) => {
                Err(StoreError::UnknownCircuit(job.circuit))
            }
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => Err(StoreError::DuplicateJob(job.id)),
            Err(e) => Err(db_error(e)),
        }
    }

    async fn take(&self, worker: &str, prefer: &[String], lease: Duration, limit: usize) -> StoreResult<Vec<Lease>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let max_attempts = MAX_ATTEMPTS as i32;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        // Settle what is past saving first, so that the pick below sees only takeable jobs.
        tx.execute(sql::EXPIRE_DEADLINES, &[]).await.map_err(db_error)?;
        tx.execute(sql::FAIL_ABANDONED, &[&max_attempts, &ATTEMPTS_EXHAUSTED]).await.map_err(db_error)?;
        let rows =
            tx.query(sql::TAKE, &[&worker, &prefer, &seconds(lease), &limit, &max_attempts]).await.map_err(db_error)?;
        tx.commit().await.map_err(db_error)?;
        sql::leases(&rows, prefer)
    }

    async fn renew(&self, worker: &str, jobs: &[JobId], lease: Duration) -> StoreResult<Vec<JobId>> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        let rows = client.query(sql::RENEW, &[&worker, &jobs, &seconds(lease)]).await.map_err(db_error)?;
        let mut held = Vec::with_capacity(rows.len());
        for row in &rows {
            held.push(sql::get::<JobId>(row, 0)?);
        }
        // In the caller's order.
        Ok(jobs.iter().copied().filter(|job| held.contains(job)).collect())
    }

    async fn complete(&self, worker: &str, job: JobId, outcome: Outcome) -> StoreResult<bool> {
        let client = self.client().await?;
        let changed = match &outcome {
            Outcome::Proved { proof, public_inputs, timeline } => client
                .execute(sql::SUCCEED, &[&job, &worker, proof, public_inputs, timeline])
                .await
                .map_err(db_error)?,
            Outcome::Failed { code, message } => {
                client.execute(sql::FAIL, &[&job, &worker, code, message]).await.map_err(db_error)?
            }
        };
        Ok(changed == 1)
    }

    async fn cancel(&self, job: JobId) -> StoreResult<Option<JobState>> {
        let client = self.client().await?;
        if client.execute(sql::CANCEL, &[&job]).await.map_err(db_error)? == 1 {
            return Ok(Some(JobState::Cancelled));
        }
        // Settled already (or unknown): its own state, read after the update so a concurrent
        // settlement is seen.
        let row = client.query_opt(sql::STATE, &[&job]).await.map_err(db_error)?;
        row.map(|row| sql::state(&row, 0)).transpose()
    }

    async fn job(&self, job: JobId) -> StoreResult<Option<JobRecord>> {
        let client = self.client().await?;
        let row = client.query_opt(sql::JOB, &[&job]).await.map_err(db_error)?;
        row.map(|row| sql::job(&row)).transpose()
    }

    async fn purge(&self, settled_before: SystemTime) -> StoreResult<u64> {
        let client = self.client().await?;
        client.execute(sql::PURGE, &[&settled_before]).await.map_err(db_error)
    }

    async fn depth(&self) -> StoreResult<Depth> {
        let client = self.client().await?;
        let rows = client.query(sql::DEPTH, &[]).await.map_err(db_error)?;
        sql::depth(&rows)
    }

    async fn changed(&self, job: JobId, timeout: Duration) {
        let started = tokio::time::Instant::now();
        let until = started + timeout;
        // Registered before the state is read: a change after the read wakes it.
        let watch = self.watchers.watch(job);
        let notified = watch.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let seen = match self.state(job).await {
            Ok(Some(state)) if !state.is_final() => state,
            // Settled or unknown: nothing more to wait for.
            Ok(_) => return,
            // The database is down: the caller's next look fails too, so return at polling pace.
            Err(_) => {
                tokio::time::sleep_until(until.min(started + POLL)).await;
                return;
            }
        };
        loop {
            let now = tokio::time::Instant::now();
            if now >= until {
                return;
            }
            let listening = self.watchers.listening();
            let wake = if listening { until } else { until.min(now + POLL) };
            if tokio::time::timeout_at(wake, notified.as_mut()).await.is_ok() {
                return;
            }
            if !listening {
                match self.state(job).await {
                    Ok(Some(state)) if state == seen => {}
                    _ => return,
                }
            }
        }
    }
}
