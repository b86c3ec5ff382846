//! The statements [`super::PgStore`] sends, and the reading of their rows.

use std::cmp::Reverse;
use std::time::SystemTime;

use tokio_postgres::types::FromSql;
use tokio_postgres::Row;

use crate::{
    CircuitRecord, CircuitSummary, Depth, JobId, JobRecord, JobState, Lease, Outcome, Priority, StoreError, StoreResult,
};

pub const PUT_CIRCUIT: &str =
    "INSERT INTO circuits (name, digest, package) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING";
pub const CIRCUIT_DIGEST: &str = "SELECT digest FROM circuits WHERE name = $1";
pub const CIRCUIT: &str = "SELECT name, digest, package FROM circuits WHERE name = $1";
pub const CIRCUITS: &str =
    "SELECT name, digest, octet_length(package)::bigint AS package_bytes, registered FROM circuits ORDER BY name";

/// The job and its witness in one statement (so in one transaction); the foreign key refuses
/// an unknown circuit, the primary key a second job of the same id.
pub const SUBMIT: &str = "
    WITH job AS (
        INSERT INTO jobs (id, circuit, priority, deadline) VALUES ($1, $2, $3, $4) RETURNING id
    )
    INSERT INTO witnesses (job, bytes) SELECT id, $5 FROM job";

/// Settled jobs finished before $1 (their witnesses went when they settled).
pub const PURGE: &str = "DELETE FROM jobs WHERE state NOT IN ('queued', 'running') AND finished < $1";

/// Queued jobs whose deadline passed; rows another taker holds are left to it.
pub const EXPIRE_DEADLINES: &str = "
    WITH due AS (
        SELECT id FROM jobs WHERE state = 'queued' AND deadline < now() FOR UPDATE SKIP LOCKED
    )
    UPDATE jobs SET state = 'expired', finished = now() FROM due WHERE jobs.id = due.id";

/// Jobs whose lease expired after the last attempt allowed ($1); $2 is the failure code.
pub const FAIL_ABANDONED: &str = "
    WITH spent AS (
        SELECT id FROM jobs WHERE state = 'running' AND lease_until < now() AND attempts >= $1
        FOR UPDATE SKIP LOCKED
    )
    UPDATE jobs SET state = 'failed', finished = now(), lease_until = NULL, error_code = $2,
        error_message = 'abandoned by ' || attempts || ' workers in turn (each lease expired)'
    FROM spent WHERE jobs.id = spent.id";

/// Leases up to $4 jobs to worker $1 for $3 seconds, preferring circuits $2, taking again
/// expired leases with fewer than $5 attempts.
///
/// The order is (priority, preferred circuit, submitted), which no index yields whole; but the
/// first $4 jobs in that order are among the first $4 of the whole line, the first $4 of the
/// preferred circuits' lines and the first $4 expired leases, each an index scan
/// (migration 0001), so only those are locked and sorted. SKIP LOCKED: rows another taker is
/// deciding on are passed over, never waited for.
pub const TAKE: &str = "
    WITH line AS (
        SELECT id, priority, submitted, seq, circuit FROM jobs
        WHERE state = 'queued'
        ORDER BY priority DESC, submitted, seq LIMIT $4
        FOR UPDATE SKIP LOCKED
    ), preferred AS (
        SELECT id, priority, submitted, seq, circuit FROM jobs
        WHERE state = 'queued' AND circuit = ANY($2)
        ORDER BY priority DESC, submitted, seq LIMIT $4
        FOR UPDATE SKIP LOCKED
    ), lapsed AS (
        SELECT id, priority, submitted, seq, circuit FROM jobs
        WHERE state = 'running' AND lease_until < now() AND attempts < $5
        ORDER BY priority DESC, submitted, seq LIMIT $4
        FOR UPDATE SKIP LOCKED
    ), picked AS (
        SELECT id FROM (
            SELECT * FROM line UNION SELECT * FROM preferred UNION SELECT * FROM lapsed
        ) AS candidates
        ORDER BY priority DESC, circuit = ANY($2) DESC, submitted, seq
        LIMIT $4
    )
    UPDATE jobs SET state = 'running', worker = $1, started = now(),
        lease_until = now() + make_interval(secs => $3), attempts = jobs.attempts + 1
    FROM picked WHERE jobs.id = picked.id
    RETURNING jobs.id, jobs.circuit, jobs.priority, jobs.attempts, jobs.submitted, jobs.seq,
        (SELECT bytes FROM witnesses WHERE witnesses.job = jobs.id) AS witness";

/// Extends worker $1's leases on jobs $2 by $3 seconds. A lease that expired but that nobody
/// took again is extended too: its worker's proof is as good as anyone's.
pub const RENEW: &str = "
    UPDATE jobs SET lease_until = now() + make_interval(secs => $3)
    WHERE id = ANY($2) AND worker = $1 AND state = 'running'
    RETURNING id";

/// Settling: only the holder ($2) of a running job ($1), so a second settlement changes nothing.
pub const SUCCEED: &str = "
    UPDATE jobs SET state = 'succeeded', finished = now(), lease_until = NULL,
        proof = $3, public_inputs = $4, timeline = $5
    WHERE id = $1 AND worker = $2 AND state = 'running'";
pub const FAIL: &str = "
    UPDATE jobs SET state = 'failed', finished = now(), lease_until = NULL,
        error_code = $3, error_message = $4
    WHERE id = $1 AND worker = $2 AND state = 'running'";

pub const CANCEL: &str = "
    UPDATE jobs SET state = 'cancelled', finished = now(), lease_until = NULL
    WHERE id = $1 AND state IN ('queued', 'running')";

