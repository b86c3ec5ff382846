//! `g16 filecoin c2`: Filecoin's PoRep C2 on g16 (and `setup`: a proof's parameter files made
//! by g16's setup, for test sectors; `plan`: a partition's circuit and device memory). C1's
//! output in (lotus's JSON, or filecoin-proofs' JSON or bincode with `--proof`), the sector's parameter file from
//! filecoin-proofs' parameter directory, each partition's witness made on the host while the
//! devices prove the ones before it, and the C2 output out: the partitions' proofs in
//! bellperson's bytes, as `seal_commit_phase2` returns them. Every proof is verified before it
//! is written; with the sector's prover and sector ids, filecoin-proofs' `verify_seal` too.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use g16::backend::{Backend, BackendKind};
use g16::engine::{Engine, EngineConfig, EngineDevice};
use g16::prover::OnBackend;
use g16::settings::Settings;
use g16::timeline::report::names;
use g16::timeline::{Report, Timeline};
use g16_filecoin::{prove_on, C1Output, FilecoinError, PoRepCircuit, SealProof};

use crate::cli::bench::median;
use crate::cli::{io_err, parse_backend, CliError};

#[derive(Subcommand)]
pub enum FilecoinCommand {
    /// Prove a sector's C1 output (PoRep C2) and write the proof filecoin-proofs verifies.
    C2(C2Args),
    /// A partition's parameter and verifying-key files, made by g16's setup of the circuit
    /// recorded from the blank circuit, into filecoin-proofs' parameter directory under its
    /// names: for test sector sizes and devnets (a network's proofs verify only under its
    /// ceremony's parameters). Files already there are never replaced.
    Setup {
        /// The registered proof (e.g. StackedDrg2KiBV1_1).
        #[arg(long)]
        proof: String,
        /// The parameter directory (filecoin-proofs' FIL_PROOFS_PARAMETER_CACHE).
        #[arg(long)]
        params: PathBuf,
        /// Derive the toxic waste from this seed instead of the OS's randomness: the same files
        /// anywhere, and anyone who knows the seed can forge proofs for them (tests only).
        #[arg(long)]
        seed: Option<u64>,
        /// Where the setup's scalar multiplications run.
        #[arg(long, default_value = "auto", value_parser = parse_backend)]
        backend: BackendKind,
    },
    /// One partition of a registered proof: its circuit recorded from the blank circuit (no
    /// sector needed), its counts, and the device memory its proofs need.
    Plan {
        /// The registered proof (e.g. StackedDrg32GiBV1_1).
        #[arg(long)]
        proof: String,
        #[arg(long, default_value = "auto", value_parser = parse_backend)]
        backend: BackendKind,
        /// Plan for a card of this much memory instead of a device of this machine.
        #[arg(long)]
        memory_gib: Option<f64>,
        /// Also cache the compiled circuit for `c2` (at 32 GiB a ~27 GB file).
        #[arg(long)]
        save: bool,
    },
}

#[derive(Args)]
pub struct C2Args {
    /// C1's output: lotus's/curio's JSON (names its proof), or filecoin-proofs' JSON or bincode.
    #[arg(long)]
    pub c1: PathBuf,
    /// The directory of Filecoin's parameter files, where the sector's
    /// `v28-stacked-proof-of-replication-….params` is read from (and, with the ids, the `.vk`
    /// beside it that verify_seal reads: the command sets FIL_PROOFS_PARAMETER_CACHE to it).
    #[arg(long)]
    pub params: PathBuf,
    /// Where to write the C2 output (192 bytes a partition).
    #[arg(long)]
    pub out: PathBuf,
    /// The registered proof (e.g. StackedDrg32GiBV1_1): needed where the C1 file names none.
    #[arg(long)]
    pub proof: Option<String>,
    #[arg(long, default_value = "auto", value_parser = parse_backend)]
    pub backend: BackendKind,
    /// Devices to prove on (e.g. `cuda:0,cuda:1`); the partitions are spread over them.
    #[arg(long)]
    pub devices: Option<String>,
    /// The sector's prover id (64 hex digits) and, with --sector-id, run filecoin-proofs'
    /// verify_seal on the output as its C2 does.
    #[arg(long, requires = "sector_id")]
    pub prover_id: Option<String>,
    #[arg(long, requires = "prover_id")]
    pub sector_id: Option<u64>,
    /// Append the run's phases as a JSON line to this file (benches/results).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the run's timeline (engine, partitions, device spans) here; `g16 timeline report
    /// FILE` reads it.
    #[arg(long)]
    pub timeline: Option<PathBuf>,
    /// Prove the C1 output this many times on the same engine, each output verified: the
    /// proofs after the first find the key resident, as a server's do
    /// (`--out` gets the last one).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,
}

