//! Jobs and their partitions: what a caller submits, what it waits on, and the ticket each
//! partition carries through the stages so that it is settled exactly once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use ark_relations::gr1cs::ConstraintSynthesizer;

use super::resident::CircuitKey;
use super::EngineError;
use crate::compiled::witness;
use crate::prover::{synthesize, ProveError, Randomness, Synthesized};
use crate::timeline::report::names;
use crate::timeline::{Layer, SpanId, Timeline};
use crate::curve::{Fr, Proof};

/// What a synthesis worker makes of a partition: an instance synthesized in full (rows a, b, c
/// and the assignment), or the assignment z alone, for the engine's compiled circuit.
pub enum Instance {
    Synthesized(Synthesized),
    Assignment(Vec<Fr>),
}

impl Instance {
    /// The public inputs, as a verifier takes them (without the constant 1); `num_instance`
    /// is the key's count of instance variables.
    pub fn public_inputs(&self, num_instance: usize) -> &[Fr] {
        match self {
            Instance::Synthesized(syn) => syn.public_inputs(),
            Instance::Assignment(z) => &z[1..num_instance.min(z.len()).max(1)],
        }
    }
}

type MakeFn = Box<dyn FnOnce() -> Result<Instance, ProveError> + Send>;

/// One partition of a job: something that makes an instance (on a synthesis worker), and the
/// proof's randomness (r, s), drawn from the operating system's RNG when the partition is made
/// (or given, for tests and bit-exact checks: [`Partition::with_randomness`]). Every partition of
/// a job must fit the engine's proving key.
pub struct Partition {
    pub(crate) make: MakeFn,
    pub(crate) randomness: Randomness,
}

impl Partition {
    fn of(make: MakeFn) -> Self {
        Partition { make, randomness: Randomness::from_os() }
    }

    /// A partition made by any synthesizer (it runs on a synthesis worker; a panic in it
    /// fails the job, not the engine).
    pub fn new(synthesize: impl FnOnce() -> Result<Synthesized, ProveError> + Send + 'static) -> Self {
        Partition::of(Box::new(move || synthesize().map(Instance::Synthesized)))
    }

    /// A partition of an arkworks circuit, synthesized in full the way [`synthesize`] does.
    pub fn circuit<C: ConstraintSynthesizer<Fr> + Send + 'static>(circuit: C) -> Self {
        Partition::new(move || synthesize(circuit))
    }

    /// A partition synthesized already.
    pub fn synthesized(syn: Synthesized) -> Self {
        Partition::new(move || Ok(syn))
    }

    /// A partition of an arkworks circuit of the engine's compiled circuit: its witness alone
    /// is computed ([`witness`]), and the device computes a, b, c.
    pub fn witness_of<C: ConstraintSynthesizer<Fr> + Send + 'static>(circuit: C) -> Self {
        Partition::of(Box::new(move || witness(circuit).map(Instance::Assignment).map_err(ProveError::from)))
    }

    /// A partition whose assignment `make` computes on a synthesis worker (a witness file
    /// parsed, say); see [`Partition::assignment`].
    pub fn assignment_from(make: impl FnOnce() -> Result<Vec<Fr>, ProveError> + Send + 'static) -> Self {
        Partition::of(Box::new(move || make().map(Instance::Assignment)))
    }

    /// A partition given as its assignment z = [1, public inputs…, witness…] of the engine's
    /// compiled circuit (a circom witness, say).
    pub fn assignment(z: Vec<Fr>) -> Self {
        Partition::of(Box::new(move || Ok(Instance::Assignment(z))))
    }

    /// The same partition proven with the randomness given instead of a fresh draw: for tests
    /// and bit-exact checks ([`Randomness::fixed_for_tests`] says what a fixed pair costs).
    pub fn with_randomness(self, randomness: Randomness) -> Self {
        Partition { randomness, ..self }
    }
}

/// One partition's result.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionProof {
    pub proof: Proof,
    /// The instance's public inputs (without the constant 1), as synthesized.
    pub public_inputs: Vec<Fr>,
    /// Whether the finalizer verified it (false when verification is off; a proof that
    /// fails verification fails its job instead).
    pub verified: bool,
}