pub const STATE: &str = "SELECT state FROM jobs WHERE id = $1";

pub const JOB: &str = "
    SELECT id, circuit, priority, state, deadline, submitted, started, finished, worker, attempts,
        proof, public_inputs, timeline, error_code, error_message
    FROM jobs WHERE id = $1";

/// Counted on the partial indexes of take(), so settled history (most rows) is never read.
pub const DEPTH: &str = "
    SELECT 'queued' AS state, priority, count(*) AS jobs FROM jobs WHERE state = 'queued' GROUP BY priority
    UNION ALL
    SELECT 'running', 0::smallint, count(*) FROM jobs WHERE state = 'running'";

/// A column's value; a value of another type than expected is `Corrupt`, not a panic.
pub fn get<'a, T: FromSql<'a>>(
    row: &'a Row,
    column: impl tokio_postgres::row::RowIndex + std::fmt::Display,
) -> StoreResult<T> {
    let name = column.to_string();
    row.try_get(column).map_err(|e| StoreError::Corrupt(format!("column {name}: {e}")))
}

pub fn state(row: &Row, column: usize) -> StoreResult<JobState> {
    let name: &str = get(row, column)?;
    JobState::from_name(name).ok_or_else(|| StoreError::Corrupt(format!("unknown job state '{name}'")))
}

fn priority(row: &Row, column: &str) -> StoreResult<Priority> {
    let level: i16 = get(row, column)?;
    Priority::from_level(level).ok_or_else(|| StoreError::Corrupt(format!("unknown priority {level}")))
}

fn attempts(row: &Row, column: &str) -> StoreResult<u32> {
    let attempts: i32 = get(row, column)?;
    u32::try_from(attempts).map_err(|_| StoreError::Corrupt(format!("{attempts} attempts")))
}

pub fn digest(row: &Row, column: usize) -> StoreResult<[u8; 32]> {
    let bytes: &[u8] = get(row, column)?;
    bytes.try_into().map_err(|_| StoreError::Corrupt(format!("a digest of {} bytes", bytes.len())))
}

pub fn circuit(row: &Row) -> StoreResult<CircuitRecord> {
    Ok(CircuitRecord { name: get(row, "name")?, digest: digest(row, 1)?, package: get(row, "package")? })
}

pub fn circuit_summary(row: &Row) -> StoreResult<CircuitSummary> {
    let bytes: i64 = get(row, "package_bytes")?;
    Ok(CircuitSummary {
        name: get(row, "name")?,
        digest: digest(row, 1)?,
        package_bytes: u64::try_from(bytes).map_err(|_| StoreError::Corrupt(format!("a package of {bytes} bytes")))?,
        registered: get(row, "registered")?,
    })
}

/// The rows [`TAKE`] returned, as leases in take order (RETURNING keeps none).
pub fn leases(rows: &[Row], prefer: &[String]) -> StoreResult<Vec<Lease>> {
    let mut leases = Vec::with_capacity(rows.len());
    for row in rows {
        let circuit: String = get(row, "circuit")?;
        let submitted: SystemTime = get(row, "submitted")?;
        let seq: i64 = get(row, "seq")?;
        let witness: Option<Vec<u8>> = get(row, "witness")?;
        let lease = Lease {
            job: get(row, "id")?,
            priority: priority(row, "priority")?,
            witness: std::sync::Arc::new(
                witness.ok_or_else(|| StoreError::Corrupt("a running job without its witness".into()))?,
            ),
            attempt: attempts(row, "attempts")?,
            circuit,
        };
        let key = (Reverse(lease.priority), !prefer.contains(&lease.circuit), submitted, seq);
        leases.push((key, lease));
    }
    leases.sort_by_key(|(key, _)| *key);
    Ok(leases.into_iter().map(|(_, lease)| lease).collect())
}

pub fn job(row: &Row) -> StoreResult<JobRecord> {
    let state = state(row, 3)?;
    let outcome = match state {
        JobState::Succeeded => Some(Outcome::Proved {
            proof: required(get(row, "proof")?, "proof")?,
            public_inputs: required(get(row, "public_inputs")?, "public_inputs")?,
            timeline: get::<Option<Vec<u8>>>(row, "timeline")?.unwrap_or_default(),
        }),
        JobState::Failed => Some(Outcome::Failed {
            code: required(get(row, "error_code")?, "error_code")?,
            message: get::<Option<String>>(row, "error_message")?.unwrap_or_default(),
        }),
        _ => None,
    };
    Ok(JobRecord {
        id: get::<JobId>(row, "id")?,
        circuit: get(row, "circuit")?,
        priority: priority(row, "priority")?,
        state,
        deadline: get(row, "deadline")?,
        submitted: get(row, "submitted")?,
        started: get(row, "started")?,
        finished: get(row, "finished")?,
        worker: get(row, "worker")?,
        attempts: attempts(row, "attempts")?,
        outcome,
    })
}

fn required<T>(value: Option<T>, column: &str) -> StoreResult<T> {
    value.ok_or_else(|| StoreError::Corrupt(format!("a settled job without its {column}")))
}

pub fn depth(rows: &[Row]) -> StoreResult<Depth> {
    let mut depth = Depth::default();
    for row in rows {
        let count: i64 = get(row, "jobs")?;
        let count = u64::try_from(count).unwrap_or(0);
        match state(row, 0)? {
            JobState::Queued => depth.queued[priority(row, "priority")?.level() as usize] += count,
            _ => depth.running += count,
        }
    }
    Ok(depth)
}