pub fn run(settings: &Settings, command: FilecoinCommand) -> Result<(), CliError> {
    match command {
        FilecoinCommand::C2(args) => c2(settings, args),
        FilecoinCommand::Setup { proof, params, seed, backend } => setup(settings, &proof, &params, seed, backend),
        FilecoinCommand::Plan { proof, backend, memory_gib, save } => plan(settings, &proof, backend, memory_gib, save),
    }
}

fn c2(settings: &Settings, args: C2Args) -> Result<(), CliError> {
    // A process for one sector: shifted bases, unless asked for, are not built. On an H100 the
    // 2 KiB C2's first device section took 200 ms with them building in the background against
    // 72 without, and later ones 64 against 69: ~26 jobs before they pay (docs/perf/filecoin.md).
    // A server (`g16 serve`) that holds the circuit keeps them.
    let settings = &settings.for_one_proof();
    let started = Instant::now();
    let asked = args.proof.as_deref().map(str::parse::<SealProof>).transpose()?;
    let ids = match (&args.prover_id, args.sector_id) {
        (Some(hex), Some(sector)) => Some((parse_prover_id(hex)?, sector)),
        _ => None,
    };
    let tl = Timeline::new();
    let mut phases: Vec<(&str, f64)> = Vec::new();
    let mut phase = |name: &'static str, since: &mut Instant| {
        phases.push((name, since.elapsed().as_secs_f64() * 1e3));
        *since = Instant::now();
    };
    let mut at = Instant::now();

    let c1 = C1Output::read(&args.c1, asked)?;
    let proof = c1.seal_proof();
    phase("read_c1", &mut at);

    let opened = crate::cli::prove::open_backends(settings, args.devices.as_deref(), args.backend)?;
    phase("open_devices", &mut at);

    let circuit = compiled_circuit(settings, proof)?;
    phase("load_circuit", &mut at);

    // The parameter file streams through g16's key decoding; its points are checked on the
    // first device unless its digest was recorded by an earlier full check.
    let decoded = circuit.read_params(&args.params)?;
    phase("read_params", &mut at);
    let files = settings.checked_files();
    let digest = decoded.digest();
    let checker = OnBackend(&opened[0].1);
    let (checks, how) = files.checks(&digest, &checker);
    let key = decoded.check(checks, circuit.compiled()).map_err(FilecoinError::from)?;
    files.record(&digest).map_err(io_err(format!("cannot record the digest in {}", files.dir().display())))?;
    phase("check_params", &mut at);

    let devices = opened
        .into_iter()
        .map(|(label, backend)| EngineDevice::prepare_compiled(label, backend, &key, circuit.compiled(), &tl))
        .collect::<Result<Vec<_>, _>>()?;
    drop(key);
    phase("prepare_devices", &mut at);

    let device_name = devices[0].backend().info().device.clone();
    let backend_name = devices[0].backend().info().kind.to_string();
    let engine = Engine::start(devices, EngineConfig::default(), &tl)?;
    let count = c1.partitions(&circuit)?.len();
    let mut jobs: Vec<Job> = Vec::new();
    let mut output = Vec::new();
    let (mut busy_before, mut synth_before) = (0.0, 0.0);
    for _ in 0..args.runs {
        let partitions = c1.partitions(&circuit)?;
        let prove_started = Instant::now();
        output = prove_on(&engine, None, partitions, None)?;
        // The job alone: its partitions' witnesses, device sections and verification.
        let prove_ms = prove_started.elapsed().as_secs_f64() * 1e3;
        let busy: f64 = engine.device_time().iter().map(|d| d.busy.as_secs_f64() * 1e3).sum();
        let report = Report::from_events(&tl.events());
        let synth: f64 = report.spans.iter().filter(|s| s.name == names::SYNTH).map(|s| s.dur_ns() as f64 * 1e-6).sum();
        let verified_ms = match ids {
            Some((prover_id, sector_id)) => {
                let at = Instant::now();
                if !c1.verify_seal(prover_id, sector_id, &output)? {
                    return Err(CliError::Usage(
                        "filecoin-proofs' verify_seal rejects the proof: are --prover-id and --sector-id the sector's?"
                            .into(),
                    ));
                }
                Some(at.elapsed().as_secs_f64() * 1e3)
            }
            None => None,
        };
        jobs.push(Job { prove_ms, device_ms: busy - busy_before, witness_ms: synth - synth_before, verified_ms });
        (busy_before, synth_before) = (busy, synth);
    }
    // Not "prove": the JSON line's prove_ms is the first job's.
    phase("jobs", &mut at);
    engine.shutdown();
    phase("release_devices", &mut at);

    if let Some(path) = &args.timeline {
        let mut file = std::fs::File::create(path).map_err(io_err(format!("cannot create {}", path.display())))?;
        g16::timeline::text::write_text(&tl.events(), &mut file)
            .map_err(io_err(format!("writing {}", path.display())))?;
    }
    let seal_verified = ids.is_some();
    std::fs::write(&args.out, &output).map_err(io_err(format!("cannot write {}", args.out.display())))?;
    let total_ms = started.elapsed().as_secs_f64() * 1e3;

    println!(
        "{proof}: {count} partition(s) proven on {device_name} and verified{}; parameters {}; wrote {} ({} bytes)",
        if seal_verified { ", accepted by filecoin-proofs' verify_seal" } else { "" },
        match how {
            g16::trust::Checked::Now => "checked point by point (digest recorded)",
            g16::trust::Checked::Before => "trusted by digest (no point checked again)",
        },
        args.out.display(),
        output.len()
    );
    let line: Vec<String> = phases.iter().map(|(n, ms)| format!("{n} {ms:.0} ms")).collect();
    let first = jobs[0];
    println!(
        "{}; job {:.0} ms: witnesses {:.0} ms, device {:.0} ms; total {total_ms:.0} ms",
        line.join(", "),
        first.prove_ms,
        first.witness_ms,
        first.device_ms
    );
    for (i, job) in jobs.iter().enumerate().skip(1) {
        println!(
            "job {}: {:.0} ms: witnesses {:.0} ms, device {:.0} ms",
            i + 1,
            job.prove_ms,
            job.witness_ms,
            job.device_ms
        );
    }

    if let Some(path) = &args.json {
        let mut fields = serde_json::json!({
            "tool": "g16",
            "backend": backend_name,
            "device": device_name,
            "op": "filecoin-c2",
            "proof": proof.to_string(),
            "partitions": count,
            "constraints": circuit.compiled().num_constraints(),
            "whole_ms": total_ms,
            "prove_ms": first.prove_ms,
            "witness_ms": first.witness_ms,
            "device_ms": first.device_ms,
            "runs": jobs.len(),
            "params_checked": matches!(how, g16::trust::Checked::Now),
            "threads": rayon::current_num_threads(),
            "commit": crate::cli::stamp::COMMIT,
            "date": crate::cli::stamp::today_utc(),
            "includes": "C1 file read, circuit loaded, parameter file read and checked, key prepared on the devices, witnesses and proofs, each proof verified; prove_ms, witness_ms and device_ms are the first job's, again_* the median over the jobs after it (key resident)",
        });
        if jobs.len() > 1 {
            let again = &jobs[1..];
            let median = |f: fn(&Job) -> f64| median(&again.iter().map(f).collect::<Vec<_>>());
            fields["again_prove_ms"] = median(|j| j.prove_ms).into();
            fields["again_witness_ms"] = median(|j| j.witness_ms).into();
            fields["again_device_ms"] = median(|j| j.device_ms).into();
        }
        fields["jobs"] = jobs
            .iter()
            .map(|j| serde_json::json!({"prove_ms": j.prove_ms, "witness_ms": j.witness_ms, "device_ms": j.device_ms, "verify_seal_ms": j.verified_ms}))
            .collect::<Vec<_>>()
            .into();
        for (name, ms) in &phases {
            fields[format!("{name}_ms")] = (*ms).into();
        }
        append_line(path, &fields.to_string())?;
    }
    Ok(())
}

