//! Devices and device workers: the device section of each partition, under the lock design.
//!
//! `single`: LOCK_WAIT(device) → GPU[ LOCK_HELD(device)[ stage, compute, readback ] ].
//! `split`:  LOCK_WAIT(stage: a slot of two, then the staging lock) →
//!           GPU[ LOCK_HELD(stage)[stage], LOCK_WAIT(compute), LOCK_HELD(compute)[compute],
//!                LOCK_WAIT(stage), LOCK_HELD(stage)[readback] ].
//! A worker never holds two locks at once (only a slot and one lock, taken in that
//! order), so neither design can deadlock.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use super::job::Instance;
use super::job::Ticket;
use super::resident::{CircuitKey, KeyPreparation, ResidentKey, ResidentSet};
use super::{EngineError, LockDesign, Shared, Stage};
use g16_backend::{Backend, Element};
use crate::compiled::CompiledCircuit;
use crate::prover::{CheckedKey, KeyShape, MsmSums, PreparedKey, ProveError, Prover};
use crate::timeline::report::names;
use crate::timeline::{Layer, Timeline};
use crate::curve::Fr;

/// One device of the engine: an opened backend, the key it was started with (its bases
/// uploaded once and resident), and the keys jobs brought since ([`CircuitKey`]), resident
/// within a budget.
pub struct EngineDevice<B: Backend> {
    label: String,
    backend: B,
    /// The key of jobs that bring none.
    pinned: Option<Arc<ResidentKey>>,
    resident: ResidentSet,
}

impl<B: Backend> EngineDevice<B> {
    /// A device with no key of its own: every job brings one. `resident_budget` bounds the
    /// device memory the keys take (`None`: no bound).
    pub fn open(label: impl Into<String>, backend: B, resident_budget: Option<u64>) -> Self {
        EngineDevice { label: label.into(), backend, pinned: None, resident: ResidentSet::new(resident_budget) }
    }

    /// Uploads the key's bases to `backend`. `label` names the device in timelines and
    /// reports (`cuda:0`); it must be unique within an engine.
    pub fn prepare(label: impl Into<String>, backend: B, pk: &CheckedKey, tl: &Timeline) -> Result<Self, EngineError> {
        Self::prepare_with(label, backend, pk, KeyPreparation::WarmUp, tl)
    }

    /// [`EngineDevice::prepare`] with a choice of [`KeyPreparation`].
    pub fn prepare_with(
        label: impl Into<String>,
        backend: B,
        pk: &CheckedKey,
        how: KeyPreparation,
        tl: &Timeline,
    ) -> Result<Self, EngineError> {
        Self::pin(label.into(), backend, pk, None, how, tl)
    }

    /// [`EngineDevice::prepare`], and the compiled circuit's matrices too, for partitions that
    /// come as assignments ([`super::Partition::witness_of`], [`super::Partition::assignment`]).
    /// The circuit is checked against the key first.
    pub fn prepare_compiled(
        label: impl Into<String>,
        backend: B,
        pk: &CheckedKey,
        circuit: &CompiledCircuit,
        tl: &Timeline,
    ) -> Result<Self, EngineError> {
        Self::prepare_compiled_with(label, backend, pk, circuit, KeyPreparation::WarmUp, tl)
    }

    /// [`EngineDevice::prepare_compiled`] with a choice of [`KeyPreparation`].
    pub fn prepare_compiled_with(
        label: impl Into<String>,
        backend: B,
        pk: &CheckedKey,
        circuit: &CompiledCircuit,
        how: KeyPreparation,
        tl: &Timeline,
    ) -> Result<Self, EngineError> {
        let label = label.into();
        circuit.check_key(&pk.shape()).map_err(|e| EngineError::Device { device: label.clone(), source: e.into() })?;
        Self::pin(label, backend, pk, Some(circuit), how, tl)
    }

