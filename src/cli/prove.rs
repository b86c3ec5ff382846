//! `g16 prove`: the main job — prove partitions of a built-in circuit with the engine on one
//! or more devices, verify each, and show where the time went.
//!
//! `--lock` and `--gpu-workers-per-device` take lists; each combination runs as its own
//! job on the same devices and key (loaded and prepared once), for benchmark sweeps.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use g16::backend::{Backend, BackendInfo, BackendKind};
use g16::backends::{self as backend, parse_device_list, AnyBackend};
use g16::circuits::{BuiltinCircuit, CircuitKind};
use g16::compiled::CompiledCircuit;
use g16::engine::{
    default_synthesis_workers, Engine, EngineConfig, EngineDevice, EngineError, KeyPreparation, LockDesign, Partition,
};
use g16::key_store::KeyStoreError;
use g16::prover::OnBackend;
use g16::settings::Settings;
use g16::timeline::{self, Layer, Report, Timeline};
use g16::CheckedKey;
use serde_json::json;

use crate::cli::opening::Opening;
use crate::cli::{io_err, parse_backend, parse_circuit, progress, prove_files, setup, stamp, CliError};

/// Small enough that a fresh machine (setup included) proves it in seconds on 2 cores.
pub const DEFAULT_CIRCUIT: &str = "sha256";
pub const DEFAULT_SIZE: u32 = 16;

#[derive(clap::Args)]
pub struct ProveArgs {
    #[arg(long, default_value = DEFAULT_CIRCUIT, value_parser = parse_circuit)]
    pub circuit: CircuitKind,
    /// log2 of the number of constraints.
    #[arg(long, default_value_t = DEFAULT_SIZE)]
    pub size: u32,
    /// The backend, on its device 0 (see --devices for more).
    #[arg(long, default_value = "auto", value_parser = parse_backend)]
    pub backend: BackendKind,
    /// Devices to spread the partitions over: `cuda:0,cuda:1`, `cuda` (every CUDA device),
    /// `auto`, `cpu:0,cpu:1` (CPU instances over the same cores). Overrides --backend.
    #[arg(long)]
    pub devices: Option<String>,
    /// How many partitions (one job): instances with witness seeds seed, seed+1, …, one key.
    #[arg(long, default_value_t = 1)]
    pub partitions: u32,
    /// Device lock design: single (one lock over the device section) or split (staging
    /// and compute locks); a comma list runs each.
    #[arg(long, default_value = "split", value_delimiter = ',')]
    pub lock: Vec<LockDesign>,
    /// Device workers per device; a comma list runs each.
    #[arg(long, default_value = "2", value_delimiter = ',')]
    pub gpu_workers_per_device: Vec<usize>,
    /// Synthesis workers (default: half the host's threads).
    #[arg(long)]
    pub synth_workers: Option<usize>,
    /// Synthesized partitions the channel holds before synthesis waits (host-memory bound).
    #[arg(long, default_value_t = 2)]
    pub channel_bound: usize,
    /// Warn about spans whose unattributed share is above PCT percent.
    #[arg(long, default_value_t = 10.0, value_name = "PCT")]
    pub gap_warn: f64,
    /// A proving key (ark-groth16 ProvingKey, compressed or not); default: the cached key for
    /// the circuit and size, generated on first use.
    #[arg(long)]
    pub key: Option<PathBuf>,
    /// Seed of the witnesses and of the proof randomness (r, s).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the timeline as TIMELINE text lines (one file per configuration when several run).
    #[arg(long)]
    pub timeline: Option<PathBuf>,
    /// Write the timeline as Chrome trace JSON, which opens in Perfetto.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Skip verification.
    #[arg(long)]
    pub no_verify: bool,
    /// Device workers start once N synthesized partitions wait in the channel (N ≤
    /// --channel-bound; 0: at once): the devices' own throughput where synthesis is slower.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub prefill: usize,
    /// Print one JSON object per configuration instead of the report.
    #[arg(long)]
    pub json: bool,
    /// How partitions are made: `witness` computes each witness alone against the circuit
    /// compiled once (stored beside its key), and the device computes a, b, c; `full`
    /// synthesizes each partition's whole constraint system.
    #[arg(long, default_value = "witness", value_parser = ["witness", "full"])]
    pub synthesis: String,
    /// Prove a circom circuit instead: snarkjs's Groth16 key (BLS12-381), with --wtns.
    #[arg(long, requires = "wtns", conflicts_with = "compiled")]
    pub zkey: Option<PathBuf>,
    /// The circom witness for --zkey.
    #[arg(long, requires = "zkey")]
    pub wtns: Option<PathBuf>,
    /// Prove a compiled circuit instead (`g16 compile`), with --witness and --key.
    #[arg(long, requires_all = ["witness", "key"])]
    pub compiled: Option<PathBuf>,
    /// The witness (.wtns, as `g16 witness` or circom writes it) for --compiled.
    #[arg(long, requires = "compiled")]
    pub witness: Option<PathBuf>,
    /// Where --zkey and --compiled write proof.json and public.json (as snarkjs writes them),
    /// and --compiled also proof.bin (arkworks' compressed encoding).
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
}

