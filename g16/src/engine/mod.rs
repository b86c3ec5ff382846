//! The proving engine: synthesis and device work overlapped across partitions and jobs.
//!
//! ```text
//! submit(job) ─▶ task queue ─▶ synthesis workers ─▶ bounded channel ─▶ device workers ─▶ finalizer
//!                (unbounded)    (CPU, N threads)     (host-memory        (M per device,    (assemble,
//!                                                     backpressure)       lock design)      verify)
//! ```
//!
//! Design rules:
//! - A job is one or more partitions of one shape, proven with the engine's key, which is
//!   prepared once per device (bases resident). Partitions go to whichever device worker
//!   is free, so they spread over the devices.
//! - Each partition carries a ticket that is settled exactly once — proof, error, or
//!   cancelled when dropped — so a job's `wait` always returns. A failure or panic fails
//!   its partition and job (the job's other partitions are cancelled), never a worker.
//! - Every stage boundary is on the timeline, under the partition's `prove` span: see
//!   [`crate::timeline::report::names`]; the report turns them into per-job figures.
//! - Shutdown drains ([`Engine::shutdown`]) or cancels (dropping the engine); both join
//!   every thread.
//! - Synthesis runs its data-parallel steps on its own thread pool, not rayon's global one.
//!   Device workers convert staged inputs and read results back on the global pool; with
//!   synthesis there too, each of their small jobs queued behind whole synthesis loops, and
//!   on the two-H200 host (30 synthesis workers) device sections stalled for up to 0.7 s.
//! - A device worker takes a partition from the channel and then waits for its device's
//!   lock (`GPU_PICKUP`, then `LOCK_WAIT`), so the next partition is in hand the moment the
//!   device frees. The price, with several workers per device and several devices: near a
//!   job's end, a partition can wait at a busy device while another device is idle.

mod config;
mod device;
mod error;
mod finalize;
mod job;
mod queue;
mod resident;
mod synth;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

pub use config::{default_synthesis_workers, parse_device_list, DeviceSpec, EngineConfig, LockDesign};
pub use device::{effective_design, partition_bytes, resident_bytes, EngineDevice};
pub use error::{EngineError, Stage};
pub use job::{Instance, JobCanceller, JobHandle, JobOutput, Partition, PartitionProof};
pub use resident::{CircuitKey, KeyPreparation, ResidentKey};

use g16_backend::Backend;
use crate::timeline::report::names;
use crate::timeline::{Layer, Timeline};
use device::{DeviceLocks, Ready};
use job::{JobState, Ticket};
use queue::WorkQueue;
use synth::Task;

/// A device with its locks, as the workers share it.
pub(crate) struct DeviceSlot<B: Backend> {
    pub device: EngineDevice<B>,
    pub locks: DeviceLocks,
    /// Nanoseconds the device (compute) lock has been held: the device's busy time.
    pub busy_ns: AtomicU64,
}

/// [`Engine::subgroup_checker`]: the first device's backend, which serialises its own work
/// with the proofs running there.
pub struct DeviceChecker<B: Backend>(Arc<Shared<B>>);

impl<B: Backend> crate::prover::SubgroupCheck for DeviceChecker<B> {
    fn first_outside_g1(&self, points: &[crate::G1Affine]) -> Result<Option<usize>, g16_backend::BackendError> {
        match self.0.devices.first() {
            Some(slot) => crate::prover::OnBackend(slot.device.backend()).first_outside_g1(points),
            None => crate::prover::OnHost.first_outside_g1(points),
        }
    }

    fn first_outside_g2(&self, points: &[crate::G2Affine]) -> Result<Option<usize>, g16_backend::BackendError> {
        match self.0.devices.first() {
            Some(slot) => crate::prover::OnBackend(slot.device.backend()).first_outside_g2(points),
            None => crate::prover::OnHost.first_outside_g2(points),
        }
    }
}

/// Live counts, for [`Engine::stats`].
#[derive(Default)]
pub(crate) struct Counters {
    synthesized: AtomicU64,
    proved: AtomicU64,
    failed: AtomicU64,
    live_synthesis: AtomicUsize,
    live_device: AtomicUsize,
    live_finalizer: AtomicUsize,
}

impl Counters {
    fn synthesized(&self) {
        self.synthesized.fetch_add(1, Ordering::Relaxed);
    }
    fn proved(&self) {
        self.proved.fetch_add(1, Ordering::Relaxed);
    }
    fn failed(&self) {
        self.failed.fetch_add(1, Ordering::Relaxed);
    }
}

/// Counts a worker thread as alive for as long as it lives (its loop and any unwinding).
struct Alive<'a>(&'a AtomicUsize);