    fn pin(
        label: String,
        backend: B,
        pk: &CheckedKey,
        circuit: Option<&CompiledCircuit>,
        how: KeyPreparation,
        tl: &Timeline,
    ) -> Result<Self, EngineError> {
        let key = {
            let _g = tl.span_detail(Layer::Engine, names::PREPARE_KEY, format!("device={label}"));
            let result = ResidentKey::prepare(&backend, "", pk, circuit, how);
            tl.record_device_spans(&backend.drain_device_spans());
            result.map_err(|source| EngineError::Device { device: label.clone(), source })?
        };
        Ok(EngineDevice { label, backend, pinned: Some(Arc::new(key)), resident: ResidentSet::new(None) })
    }

    /// Bounds the device memory the keys jobs bring take; the least recently used go first.
    pub fn with_resident_budget(mut self, bytes: Option<u64>) -> Self {
        self.resident = ResidentSet::new(bytes);
        self
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The key the device was started with, if any.
    pub fn key(&self) -> Option<&PreparedKey> {
        self.pinned.as_ref().map(|k| &k.key)
    }

    /// Prepares `circuit` on the device now (if it is not resident), so a first job does not
    /// wait for its upload.
    pub fn preload(&self, circuit: &CircuitKey) -> Result<(), ProveError> {
        self.resident.get_or_prepare(&self.backend, circuit).map(drop)
    }

    /// Prepares `circuit` on the device now where the resident budget has room for it beside
    /// the keys already resident (`false`, nothing evicted, where it has not).
    pub fn preload_into_free_room(&self, circuit: &CircuitKey) -> Result<bool, ProveError> {
        self.resident.prepare_into_free_room(&self.backend, circuit)
    }

    /// Forgets the named key; its memory is freed once no partition uses it.
    pub fn evict(&self, name: &str) -> bool {
        self.resident.evict(name)
    }

    /// The named keys resident, with their bytes, most recently used first.
    pub fn resident(&self) -> Vec<(String, u64)> {
        self.resident.list()
    }

    /// The key a job's partitions are proven with here: the job's own, prepared on first use,
    /// or the device's pinned one.
    pub(crate) fn key_for(&self, circuit: Option<&CircuitKey>) -> Result<Arc<ResidentKey>, ProveError> {
        match circuit {
            Some(circuit) => self.resident.get_or_prepare(&self.backend, circuit),
            None => self.pinned.clone().ok_or(ProveError::NoKey),
        }
    }

    pub fn into_backend(self) -> B {
        self.backend
    }
}

/// Device memory one partition needs: a, b, c and the assignment, plus a quarter for the
/// backend's own scratch (MSM buckets, NTT twiddles), which the trait does not report.
pub fn partition_bytes(shape: &KeyShape) -> u64 {
    let scalars = 3 * shape.domain_size as u64 + shape.num_variables as u64;
    scalars * Fr::HOST_BYTES as u64 * 5 / 4
}

/// Device memory the key's resident bases take.
pub fn resident_bytes(key: &PreparedKey) -> u64 {
    key.resident_bytes()
}

/// The lock design a device runs: `split` only where two partitions fit beside the bases.
/// The message says why a device runs `single` when `split` was asked for, or that the
/// budget could not be checked.
pub fn effective_design(
    asked: LockDesign,
    label: &str,
    memory: Option<u64>,
    key: &PreparedKey,
) -> (LockDesign, Option<String>) {
    if asked == LockDesign::Single {
        return (asked, None);
    }
    let (bases, partition) = (resident_bytes(key), partition_bytes(&key.shape()));
    let need = bases + 2 * partition;
    match memory {
        None => (
            LockDesign::Split,
            Some(format!("{label}: device memory unknown; split runs without a memory budget (needs {need} bytes)")),
        ),
        Some(memory) if need > memory => (
            LockDesign::Single,
            Some(format!(
                "{label}: split needs {need} bytes for two partitions in flight (bases {bases} + 2 × {partition}), \
                 the device has {memory}: running single"
            )),
        ),
        Some(_) => (LockDesign::Split, None),
    }
}

/// A counting semaphore: the split design's two device slots.
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

struct SlotPermit<'a>(&'a Slots);

impl Slots {
    fn new(n: usize) -> Self {
        Slots { free: Mutex::new(n), freed: Condvar::new() }
    }

    fn acquire(&self) -> SlotPermit<'_> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        SlotPermit(self)
    }
}

impl Drop for SlotPermit<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
}

