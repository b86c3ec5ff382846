//! `g16 bench`: the backend comparison.
//!
//! Each case (backend, op, size) runs `--warmup` times untimed, then `--runs` times timed, each
//! run on fresh random inputs; the median is what counts. What is timed, per op:
//! - `msm-g1`, `msm-g2`: one MSM of 2^size random bases (resident, uploaded once per size)
//!   by 2^size random scalars already on the device, until the result is on the host.
//! - `msm-g1-witness`, `msm-g2-witness`: the same with the scalars of a proof's witness MSMs
//!   (A, B, L): the synthetic circuit's mix of 30 % zeros, 30 % ones and 40 % full-width
//!   values, shuffled. This is what the 0/1 split and the MSM layouts see inside a proof,
//!   measured without a proving key (whose generation takes minutes at 2^22).
//! - `ntt`: one forward NTT of 2^size random scalars already on the device, synchronized.
//! - `upload`: staging 2^size random scalars from host memory onto the device, synchronized
//!   (the proof's `stage` step does four of these); the buffer is freed outside the timing.
//! - `prove`: one whole proof of `--circuit` (default `synthetic`) at 2^size constraints, its
//!   whole synthesis included (the key is prepared once, outside the timing), and
//!   `prove-device`, the device section of the same runs (staging, H, MSMs, assembly) as the
//!   timeline measured it.
//! - `prove-witness`: the same proof through the compiled circuit (compiled and prepared once,
//!   outside the timing): the assignment alone on the host (the circuit's native witness
//!   generator where it has one, as `witness` times it), then z staged, a, b, c = A·z, B·z,
//!   C·z and the R1CS check on the device, H, MSMs, assembly; and `prove-witness-device`.
//! - `prove-assignment`: the same from an assignment already in host memory, as a `.wtns` file
//!   or an outside witness generator delivers it (made outside the timing); and
//!   `prove-assignment-device`.
//! - `prove-arkworks`: the same proof by `ark-groth16`'s own prover on this machine's CPU, the
//!   reference every backend is compared with (run once per size, not per backend).
//! - `synth-full`, `synth-witness`, `witness` (host only): one partition's whole synthesis; its
//!   witness alone by arkworks' witness-only synthesis; its assignment as the compiled proofs
//!   take it (the native witness generator where the circuit has one).
//! - `spmv`: one sparse product A·z of the compiled circuit's A (resident) by a random z
//!   already on the device, synchronized.
//!
//! - `first-proof`, `first-proof-trusted`: from a key file to the first verified proof, phase
//!   by phase (`first_proof.rs`).
//!
//! The proof ops of a circuit other than `synthetic` are named with it (`prove-sha256`).
//!
//! Every case measures the steady state: CUDA's shifted bases are made before an upload
//! returns (`TableBuild::Blocking` where the settings say `Background`), so the first timed
//! MSM has them as every later one does; the bases' upload time includes them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::UniformRand;
use ark_groth16::{r1cs_to_qap::LibsnarkReduction, Groth16};
use g16::backends::{self as backend, AnyBackend};
use g16::settings::Settings;
use g16::backend::{Backend, BackendInfo, BackendKind, NttKind, Scalars};
use g16::circuits::{BuiltinCircuit, CircuitKind};
use g16::compiled::CompiledCircuit;
use g16::key_store::{KeyStore, KeyStoreError, ToxicWaste};
use g16::prover::Prover;
use g16::sample;
use g16::timeline::{Layer, Report, Timeline};
use g16::{CheckedKey, Curve, Fr, G1Projective, G2Projective};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::cli::{progress, setup, CliError};
use measurement::{measurement, median_phases, print_table, Measurement};

