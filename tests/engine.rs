//! The proving engine on the CPU backend: stress (hundreds of partitions over several jobs,
//! both lock designs, every proof checked against the single-threaded prover), backpressure
//! at the channel bound, failure isolation (failing and panicking partitions in synthesis and
//! on the device), the split design's memory budget, cancellation and draining, the planted
//! gap the report must name, and `g16 prove --partitions` end to end.
//!
//! Several "devices" are independent CPU backend instances over the same cores. No test
//! measures speed; the waits have generous deadlines only so that a deadlock fails the test
//! instead of hanging CI.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::process::Command;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use ark_ff::UniformRand;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use common::{fresh_rng, setup};
use g16::backend::{
    Backend, BackendError, BackendId, BackendInfo, BackendKind, CpuBackend, G1Bases, G2Bases, NttKind, ScalarBuffer,
    Scalars,
};
use g16::circuits::{BuiltinCircuit, CircuitKind};
use g16::engine::{
    partition_bytes, resident_bytes, Engine, EngineConfig, EngineDevice, EngineError, JobHandle, JobOutput, LockDesign,
    Partition, Stage,
};
use g16::compiled::ShapeMismatch;
use g16::prover::{synthesize, ProveError, Prover, Randomness};
use g16::timeline::report::names;
use g16::timeline::{chrome, text, DeviceSpan, Event, EventKind, Layer, Report, Timeline};
use g16::{CheckedKey, Fr, G1Affine, G1Projective, G2Affine, G2Projective, Proof};
use rand_chacha::ChaCha20Rng;

/// Long enough for any healthy run on a loaded 2-core machine; reaching it means a deadlock.
const DEADLINE: Duration = Duration::from_secs(600);

/// The circuit every test proves: synthetic, 2^SIZE rows; the seed picks the witness.
const SIZE: u32 = 6;

fn circuit(seed: u64) -> BuiltinCircuit {
    BuiltinCircuit::new(CircuitKind::Synthetic, SIZE, seed).expect("circuit")
}

fn key(rng: &mut ChaCha20Rng) -> CheckedKey {
    setup(circuit(0), rng)
}

// ---------------------------------------------------------------------------------------
// A CPU backend with hooks: to hold work at a gate, plant a sleep or a panic, or report
// less memory than the host has.
// ---------------------------------------------------------------------------------------

type Hook = Box<dyn Fn(&[Fr]) + Send + Sync>;

#[derive(Default)]
struct Hooks {
    /// Runs before every scalar upload, with the scalars.
    upload: Option<Hook>,
    /// Runs before every G2 MSM, outside the backend's own (device) span.
    before_msm_g2: Option<Box<dyn Fn() + Send + Sync>>,
    memory_bytes: Option<u64>,
    /// The kind the backend reports (a GPU's: its keys are planned against its memory).
    kind: Option<BackendKind>,
}

struct Hooked {
    inner: CpuBackend,
    hooks: Arc<Hooks>,
}

impl Hooked {
    fn new(hooks: &Arc<Hooks>) -> Self {
        Hooked { inner: CpuBackend::new(), hooks: Arc::clone(hooks) }
    }
}

impl Backend for Hooked {
    fn id(&self) -> BackendId {
        self.inner.id()
    }
    fn info(&self) -> BackendInfo {
        let mut info = self.inner.info();
        if let Some(m) = self.hooks.memory_bytes {
            info.memory_bytes = Some(m);
        }
        if let Some(kind) = self.hooks.kind {
            info.kind = kind;
        }
        info
    }
    fn upload_scalars(&self, host: &[Fr]) -> Result<ScalarBuffer, BackendError> {
        if let Some(hook) = &self.hooks.upload {
            hook(host);
        }
        self.inner.upload_scalars(host)
    }
    fn alloc_scalars(&self, len: usize) -> Result<ScalarBuffer, BackendError> {
        self.inner.alloc_scalars(len)
    }
    fn download_scalars(&self, buf: &ScalarBuffer) -> Result<Vec<Fr>, BackendError> {
        self.inner.download_scalars(buf)
    }
    fn upload_g1_bases(&self, host: &[G1Affine]) -> Result<G1Bases, BackendError> {
        self.inner.upload_g1_bases(host)
    }
    fn upload_g2_bases(&self, host: &[G2Affine]) -> Result<G2Bases, BackendError> {
        self.inner.upload_g2_bases(host)
    }
    fn ntt(&self, buf: &mut ScalarBuffer, kind: NttKind) -> Result<(), BackendError> {
        self.inner.ntt(buf, kind)
    }
    fn mul_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> Result<(), BackendError> {
        self.inner.mul_assign(a, b)
    }
    fn sub_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> Result<(), BackendError> {
        self.inner.sub_assign(a, b)
    }
    fn scale(&self, a: &mut ScalarBuffer, c: Fr) -> Result<(), BackendError> {
        self.inner.scale(a, c)
    }
    fn quotient(&self, a: &mut ScalarBuffer, b: &ScalarBuffer, c: &ScalarBuffer, z: Fr) -> Result<(), BackendError> {
        self.inner.quotient(a, b, c, z)
    }
    fn msm_g1(&self, bases: &G1Bases, scalars: Scalars<'_>) -> Result<G1Projective, BackendError> {
        self.inner.msm_g1(bases, scalars)
    }
    fn msm_g2(&self, bases: &G2Bases, scalars: Scalars<'_>) -> Result<G2Projective, BackendError> {
        if let Some(hook) = &self.hooks.before_msm_g2 {
            hook();
        }
        self.inner.msm_g2(bases, scalars)
    }
    fn drain_device_spans(&self) -> Vec<DeviceSpan> {
        self.inner.drain_device_spans()
    }
}