impl<'a> Alive<'a> {
    fn new(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        Alive(counter)
    }
}

impl Drop for Alive<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What every engine thread shares.
pub(crate) struct Shared<B: Backend> {
    pub devices: Vec<DeviceSlot<B>>,
    pub config: EngineConfig,
    pub tasks: WorkQueue<Task>,
    pub channel: WorkQueue<Ready>,
    pub counters: Counters,
    /// Where synthesis runs its parallel steps (see the design rules above); `None` only in
    /// the stand-in [`Engine::shutdown`] leaves behind.
    synth_pool: Option<rayon::ThreadPool>,
    cancelled: AtomicBool,
}

impl<B: Backend> Shared<B> {
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Why a partition must not go on to its next stage, if it must not: the engine shut
    /// down, or another partition of its job failed.
    pub fn reason_to_stop(&self, ticket: &Ticket) -> Option<&'static str> {
        if self.is_cancelled() {
            Some("the engine shut down")
        } else if ticket.job_failed() {
            Some("another partition of the job failed")
        } else {
            None
        }
    }

    /// Runs `work` (a synthesis) on the synthesis pool, so its parallel steps stay off the
    /// global pool the device workers use.
    pub fn in_synthesis_pool<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
        match &self.synth_pool {
            Some(pool) => pool.install(work),
            None => work(),
        }
    }
}

/// A snapshot of the engine's counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineStats {
    pub channel_bound: usize,
    /// The most synthesized partitions the channel has held at once (≤ `channel_bound`).
    pub channel_high_water: usize,
    /// Synthesized partitions in the channel now.
    pub channel_len: usize,
    pub synthesized: u64,
    pub proved: u64,
    /// Partitions that failed (cancelled ones not counted).
    pub failed: u64,
    /// Worker threads alive: synthesis, device, finalizer.
    pub live_workers: (usize, usize, usize),
}

/// A device's identity and its device-section time, for monitoring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceTime {
    pub label: String,
    pub backend: String,
    pub memory_bytes: Option<u64>,
    /// Time the device (compute) lock has been held since the engine started.
    pub busy: std::time::Duration,
}

/// The running engine. Dropping it cancels unfinished work and joins its threads.
pub struct Engine<B: Backend + 'static> {
    shared: Arc<Shared<B>>,
    synthesis: Vec<JoinHandle<()>>,
    device: Vec<JoinHandle<()>>,
    finalizer: Option<JoinHandle<()>>,
    tl: Timeline,
    next_job: AtomicU64,
    notices: Vec<String>,
    stopped: bool,
}