mod first_proof;
mod measurement;
pub(crate) use measurement::median;
mod plot;

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Backends to compare, comma-separated (cpu, cuda, wgpu); default: every available one.
    #[arg(long, value_delimiter = ',')]
    pub backends: Option<Vec<String>>,
    /// Operations: msm-g1, msm-g1-host (scalars staged inside the timing), msm-g2, msm-g1-witness, msm-g2-witness, ntt, upload, spmv, prove,
    /// prove-witness, prove-assignment, prove-arkworks, synth-full, synth-witness, witness,
    /// first-proof (with first-proof-trusted: a key file to its first verified proof, by phase).
    #[arg(long, value_delimiter = ',', default_value = "msm-g1,msm-g2,ntt")]
    pub ops: Vec<String>,
    /// Sizes as log2, inclusive: "10..16" or a single "14".
    #[arg(long, default_value = "10..14")]
    pub sizes: String,
    /// Timed runs per case (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Untimed runs before timing (compilation, caches, allocation).
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Append one JSON line per measurement to FILE.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write an SVG plot of time against size here, a line per backend and op (none without it).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Measure nothing: read the measurements of a JSON-lines FILE (as --json writes them,
    /// from any number of runs and machines' calls), print time against size with each
    /// doubling's factor, and plot them (--plot).
    #[arg(long, value_name = "FILE")]
    pub from_json: Option<PathBuf>,
    /// The circuit of the proof, synthesis and spmv ops.
    #[arg(long, default_value = "synthetic", value_parser = crate::cli::parse_circuit)]
    pub circuit: CircuitKind,
    /// Make each case's key (its scalar multiplications on the benched backend) and compiled
    /// circuit in memory and store neither: for sizes whose files the disk should not hold
    /// (a synthetic 2^26 key is 47 GB).
    #[arg(long)]
    pub keys_in_memory: bool,
    /// Make each proof op's key straight into the benched backend's resident bases, a query
    /// at a time (the host never holds the whole key: a synthetic 2^27 key is ~83 GB of
    /// points), and its compiled circuit in memory; store neither.
    #[arg(long, conflicts_with = "keys_in_memory")]
    pub keys_on_device: bool,
    /// prove-assignment and prove-witness with the synthetic circuit's mostly-bits assignment
    /// (~69 % zeros, 30 % ones, 1.1 % field elements, as a Filecoin PoRep partition's witness
    /// is mostly 0/1; docs/perf/filecoin.md) instead of its 60 % bits and 40 % field elements.
    #[arg(long)]
    pub mostly_bits: bool,
}

/// What `--mostly-bits` adds to a proof op's `includes`.
const MOSTLY_BITS_INCLUDES: &str = "; the witness: the synthetic circuit's mostly-bits assignment (y = 0 and b₁ = 0 in 31 groups of 32: ~69 % zeros, 30 % ones, 1.1 % field elements, as a Filecoin PoRep witness is mostly 0/1), not its 60 % bits";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    MsmG1,
    MsmG1Host,
    MsmG2,
    MsmG1Witness,
    MsmG2Witness,
    Ntt,
    Upload,
    Spmv,
    Prove,
    ProveWitness,
    ProveAssignment,
    ProveArkworks,
    SynthFull,
    SynthWitness,
    Witness,
    FirstProof,
}

impl Op {
    /// Every op with its command-line name, in the order the names are listed.
    const ALL: [Op; 16] = [
        Op::MsmG1,
        Op::MsmG1Host,
        Op::MsmG2,
        Op::MsmG1Witness,
        Op::MsmG2Witness,
        Op::Ntt,
        Op::Upload,
        Op::Spmv,
        Op::Prove,
        Op::ProveWitness,
        Op::ProveAssignment,
        Op::ProveArkworks,
        Op::SynthFull,
        Op::SynthWitness,
        Op::Witness,
        Op::FirstProof,
    ];

    /// Whether the op runs on the host alone, once a size rather than once a backend.
    fn host_only(self) -> bool {
        matches!(self, Op::ProveArkworks | Op::SynthFull | Op::SynthWitness | Op::Witness)
    }