/// One C2 job's times: the job (witnesses, device sections, each partition's proof checked),
/// its device's busy time, its witnesses' synthesis summed over partitions, and verify_seal's.
#[derive(Clone, Copy)]
struct Job {
    prove_ms: f64,
    device_ms: f64,
    witness_ms: f64,
    verified_ms: Option<f64>,
}

fn setup(
    settings: &Settings,
    proof: &str,
    dir: &Path,
    seed: Option<u64>,
    backend: BackendKind,
) -> Result<(), CliError> {
    let proof: SealProof = proof.parse()?;
    // A directory that cannot be written fails before minutes of setup.
    std::fs::create_dir_all(dir).map_err(io_err(format!("cannot create {}", dir.display())))?;
    let waste = crate::cli::setup::toxic_waste(seed);
    let started = Instant::now();
    let circuit = compiled_circuit(settings, proof)?;
    // A parameter directory may hold a network's ceremony files under these very names.
    for name in [circuit.params_file_name()?, circuit.vk_file_name()?] {
        let path = dir.join(name);
        if path.exists() {
            return Err(CliError::Usage(format!(
                "{} is already there: g16 filecoin setup never replaces a parameter file (remove it first)",
                path.display()
            )));
        }
    }
    let device = g16::backends::open(backend, settings)?;
    let key =
        g16::prover::setup::generate_compiled(circuit.compiled(), &mut waste.rng(), &device, &Timeline::disabled())
            .map_err(g16::key_store::KeyStoreError::from)?;
    let params = circuit.write_params(&key, dir)?;
    println!(
        "{proof}: parameters made on {} in {:.1} s; written to {} (and its .vk)",
        device.info().device,
        started.elapsed().as_secs_f64(),
        params.display()
    );
    Ok(())
}