/// A finished job: one proof per partition, in partition order.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOutput {
    pub job: u64,
    pub proofs: Vec<PartitionProof>,
}

/// A job's shared state: its partitions' results, settled by whichever stage finishes
/// (or fails, or drops) each partition.
pub(crate) struct JobState {
    pub id: u64,
    pub partitions: u32,
    /// The circuit the job's partitions are proven with (`None`: each device's pinned key).
    pub circuit: Option<Arc<CircuitKey>>,
    /// Set by the first failure: later stages skip the job's remaining partitions.
    failed: AtomicBool,
    inner: Mutex<JobInner>,
    done: Condvar,
    /// The job's span and the timeline it lives in.
    tl: Timeline,
    span: SpanId,
}

struct JobInner {
    proofs: Vec<Option<PartitionProof>>,
    unsettled: u32,
    /// The first error (the failure that cancelled the rest), taken by `wait`.
    error: Option<EngineError>,
}

impl JobState {
    pub fn new(id: u64, partitions: u32, circuit: Option<Arc<CircuitKey>>, tl: Timeline, span: SpanId) -> Self {
        JobState {
            id,
            partitions,
            circuit,
            failed: AtomicBool::new(false),
            inner: Mutex::new(JobInner { proofs: vec![None; partitions as usize], unsettled: partitions, error: None }),
            done: Condvar::new(),
            tl,
            span,
        }
    }

    /// Results are plain data, written whole under the lock: poisoning cannot leave them torn.
    fn inner(&self) -> MutexGuard<'_, JobInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn is_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    fn settle(&self, partition: u32, result: Result<PartitionProof, EngineError>) {
        let mut inner = self.inner();
        match result {
            Ok(proof) => inner.proofs[partition as usize] = Some(proof),
            Err(e) => {
                self.failed.store(true, Ordering::Release);
                inner.error.get_or_insert(e);
            }
        }
        inner.unsettled -= 1;
        if inner.unsettled == 0 {
            self.tl.end(self.span);
            self.done.notify_all();
        }
    }

    /// Fails the job as cancelled: partitions not yet on a device are settled at their next
    /// stage; device work under way finishes first (kernels are not interrupted).
    fn cancel(&self, reason: &str) {
        self.failed.store(true, Ordering::Release);
        let error = EngineError::Cancelled { job: self.id, partition: 0, reason: reason.to_string() };
        self.inner().error.get_or_insert(error);
    }

    fn settled(&self) -> u32 {
        self.partitions - self.inner().unsettled
    }

    /// Blocks until every partition is settled (or `deadline` passes: then `None`).
    fn wait_until(&self, deadline: Option<Instant>) -> Option<Result<JobOutput, EngineError>> {
        let mut inner = self.inner();
        while inner.unsettled > 0 {
            inner = match deadline {
                None => self.done.wait(inner).unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.checked_duration_since(Instant::now())?;
                    self.done.wait_timeout(inner, left).unwrap_or_else(PoisonError::into_inner).0
                }
            };
        }
        if let Some(error) = inner.error.take() {
            return Some(Err(error));
        }
        let proofs: Option<Vec<PartitionProof>> = inner.proofs.iter_mut().map(Option::take).collect();
        Some(match proofs {
            Some(proofs) => Ok(JobOutput { job: self.id, proofs }),
            // Unreachable while every settle either stores a proof or an error; kept typed.
            None => Err(EngineError::Cancelled { job: self.id, partition: 0, reason: "results already taken".into() }),
        })
    }
}

/// What a caller holds for a submitted job.
pub struct JobHandle {
    pub(crate) state: Arc<JobState>,
}

impl JobHandle {
    pub fn id(&self) -> u64 {
        self.state.id
    }

    pub fn partitions(&self) -> u32 {
        self.state.partitions
    }

    /// Partitions finished, failed or cancelled so far.
    pub fn settled(&self) -> u32 {
        self.state.settled()
    }

    pub fn is_finished(&self) -> bool {
        self.settled() == self.partitions()
    }