impl ProveArgs {
    fn compiled(&self) -> bool {
        self.synthesis == "witness"
    }
}

/// One configuration of a sweep.
#[derive(Clone, Copy)]
struct Run {
    lock: LockDesign,
    workers: usize,
}

pub fn run(settings: &Settings, args: ProveArgs) -> Result<(), CliError> {
    // One proof from files: no engine, no built-in circuit.
    if let (Some(zkey), Some(wtns)) = (&args.zkey, &args.wtns) {
        return prove_files::prove_zkey(settings, zkey, wtns, &args.out, args.backend);
    }
    if let (Some(compiled), Some(witness), Some(key)) = (&args.compiled, &args.witness, &args.key) {
        return prove_files::prove_compiled(settings, compiled, witness, key, &args.out, args.backend);
    }
    if args.partitions == 0 {
        return Err(CliError::Usage("--partitions must be at least 1".into()));
    }
    if !args.gap_warn.is_finite() || args.gap_warn < 0.0 {
        return Err(CliError::Usage("--gap-warn must be a percentage, at least 0".into()));
    }
    // Reject a bad size before a key is generated for it.
    BuiltinCircuit::new(args.circuit, args.size, args.seed)?;
    let runs: Vec<Run> = args
        .lock
        .iter()
        .flat_map(|&lock| args.gpu_workers_per_device.iter().map(move |&workers| Run { lock, workers }))
        .collect();
    let config = |run: Run| EngineConfig {
        synthesis_workers: args.synth_workers.unwrap_or_else(default_synthesis_workers),
        channel_bound: args.channel_bound,
        workers_per_device: run.workers,
        lock: run.lock,
        verify: !args.no_verify,
        prefill: args.prefill,
    };
    for &run in &runs {
        config(run).validate()?;
    }

    // A job of one proof: shifted bases would cost more device time than they save, and the
    // process's exit would wait for their background build (a 2^22 key store proof on an H100
    // reported its first proof at 2.2 s in a process of 5.0 s, 7951b38); a warm-up proof
    // would cost what the proof costs.
    let one_proof = args.partitions == 1 && runs.len() == 1;
    let one_proof_settings;
    let (settings, preparation) = if one_proof {
        one_proof_settings = settings.for_one_proof();
        (&one_proof_settings, KeyPreparation::OneProof)
    } else {
        (settings, KeyPreparation::WarmUp)
    };
    // The first configuration's timeline also holds the setup (opening, key, preparation).
    let mut tl = Timeline::new();
    let mut devices = open_devices(settings, &args, preparation, &tl)?;
    let info = devices[0].backend().info();
    if !args.json {
        for d in &devices {
            println!("device {} on {}", d.label(), d.backend().info().device);
        }
    }
    let several = runs.len() > 1;
    for (i, &run) in runs.iter().enumerate() {
        if i > 0 {
            tl = Timeline::new();
        }
        let (result, outcome, engine_info) = prove_job(&args, devices, config(run), &tl)?;
        devices = outcome;
        // The files are written even for a failed job: they show how far it got.
        let events = tl.events();
        let suffix = several.then(|| format!("{}-w{}", run.lock, run.workers));
        if let Some(path) = &args.timeline {
            let path = with_suffix(path, suffix.as_deref());
            let mut f = create(&path)?;
            timeline::text::write_text(&events, &mut f).map_err(io_err(format!("writing {}", path.display())))?;
        }
        if let Some(path) = &args.trace {
            let path = with_suffix(path, suffix.as_deref());
            timeline::chrome::write_chrome(&events, &mut create(&path)?)?;
        }
        result?;
        let report = Report::from_events(&events);
        let job = report.jobs.first().ok_or_else(|| CliError::Usage("the job left no timeline".into()))?;
        if args.json {
            // The job's own spans, without the setup the first configuration's timeline holds.
            let own: Vec<timeline::Event> = events.iter().filter(|e| e.job == job.job).cloned().collect();
            let job_report = Report::from_events(&own);
            println!("{}", json_line(&args, run, &info, &report, &job_report, &engine_info));
        } else {
            if several {
                println!("== lock {}, {} worker(s) per device", run.lock, run.workers);
            }
            print!("{}", report.render(args.gap_warn / 100.0));
            let verdict = if args.no_verify { "not verified (--no-verify)" } else { "all verified" };
            println!(
                "{} proof(s) of {} 2^{} in {:.1} ms: {verdict}",
                job.proofs,
                args.circuit,
                args.size,
                job.wall_ns as f64 / 1e6
            );
        }
    }
    Ok(())
}