/// A device's locks. They guard no data, only exclusive use of the device, so a lock
/// poisoned by a panicking partition is simply taken again.
pub(crate) struct DeviceLocks {
    pub design: LockDesign,
    /// `single`: the whole device section; `split`: the compute lock.
    device: Mutex<()>,
    /// `split` only: staging and freeing.
    stage: Mutex<()>,
    slots: Slots,
}

fn take(lock: &Mutex<()>) -> MutexGuard<'_, ()> {
    lock.lock().unwrap_or_else(PoisonError::into_inner)
}

impl DeviceLocks {
    pub fn new(design: LockDesign) -> Self {
        DeviceLocks { design, device: Mutex::new(()), stage: Mutex::new(()), slots: Slots::new(2) }
    }
}

/// A synthesized partition in the channel.
pub(crate) struct Ready {
    pub ticket: Ticket,
    pub instance: Instance,
}

/// A partition whose device work is done, on its way to the finalizer.
pub(crate) struct Proven {
    pub ticket: Ticket,
    pub sums: MsmSums,
    /// The host copy: its public inputs are verified against, and freeing it (hundreds of
    /// MB at 2^22) is the finalizer's work, not the device worker's.
    pub instance: Instance,
    /// The key it was proven with, which assembles it.
    pub key: Arc<ResidentKey>,
}

/// A device worker: takes synthesized partitions from the channel until it is closed and
/// empty. A failure or panic fails the partition (and so its job), never the worker.
pub(crate) fn device_worker<B: Backend>(shared: &Shared<B>, device: usize, worker: usize, finalizer: Sender<Proven>) {
    let dev = &shared.devices[device].device;
    loop {
        // The keys resident now: a partition of one of them needs no upload here.
        let held: Vec<String> = dev.resident().into_iter().map(|(name, _)| name).collect();
        let resident =
            |ready: &Ready| ready.ticket.job.circuit.as_ref().is_some_and(|c| held.iter().any(|h| h == c.name()));
        let Some(Ready { mut ticket, instance }) = shared.channel.pop_preferring(resident) else { break };
        ticket.end_wait();
        if let Some(why) = shared.reason_to_stop(&ticket) {
            ticket.cancel(why);
            continue;
        }
        let ctx = WorkerCtx { shared, device, worker };
        let outcome = catch_unwind(AssertUnwindSafe(|| ctx.device_section(&ticket, &instance)));
        let (job, partition) = (ticket.job.id, ticket.partition);
        match outcome {
            Ok(Ok((sums, key))) => {
                let item = Proven { ticket, sums, instance, key };
                // The finalizer outlives the device workers; if it is gone, the ticket
                // (dropped with the item) settles the partition as cancelled.
                let _ = finalizer.send(item);
            }
            Ok(Err(source)) => {
                shared.counters.failed();
                ticket.fail(EngineError::Partition { job, partition, stage: Stage::Device, source })
            }
            Err(panic) => {
                shared.counters.failed();
                let message = super::error::panic_message(panic.as_ref());
                ticket.fail(EngineError::Panicked { job, partition, stage: Stage::Device, message })
            }
        }
    }
}

struct WorkerCtx<'a, B: Backend> {
    shared: &'a Shared<B>,
    device: usize,
    worker: usize,
}

