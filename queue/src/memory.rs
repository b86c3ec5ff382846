//! [`MemoryStore`]: one server's queue, in its memory.
//!
//! Leases run on the monotonic clock ([`Instant`]), so a wall-clock step never expires or
//! extends one; deadlines are wall-clock times ([`SystemTime`]) because a client names them.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use tokio::sync::Notify;

use crate::{
    CircuitRecord, CircuitSummary, Depth, JobId, JobRecord, JobState, JobStore, Lease, NewJob, Outcome, Priority,
    StoreError, StoreResult, ATTEMPTS_EXHAUSTED, MAX_ATTEMPTS,
};

/// Where a queued job stands in line: the highest priority first, then the first submitted.
type Place = (Reverse<Priority>, u64);

struct Job {
    record: JobRecord,
    /// Dropped when the job settles: nobody reads it after.
    witness: Option<Arc<Vec<u8>>>,
    /// Submission order (timestamps can tie).
    seq: u64,
    lease_until: Option<Instant>,
    changed: Arc<Notify>,
}

impl Job {
    fn place(&self) -> Place {
        (Reverse(self.record.priority), self.seq)
    }
}

struct Circuit {
    record: CircuitRecord,
    registered: SystemTime,
}

#[derive(Default)]
struct Inner {
    circuits: HashMap<String, Circuit>,
    jobs: HashMap<JobId, Job>,
    /// Every queued job, in line.
    queued: BTreeMap<Place, JobId>,
    /// The queued jobs of each circuit, in line: a worker's preferred circuits are found
    /// without walking the whole line.
    queued_by_circuit: HashMap<String, BTreeMap<Place, JobId>>,
    /// The queued jobs that have a deadline, soonest first.
    deadlines: BTreeSet<(SystemTime, u64, JobId)>,
    /// Running jobs: as many as the workers hold, so scanning them for expired leases is cheap.
    running: HashSet<JobId>,
    next_seq: u64,
}

/// One server's queue, in its memory; lost with the process. Settled jobs stay listed (without
/// their witnesses) until purged.
#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves maps that are still consistent enough
        // to serve (every update below is a few infallible map operations).
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Inner {
    fn unqueue(&mut self, id: JobId) {
        let Some(job) = self.jobs.get(&id) else { return };
        let place = job.place();
        self.queued.remove(&place);
        if let Some(line) = self.queued_by_circuit.get_mut(&job.record.circuit) {
            line.remove(&place);
            if line.is_empty() {
                self.queued_by_circuit.remove(&job.record.circuit);
            }
        }
        if let Some(deadline) = job.record.deadline {
            self.deadlines.remove(&(deadline, job.seq, id));
        }
    }

    /// Moves a queued or running job to a final state and wakes its watchers.
    fn settle(&mut self, id: JobId, state: JobState, outcome: Option<Outcome>) {
        self.unqueue(id);
        self.running.remove(&id);
        let Some(job) = self.jobs.get_mut(&id) else { return };
        job.record.state = state;
        job.record.finished = Some(SystemTime::now());
        job.record.outcome = outcome;
        job.lease_until = None;
        job.witness = None;
        job.changed.notify_waiters();
    }

    /// Settles the queued jobs whose deadline passed.
    fn expire_deadlines(&mut self, now: SystemTime) {
        while let Some(&(deadline, _, id)) = self.deadlines.first() {
            if deadline > now {
                break;
            }
            self.settle(id, JobState::Expired, None);
        }
    }

    /// The running jobs whose lease expired and that may be taken again; those taken
    /// [`MAX_ATTEMPTS`] times already are settled `Failed` instead.
    fn expired_leases(&mut self, now: Instant) -> Vec<JobId> {
        let expired: Vec<JobId> = self
            .running
            .iter()
            .copied()
            .filter(|id| self.jobs[id].lease_until.is_some_and(|until| until < now))
            .collect();
        let mut retake = Vec::new();
        for id in expired {
            let attempts = self.jobs[&id].record.attempts;
            if attempts >= MAX_ATTEMPTS {
                let outcome = Outcome::Failed {
                    code: ATTEMPTS_EXHAUSTED.to_string(),
                    message: format!("abandoned by {attempts} workers in turn (each lease expired)"),
                };
                self.settle(id, JobState::Failed, Some(outcome));
            } else {
                retake.push(id);
            }
        }
        retake
    }

    /// The next job for a worker preferring `prefer`: among the queued jobs and `retake`, the
    /// highest priority, then a preferred circuit, then the first submitted.
    fn next(&self, prefer: &[String], retake: &[JobId]) -> Option<JobId> {
        let key = |id: JobId| {
            let job = &self.jobs[&id];
            let preferred = prefer.contains(&job.record.circuit);
            (Reverse(job.record.priority), !preferred, job.seq, id)
        };
        // The best job overall is either the first in line (when no preferred job shares its
        // priority), or the first in line of a preferred circuit, or a lease to take again.
        let first = self.queued.first_key_value().map(|(_, &id)| id);
        let first_preferred = prefer
            .iter()
            .filter_map(|circuit| self.queued_by_circuit.get(circuit)?.first_key_value())
            .min()
            .map(|(_, &id)| id);
        first.into_iter().chain(first_preferred).chain(retake.iter().copied()).min_by_key(|&id| key(id))
    }
}

