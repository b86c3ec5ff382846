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
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use super::job::Instance;
use super::job::Ticket;
use super::{EngineError, LockDesign, Shared, Stage};
use crate::backend::{Backend, Element};
use crate::compiled::CompiledCircuit;
use crate::prover::{CheckedKey, KeyShape, MsmSums, PreparedCircuit, PreparedKey, ProveError, Prover};
use crate::timeline::report::names;
use crate::timeline::{Layer, Timeline};
use crate::Fr;

/// One device of the engine: an opened backend and the proving key prepared on it (its
/// bases uploaded once and resident).
pub struct EngineDevice<B: Backend> {
    label: String,
    backend: B,
    key: PreparedKey,
    /// The compiled circuit, where partitions come as assignments.
    circuit: Option<PreparedCircuit>,
}

impl<B: Backend> EngineDevice<B> {
    /// Uploads the key's bases to `backend`. `label` names the device in timelines and
    /// reports (`cuda:0`); it must be unique within an engine.
    pub fn prepare(label: impl Into<String>, backend: B, pk: &CheckedKey, tl: &Timeline) -> Result<Self, EngineError> {
        let label = label.into();
        let key = {
            let _g = tl.span_detail(Layer::Engine, "prepare_key", format!("device={label}"));
            let result = Prover::new(&backend).prepare(pk);
            tl.record_device_spans(&backend.drain_device_spans());
            result.map_err(|source| EngineError::Device { device: label.clone(), source })?
        };
        Ok(EngineDevice { label, backend, key, circuit: None })
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
        let label = label.into();
        circuit.check_key(&pk.shape()).map_err(|source| EngineError::Device { device: label.clone(), source })?;
        let mut device = Self::prepare(label, backend, pk, tl)?;
        let prepared = {
            let _g = tl.span_detail(Layer::Engine, "prepare_circuit", format!("device={}", device.label));
            let result = Prover::new(&device.backend).prepare_circuit(circuit);
            tl.record_device_spans(&device.backend.drain_device_spans());
            result.map_err(|source| EngineError::Device { device: device.label.clone(), source })?
        };
        device.circuit = Some(prepared);
        Ok(device)
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn backend(&self) -> &B {
        &self.backend
    }

    pub fn key(&self) -> &PreparedKey {
        &self.key
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
    /// The device whose key assembles it (every device's key holds the same host points).
    pub device: usize,
}

/// A device worker: takes synthesized partitions from the channel until it is closed and
/// empty. A failure or panic fails the partition (and so its job), never the worker.
pub(crate) fn device_worker<B: Backend>(shared: &Shared<B>, device: usize, worker: usize, finalizer: Sender<Proven>) {
    while let Some(Ready { mut ticket, instance }) = shared.channel.pop() {
        ticket.end_wait();
        if let Some(why) = shared.reason_to_stop(&ticket) {
            ticket.cancel(why);
            continue;
        }
        let ctx = WorkerCtx { shared, device, worker };
        let outcome = catch_unwind(AssertUnwindSafe(|| ctx.device_section(&ticket, &instance)));
        let (job, partition) = (ticket.job.id, ticket.partition);
        match outcome {
            Ok(Ok(sums)) => {
                let item = Proven { ticket, sums, instance, device };
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
    fn device_section(&self, ticket: &Ticket, instance: &Instance) -> Result<MsmSums, ProveError> {
        let slot = &self.shared.devices[self.device];
        let (dev, locks, tl) = (&slot.device, &slot.locks, &ticket.tl);
        let prover = Prover::new(&dev.backend);
        let key = &dev.key;
        let stage = || match instance {
            Instance::Synthesized(syn) => prover.stage(key, syn, tl),
            Instance::Assignment(z) => match &dev.circuit {
                Some(circuit) => prover.stage_assignment(key, circuit, z, tl),
                None => Err(ProveError::NoCompiledCircuit),
            },
        };
        let gpu_detail = format!("device={} worker={} lock={}", dev.label, self.worker, locks.design);
        match locks.design {
            LockDesign::Single => {
                let _lock = {
                    let _w = tl.span_under(Layer::Engine, names::LOCK_WAIT, Some(ticket.span), "lock=device");
                    tl.instant(Layer::Engine, names::GPU_PICKUP, gpu_detail.as_str());
                    take(&locks.device)
                };
                let _gpu = tl.span_under(Layer::Engine, names::GPU, Some(ticket.span), gpu_detail);
                let _held = tl.span_detail(Layer::Engine, names::LOCK_HELD, "lock=device");
                let mut staged = drained(tl, &dev.backend, stage())?;
                let sums = drained(tl, &dev.backend, prover.compute(key, &mut staged, ticket.r, tl))?;
                prover.release(staged, tl);
                drained(tl, &dev.backend, Ok(sums))
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
                    drained(tl, &dev.backend, prover.compute(key, &mut staged, ticket.r, tl))?
                };
                let _stage_lock = wait_for(tl, "stage", &locks.stage);
                let _held = tl.span_detail(Layer::Engine, names::LOCK_HELD, "lock=stage");
                prover.release(staged, tl);
                drained(tl, &dev.backend, Ok(sums))
            }
        }
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