/// A gate that device work waits at until it is opened.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.opened.wait(open).unwrap();
        }
    }
    fn open(&self) {
        *self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = true;
        self.opened.notify_all();
    }
}

/// Opens the gate when dropped, so that a failing assertion, unwinding, does not leave the
/// engine's drop waiting forever for a worker held at the gate.
struct OpenOnDrop<'a>(&'a Gate);

impl Drop for OpenOnDrop<'_> {
    fn drop(&mut self) {
        self.0.open();
    }
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn cpu_devices(n: usize, pk: &CheckedKey, tl: &Timeline) -> Vec<EngineDevice<CpuBackend>> {
    (0..n).map(|i| EngineDevice::prepare(format!("cpu:{i}"), CpuBackend::new(), pk, tl).expect("prepare")).collect()
}

fn hooked_devices(n: usize, hooks: &Arc<Hooks>, pk: &CheckedKey, tl: &Timeline) -> Vec<EngineDevice<Hooked>> {
    (0..n).map(|i| EngineDevice::prepare(format!("cpu:{i}"), Hooked::new(hooks), pk, tl).expect("prepare")).collect()
}

fn config(lock: LockDesign, synthesis_workers: usize, channel_bound: usize, workers_per_device: usize) -> EngineConfig {
    EngineConfig { synthesis_workers, channel_bound, workers_per_device, lock, verify: true, prefill: 0 }
}

fn wait(handle: JobHandle) -> Result<JobOutput, EngineError> {
    let id = handle.id();
    match handle.wait_timeout(DEADLINE) {
        Ok(result) => result,
        Err(handle) => panic!("job {id} not finished after {DEADLINE:?} (deadlock?): {handle:?}"),
    }
}

/// What a partition proves: its witness seed and its (r, s).
type Spec = (u64, Fr, Fr);

/// A job of good partitions: (seed, r, s) each, and the partitions themselves.
fn good_job(rng: &mut ChaCha20Rng, seeds: std::ops::Range<u64>) -> (Vec<Spec>, Vec<Partition>) {
    let specs: Vec<Spec> = seeds.map(|seed| (seed, Fr::rand(rng), Fr::rand(rng))).collect();
    let partitions = specs.iter().map(|&(seed, r, s)| Partition::circuit(circuit(seed)).with_randomness(Randomness::fixed_for_tests(r, s))).collect();
    (specs, partitions)
}

/// The single-threaded proofs of a job's partitions, on a backend of their own.
struct Reference {
    backend: CpuBackend,
    key: g16::PreparedKey,
}

impl Reference {
    fn new(pk: &CheckedKey) -> Self {
        let backend = CpuBackend::new();
        let key = Prover::new(&backend).prepare(pk).expect("prepare");
        Reference { backend, key }
    }

    fn proof(&self, seed: u64, r: Fr, s: Fr) -> Proof {
        Prover::new(&self.backend).prove_with(&self.key, circuit(seed), Randomness::fixed_for_tests(r, s), &Timeline::disabled()).expect("reference")
    }

    /// Every proof present, verified, for its own instance, and equal to the reference.
    fn check(&self, out: &JobOutput, specs: &[Spec]) {
        assert_eq!(out.proofs.len(), specs.len(), "job {}: one proof per partition", out.job);
        for (i, (p, &(seed, r, s))) in out.proofs.iter().zip(specs).enumerate() {
            assert!(p.verified, "job {} partition {i}: verified", out.job);
            assert_eq!(
                p.public_inputs,
                circuit(seed).public_inputs(),
                "job {} partition {i}: its own instance",
                out.job
            );
            assert_eq!(
                p.proof,
                self.proof(seed, r, s),
                "job {} partition {i}: equals the single-threaded proof",
                out.job
            );
        }
    }
}

/// A total order on events, for comparing files whose readers order ties differently.
fn event_key(e: &Event) -> (u64, u64, u8) {
    (e.ts_ns, e.span, e.kind as u8)
}

/// The events of one (job, partition).
fn partition_events(events: &[Event]) -> HashMap<(u64, u32), Vec<&Event>> {
    let mut by: HashMap<(u64, u32), Vec<&Event>> = HashMap::new();
    for e in events {
        by.entry((e.job, e.partition)).or_default().push(e);
    }
    by
}

fn has(events: &[&Event], name: &str, kind: EventKind) -> bool {
    events.iter().any(|e| e.name == name && e.kind == kind)
}