#[async_trait]
impl JobStore for MemoryStore {
    async fn put_circuit(&self, circuit: CircuitRecord) -> StoreResult<()> {
        let mut inner = self.lock();
        match inner.circuits.get(&circuit.name) {
            Some(known) if known.record.digest == circuit.digest => Ok(()),
            Some(_) => Err(StoreError::CircuitConflict(circuit.name)),
            None => {
                let name = circuit.name.clone();
                inner.circuits.insert(name, Circuit { record: circuit, registered: SystemTime::now() });
                Ok(())
            }
        }
    }

    async fn circuit(&self, name: &str) -> StoreResult<Option<CircuitRecord>> {
        Ok(self.lock().circuits.get(name).map(|c| c.record.clone()))
    }

    async fn circuits(&self) -> StoreResult<Vec<CircuitSummary>> {
        let inner = self.lock();
        let mut all: Vec<CircuitSummary> = inner
            .circuits
            .values()
            .map(|c| CircuitSummary {
                name: c.record.name.clone(),
                digest: c.record.digest,
                package_bytes: c.record.package.len() as u64,
                registered: c.registered,
            })
            .collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(all)
    }

    async fn submit(&self, job: NewJob) -> StoreResult<()> {
        let mut inner = self.lock();
        if !inner.circuits.contains_key(&job.circuit) {
            return Err(StoreError::UnknownCircuit(job.circuit));
        }
        if inner.jobs.contains_key(&job.id) {
            return Err(StoreError::DuplicateJob(job.id));
        }
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let record = JobRecord {
            id: job.id,
            circuit: job.circuit,
            priority: job.priority,
            state: JobState::Queued,
            deadline: job.deadline,
            submitted: SystemTime::now(),
            started: None,
            finished: None,
            worker: None,
            attempts: 0,
            outcome: None,
        };
        let entry = Job {
            record,
            witness: Some(Arc::new(job.witness)),
            seq,
            lease_until: None,
            changed: Arc::new(Notify::new()),
        };
        let place = entry.place();
        inner.queued.insert(place, job.id);
        inner.queued_by_circuit.entry(entry.record.circuit.clone()).or_default().insert(place, job.id);
        if let Some(deadline) = job.deadline {
            inner.deadlines.insert((deadline, seq, job.id));
        }
        inner.jobs.insert(job.id, entry);
        Ok(())
    }