/// The devices of a `--devices` list, each labelled (`cuda:0`), or device 0 of `backend`.
pub fn open_backends(
    settings: &Settings,
    devices: Option<&str>,
    backend: BackendKind,
) -> Result<Vec<(String, AnyBackend)>, CliError> {
    Ok(match devices {
        Some(list) => parse_device_list(list)?
            .into_iter()
            .map(|spec| Ok((spec.label(), backend::open_spec(&spec, settings)?)))
            .collect::<Result<_, CliError>>()?,
        None => {
            let b = backend::open(backend, settings)?;
            vec![(format!("{}:0", b.kind()), b)]
        }
    })
}

/// The devices asked for, opened; the key, loaded (checked on the first device); and the
/// compiled circuit where the proofs use one.
struct Loaded {
    opened: Vec<(String, AnyBackend)>,
    key: CheckedKey,
    compiled: Option<CompiledCircuit>,
}

/// Opens the devices and loads the key, the circuit's loading beside both.
fn open_and_load(settings: &Settings, args: &ProveArgs, tl: &Timeline) -> Result<Loaded, CliError> {
    let store = settings.key_store();
    std::thread::scope(|scope| {
        // The circuit's R1CS, compiled once and stored beside the key (a key from a file gets
        // its circuit compiled here), read while the devices open and the key loads; it is
        // checked against the key before any partition starts.
        let compiled = args.compiled().then(|| {
            scope.spawn(|| {
                let _g = tl.span(Layer::Engine, "load_circuit");
                match &args.key {
                    Some(_) => {
                        Ok(BuiltinCircuit::new(args.circuit, args.size, 0)?.compile().map_err(KeyStoreError::from)?)
                    }
                    None => setup::stored_or_compiled(&store, args.circuit, args.size),
                }
            })
        });
        let stored = store.path(args.circuit, args.size);
        let (opened, key) = if args.devices.is_none() && args.key.is_none() && stored.exists() {
            // One device, which opens while the stored key is read (its checks, where its
            // digest is not known, wait for it).
            let opening = Opening::start(scope, || {
                let _g = tl.span(Layer::Engine, "open_backend");
                backend::open(args.backend, settings)
            });
            let loaded = {
                let _g = tl.span(Layer::Engine, "load_key");
                store.load_on(&stored, &opening)
            };
            let device = opening.finish()?;
            let label = format!("{}:0", device.kind());
            (vec![(label, device)], loaded?.0)
        } else {
            let opened = {
                let _g = tl.span(Layer::Engine, "open_backend");
                open_backends(settings, args.devices.as_deref(), args.backend)?
            };
            let key: CheckedKey = {
                let _g = tl.span(Layer::Engine, "load_key");
                // The first device checks a key's points (or makes a missing key: on a GPU, in
                // seconds rather than minutes).
                let (_, first) = opened.first().ok_or_else(|| CliError::Usage("no device to prove on".into()))?;
                match &args.key {
                    Some(path) => settings.checked_files().load_key(path, &OnBackend(first))?.0,
                    None => setup::stored_or_generated(&store, first, args.circuit, args.size)?,
                }
            };
            (opened, key)
        };
        // A key of another circuit or size fails here, before any compilation or synthesis.
        BuiltinCircuit::new(args.circuit, args.size, 0)?.check_key(&key.shape())?;
        let compiled: Option<CompiledCircuit> = match compiled {
            Some(loading) => Some(loading.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?),
            None => None,
        };
        Ok(Loaded { opened, key, compiled })
    })
}