impl<B: Backend> WorkerCtx<'_, B> {
    /// The partition's device work: its key (prepared here on first use), staging, compute,
    /// readback. Returns the key with the sums, for the finalizer.
    fn device_section(&self, ticket: &Ticket, instance: &Instance) -> Result<(MsmSums, Arc<ResidentKey>), ProveError> {
        let slot = &self.shared.devices[self.device];
        let (dev, locks, tl) = (&slot.device, &slot.locks, &ticket.tl);
        let prover = Prover::new(&dev.backend);
        let resident = std::cell::OnceCell::new();
        // Under the staging (or device) lock: preparing a key is an upload like staging.
        let stage = || {
            let key: &Arc<ResidentKey> = match resident.get() {
                Some(key) => key,
                None => {
                    let key = {
                        let _p = tl.span(Layer::Engine, names::PREPARE_KEY);
                        dev.key_for(ticket.job.circuit.as_deref())?
                    };
                    resident.get_or_init(|| key)
                }
            };
            match instance {
                Instance::Synthesized(syn) => prover.stage(&key.key, syn, tl),
                Instance::Assignment(z) => match &key.circuit {
                    Some(circuit) => prover.stage_assignment(&key.key, circuit, z, tl),
                    None => Err(ProveError::NoCompiledCircuit),
                },
            }
        };
        let key = || resident.get().map(|k| &k.key).ok_or_else(|| ProveError::Internal("no key after staging".into()));
        let gpu_detail = format!("device={} worker={} lock={}", dev.label, self.worker, locks.design);
        let sums = match locks.design {
            LockDesign::Single => {
                let _lock = {
                    let _w = tl.span_under(Layer::Engine, names::LOCK_WAIT, Some(ticket.span), "lock=device");
                    tl.instant(Layer::Engine, names::GPU_PICKUP, gpu_detail.as_str());
                    take(&locks.device)
                };
                let _gpu = tl.span_under(Layer::Engine, names::GPU, Some(ticket.span), gpu_detail);
                let _held = tl.span_detail(Layer::Engine, names::LOCK_HELD, "lock=device");
                let _busy = Busy::new(&slot.busy_ns);
                let mut staged = drained(tl, &dev.backend, stage())?;
                let sums = drained(tl, &dev.backend, prover.compute(key()?, &mut staged, ticket.randomness.r(), tl))?;
                prover.release(staged, tl);
                drained(tl, &dev.backend, Ok::<_, ProveError>(sums))?
            }
            LockDesign::Split => {
                let (_permit, stage_lock) = {
                    let _w = tl.span_under(Layer::Engine, names::LOCK_WAIT, Some(ticket.span), "lock=stage");
                    tl.instant(Layer::Engine, names::GPU_PICKUP, gpu_detail.as_str());
                    let permit = locks.slots.acquire();
                    (permit, take(&locks.stage))
                };
                let _gpu = tl.span_under(Layer::Engine, names::GPU, Some(ticket.span), gpu_detail);
                let mut staged = {
                    let _held = tl.span_detail(Layer::Engine, names::LOCK_HELD, "lock=stage");
                    let _stage_lock = stage_lock;
                    drained(tl, &dev.backend, stage())?
                };
                let sums = {
                    let _compute_lock = wait_for(tl, "compute", &locks.device);
                    let _held = tl.span_detail(Layer::Engine, names::LOCK_HELD, "lock=compute");
                    let _busy = Busy::new(&slot.busy_ns);
                    drained(tl, &dev.backend, prover.compute(key()?, &mut staged, ticket.randomness.r(), tl))?
                };
                let _stage_lock = wait_for(tl, "stage", &locks.stage);
                let _held = tl.span_detail(Layer::Engine, names::LOCK_HELD, "lock=stage");
                prover.release(staged, tl);
                drained(tl, &dev.backend, Ok::<_, ProveError>(sums))?
            }
        };
        let key = resident.get().cloned().ok_or_else(|| ProveError::Internal("no key after staging".into()))?;
        Ok((sums, key))
    }
}

/// Adds the time from its making to its drop to a device's busy time: the time the device
/// (compute) lock is held, which never overlaps itself on one device.
struct Busy<'a> {
    total_ns: &'a std::sync::atomic::AtomicU64,
    since: std::time::Instant,
}

impl<'a> Busy<'a> {
    fn new(total_ns: &'a std::sync::atomic::AtomicU64) -> Self {
        Busy { total_ns, since: std::time::Instant::now() }
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        let ns = u64::try_from(self.since.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.total_ns.fetch_add(ns, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Takes `lock`, recording the wait.
fn wait_for<'a>(tl: &Timeline, name: &str, lock: &'a Mutex<()>) -> MutexGuard<'a, ()> {
    let _w = tl.span_detail(Layer::Engine, names::LOCK_WAIT, format!("lock={name}"));
    take(lock)
}

/// Records the device spans finished so far, then passes `result` on.
fn drained<T, B: Backend>(tl: &Timeline, backend: &B, result: T) -> T {
    tl.record_device_spans(&backend.drain_device_spans());
    result
}