/// Every stage boundary of a proven partition is on the timeline.
fn assert_every_boundary(events: &[&Event], lock: LockDesign, what: &str) {
    for span in [
        names::PARTITION,
        names::SYNTH_WAIT,
        names::SYNTH,
        names::BACKPRESSURE,
        names::CHANNEL,
        names::LOCK_WAIT,
        names::GPU,
        names::LOCK_HELD,
        names::FINALIZE,
        names::VERIFY,
        "stage",
        "msm_g1_h",
        "readback",
        "assemble",
    ] {
        assert!(has(events, span, EventKind::Begin) && has(events, span, EventKind::End), "{what}: span {span}");
    }
    for instant in [names::CHAN_SEND, names::GPU_PICKUP, names::PROOF_DONE] {
        assert!(has(events, instant, EventKind::Instant), "{what}: event {instant}");
    }
    assert!(events.iter().any(|e| e.layer == Layer::Device), "{what}: device spans carry the partition's labels");
    let held: BTreeSet<&str> = events
        .iter()
        .filter(|e| e.name == names::LOCK_HELD && e.kind == EventKind::Begin)
        .map(|e| e.detail.as_str())
        .collect();
    let expected: BTreeSet<&str> = match lock {
        LockDesign::Single => ["lock=device"].into(),
        LockDesign::Split => ["lock=stage", "lock=compute"].into(),
    };
    assert_eq!(held, expected, "{what}: locks held");
}

// ---------------------------------------------------------------------------------------
// Stress
// ---------------------------------------------------------------------------------------

#[test]
fn stress_many_partitions_over_several_jobs_both_lock_designs() {
    let mut rng = fresh_rng("engine stress");
    let pk = key(&mut rng);
    let reference = Reference::new(&pk);
    const JOBS: u64 = 4;
    const PER_JOB: u64 = 30;
    for lock in LockDesign::ALL {
        let tl = Timeline::new();
        let (synthesis, bound, workers) = (3, 3, 2);
        let engine = Engine::start(cpu_devices(2, &pk, &tl), config(lock, synthesis, bound, workers), &tl).unwrap();
        assert_eq!(engine.notices(), [] as [String; 0], "two partitions of 2^{SIZE} fit in host memory");
        assert!(engine.lock_designs().iter().all(|(_, d)| *d == lock));
        let jobs: Vec<(Vec<Spec>, Vec<Partition>)> =
            (0..JOBS).map(|j| good_job(&mut rng, j * 1000..j * 1000 + PER_JOB)).collect();
        // Two submitters at once: the engine is shared by reference.
        let (specs, outputs): (Vec<_>, Vec<_>) = std::thread::scope(|scope| {
            let engine = &engine;
            let submitters: Vec<_> = jobs
                .into_iter()
                .map(|(specs, partitions)| scope.spawn(move || (specs, wait(engine.submit(partitions).unwrap()))))
                .collect();
            submitters.into_iter().map(|s| s.join().expect("submitter")).unzip()
        });
        let mut ids = BTreeSet::new();
        for (specs, out) in specs.iter().zip(outputs) {
            let out = out.unwrap_or_else(|e| panic!("{lock}: a good job failed: {e}"));
            ids.insert(out.job);
            reference.check(&out, specs);
        }
        assert_eq!(ids.len() as u64, JOBS);

        let stats = engine.stats();
        assert!(stats.channel_high_water <= bound, "{lock}: channel bound {bound} exceeded: {stats:?}");
        assert!(stats.channel_high_water >= 1, "{stats:?}");
        assert_eq!((stats.synthesized, stats.proved, stats.failed), (JOBS * PER_JOB, JOBS * PER_JOB, 0), "{stats:?}");
        assert_eq!(stats.live_workers, (synthesis, 2 * workers, 1), "no worker lost");
        let devices = engine.shutdown();
        assert_eq!(devices.len(), 2);

        // The timeline: every boundary of every partition, and a job section per job.
        let events = tl.events();
        let by_partition = partition_events(&events);
        for &job in &ids {
            for p in 0..PER_JOB as u32 {
                let what = format!("{lock} job {job} partition {p}");
                assert_every_boundary(by_partition.get(&(job, p)).expect(&what), lock, &what);
            }
        }
        let report = Report::from_events(&events);
        assert_eq!(report.jobs.len() as u64, JOBS);
        for job in &report.jobs {
            assert_eq!((job.partitions, job.proofs), (PER_JOB as usize, PER_JOB as usize));
            assert!(job.wall_ns > 0 && job.proofs_per_min() > 0.0);
            let used: BTreeSet<&str> = job.devices.iter().map(|d| d.device.as_str()).collect();
            assert!(used.iter().all(|d| ["cpu:0", "cpu:1"].contains(d)), "{used:?}");
            assert!(job.devices.iter().all(|d| d.share > 0.0 && d.share <= 1.0 && d.steady_share <= 1.0));
            assert!(job.bottleneck.is_some());
            for stage in names::STAGES {
                assert!(job.stages.iter().any(|s| s.stage == stage && s.count == PER_JOB as usize), "{stage}");
            }
        }
        let sections: usize = report.devices.iter().map(|d| d.sections).sum();
        assert_eq!(sections as u64, JOBS * PER_JOB, "one device section per partition, over both devices");
    }
}