    fn parse(s: &str) -> Result<Op, CliError> {
        let s = s.trim();
        Op::ALL.into_iter().find(|&op| op_name(op) == s).ok_or_else(|| {
            let names: Vec<&str> = Op::ALL.into_iter().map(op_name).collect();
            CliError::Usage(format!("unknown op '{s}' (expected {})", names.join(", ")))
        })
    }
}

pub fn parse_sizes(s: &str) -> Result<std::ops::RangeInclusive<u32>, CliError> {
    let bad = || CliError::Usage(format!("--sizes '{s}': expected A..B or A (log2 sizes, A ≤ B)"));
    let (a, b) = match s.split_once("..") {
        Some((a, b)) => {
            (a.trim().parse().map_err(|_| bad())?, b.trim_start_matches('=').trim().parse().map_err(|_| bad())?)
        }
        None => {
            let a = s.trim().parse().map_err(|_| bad())?;
            (a, a)
        }
    };
    if a > b || b > 32 {
        return Err(bad());
    }
    Ok(a..=b)
}

pub fn run(settings: &Settings, args: BenchArgs) -> Result<(), CliError> {
    if let Some(path) = &args.from_json {
        let results = measurement::read_json(path)?;
        measurement::print_scaling(&results);
        if let Some(plot) = &args.plot {
            plot::write_svg(plot, &results)?;
            println!("wrote plot to {}", plot.display());
        }
        return Ok(());
    }
    let sizes = parse_sizes(&args.sizes)?;
    let mut ops: Vec<Op> = args.ops.iter().map(|s| Op::parse(s)).collect::<Result<_, _>>()?;
    ops.sort();
    ops.dedup();
    if args.runs == 0 {
        return Err(CliError::Usage("--runs must be at least 1".into()));
    }
    let takes_assignments = |op: &Op| matches!(op, Op::ProveWitness | Op::ProveAssignment);
    if args.mostly_bits && (args.circuit != CircuitKind::Synthetic || !ops.iter().all(takes_assignments)) {
        return Err(CliError::Usage(
            "--mostly-bits is for prove-assignment and prove-witness of the synthetic circuit alone".into(),
        ));
    }
    let backends = open_backends(&settings.steady_state(), args.backends.as_deref())?;
    let store = settings.key_store();

    let per_size: usize = ops.iter().map(|&op| if op.host_only() { 1 } else { backends.len() }).sum();
    let cases = (per_size * sizes.clone().count()) as u64;
    let bar = progress::bar(cases, "benchmarking");
    let mut results = Vec::new();
    let mut inputs = Inputs::default();
    for size in sizes.clone() {
        for &op in &ops {
            if op == Op::ProveArkworks {
                bar.set_message(format!("arkworks prove 2^{size}"));
                results.push(measure_arkworks(&store, size, &args)?);
                bar.inc(1);
                continue;
            }
            if op.host_only() {
                bar.set_message(format!("{} {} 2^{size}", op_name(op), args.circuit));
                results.push(measure_synthesis(op, size, &args)?);
                bar.inc(1);
                continue;
            }
            for (backend, info) in &backends {
                bar.set_message(format!("{} {} 2^{size}", info.kind, op_name(op)));
                if op == Op::FirstProof {
                    results.extend(first_proof::measure(settings, info, size, &args, &store)?);
                    bar.inc(1);
                    continue;
                }
                results.extend(measure(backend, info, op, size, &args, &mut inputs, &store)?);
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    for m in &mut results {
        m.settings = settings.given.clone();
    }

    print_table(&results);
    if let Some(path) = &args.json {
        measurement::append_json(path, &results)?;
        println!("wrote {} measurements to {}", results.len(), path.display());
    }
    if let Some(plot) = &args.plot {
        plot::write_svg(plot, &results)?;
        println!("wrote plot to {}", plot.display());
    }
    Ok(())
}

/// What the timed call of `op` includes, for the JSON line (module docs: the same in words).
fn includes(op: Op) -> &'static str {
    match op {
        Op::MsmG1Host => {
            "one MSM from scalars in host memory: bases resident (uploaded once, outside the timing), the scalars' staging onto the device inside it (as sppark times it), until the sum is on the host"
        }
        Op::MsmG1 | Op::MsmG2 | Op::MsmG1Witness | Op::MsmG2Witness => {
            "one MSM: bases resident (uploaded once, outside the timing), scalars already on the device, until the sum is on the host"
        }
        Op::Ntt => "one forward NTT of scalars already on the device, synchronized",
        Op::Upload => "staging the scalars from host memory onto the device, synchronized; freeing outside the timing",
        Op::Spmv => "one sparse product A·z: the compiled circuit's A resident (uploaded once, outside the timing), z already on the device, synchronized",
        Op::Prove => "one whole proof: synthesis, staging, H, MSMs, assembly; the key prepared once, outside the timing; every proof verified, outside the timing",
        Op::ProveWitness => "one whole proof through the compiled circuit: the assignment on the host (the circuit's native witness generator where it has one: synthetic; else witness-only synthesis), staging z, A·z, B·z, C·z and the R1CS check, H, MSMs, assembly; the key and compiled circuit prepared once, outside the timing; every proof verified, outside the timing",
        Op::ProveAssignment => "one whole proof through the compiled circuit from an assignment already in host memory (as a witness file or an outside witness generator delivers it; made outside the timing): staging z, A·z, B·z, C·z and the R1CS check, H, MSMs, assembly; the key and compiled circuit prepared once, outside the timing; every proof verified, outside the timing",
        Op::ProveArkworks => "ark-groth16's create_proof_with_reduction on the host's CPU, synthesis included",
        Op::SynthFull => "one partition's whole synthesis on the host: constraints, assignment and the rows a, b, c",
        Op::SynthWitness => "one partition's witness alone on the host by arkworks' witness-only synthesis (the compiled circuit's proofs need no more)",
        Op::Witness => "one partition's assignment on the host as the compiled proofs take it: the circuit's native witness generator where it has one (synthetic), else witness-only synthesis",
        Op::FirstProof => first_proof::FIRST_PROOF_INCLUDES,
    }
}

/// The device section of `Op::Prove`'s runs.
const PROVE_DEVICE_INCLUDES: &str =
    "the device section of the same proofs (staging, H, MSMs, readback), as the timeline measured it";

/// The op's name for `circuit`: the synthetic circuit's plain, another's with its name
/// (`prove-sha256`), so that results of different circuits never share a name.
fn circuit_op_name(op: Op, circuit: CircuitKind) -> String {
    format!("{}{}", op_name(op), circuit_suffix(circuit))
}

fn circuit_suffix(circuit: CircuitKind) -> String {
    match circuit {
        CircuitKind::Synthetic => String::new(),
        other => format!("-{other}"),
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::MsmG1 => "msm-g1",
        Op::MsmG1Host => "msm-g1-host",
        Op::MsmG2 => "msm-g2",
        Op::MsmG1Witness => "msm-g1-witness",
        Op::MsmG2Witness => "msm-g2-witness",
        Op::Ntt => "ntt",
        Op::Upload => "upload",
        Op::Spmv => "spmv",
        Op::Prove => "prove",
        Op::ProveWitness => "prove-witness",
        Op::ProveAssignment => "prove-assignment",
        Op::ProveArkworks => "prove-arkworks",
        Op::SynthFull => "synth-full",
        Op::SynthWitness => "synth-witness",
        Op::Witness => "witness",
        Op::FirstProof => "first-proof",
    }
}

/// The backends asked for (or every available one). One asked for by name that is not
/// available is said plainly and left out; none at all is an error.
fn open_backends(settings: &Settings, names: Option<&[String]>) -> Result<Vec<(AnyBackend, BackendInfo)>, CliError> {
    let kinds: Vec<BackendKind> = match names {
        Some(names) => {
            names.iter().map(|n| crate::cli::parse_backend(n).map_err(CliError::Usage)).collect::<Result<_, _>>()?
        }
        None => BackendKind::PREFERENCE.to_vec(),
    };
    let mut open = Vec::new();
    for kind in kinds {
        match backend::open(kind, settings) {
            Ok(b) => {
                let info = b.info();
                open.push((b, info));
            }
            Err(e) if names.is_some() => eprintln!("skipping {kind}: {e}"),
            Err(_) => {}
        }
    }
    if open.is_empty() {
        return Err(CliError::Usage("none of the requested backends is available".into()));
    }
    Ok(open)
}

/// Random bases shared by every backend at one size, so they all do the same work.
#[derive(Default)]
struct Inputs {
    g1: Points<G1Projective>,
    g2: Points<G2Projective>,
}

/// 2^size random points of `P`, drawn again only when the size changes.
struct Points<P: CurveGroup>(Option<(u32, Vec<P::Affine>)>);

impl<P: CurveGroup> Default for Points<P> {
    fn default() -> Self {
        Points(None)
    }
}

impl<P: CurveGroup + PrimeGroup> Points<P> {
    fn of_size(&mut self, size: u32) -> &[P::Affine] {
        if self.0.as_ref().map(|(s, _)| *s) != Some(size) {
            self.0 = Some((size, sample::random_points::<P, _>(1usize << size, &mut ChaCha20Rng::from_entropy())));
        }
        self.0.as_ref().map(|(_, v)| v.as_slice()).unwrap_or(&[])
    }
}

fn random_scalars(n: usize) -> Vec<Fr> {
    sample::random_scalars(n, &mut ChaCha20Rng::from_entropy())
}

/// Scalars mixed like the synthetic circuit's witness: 30 % zeros, 30 % ones, 40 % random.
fn witness_scalars(n: usize) -> Vec<Fr> {
    sample::witness_like_scalars(n, rand::Rng::gen(&mut ChaCha20Rng::from_entropy()))
}

fn measure(
    backend: &AnyBackend,
    info: &BackendInfo,
    op: Op,
    size: u32,
    args: &BenchArgs,
    inputs: &mut Inputs,
    store: &KeyStore,
) -> Result<Vec<Measurement>, CliError> {
    let n = 1usize << size;
    let total = args.warmup + args.runs;
    let mut times = Vec::with_capacity(total);
    let mut device_times = Vec::new();
    // Device spans of each run, by name (summed within the run); warm-up runs included, cut below.
    let mut spans_per_run: Vec<BTreeMap<String, f64>> = Vec::new();
    let mut record_spans = || spans_per_run.push(span_totals(backend));
    let mut bases_upload_ms = None;
    match op {
        Op::MsmG1 | Op::MsmG1Witness => {
            let bases = inputs.g1.of_size(size);
            let timed = (&mut times, &mut record_spans);
            let ms = time_msms(
                backend,
                (n, total, draw(op)),
                |b| b.upload_g1_bases(bases),
                |b, d, s| b.msm_g1(d, s),
                timed,
            )?;
            bases_upload_ms = Some(ms);
        }
        Op::MsmG1Host => {
            let t = Instant::now();
            let bases = backend.upload_g1_bases(inputs.g1.of_size(size))?;
            bases_upload_ms = Some(t.elapsed().as_secs_f64() * 1e3);
            for _ in 0..total {
                let scalars = random_scalars(n);
                let t = Instant::now();
                let _sum = std::hint::black_box(backend.msm_g1(&bases, Scalars::Host(&scalars))?);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                record_spans();
            }
        }
        Op::MsmG2 | Op::MsmG2Witness => {
            let bases = inputs.g2.of_size(size);
            let timed = (&mut times, &mut record_spans);
            let ms = time_msms(
                backend,
                (n, total, draw(op)),
                |b| b.upload_g2_bases(bases),
                |b, d, s| b.msm_g2(d, s),
                timed,
            )?;
            bases_upload_ms = Some(ms);
        }
        Op::Ntt => {
            for _ in 0..total {
                let mut buf = backend.upload_scalars(&random_scalars(n))?;
                let t = Instant::now();
                backend.ntt(&mut buf, NttKind::Forward)?;
                backend.synchronize()?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
                record_spans();
            }
        }
        Op::Upload => {
            for _ in 0..total {
                let host = random_scalars(n);
                let t = Instant::now();
                let buf = backend.upload_scalars(&host)?;
                backend.synchronize()?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
                drop(buf);
                record_spans();
            }
        }
        Op::ProveArkworks | Op::SynthFull | Op::SynthWitness | Op::Witness => {
            return Err(CliError::Usage(format!("{} runs on the host alone", op_name(op))))
        }
        Op::FirstProof => return Err(CliError::Usage("first-proof opens backends of its own".into())),
        Op::Spmv => {
            let compiled = circuit_for(store, args, size)?;
            let (a, _, _) = compiled.matrices();
            let matrix = backend.upload_matrix(a)?;
            let mut out = backend.alloc_scalars(compiled.domain_size())?;
            for _ in 0..total {
                let z = backend.upload_scalars(&random_scalars(compiled.num_variables()))?;
                let t = Instant::now();
                backend.spmv(&matrix, &z, &mut out)?;
                backend.synchronize()?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
                record_spans();
            }
        }
        Op::Prove | Op::ProveWitness | Op::ProveAssignment => {
            let prover = Prover::new(backend);
            let wants_circuit = matches!(op, Op::ProveWitness | Op::ProveAssignment);
            let (key, compiled) = if args.keys_on_device {
                let circuit = circuit_for(store, args, size)?;
                let key = resident_key(backend, &circuit)?;
                (key, wants_circuit.then(|| prover.prepare_circuit(&circuit)).transpose()?)
            } else {
                let checked = key_for(store, backend, args, size)?;
                let key = prover.prepare(&checked)?;
                drop(checked);
                let circuit = wants_circuit.then(|| circuit_for(store, args, size)).transpose()?;
                (key, circuit.map(|c| prover.prepare_circuit(&c)).transpose()?)
            };
            // The key's preparation (bases, a warm-up proof) is no run's work.
            backend.drain_device_spans();
            let mut rng = ChaCha20Rng::from_entropy();
            // `run` holds --mostly-bits to prove-assignment and prove-witness of the synthetic
            // circuit, which has that assignment.
            let assignment = |circuit: &BuiltinCircuit| -> Result<Vec<Fr>, CliError> {
                match circuit.assignment_mostly_bits().filter(|_| args.mostly_bits) {
                    Some(z) => Ok(z),
                    None => Ok(circuit.assignment()?),
                }
            };
            for run in 0..total {
                let circuit = BuiltinCircuit::new(args.circuit, size, run as u64 + 1)?;
                let instance = circuit.num_instance_variables();
                // The mostly-bits assignment's chain ends elsewhere: its public inputs are its
                // own z[1..3], taken after the proof from the z it proved.
                let native_inputs = (!args.mostly_bits).then(|| circuit.public_inputs());
                let tl = Timeline::new();
                let given = match op {
                    Op::ProveAssignment => Some(assignment(&circuit)?),
                    _ => None,
                };
                let t = Instant::now();
                let (proof, proved) = match (&compiled, given) {
                    (Some(compiled), Some(z)) => (prover.prove_assignment(&key, compiled, &z, &mut rng, &tl)?, z),
                    (Some(compiled), None) => {
                        let z = assignment(&circuit)?;
                        (prover.prove_assignment(&key, compiled, &z, &mut rng, &tl)?, z)
                    }
                    (None, _) => (prover.prove(&key, circuit, &mut rng, &tl)?, Vec::new()),
                };
                times.push(t.elapsed().as_secs_f64() * 1e3);
                // The proof's device spans by name (the four G1 MSMs summed under `msm_g1`).
                record_spans();
                let public_inputs = native_inputs.unwrap_or_else(|| proved[1..instance].to_vec());
                // Outside the timed call: a proof that does not verify is no measurement.
                if !g16::prover::verify(&key, &proof, &public_inputs)? {
                    return Err(CliError::Usage(format!(
                        "{} 2^{size} on {}: run {run}'s proof does not verify",
                        op_name(op),
                        info.kind
                    )));
                }
                let report = Report::from_events(&tl.events());
                let device_ns = report
                    .spans
                    .iter()
                    .filter(|s| s.layer == Layer::Prover && s.name == "device")
                    .map(|s| s.dur_ns())
                    .sum::<u64>();
                device_times.push(device_ns as f64 / 1e6);
            }
        }
    }
    backend.drain_device_spans(); // the bench keeps no timeline; don't let spans pile up
    let mostly_bits = if args.mostly_bits { MOSTLY_BITS_INCLUDES } else { "" };
    let includes = format!("{}{mostly_bits}", includes(op));
    let mut first = measurement(info, &circuit_op_name(op, args.circuit), &includes, size, &times[args.warmup..]);
    first.phases_ms = median_phases(spans_per_run.get(args.warmup..).unwrap_or(&[]));
    first.bases_upload_ms = bases_upload_ms;
    let mut out = vec![first];
    if !device_times.is_empty() {
        let name = format!("{}-device{}", op_name(op), circuit_suffix(args.circuit));
        let includes = format!("{PROVE_DEVICE_INCLUDES}{mostly_bits}");
        out.push(measurement(info, &name, &includes, size, &device_times[args.warmup..]));
    }
    Ok(out)
}

/// The key of a proof op: from the store (made on `backend` if missing), or made in memory.
fn key_for(store: &KeyStore, backend: &AnyBackend, args: &BenchArgs, size: u32) -> Result<CheckedKey, CliError> {
    if args.keys_in_memory {
        setup::generate_on(backend, args.circuit, size, ToxicWaste::Seeded(0))
    } else {
        setup::stored_or_generated(store, backend, args.circuit, size)
    }
}

/// The key of a proof op made straight into `backend`'s resident bases from `circuit`
/// (`--keys-on-device`), warmed up as `Prover::prepare` warms a key up.
fn resident_key(backend: &AnyBackend, circuit: &CompiledCircuit) -> Result<g16::prover::PreparedKey, CliError> {
    let bar = progress::spinner(format!("setup into resident bases on {}", backend.info().kind));
    let mut rng = ToxicWaste::Seeded(0).rng();
    let key = g16::prover::setup::generate_prepared(circuit, &mut rng, backend, &Timeline::disabled());
    bar.finish_and_clear();
    let key = key.map_err(KeyStoreError::from)?;
    Prover::new(backend).warm_up(&key)?;
    Ok(key)
}

/// The compiled circuit of a proof or spmv op: from the store, or compiled in memory.
fn circuit_for(store: &KeyStore, args: &BenchArgs, size: u32) -> Result<CompiledCircuit, CliError> {
    if args.keys_in_memory || args.keys_on_device {
        Ok(BuiltinCircuit::new(args.circuit, size, 0)?.compile().map_err(KeyStoreError::from)?)
    } else {
        setup::stored_or_compiled(store, args.circuit, size)
    }
}

/// The scalars an MSM op draws: random, or a witness's mix.
fn draw(op: Op) -> fn(usize) -> Vec<Fr> {
    if matches!(op, Op::MsmG1Witness | Op::MsmG2Witness) {
        witness_scalars
    } else {
        random_scalars
    }
}

/// `total` timed MSMs (`msm` over bases `upload` makes resident, timed apart: its ms are
/// returned), each on fresh scalars already on the device.
fn time_msms<T: g16::backend::Element, P>(
    backend: &AnyBackend,
    (n, total, draw): (usize, usize, fn(usize) -> Vec<Fr>),
    upload: impl FnOnce(&AnyBackend) -> Result<g16::backend::DeviceBuffer<T>, g16::BackendError>,
    msm: impl Fn(&AnyBackend, &g16::backend::DeviceBuffer<T>, Scalars<'_>) -> Result<P, g16::BackendError>,
    (times, record_spans): (&mut Vec<f64>, &mut impl FnMut()),
) -> Result<f64, CliError> {
    let t = Instant::now();
    let bases = upload(backend)?;
    let upload_ms = t.elapsed().as_secs_f64() * 1e3;
    for _ in 0..total {
        let scalars = backend.upload_scalars(&draw(n))?;
        let t = Instant::now();
        std::hint::black_box(msm(backend, &bases, Scalars::Device(&scalars, 0..n))?);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        record_spans();
    }
    Ok(upload_ms)
}

/// The device spans finished since the last drain, total ms per name (empty on the CPU).
fn span_totals(backend: &AnyBackend) -> BTreeMap<String, f64> {
    let mut totals = BTreeMap::new();
    for s in backend.drain_device_spans() {
        *totals.entry(s.name).or_insert(0.0) += s.end_ns.saturating_sub(s.start_ns) as f64 / 1e6;
    }
    totals
}

/// A partition's synthesis on the host, full or the witness alone, for `--circuit` at 2^size
/// (each run a fresh witness seed).
fn measure_synthesis(op: Op, size: u32, args: &BenchArgs) -> Result<Measurement, CliError> {
    let mut times = Vec::new();
    for run in 0..args.warmup + args.runs {
        let circuit = BuiltinCircuit::new(args.circuit, size, run as u64 + 1)?;
        let t = Instant::now();
        match op {
            Op::SynthFull => drop(std::hint::black_box(g16::prover::synthesize(circuit)?)),
            Op::Witness => drop(std::hint::black_box(circuit.assignment()?)),
            _ => drop(std::hint::black_box(g16::compiled::witness(circuit).map_err(g16::ProveError::from)?)),
        }
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let cpu = g16::backend::CpuBackend::new().info();
    let name = format!("{}-{}", op_name(op), args.circuit);
    Ok(measurement(&cpu, &name, includes(op), size, &times[args.warmup..]))
}

/// `ark-groth16`'s prover on the same circuit and key as `prove`: the reference.
fn measure_arkworks(store: &KeyStore, size: u32, args: &BenchArgs) -> Result<Measurement, CliError> {
    let key = setup::stored_or_generated(store, &g16::backend::CpuBackend::new(), args.circuit, size)?;
    let pk = key.proving_key();
    let mut rng = ChaCha20Rng::from_entropy();
    let mut times = Vec::new();
    for run in 0..args.warmup + args.runs {
        let circuit = BuiltinCircuit::new(args.circuit, size, run as u64 + 1)?;
        let t = Instant::now();
        Groth16::<Curve, LibsnarkReduction>::create_proof_with_reduction(
            circuit,
            pk,
            Fr::rand(&mut rng),
            Fr::rand(&mut rng),
        )
        .map_err(|e| CliError::Usage(format!("arkworks prover: {e}")))?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let cpu = g16::backend::CpuBackend::new().info();
    let name = circuit_op_name(Op::Prove, args.circuit);
    let mut m = measurement(&cpu, &name, includes(Op::ProveArkworks), size, &times[args.warmup..]);
    m.backend = "arkworks".to_string();
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_sizes("10..16").unwrap(), 10..=16);
        assert_eq!(parse_sizes("10..=12").unwrap(), 10..=12);
        assert_eq!(parse_sizes("14").unwrap(), 14..=14);
        assert!(parse_sizes("16..10").is_err());
        assert!(parse_sizes("a..b").is_err());
        assert!(parse_sizes("1..40").is_err());
    }
}
