//! `g16 prove`: the main job — prove instances of a built-in circuit on the best backend,
//! verify each, and show where the time went.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ark_ff::UniformRand;
use g16_core::backend::{self, Backend, BackendKind};
use g16_core::circuits::{BuiltinCircuit, CircuitKind};
use g16_core::prover::{verify, Prover};
use g16_core::timeline::{self, Layer, Report, Timeline};
use g16_core::Fr;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::json;

use crate::{io_err, keys, parse_backend, parse_circuit, progress, CliError};

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
    #[arg(long, default_value = "auto", value_parser = parse_backend)]
    pub backend: BackendKind,
    /// How many instances to prove (seeds seed, seed+1, …), one key.
    #[arg(long, default_value_t = 1)]
    pub partitions: u32,
    /// A proving key (ark-groth16 ProvingKey, compressed or not); default: the cached key for
    /// the circuit and size, generated on first use.
    #[arg(long)]
    pub key: Option<PathBuf>,
    /// Seed of the witnesses and of the proof randomness (r, s).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the timeline as TIMELINE text lines.
    #[arg(long)]
    pub timeline: Option<PathBuf>,
    /// Write the timeline as Chrome trace JSON (opens in Perfetto).
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Skip verification.
    #[arg(long)]
    pub no_verify: bool,
    /// Print one JSON object instead of the report.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ProveArgs) -> Result<(), CliError> {
    if args.partitions == 0 {
        return Err(CliError::Usage("--partitions must be at least 1".into()));
    }
    // Reject a bad size before a key is generated for it.
    BuiltinCircuit::new(args.circuit, args.size, args.seed)?;
    let tl = Timeline::new();
    let wall_start = timeline::now_ns();

    let backend = {
        let _g = tl.span(Layer::Engine, "open_backend");
        backend::open(args.backend)?
    };
    let info = backend.info();
    if !args.json {
        println!("backend {} on {}", info.kind, info.device);
    }
    let pk = {
        let _g = tl.span(Layer::Engine, "load_key");
        match &args.key {
            Some(path) => keys::load(path)?,
            None => keys::cached_or_generate(args.circuit, args.size)?.0,
        }
    };
    let prover = Prover::new(&backend);
    let key = {
        let _g = tl.span(Layer::Engine, "prepare_key");
        prover.prepare(&pk)?
    };
    drop(pk);

    let mut rng = ChaCha20Rng::seed_from_u64(args.seed);
    let bar = progress::bar(u64::from(args.partitions), format!("proving {} 2^{}", args.circuit, args.size));
    let mut failed = 0usize;
    for partition in 0..args.partitions {
        let ptl = tl.for_partition(0, partition);
        let circuit = BuiltinCircuit::new(args.circuit, args.size, args.seed + u64::from(partition))?;
        let public_inputs = circuit.public_inputs();
        let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
        let proof = prover.prove(&key, circuit, r, s, &ptl)?;
        if !args.no_verify {
            let _g = ptl.span(Layer::Engine, "verify");
            if !verify(&key, &proof, &public_inputs)? {
                failed += 1;
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let wall_ms = (timeline::now_ns() - wall_start) as f64 / 1e6;

    let events = tl.events();
    if let Some(path) = &args.timeline {
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(path).map_err(io_err(format!("creating {}", path.display())))?,
        );
        timeline::text::write_text(&events, &mut f).map_err(io_err(format!("writing {}", path.display())))?;
    }
    if let Some(path) = &args.trace {
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(path).map_err(io_err(format!("creating {}", path.display())))?,
        );
        timeline::chrome::write_chrome(&events, &mut f)?;
    }
    let report = Report::from_events(&events);
    let verified = !args.no_verify && failed == 0;

    if args.json {
        let steps: BTreeMap<String, f64> =
            step_totals(&report).into_iter().map(|(k, ns)| (k, ns as f64 / 1e6)).collect();
        let out = json!({
            "backend": info.kind.name(),
            "device": info.device,
            "driver": info.driver,
            "circuit": args.circuit.name(),
            "size": args.size,
            "partitions": args.partitions,
            "proofs": args.partitions,
            "verified": verified,
            "verify_skipped": args.no_verify,
            "wall_ms": wall_ms,
            "steps_ms": steps,
            "device_busy": report.device_busy,
            "unattributed_ms": report.unattributed_ns as f64 / 1e6,
            "seed": args.seed,
        });
        println!("{out}");
    } else {
        print!("{report}");
        let verdict = if args.no_verify {
            "not verified (--no-verify)".to_string()
        } else if failed == 0 {
            "all verified".to_string()
        } else {
            format!("{failed} FAILED verification")
        };
        println!("{} proof(s) of {} 2^{} in {wall_ms:.1} ms: {verdict}", args.partitions, args.circuit, args.size);
    }
    if failed > 0 {
        return Err(CliError::NotVerified { failed, total: args.partitions as usize });
    }
    Ok(())
}

/// Time per prover step, summed over partitions: the steps of DESIGN.md's data flow, with
/// the NTTs and MSMs kept apart so backends compare step by step.
fn step_totals(report: &Report) -> BTreeMap<String, u64> {
    let mut totals = BTreeMap::new();
    for span in &report.spans {
        if matches!(span.layer, Layer::Prover | Layer::Engine) {
            *totals.entry(span.name.clone()).or_insert(0) += span.dur_ns();
        }
    }
    totals
}