#[test]
fn backpressure_holds_synthesis_at_the_channel_bound() {
    let mut rng = fresh_rng("engine backpressure");
    let pk = key(&mut rng);
    let gate = Arc::new(Gate::default());
    let hooks = {
        let gate = Arc::clone(&gate);
        Arc::new(Hooks { upload: Some(Box::new(move |_| gate.wait())), ..Hooks::default() })
    };
    let tl = Timeline::new();
    let (synthesis, bound) = (2, 3);
    let engine =
        Engine::start(hooked_devices(1, &hooks, &pk, &tl), config(LockDesign::Single, synthesis, bound, 1), &tl)
            .unwrap();
    let _unwinding = OpenOnDrop(&gate);
    let (specs, partitions) = good_job(&mut rng, 0..20);
    let handle = engine.submit(partitions).unwrap();

    // The one device worker holds a partition at the gate, the channel fills, and each
    // synthesis worker blocks holding one more: then synthesis stops.
    let held = 1 + bound + synthesis;
    let deadline = std::time::Instant::now() + DEADLINE;
    while engine.stats().synthesized < held as u64 || engine.stats().channel_len < bound {
        assert!(std::time::Instant::now() < deadline, "never reached the bound: {:?}", engine.stats());
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(300));
    let stats = engine.stats();
    assert_eq!(stats.synthesized, held as u64, "synthesis went past the backpressure: {stats:?}");
    assert_eq!((stats.channel_len, stats.channel_high_water), (bound, bound));
    assert!(!handle.is_finished());

    gate.open();
    let out = wait(handle).expect("job");
    Reference::new(&pk).check(&out, &specs);
    assert_eq!(engine.stats().channel_high_water, bound, "never above the bound");
    drop(engine);
    let report = Report::from_events(&tl.events());
    let job = &report.jobs[0];
    assert!(job.stage_ns(names::BACKPRESSURE) > 0);
    assert_eq!(job.bottleneck.as_ref().map(|b| b.stage.as_str()), Some("device"), "{}", report);
}

#[test]
fn prefill_holds_the_devices_until_the_channel_holds_that_many_or_nothing_is_left() {
    let mut rng = fresh_rng("engine prefill");
    let pk = key(&mut rng);
    let reference = Reference::new(&pk);
    let tl = Timeline::new();
    let (synthesis, bound, prefill) = (1, 3, 3);
    let engine = Engine::start(
        cpu_devices(1, &pk, &tl),
        EngineConfig { prefill, ..config(LockDesign::Split, synthesis, bound, 2) },
        &tl,
    )
    .unwrap();
    let (specs, partitions) = good_job(&mut rng, 0..6);
    let out = wait(engine.submit(partitions).unwrap()).expect("job");
    reference.check(&out, &specs);
    // A job smaller than the prefill still runs: the channel lets go once nothing is left.
    let (small_specs, small) = good_job(&mut rng, 100..101);
    reference.check(&wait(engine.submit(small).unwrap()).expect("small job"), &small_specs);
    drop(engine);

    let events = tl.events();
    let times = |name: &str| -> Vec<u64> {
        let mut t: Vec<u64> = events
            .iter()
            .filter(|e| e.job == out.job && e.name == name && e.kind == EventKind::Instant)
            .map(|e| e.ts_ns)
            .collect();
        t.sort_unstable();
        t
    };
    let (sends, pickups) = (times(names::CHAN_SEND), times(names::GPU_PICKUP));
    assert_eq!((sends.len(), pickups.len()), (6, 6), "every partition sent and picked up");
    assert!(
        pickups[0] >= sends[prefill - 1],
        "the first pickup ({}) came before the channel held {prefill} partitions (send {} at {})",
        pickups[0],
        prefill,
        sends[prefill - 1]
    );
}