impl<B: Backend + 'static> Engine<B> {
    /// Starts the workers over `devices` (each with the key prepared, see
    /// [`EngineDevice::prepare`]); events go to `tl`. Where `split` cannot be budgeted on a
    /// device it runs `single` there, and [`Engine::notices`] says so.
    pub fn start(devices: Vec<EngineDevice<B>>, config: EngineConfig, tl: &Timeline) -> Result<Self, EngineError> {
        config.validate()?;
        if devices.is_empty() {
            return Err(EngineError::NoDevices);
        }
        if let Some(dup) =
            devices.iter().enumerate().find(|(i, d)| devices[..*i].iter().any(|e| e.label() == d.label()))
        {
            return Err(EngineError::Config(format!("two devices are labelled {}", dup.1.label())));
        }
        let mut notices = Vec::new();
        let slots = devices
            .into_iter()
            .map(|device| {
                let memory = device.backend().info().memory_bytes;
                // A device without a key of its own is budgeted by the keys its jobs bring.
                let (design, notice) = match device.key() {
                    Some(key) => effective_design(config.lock, device.label(), memory, key),
                    None => (config.lock, None),
                };
                if let Some(notice) = notice {
                    tl.instant(Layer::Engine, names::LOCK_DEGRADED, notice.as_str());
                    notices.push(notice);
                }
                DeviceSlot { device, locks: DeviceLocks::new(design), busy_ns: AtomicU64::new(0) }
            })
            .collect();
        // As many threads as the host has, and at least one per synthesis worker, so that every
        // worker's synthesis runs at once, as it would on the global pool.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).max(config.synthesis_workers);
        let synth_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("g16-synth-pool-{i}"))
            .build()
            .map_err(|e| EngineError::ThreadPool(e.to_string()))?;
        let shared = Arc::new(Shared {
            devices: slots,
            synth_pool: Some(synth_pool),
            tasks: WorkQueue::new(usize::MAX),
            channel: WorkQueue::with_prime(config.channel_bound, config.prefill),
            config,
            counters: Counters::default(),
            cancelled: AtomicBool::new(false),
        });
        let mut engine = Engine {
            shared: Arc::clone(&shared),
            synthesis: Vec::new(),
            device: Vec::new(),
            finalizer: None,
            tl: tl.clone(),
            next_job: AtomicU64::new(1),
            notices,
            stopped: false,
        };
        // On an error below, dropping `engine` stops the threads started so far.
        let spawn = |name: String, work: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new().name(name).spawn(work).map_err(EngineError::Thread)
        };
        let (to_finalizer, proven) = mpsc::channel();
        let s = Arc::clone(&shared);
        engine.finalizer = Some(spawn(
            "g16-finalizer".into(),
            Box::new(move || {
                let _alive = Alive::new(&s.counters.live_finalizer);
                finalize::finalizer(&s, proven)
            }),
        )?);
        for d in 0..shared.devices.len() {
            for w in 0..shared.config.workers_per_device {
                let (s, tx) = (Arc::clone(&shared), to_finalizer.clone());
                let name = format!("g16-{}-w{w}", shared.devices[d].device.label());
                engine.device.push(spawn(
                    name,
                    Box::new(move || {
                        let _alive = Alive::new(&s.counters.live_device);
                        device::device_worker(&s, d, w, tx)
                    }),
                )?);
            }
        }
        drop(to_finalizer);
        for i in 0..shared.config.synthesis_workers {
            let s = Arc::clone(&shared);
            engine.synthesis.push(spawn(
                format!("g16-synth-{i}"),
                Box::new(move || {
                    let _alive = Alive::new(&s.counters.live_synthesis);
                    synth::synthesis_worker(&s)
                }),
            )?);
        }
        Ok(engine)
    }

    /// Submits a job proven with each device's pinned key; its partitions are queued for
    /// synthesis at once (host memory is bounded later, by the channel).
    pub fn submit(&self, partitions: Vec<Partition>) -> Result<JobHandle, EngineError> {
        self.submit_with(partitions, None, None)
    }

    /// Submits a job proven with `circuit` (prepared on a device the first time a partition of
    /// it lands there, then resident) or, for `None`, each device's pinned key. Its events go to
    /// `tl` where given (a job's own timeline), else to the engine's. A free device worker
    /// takes a partition whose circuit its device holds before one it would have to prepare.
    pub fn submit_with(
        &self,
        partitions: Vec<Partition>,
        circuit: Option<Arc<CircuitKey>>,
        tl: Option<&Timeline>,
    ) -> Result<JobHandle, EngineError> {
        if partitions.is_empty() {
            return Err(EngineError::EmptyJob);
        }
        if self.stopped || self.shared.is_cancelled() {
            return Err(EngineError::ShutDown);
        }
        let count = u32::try_from(partitions.len())
            .map_err(|_| EngineError::Config(format!("{} partitions: at most 2^32 - 1 per job", partitions.len())))?;
        let id = self.next_job.fetch_add(1, Ordering::Relaxed);
        let base = tl.unwrap_or(&self.tl);
        let job_tl = base.for_partition(id, 0);
        let span = job_tl.begin(Layer::Engine, names::JOB, None, format!("partitions={count}"));
        let state = Arc::new(JobState::new(id, count, circuit, job_tl, span));
        for (index, partition) in (0..count).zip(partitions) {
            let tl = base.for_partition(id, index);
            let prove = tl.begin(Layer::Engine, names::PARTITION, Some(span), format!("partition={index}"));
            let mut ticket = Ticket::new(Arc::clone(&state), index, tl, prove, partition.randomness);
            ticket.begin_wait(names::SYNTH_WAIT);
            if let Err(task) = self.shared.tasks.push(Task { ticket, partition }) {
                task.ticket.cancel("the engine shut down");
            }
        }
        Ok(JobHandle { state })
    }

    /// Why a device runs another lock design than asked, or runs unbudgeted.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// Prepares `circuit` on every device now (where it is not resident yet).
    pub fn preload(&self, circuit: &CircuitKey) -> Result<(), EngineError> {
        for slot in &self.shared.devices {
            let device = &slot.device;
            device
                .preload(circuit)
                .map_err(|source| EngineError::Device { device: device.label().to_string(), source })?;
        }
        Ok(())
    }

    /// Prepares `circuit` on every device whose resident budget has room for it beside the keys
    /// it holds, evicting none; the labels of the devices that hold it after. For circuits no
    /// job has asked for yet: a server prepares a circuit as it is registered, so its first job
    /// does not wait for the upload, without pushing out keys in use.
    pub fn preload_into_free_room(&self, circuit: &CircuitKey) -> Result<Vec<String>, EngineError> {
        let mut holding = Vec::new();
        for slot in &self.shared.devices {
            let device = &slot.device;
            let held = device
                .preload_into_free_room(circuit)
                .map_err(|source| EngineError::Device { device: device.label().to_string(), source })?;
            if held {
                holding.push(device.label().to_string());
            }
        }
        Ok(holding)
    }

    /// Forgets the named circuit on every device; the labels of those that held it.
    pub fn evict(&self, name: &str) -> Vec<String> {
        self.shared
            .devices
            .iter()
            .filter(|slot| slot.device.evict(name))
            .map(|slot| slot.device.label().to_string())
            .collect()
    }

    /// Each device's label and the named keys it holds, with their bytes.
    pub fn resident(&self) -> Vec<(String, Vec<(String, u64)>)> {
        self.shared.devices.iter().map(|slot| (slot.device.label().to_string(), slot.device.resident())).collect()
    }

    /// The subgroup checks of keys the engine is about to hold, on its first device (the host
    /// without one); usable from other threads while the engine proves.
    pub fn subgroup_checker(&self) -> DeviceChecker<B> {
        DeviceChecker(self.shared.clone())
    }

    /// Each device's label, its backend, and how long its device (compute) lock has been held.
    pub fn device_time(&self) -> Vec<DeviceTime> {
        self.shared
            .devices
            .iter()
            .map(|slot| {
                let info = slot.device.backend().info();
                DeviceTime {
                    label: slot.device.label().to_string(),
                    backend: info.kind.to_string(),
                    memory_bytes: info.memory_bytes,
                    busy: std::time::Duration::from_nanos(slot.busy_ns.load(Ordering::Relaxed)),
                }
            })
            .collect()
    }

    /// Each device's label and the lock design it runs.
    pub fn lock_designs(&self) -> Vec<(String, LockDesign)> {
        self.shared.devices.iter().map(|d| (d.device.label().to_string(), d.locks.design)).collect()
    }

    pub fn config(&self) -> &EngineConfig {
        &self.shared.config
    }

    pub fn stats(&self) -> EngineStats {
        let c = &self.shared.counters;
        EngineStats {
            channel_bound: self.shared.channel.bound(),
            channel_high_water: self.shared.channel.high_water(),
            channel_len: self.shared.channel.len(),
            synthesized: c.synthesized.load(Ordering::Relaxed),
            proved: c.proved.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
            live_workers: (
                c.live_synthesis.load(Ordering::SeqCst),
                c.live_device.load(Ordering::SeqCst),
                c.live_finalizer.load(Ordering::SeqCst),
            ),
        }
    }

    /// Finishes every submitted job, stops the workers, and gives the devices back (keys
    /// still prepared), for another engine or other use.
    pub fn shutdown(mut self) -> Vec<EngineDevice<B>> {
        self.stop(false);
        let shared = std::mem::replace(&mut self.shared, Arc::new(Shared::empty()));
        match Arc::try_unwrap(shared) {
            Ok(shared) => shared.devices.into_iter().map(|slot| slot.device).collect(),
            // Every thread is joined, so no other reference remains.
            Err(_) => Vec::new(),
        }
    }

    /// Stops the stages in pipeline order: draining (each stage finishes what is queued)
    /// or cancelling (queued partitions are settled as cancelled; in-flight ones finish).
    fn stop(&mut self, cancel: bool) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        if cancel {
            // Close both queues first: a synthesis worker blocked on a full channel gets its
            // partition back and cancels it.
            self.shared.cancelled.store(true, Ordering::Release);
            for task in self.shared.tasks.close_and_take() {
                task.ticket.cancel("the engine shut down");
            }
            for ready in self.shared.channel.close_and_take() {
                ready.ticket.cancel("the engine shut down");
            }
        } else {
            self.shared.tasks.close();
        }
        for t in self.synthesis.drain(..) {
            // A worker thread only ends by panicking outside its per-partition guard; its
            // tickets have settled themselves on unwinding, so there is nothing to report.
            let _ = t.join();
        }
        // Draining: every synthesized partition is in the channel now; close it behind them.
        self.shared.channel.close();
        for t in self.device.drain(..) {
            let _ = t.join();
        }
        if let Some(t) = self.finalizer.take() {
            let _ = t.join();
        }
    }
}

impl<B: Backend> Shared<B> {
    /// A stand-in left behind by [`Engine::shutdown`] (which takes the real one).
    fn empty() -> Self {
        Shared {
            devices: Vec::new(),
            config: EngineConfig::default(),
            tasks: WorkQueue::new(1),
            channel: WorkQueue::new(1),
            counters: Counters::default(),
            synth_pool: None,
            cancelled: AtomicBool::new(true),
        }
    }
}

impl<B: Backend + 'static> Drop for Engine<B> {
    fn drop(&mut self) {
        self.stop(true);
    }
}