/// Opens the devices asked for and prepares the key on each.
fn open_devices(
    settings: &Settings,
    args: &ProveArgs,
    preparation: KeyPreparation,
    tl: &Timeline,
) -> Result<Vec<EngineDevice<AnyBackend>>, CliError> {
    let Loaded { opened, key, compiled } = open_and_load(settings, args, tl)?;
    Ok(opened
        .into_iter()
        .map(|(label, backend)| match &compiled {
            Some(circuit) => EngineDevice::prepare_compiled_with(label, backend, &key, circuit, preparation, tl),
            None => EngineDevice::prepare_with(label, backend, &key, preparation, tl),
        })
        .collect::<Result<_, _>>()?)
}

/// What the engine says about a run besides the timeline.
struct EngineInfo {
    notices: Vec<String>,
    designs: Vec<(String, LockDesign)>,
    synthesis_workers: usize,
    channel_high_water: usize,
}

/// One configuration's run: the job's outcome, the devices (for the next configuration),
/// and what the engine said.
type JobRun = (Result<(), EngineError>, Vec<EngineDevice<AnyBackend>>, EngineInfo);

/// Runs one job of `args.partitions` partitions: its outcome, and the devices back for the
/// next configuration.
fn prove_job(
    args: &ProveArgs,
    devices: Vec<EngineDevice<AnyBackend>>,
    config: EngineConfig,
    tl: &Timeline,
) -> Result<JobRun, CliError> {
    let engine = Engine::start(devices, config, tl)?;
    for notice in engine.notices() {
        eprintln!("note: {notice}");
    }
    // The same witnesses for every configuration; each proof's (r, s) drawn from the OS.
    let partitions = (0..args.partitions)
        .map(|p| {
            let circuit = BuiltinCircuit::new(args.circuit, args.size, args.seed + u64::from(p))?;
            Ok(if args.compiled() {
                Partition::assignment_from(move || circuit.assignment())
            } else {
                Partition::circuit(circuit)
            })
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    let bar = progress::bar(u64::from(args.partitions), format!("proving {} 2^{}", args.circuit, args.size));
    let mut handle = engine.submit(partitions)?;
    let result = loop {
        match handle.wait_timeout(Duration::from_millis(100)) {
            Ok(result) => break result,
            Err(pending) => {
                bar.set_position(u64::from(pending.settled()));
                handle = pending;
            }
        }
    };
    bar.finish_and_clear();
    let info = EngineInfo {
        notices: engine.notices().to_vec(),
        designs: engine.lock_designs(),
        synthesis_workers: engine.config().synthesis_workers,
        channel_high_water: engine.stats().channel_high_water,
    };
    let devices = engine.shutdown();
    Ok((result.map(|_| ()), devices, info))
}

fn json_line(
    args: &ProveArgs,
    run: Run,
    info: &BackendInfo,
    report: &Report,
    job_report: &Report,
    engine: &EngineInfo,
) -> serde_json::Value {
    let job = &report.jobs[0];
    let ms = |ns: u64| ns as f64 / 1e6;
    let steps: BTreeMap<String, f64> = step_totals(report).into_iter().map(|(k, ns)| (k, ms(ns))).collect();
    let stages: BTreeMap<&str, f64> =
        job.stages.iter().map(|s| (s.stage.as_str(), job.stage_mean_ns(&s.stage) / 1e6)).collect();
    let devices: Vec<serde_json::Value> = job
        .devices
        .iter()
        .map(|d| {
            json!({ "device": d.device, "busy_ms": ms(d.busy_ns), "share": d.share,
                    "steady_share": d.steady_share, "sections": d.sections })
        })
        .collect();
    let steady =
        job.devices.iter().map(|d| d.steady_share).fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))));
    let largest = job_report.unattributed_groups().into_iter().next().map(|w| {
        json!({ "name": w.name, "layer": w.layer, "spans": w.spans, "unattributed_ms": ms(w.unattributed_ns),
                "share": w.share(), "largest_gap": w.largest.map(|g| json!({
                    "ms": ms(g.dur_ns()), "between": g.before, "and": g.after, "job": w.job, "partition": w.partition })) })
    });
    let warnings: Vec<serde_json::Value> = report
        .gap_warnings(args.gap_warn / 100.0)
        .into_iter()
        .map(|w| json!({ "name": w.name, "layer": w.layer, "share": w.share(), "unattributed_ms": ms(w.unattributed_ns) }))
        .collect();
    let layers: BTreeMap<String, f64> =
        job.unattributed_by_layer.iter().map(|(l, ns)| (l.to_string(), ms(*ns))).collect();
    json!({
        "backend": info.kind.name(),
        "device": info.device,
        "driver": info.driver,
        "circuit": args.circuit.name(),
        "size": args.size,
        "partitions": args.partitions,
        "proofs": job.proofs,
        "verified": !args.no_verify,
        "verify_skipped": args.no_verify,
        "lock": run.lock.name(),
        "lock_effective": engine.designs.iter().map(|(d, l)| json!({ "device": d, "lock": l.name() })).collect::<Vec<_>>(),
        "notices": engine.notices,
        "workers_per_device": run.workers,
        "synth_workers": engine.synthesis_workers,
        "channel_bound": args.channel_bound,
        "prefill": args.prefill,
        "synthesis": args.synthesis,
        "channel_high_water": engine.channel_high_water,
        "wall_ms": ms(job.wall_ns),
        "proofs_per_min": job.proofs_per_min(),
        "steady_proofs_per_min": job.steady_proofs_per_min(),
        "gpu_window_ms": ms(job.gpu_window_ns),
        "steps_ms": steps,
        "stages_ms": stages,
        "lock_wait_ms": ms(job.lock_wait_ns),
        "lock_held_ms": ms(job.lock_held_ns),
        "devices": devices,
        "device_busy": report.device_busy,
        "device_busy_steady": steady,
        "unattributed_ms": ms(report.unattributed_ns),
        "unattributed_by_layer_ms": layers,
        "largest_unattributed": largest,
        "gap_warnings": warnings,
        "bottleneck": job.bottleneck,
        "seed": args.seed,
        "commit": stamp::COMMIT,
        "date": stamp::today_utc(),
    })
}

/// Time per step, summed over partitions: the prover's steps of DESIGN.md's data flow (the
/// NTTs and MSMs apart, so backends compare step by step) and the engine's stages.
fn step_totals(report: &Report) -> BTreeMap<String, u64> {
    let mut totals = BTreeMap::new();
    for span in &report.spans {
        if matches!(span.layer, Layer::Prover | Layer::Engine) {
            *totals.entry(span.name.clone()).or_insert(0) += span.dur_ns();
        }
    }
    totals
}

fn create(path: &Path) -> Result<std::io::BufWriter<std::fs::File>, CliError> {
    let f = std::fs::File::create(path).map_err(io_err(format!("creating {}", path.display())))?;
    Ok(std::io::BufWriter::new(f))
}

/// `t.json` → `t-split-w2.json` when several configurations run.
fn with_suffix(path: &Path, suffix: Option<&str>) -> PathBuf {
    let Some(suffix) = suffix else { return path.to_path_buf() };
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{suffix}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{suffix}"),
    };
    path.with_file_name(name)
}