#[test]
fn a_prefill_above_the_channel_bound_is_refused() {
    let mut rng = fresh_rng("engine prefill bound");
    let pk = key(&mut rng);
    let tl = Timeline::new();
    let err = Engine::start(
        cpu_devices(1, &pk, &tl),
        EngineConfig { prefill: 3, ..config(LockDesign::Single, 1, 2, 1) },
        &tl,
    )
    .err()
    .expect("a prefill the channel cannot hold");
    assert!(err.to_string().contains("prefill (3) must be at most the channel bound (2)"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Failure isolation
// ---------------------------------------------------------------------------------------

/// A circuit whose synthesis fails with a typed error.
struct Failing;

impl ConstraintSynthesizer<Fr> for Failing {
    fn generate_constraints(self, _: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        Err(SynthesisError::AssignmentMissing)
    }
}

/// The public input that makes the hooked device panic.
fn device_panic_marker() -> Fr {
    Fr::from(0xdead_beef_u64)
}

#[test]
fn failures_fail_exactly_their_job_and_no_worker_is_lost() {
    let mut rng = fresh_rng("engine failures");
    let pk = key(&mut rng);
    let reference = Reference::new(&pk);
    let marker = device_panic_marker();
    let hooks = Arc::new(Hooks {
        upload: Some(Box::new(move |host| {
            if host.len() > 1 && host[1] == marker {
                panic!("planted panic on the device");
            }
        })),
        ..Hooks::default()
    });
    for lock in LockDesign::ALL {
        let tl = Timeline::new();
        let (synthesis, workers) = (2, 2);
        let engine =
            Engine::start(hooked_devices(2, &hooks, &pk, &tl), config(lock, synthesis, 2, workers), &tl).unwrap();
        const N: u64 = 8;
        const BAD: usize = 5;
        // Each job: N good partitions, except one at BAD, replaced by the fault.
        let faulty = |rng: &mut ChaCha20Rng, base: u64, fault: Option<Partition>| {
            let (specs, mut partitions) = good_job(rng, base..base + N);
            if let Some(fault) = fault {
                partitions[BAD] = fault;
            }
            (specs, partitions)
        };
        let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
        let device_panic = Partition::new(move || {
            let mut syn = synthesize(circuit(77))?;
            syn.assignment[1] = marker;
            Ok(syn)
        }).with_randomness(Randomness::fixed_for_tests(r, s));
        let wrong_shape = Partition::circuit(BuiltinCircuit::new(CircuitKind::Synthetic, SIZE + 1, 3).unwrap()).with_randomness(Randomness::fixed_for_tests(r, s));
        let jobs = vec![
            faulty(&mut rng, 100, None),
            faulty(&mut rng, 200, Some(Partition::circuit(Failing).with_randomness(Randomness::fixed_for_tests(r, s)))),
            faulty(&mut rng, 300, Some(Partition::new(|| panic!("planted panic in synthesis")).with_randomness(Randomness::fixed_for_tests(r, s)))),
            faulty(&mut rng, 400, Some(device_panic)),
            faulty(&mut rng, 500, Some(wrong_shape)),
            faulty(&mut rng, 600, None),
        ];
        let (specs, handles): (Vec<_>, Vec<_>) =
            jobs.into_iter().map(|(specs, partitions)| (specs, engine.submit(partitions).unwrap())).unzip();
        let results: Vec<Result<JobOutput, EngineError>> = handles.into_iter().map(wait).collect();
        let ids: Vec<u64> = (1..=6).collect();

        for good in [0, 5] {
            let out = results[good].as_ref().unwrap_or_else(|e| panic!("{lock}: good job {good} failed: {e}"));
            reference.check(out, &specs[good]);
        }
        let bad = BAD as u32;
        match &results[1] {
            Err(EngineError::Partition {
                job,
                partition,
                stage: Stage::Synthesis,
                source: ProveError::Synthesis(_),
            }) => {
                assert_eq!((*job, *partition), (ids[1], bad))
            }
            other => panic!("{lock}: failing synthesis: {other:?}"),
        }
        match &results[2] {
            Err(EngineError::Panicked { job, partition, stage: Stage::Synthesis, message }) => {
                assert_eq!((*job, *partition), (ids[2], bad));
                assert_eq!(message, "planted panic in synthesis");
            }
            other => panic!("{lock}: panicking synthesis: {other:?}"),
        }
        match &results[3] {
            Err(EngineError::Panicked { job, partition, stage: Stage::Device, message }) => {
                assert_eq!((*job, *partition), (ids[3], bad));
                assert_eq!(message, "planted panic on the device");
            }
            other => panic!("{lock}: panicking device work: {other:?}"),
        }
        match &results[4] {
            Err(e @ EngineError::Partition { stage: Stage::Device, source: ProveError::Shape(ShapeMismatch::Key { .. }), .. }) => {
                assert_eq!(e.partition(), Some((ids[4], bad)));
                assert!(e.to_string().contains("does not match"), "a clear message: {e}");
            }
            other => panic!("{lock}: failing device work: {other:?}"),
        }

        // The workers all survived and take new work; the poisoned locks are taken again.
        let stats = engine.stats();
        assert_eq!(stats.live_workers, (synthesis, 2 * workers, 1), "{lock}: {stats:?}");
        assert_eq!(stats.failed, 4, "{lock}: exactly the four faults failed: {stats:?}");
        let (specs, partitions) = good_job(&mut rng, 700..700 + N);
        reference.check(&wait(engine.submit(partitions).unwrap()).expect("after the failures"), &specs);

        // The failures are on the timeline, under their partitions.
        drop(engine);
        let events = tl.events();
        let failed: BTreeSet<(u64, u32)> = events
            .iter()
            .filter(|e| e.name == names::PARTITION_FAILED && !e.detail.contains("cancelled"))
            .map(|e| (e.job, e.partition))
            .collect();
        assert_eq!(failed, ids[1..5].iter().map(|&j| (j, bad)).collect(), "{lock}");
    }
}

#[test]
fn submit_and_start_refuse_bad_input() {
    let mut rng = fresh_rng("engine bad input");
    let pk = key(&mut rng);
    let tl = Timeline::disabled();
    let no_devices: Vec<EngineDevice<CpuBackend>> = Vec::new();
    assert!(matches!(Engine::start(no_devices, EngineConfig::default(), &tl), Err(EngineError::NoDevices)));
    let zero = EngineConfig { synthesis_workers: 0, ..EngineConfig::default() };
    assert!(matches!(Engine::start(cpu_devices(1, &pk, &tl), zero, &tl), Err(EngineError::Config(_))));
    let twins = vec![
        EngineDevice::prepare("cpu:0", CpuBackend::new(), &pk, &tl).unwrap(),
        EngineDevice::prepare("cpu:0", CpuBackend::new(), &pk, &tl).unwrap(),
    ];
    assert!(matches!(Engine::start(twins, EngineConfig::default(), &tl), Err(EngineError::Config(_))));
    let engine = Engine::start(cpu_devices(1, &pk, &tl), EngineConfig::default(), &tl).unwrap();
    assert!(matches!(engine.submit(Vec::new()), Err(EngineError::EmptyJob)));
    // A disabled timeline records nothing and changes nothing else.
    let (specs, partitions) = good_job(&mut rng, 0..3);
    Reference::new(&pk).check(&wait(engine.submit(partitions).unwrap()).expect("job"), &specs);
    assert!(tl.is_empty());
}

// ---------------------------------------------------------------------------------------
// The split design's memory budget
// ---------------------------------------------------------------------------------------

#[test]
fn split_degrades_to_single_when_two_partitions_do_not_fit() {
    let mut rng = fresh_rng("engine budget");
    let pk = key(&mut rng);
    let tl = Timeline::new();
    let probe = EngineDevice::prepare("probe", CpuBackend::new(), &pk, &tl).unwrap();
    let key = probe.key().expect("a pinned key");
    let (bases, partition) = (resident_bytes(key), partition_bytes(&key.shape()));
    for (memory, expected) in
        [(bases + partition * 3 / 2, LockDesign::Single), (bases + 2 * partition, LockDesign::Split)]
    {
        let hooks = Arc::new(Hooks { memory_bytes: Some(memory), ..Hooks::default() });
        let engine =
            Engine::start(hooked_devices(1, &hooks, &pk, &tl), config(LockDesign::Split, 1, 2, 2), &tl).unwrap();
        assert_eq!(engine.lock_designs(), [("cpu:0".to_string(), expected)], "{memory} bytes");
        if expected == LockDesign::Single {
            let notice = engine.notices().join("\n");
            assert!(notice.contains("cpu:0") && notice.contains("running single"), "{notice}");
        } else {
            assert!(engine.notices().is_empty());
        }
        let (specs, partitions) = good_job(&mut rng, 0..4);
        Reference::new(&pk).check(&wait(engine.submit(partitions).unwrap()).expect("job"), &specs);
    }
    let degraded = tl.events().iter().filter(|e| e.name == names::LOCK_DEGRADED).count();
    assert_eq!(degraded, 1, "the fallback is on the timeline");
    // Single is never budgeted, so never degraded.
    let hooks = Arc::new(Hooks { memory_bytes: Some(1), ..Hooks::default() });
    let engine = Engine::start(hooked_devices(1, &hooks, &pk, &tl), config(LockDesign::Single, 1, 1, 1), &tl).unwrap();
    assert!(engine.notices().is_empty());
}

#[test]
fn a_key_or_circuit_that_cannot_fit_a_gpu_is_refused_with_its_plan() {
    let mut rng = fresh_rng("memory plan");
    let pk = key(&mut rng);
    let compiled = circuit(0).compile().expect("compile");
    // As a 1 GiB GPU: below the plan's 2 GiB headroom, so even a 2^6 key is refused, before
    // anything is uploaded, with the plan in the message.
    let small = Hooked::new(&Arc::new(Hooks {
        memory_bytes: Some(1 << 30),
        kind: Some(BackendKind::Cuda),
        ..Hooks::default()
    }));
    let prover = Prover::new(&small);
    for err in [prover.prepare(&pk).err(), prover.prepare_circuit(&compiled).err()] {
        match err {
            Some(ProveError::DoesNotFit(e)) => {
                assert_eq!(e.capacity, 1 << 30);
                assert!(e.needed < 1 << 20, "a 2^6 key's plan is small: {e}");
                assert!(e.to_string().contains("G1 bases") && e.to_string().contains("per proof"), "{e}");
            }
            Some(other) => panic!("expected DoesNotFit, got {other}"),
            None => panic!("expected DoesNotFit, the key was prepared"),
        }
    }
    // As an 8 GiB GPU it fits, and proves.
    let large = Hooked::new(&Arc::new(Hooks {
        memory_bytes: Some(8 << 30),
        kind: Some(BackendKind::Cuda),
        ..Hooks::default()
    }));
    let prover = Prover::new(&large);
    let prepared = prover.prepare(&pk).expect("fits");
    let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
    let proof = prover.prove_with(&prepared, circuit(3), Randomness::fixed_for_tests(r, s), &Timeline::disabled()).expect("proof");
    assert!(g16::prover::verify(&prepared, &proof, &circuit(3).public_inputs()).unwrap());
}

// ---------------------------------------------------------------------------------------
// Shutdown
// ---------------------------------------------------------------------------------------

#[test]
fn dropping_the_engine_cancels_and_shutdown_drains() {
    let mut rng = fresh_rng("engine shutdown");
    let pk = key(&mut rng);
    let tl = Timeline::new();

    // Cancel: slow synthesis, one worker; drop the engine once the first proof is in.
    let engine = Engine::start(cpu_devices(1, &pk, &tl), config(LockDesign::Split, 1, 1, 1), &tl).unwrap();
    let partitions: Vec<Partition> = (0..20)
        .map(|seed| {
            Partition::new(move || {
                std::thread::sleep(Duration::from_millis(30));
                synthesize(circuit(seed))
            }).with_randomness(Randomness::fixed_for_tests(Fr::rand(&mut rng), Fr::rand(&mut rng)))
        })
        .collect();
    let handle = engine.submit(partitions).unwrap();
    while engine.stats().proved == 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(engine);
    match wait(handle) {
        Err(EngineError::Cancelled { reason, .. }) => assert!(reason.contains("shut down"), "{reason}"),
        other => panic!("expected a cancelled job, got {other:?}"),
    }

    // Drain: shutdown right after submitting still finishes the job, and gives the devices
    // (keys prepared) back for another engine.
    let engine = Engine::start(cpu_devices(2, &pk, &tl), config(LockDesign::Single, 2, 2, 1), &tl).unwrap();
    let (specs, partitions) = good_job(&mut rng, 0..6);
    let handle = engine.submit(partitions).unwrap();
    let devices = engine.shutdown();
    let reference = Reference::new(&pk);
    reference.check(&wait(handle).expect("drained"), &specs);
    assert_eq!(devices.iter().map(|d| d.label()).collect::<Vec<_>>(), ["cpu:0", "cpu:1"]);
    let engine = Engine::start(devices, config(LockDesign::Split, 1, 1, 2), &tl).unwrap();
    let (specs, partitions) = good_job(&mut rng, 10..13);
    reference.check(&wait(engine.submit(partitions).unwrap()).expect("reused devices"), &specs);
}

// ---------------------------------------------------------------------------------------
// The timeline: a planted gap, and every event in both file formats
// ---------------------------------------------------------------------------------------

#[test]
fn the_report_names_a_planted_gap_and_the_files_hold_every_event() {
    let mut rng = fresh_rng("engine planted gap");
    let pk = key(&mut rng);
    const SLEEP: Duration = Duration::from_millis(80);
    let hooks = Arc::new(Hooks { before_msm_g2: Some(Box::new(|| std::thread::sleep(SLEEP))), ..Hooks::default() });
    let tl = Timeline::new();
    let engine = Engine::start(hooked_devices(1, &hooks, &pk, &tl), config(LockDesign::Single, 2, 2, 1), &tl).unwrap();
    let (specs, partitions) = good_job(&mut rng, 0..3);
    Reference::new(&pk).check(&wait(engine.submit(partitions).unwrap()).expect("job"), &specs);
    drop(engine);

    let events = tl.events();
    let report = Report::from_events(&events);
    // The sleep is inside the device-held span, inside the step msm_g2_b, before the
    // device's own msm_g2 span: the report must name that span and those boundaries.
    let warnings = report.gap_warnings(0.10);
    let w = warnings
        .iter()
        .find(|w| w.name == "msm_g2_b")
        .unwrap_or_else(|| panic!("no warning for msm_g2_b in {warnings:?}\n{report}"));
    assert_eq!((w.layer, w.spans), (Layer::Prover, 3));
    assert!(w.unattributed_ns >= 3 * SLEEP.as_nanos() as u64 && w.share() > 0.5, "{w:?}");
    let gap = w.largest.as_ref().expect("largest gap");
    assert_eq!((gap.before.as_str(), gap.after.as_str()), ("start of msm_g2_b", "start of msm_g2"));
    assert!(gap.dur_ns() >= SLEEP.as_nanos() as u64);
    let text = report.render(0.10).to_string();
    let line = text.lines().find(|l| l.starts_with("warning: msm_g2_b (prover)")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("between start of msm_g2_b and start of msm_g2"), "{line}");
    // A higher threshold silences it; the device-held spans themselves stay explained.
    assert!(report.gap_warnings(0.99).iter().all(|w| w.name != "msm_g2_b"));
    assert!(warnings.iter().all(|w| w.name != names::GPU && w.name != names::LOCK_HELD), "{warnings:?}");
    let job = &report.jobs[0];
    assert!(job.devices[0].steady_share < 0.9, "the sleep shows as idle device time: {:?}", job.devices);

    // Both formats hold every event of the run, exactly.
    let mut buf = Vec::new();
    text::write_text(&events, &mut buf).unwrap();
    assert_eq!(text::read_text(buf.as_slice()).unwrap(), events, "TIMELINE text");
    let mut buf = Vec::new();
    chrome::write_chrome(&events, &mut buf).unwrap();
    let mut from_chrome = chrome::read_chrome(buf.as_slice()).unwrap();
    let mut expected = events.clone();
    from_chrome.sort_by_key(event_key);
    expected.sort_by_key(event_key);
    assert_eq!(from_chrome, expected, "Chrome trace");
}

// ---------------------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------------------

#[test]
fn prove_partitions_writes_a_trace_with_every_stage_per_partition() {
    let dir = std::env::temp_dir().join(format!("g16-engine-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let g16 = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_g16"))
            .args(args)
            .env("G16_CACHE_DIR", dir.join("cache"))
            .current_dir(&dir)
            .output()
            .expect("run g16");
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && !stderr.contains("panicked"), "g16 {args:?}:\n{stdout}\n{stderr}");
        stdout.into_owned()
    };
    let common = ["prove", "--circuit", "synthetic", "--size", "8", "--partitions", "10"];
    let out = g16(&[&common[..], &["--trace", "t.json", "--timeline", "t.txt", "--devices", "cpu:0,cpu:1"]].concat());
    assert!(out.contains("10 proof(s)") && out.contains("all verified"), "{out}");
    assert!(out.contains("job 1: 10 partitions, 10 proofs") && out.contains("bottleneck:"), "{out}");

    // The trace loads as Chrome JSON, and every partition shows every stage.
    let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("t.json")).unwrap()).unwrap();
    let trace_events = trace["traceEvents"].as_array().expect("traceEvents");
    assert!(trace_events.iter().all(|e| e["ph"].is_string() && e["pid"].is_number() && e["tid"].is_number()));
    let events = g16::timeline::read_file(&dir.join("t.json")).unwrap();
    let by_partition = partition_events(&events);
    for p in 0..10 {
        let what = format!("partition {p}");
        assert_every_boundary(by_partition.get(&(1, p)).expect(&what), LockDesign::Split, &what);
    }
    // The same events (the two readers may order events of equal timestamps differently).
    let mut from_text = g16::timeline::read_file(&dir.join("t.txt")).unwrap();
    let mut from_trace = events.clone();
    from_text.sort_by_key(event_key);
    from_trace.sort_by_key(event_key);
    assert_eq!(from_text, from_trace, "text and trace agree");
    let report = g16(&["timeline", "report", "t.json", "--gap-warn", "5"]);
    assert!(report.contains("job 1: 10 partitions") && report.contains("device cpu:1"), "{report}");

    // --json: the engine's figures, and the list-valued flags run one configuration each.
    let out = g16(&[&common[..], &["--lock", "single,split", "--gpu-workers-per-device", "1,2", "--json"]].concat());
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    assert_eq!(lines.len(), 4, "{out}");
    let configs: BTreeSet<(String, u64)> = lines
        .iter()
        .map(|v| (v["lock"].as_str().unwrap().to_string(), v["workers_per_device"].as_u64().unwrap()))
        .collect();
    assert_eq!(configs.len(), 4);
    for v in &lines {
        assert_eq!((v["proofs"].as_u64(), v["verified"].as_bool()), (Some(10), Some(true)), "{v}");
        assert!(v["proofs_per_min"].as_f64().unwrap() > 0.0);
        assert!(v["lock_wait_ms"].as_f64().unwrap() >= 0.0);
        let busy = &v["devices"][0];
        assert_eq!(busy["device"], "cpu:0");
        assert!(busy["share"].as_f64().unwrap() > 0.0 && busy["steady_share"].as_f64().unwrap() <= 1.0);
        assert!(v["bottleneck"]["stage"].is_string(), "{v}");
        assert!(v["largest_unattributed"]["name"].is_string(), "{v}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------
// Compiled circuits: partitions as witnesses and assignments
// ---------------------------------------------------------------------------------------

#[test]
fn compiled_partitions_prove_what_full_synthesis_proves() {
    use g16::compiled::{compile, witness};
    let mut rng = fresh_rng("compiled partitions");
    let pk = key(&mut rng);
    let reference = Reference::new(&pk);
    let compiled = compile(circuit(0)).expect("compile");
    for lock in LockDesign::ALL {
        let tl = Timeline::new();
        let devices = (0..2)
            .map(|i| EngineDevice::prepare_compiled(format!("cpu:{i}"), CpuBackend::new(), &pk, &compiled, &tl))
            .collect::<Result<Vec<_>, _>>()
            .expect("prepare");
        let engine = Engine::start(devices, config(lock, 2, 3, 2), &tl).unwrap();
        // Witness-only synthesis, assignments given whole, and full synthesis, in one job.
        let specs: Vec<Spec> = (0..9).map(|seed| (seed + 40, Fr::rand(&mut rng), Fr::rand(&mut rng))).collect();
        let partitions = specs
            .iter()
            .map(|&(seed, r, s)| match seed % 3 {
                0 => Partition::witness_of(circuit(seed)).with_randomness(Randomness::fixed_for_tests(r, s)),
                1 => Partition::assignment(witness(circuit(seed)).expect("witness")).with_randomness(Randomness::fixed_for_tests(r, s)),
                _ => Partition::circuit(circuit(seed)).with_randomness(Randomness::fixed_for_tests(r, s)),
            })
            .collect();
        let out = wait(engine.submit(partitions).unwrap()).unwrap_or_else(|e| panic!("{lock}: {e}"));
        reference.check(&out, &specs);
        // An assignment that does not satisfy the circuit fails on the device's R1CS check.
        let mut bad = witness(circuit(1)).expect("witness");
        let last = bad.len() - 1;
        bad[last] += Fr::from(1u64);
        let err = wait(engine.submit(vec![Partition::assignment(bad).with_randomness(Randomness::fixed_for_tests(Fr::from(1u64), Fr::from(2u64)))]).unwrap())
            .expect_err("an unsatisfied assignment");
        assert!(err.to_string().contains("does not satisfy"), "{lock}: {err}");
        engine.shutdown();
    }
    // A circuit of another shape is refused when the device is prepared.
    let other = compile(BuiltinCircuit::new(CircuitKind::Synthetic, SIZE + 1, 0).unwrap()).unwrap();
    let refused = EngineDevice::prepare_compiled("cpu:0", CpuBackend::new(), &pk, &other, &Timeline::disabled());
    assert!(matches!(refused, Err(EngineError::Device { source: ProveError::Shape(ShapeMismatch::Key { .. }), .. })));
}