fn plan(
    settings: &Settings,
    proof: &str,
    backend: BackendKind,
    memory_gib: Option<f64>,
    save: bool,
) -> Result<(), CliError> {
    let proof: SealProof = proof.parse()?;
    let started = Instant::now();
    let circuit = match save {
        true => compiled_circuit(settings, proof)?,
        false => PoRepCircuit::compile(proof)?,
    };
    let c = circuit.compiled();
    let (a, b, cm) = c.matrices();
    println!(
        "{proof}, one partition: {} constraints, {} inputs (ONE included) + {} aux variables, domain 2^{}; \
         entries A {} B {} C {}; recorded or read in {:.1} s, host peak {:.1} GiB",
        c.num_constraints(),
        c.num_instance(),
        c.num_variables() - c.num_instance(),
        c.domain_size().trailing_zeros(),
        a.entries(),
        b.entries(),
        cm.map_or(0, |m| m.entries()),
        started.elapsed().as_secs_f64(),
        peak_host_gib().unwrap_or(f64::NAN),
    );
    let shape = g16::compiled::KeyShape {
        num_instance: c.num_instance(),
        num_variables: c.num_variables(),
        domain_size: c.domain_size(),
        qap: g16::compiled::Qap::Libsnark,
    };
    crate::cli::plan::print_plan(settings, &shape, c.matrix_size(), backend, memory_gib)
}

/// The process's peak resident memory (Linux's VmHWM), in GiB.
fn peak_host_gib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: f64 = status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / (1u64 << 20) as f64)
}

/// The proof's circuit: recorded from the blank circuit once (seconds at 2 KiB, minutes at
/// 32 GiB), then read from the cache directory's `filecoin/` as a checksummed compiled circuit.
fn compiled_circuit(settings: &Settings, proof: SealProof) -> Result<PoRepCircuit, CliError> {
    let dir = settings.cache_root().join("filecoin");
    let (circuit, not_cached) = PoRepCircuit::cached(proof, &dir)?;
    if let Some(e) = not_cached {
        eprintln!("note: the compiled circuit was not cached in {}: {e}", dir.display());
    }
    Ok(circuit)
}

fn parse_prover_id(hex: &str) -> Result<[u8; 32], CliError> {
    let bad = || CliError::Usage(format!("--prover-id must be 64 hex digits, not {hex:?}"));
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut id = [0u8; 32];
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(id)
}

fn append_line(path: &Path, line: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_err(format!("cannot open {}", path.display())))?;
    writeln!(file, "{line}").map_err(io_err(format!("cannot write {}", path.display())))
}