    async fn take(&self, worker: &str, prefer: &[String], lease: Duration, limit: usize) -> StoreResult<Vec<Lease>> {
        let mut inner = self.lock();
        inner.expire_deadlines(SystemTime::now());
        let now = Instant::now();
        let mut retake = inner.expired_leases(now);
        let mut taken = Vec::new();
        while taken.len() < limit {
            let Some(id) = inner.next(prefer, &retake) else { break };
            inner.unqueue(id);
            retake.retain(|&r| r != id);
            inner.running.insert(id);
            let job = inner.jobs.get_mut(&id).expect("a job in line is a known job");
            job.record.state = JobState::Running;
            job.record.worker = Some(worker.to_string());
            job.record.started = Some(SystemTime::now());
            job.record.attempts += 1;
            job.lease_until = Some(now + lease);
            job.changed.notify_waiters();
            taken.push(Lease {
                job: id,
                circuit: job.record.circuit.clone(),
                priority: job.record.priority,
                witness: job.witness.clone().unwrap_or_default(),
                attempt: job.record.attempts,
            });
        }
        Ok(taken)
    }

    async fn renew(&self, worker: &str, jobs: &[JobId], lease: Duration) -> StoreResult<Vec<JobId>> {
        let mut inner = self.lock();
        let until = Instant::now() + lease;
        let mut held = Vec::new();
        for id in jobs {
            if let Some(job) = inner.jobs.get_mut(id) {
                // An expired lease nobody took again is still this worker's: its proof is as
                // good as anyone's.
                if job.record.state == JobState::Running && job.record.worker.as_deref() == Some(worker) {
                    job.lease_until = Some(until);
                    held.push(*id);
                }
            }
        }
        Ok(held)
    }

    async fn complete(&self, worker: &str, job: JobId, outcome: Outcome) -> StoreResult<bool> {
        let mut inner = self.lock();
        let holds = inner
            .jobs
            .get(&job)
            .is_some_and(|j| j.record.state == JobState::Running && j.record.worker.as_deref() == Some(worker));
        if !holds {
            return Ok(false);
        }
        let state = match outcome {
            Outcome::Proved { .. } => JobState::Succeeded,
            Outcome::Failed { .. } => JobState::Failed,
        };
        inner.settle(job, state, Some(outcome));
        Ok(true)
    }

    async fn cancel(&self, job: JobId) -> StoreResult<Option<JobState>> {
        let mut inner = self.lock();
        let Some(state) = inner.jobs.get(&job).map(|j| j.record.state) else { return Ok(None) };
        if state.is_final() {
            return Ok(Some(state));
        }
        inner.settle(job, JobState::Cancelled, None);
        Ok(Some(JobState::Cancelled))
    }

    async fn job(&self, job: JobId) -> StoreResult<Option<JobRecord>> {
        Ok(self.lock().jobs.get(&job).map(|j| j.record.clone()))
    }

    async fn purge(&self, settled_before: SystemTime) -> StoreResult<u64> {
        let mut inner = self.lock();
        let before = inner.jobs.len();
        // Settled jobs are in no index but the map.
        inner.jobs.retain(|_, j| !(j.record.state.is_final() && j.record.finished.is_some_and(|f| f < settled_before)));
        Ok((before - inner.jobs.len()) as u64)
    }

    async fn depth(&self) -> StoreResult<Depth> {
        let inner = self.lock();
        let mut depth = Depth { running: inner.running.len() as u64, ..Depth::default() };
        for (Reverse(priority), _) in inner.queued.keys() {
            depth.queued[priority.level() as usize] += 1;
        }
        Ok(depth)
    }

    async fn changed(&self, job: JobId, timeout: Duration) {
        let notify: Arc<Notify>;
        let notified;
        {
            let inner = self.lock();
            notify = match inner.jobs.get(&job) {
                Some(j) if !j.record.state.is_final() => j.changed.clone(),
                // Settled or unknown: nothing more to wait for.
                _ => return,
            };
            // Made under the lock, so every change after the look-up wakes it (a `Notified`
            // receives `notify_waiters` from its creation on, polled or not).
            notified = notify.notified();
        }
        let _ = tokio::time::timeout(timeout, notified).await;
    }
}