    /// Cancels the job: [`JobHandle::wait`] returns [`EngineError::Cancelled`] once the
    /// partitions on a device have finished their work.
    pub fn cancel(&self, reason: &str) {
        self.state.cancel(reason)
    }

    /// Something that cancels the job from elsewhere while [`JobHandle::wait`] holds the handle.
    pub fn canceller(&self) -> JobCanceller {
        JobCanceller { state: Arc::clone(&self.state) }
    }

    /// Waits until every partition is settled; then the proofs, or the job's first error.
    /// A failed job's other partitions are cancelled, so this returns soon after a failure.
    pub fn wait(self) -> Result<JobOutput, EngineError> {
        match self.state.wait_until(None) {
            Some(result) => result,
            None => unreachable!("waiting without a deadline only returns once settled"),
        }
    }

    /// [`JobHandle::wait`] for at most `timeout`; the handle comes back if the job is not done.
    pub fn wait_timeout(self, timeout: Duration) -> Result<Result<JobOutput, EngineError>, JobHandle> {
        match self.state.wait_until(Some(Instant::now() + timeout)) {
            Some(result) => Ok(result),
            None => Err(self),
        }
    }
}

/// Cancels one job (see [`JobHandle::cancel`]).
#[derive(Clone)]
pub struct JobCanceller {
    state: Arc<JobState>,
}

impl JobCanceller {
    pub fn cancel(&self, reason: &str) {
        self.state.cancel(reason)
    }
}

impl std::fmt::Debug for JobHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JobHandle(job {}, {}/{} settled)", self.id(), self.settled(), self.partitions())
    }
}

/// One partition on its way through the stages. It is settled exactly once: explicitly by
/// the stage that finishes or fails it, or, if it is dropped unsettled (a queue cleared at
/// shutdown, a worker lost), by its `Drop`, as cancelled. So no job waits forever.
pub(crate) struct Ticket {
    pub job: Arc<JobState>,
    pub partition: u32,
    /// This partition's timeline (labels: job, partition).
    pub tl: Timeline,
    /// The partition's `prove` span, parent of every stage's span.
    pub span: SpanId,
    /// The proof's randomness.
    pub randomness: Randomness,
    /// A span begun on one thread and ended on another (waiting for a synthesis worker,
    /// waiting in the channel), ended when the next stage picks the partition up.
    pending: Option<SpanId>,
    settled: bool,
}

impl Ticket {
    pub fn new(job: Arc<JobState>, partition: u32, tl: Timeline, span: SpanId, randomness: Randomness) -> Self {
        Ticket { job, partition, tl, span, randomness, pending: None, settled: false }
    }

    /// Begins a cross-thread wait span under the partition's span (ending any before it).
    pub fn begin_wait(&mut self, name: &str) {
        self.end_wait();
        self.pending = Some(self.tl.begin(Layer::Engine, name, Some(self.span), ""));
    }

    pub fn end_wait(&mut self) {
        if let Some(id) = self.pending.take() {
            self.tl.end(id);
        }
    }

    pub fn job_failed(&self) -> bool {
        self.job.is_failed()
    }

    pub fn complete(self, proof: PartitionProof) {
        self.settle(Ok(proof));
    }

    pub fn fail(self, error: EngineError) {
        self.settle(Err(error));
    }

    pub fn cancel(self, reason: &str) {
        let error = EngineError::Cancelled { job: self.job.id, partition: self.partition, reason: reason.to_string() };
        self.fail(error);
    }

    fn settle(mut self, result: Result<PartitionProof, EngineError>) {
        self.finish(result);
    }

    fn finish(&mut self, result: Result<PartitionProof, EngineError>) {
        if std::mem::replace(&mut self.settled, true) {
            return;
        }
        self.end_wait();
        if let Err(e) = &result {
            self.tl.instant(Layer::Engine, names::PARTITION_FAILED, e.to_string());
        }
        self.tl.end(self.span);
        self.job.settle(self.partition, result);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let error = EngineError::Cancelled {
            job: self.job.id,
            partition: self.partition,
            reason: "dropped unfinished: the engine shut down or a worker was lost".to_string(),
        };
        self.finish(Err(error));
    }
}
