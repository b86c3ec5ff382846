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
//! - `prove`: one whole proof of the `synthetic` circuit at 2^size constraints (synthesis
//!   included; the key is prepared once, outside the timing), and `prove-device`, the device
//!   section of the same runs (staging, H, MSMs, assembly) as the timeline measured it.
//! - `prove-arkworks`: the same proof by `ark-groth16`'s own prover on this machine's CPU, the
//!   reference every backend is compared with (run once per size, not per backend).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use ark_ff::UniformRand;
use ark_groth16::{r1cs_to_qap::LibsnarkReduction, Groth16};
use g16::backends::{self as backend, AnyBackend};
use g16_core::backend::{Backend, BackendInfo, BackendKind, NttKind, Scalars};
use g16_core::circuits::{BuiltinCircuit, CircuitKind};
use g16_core::prover::Prover;
use g16_core::sample;
use g16_core::timeline::{Layer, Report, Timeline};
use g16_core::{Curve, Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::Serialize;

use crate::{io_err, keys, plot, progress, stamp, CliError};

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Backends to compare, comma-separated (cpu, cuda, wgpu); default: every available one.
    #[arg(long, value_delimiter = ',')]
    pub backends: Option<Vec<String>>,
    /// Operations: msm-g1, msm-g2, msm-g1-witness, msm-g2-witness, ntt, upload, prove, prove-arkworks.
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
    /// Where to write the SVG plot of time against size, a line per backend and op.
    #[arg(long, default_value = "g16-bench.svg")]
    pub plot: PathBuf,
    /// Write no plot.
    #[arg(long)]
    pub no_plot: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    MsmG1,
    MsmG2,
    MsmG1Witness,
    MsmG2Witness,
    Ntt,
    Upload,
    Prove,
    ProveArkworks,
}

impl Op {
    /// Every op with its command-line name, in the order the names are listed.
    const ALL: [Op; 8] =
        [Op::MsmG1, Op::MsmG2, Op::MsmG1Witness, Op::MsmG2Witness, Op::Ntt, Op::Upload, Op::Prove, Op::ProveArkworks];

    fn parse(s: &str) -> Result<Op, CliError> {
        let s = s.trim();
        Op::ALL.into_iter().find(|&op| op_name(op) == s).ok_or_else(|| {
            let names: Vec<&str> = Op::ALL.into_iter().map(op_name).collect();
            CliError::Usage(format!("unknown op '{s}' (expected {})", names.join(", ")))
        })
    }
}

/// One measurement: the JSON line `benches/results/` keeps.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    pub backend: String,
    pub device: String,
    pub driver: String,
    pub op: String,
    pub size: u32,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub runs: usize,
    pub commit: String,
    pub date: String,
    /// Median device time per span name over the timed runs (device backends; MSM and NTT):
    /// the whole operation's span (`msm_g1`) and its phases (`msm_g1.accumulate`, …).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub phases_ms: BTreeMap<String, f64>,
    /// MSM ops: the bases' upload, once, with whatever the backend prepares there (the
    /// shifted bases of CUDA and wgpu), wall ms; outside `median_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bases_upload_ms: Option<f64>,
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

pub fn run(args: BenchArgs) -> Result<(), CliError> {
    let sizes = parse_sizes(&args.sizes)?;
    let mut ops: Vec<Op> = args.ops.iter().map(|s| Op::parse(s)).collect::<Result<_, _>>()?;
    ops.sort();
    ops.dedup();
    if args.runs == 0 {
        return Err(CliError::Usage("--runs must be at least 1".into()));
    }
    let backends = open_backends(args.backends.as_deref())?;

    let per_size: usize = ops.iter().map(|&op| if op == Op::ProveArkworks { 1 } else { backends.len() }).sum();
    let cases = (per_size * sizes.clone().count()) as u64;
    let bar = progress::bar(cases, "benchmarking");
    let mut results = Vec::new();
    let mut inputs = Inputs::default();
    for size in sizes.clone() {
        for &op in &ops {
            if op == Op::ProveArkworks {
                bar.set_message(format!("arkworks prove 2^{size}"));
                results.push(measure_arkworks(size, &args)?);
                bar.inc(1);
                continue;
            }
            for (backend, info) in &backends {
                bar.set_message(format!("{} {} 2^{size}", info.kind, op_name(op)));
                results.extend(measure(backend, info, op, size, &args, &mut inputs)?);
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();

    print_table(&results);
    if let Some(path) = &args.json {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io_err(format!("opening {}", path.display())))?;
        for m in &results {
            let line = serde_json::to_string(m).map_err(|e| CliError::Usage(e.to_string()))?;
            writeln!(f, "{line}").map_err(io_err(format!("writing {}", path.display())))?;
        }
        println!("wrote {} measurements to {}", results.len(), path.display());
    }
    if !args.no_plot {
        plot::write_svg(&args.plot, &results)?;
        println!("wrote plot to {}", args.plot.display());
    }
    Ok(())
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::MsmG1 => "msm-g1",
        Op::MsmG2 => "msm-g2",
        Op::MsmG1Witness => "msm-g1-witness",
        Op::MsmG2Witness => "msm-g2-witness",
        Op::Ntt => "ntt",
        Op::Upload => "upload",
        Op::Prove => "prove",
        Op::ProveArkworks => "prove-arkworks",
    }
}

/// The backends asked for (or every available one). One asked for by name that is not
/// available is said plainly and left out; none at all is an error.
fn open_backends(names: Option<&[String]>) -> Result<Vec<(AnyBackend, BackendInfo)>, CliError> {
    let kinds: Vec<BackendKind> = match names {
        Some(names) => {
            names.iter().map(|n| crate::parse_backend(n).map_err(CliError::Usage)).collect::<Result<_, _>>()?
        }
        None => BackendKind::PREFERENCE.to_vec(),
    };
    let mut open = Vec::new();
    for kind in kinds {
        match backend::open(kind) {
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

/// Random inputs shared by every backend at one size, so they all do the same work.
#[derive(Default)]
struct Inputs {
    g1: Option<(u32, Vec<G1Affine>)>,
    g2: Option<(u32, Vec<G2Affine>)>,
}

impl Inputs {
    fn g1(&mut self, size: u32) -> &[G1Affine] {
        if self.g1.as_ref().map(|(s, _)| *s) != Some(size) {
            self.g1 = Some((
                size,
                sample::random_points::<G1Projective, _>(1usize << size, &mut ChaCha20Rng::from_entropy()),
            ));
        }
        self.g1.as_ref().map(|(_, v)| v.as_slice()).unwrap_or(&[])
    }
    fn g2(&mut self, size: u32) -> &[G2Affine] {
        if self.g2.as_ref().map(|(s, _)| *s) != Some(size) {
            self.g2 = Some((
                size,
                sample::random_points::<G2Projective, _>(1usize << size, &mut ChaCha20Rng::from_entropy()),
            ));
        }
        self.g2.as_ref().map(|(_, v)| v.as_slice()).unwrap_or(&[])
    }
}

fn random_scalars(n: usize) -> Vec<Fr> {
    sample::random_scalars(n, &mut ChaCha20Rng::from_entropy())
}

/// Scalars mixed like the synthetic circuit's witness: 30 % zeros, 30 % ones, 40 % random.
fn witness_scalars(n: usize) -> Vec<Fr> {
    use rand::Rng;
    let mut rng = ChaCha20Rng::from_entropy();
    (0..n)
        .map(|_| match rng.gen_range(0..10u32) {
            0..=2 => Fr::from(0u64),
            3..=5 => Fr::from(1u64),
            _ => Fr::rand(&mut rng),
        })
        .collect()
}

fn measure(
    backend: &AnyBackend,
    info: &BackendInfo,
    op: Op,
    size: u32,
    args: &BenchArgs,
    inputs: &mut Inputs,
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
            let host = inputs.g1(size);
            let t = Instant::now();
            let bases = backend.upload_g1_bases(host)?;
            bases_upload_ms = Some(t.elapsed().as_secs_f64() * 1e3);
            let draw = if op == Op::MsmG1 { random_scalars } else { witness_scalars };
            for _ in 0..total {
                let scalars = backend.upload_scalars(&draw(n))?;
                let t = Instant::now();
                let _ = std::hint::black_box(backend.msm_g1(&bases, Scalars::Device(&scalars, 0..n))?);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                record_spans();
            }
        }
        Op::MsmG2 | Op::MsmG2Witness => {
            let host = inputs.g2(size);
            let t = Instant::now();
            let bases = backend.upload_g2_bases(host)?;
            bases_upload_ms = Some(t.elapsed().as_secs_f64() * 1e3);
            let draw = if op == Op::MsmG2 { random_scalars } else { witness_scalars };
            for _ in 0..total {
                let scalars = backend.upload_scalars(&draw(n))?;
                let t = Instant::now();
                let _ = std::hint::black_box(backend.msm_g2(&bases, Scalars::Device(&scalars, 0..n))?);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                record_spans();
            }
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
        Op::ProveArkworks => return Err(CliError::Usage("prove-arkworks has no backend".into())),
        Op::Prove => {
            let (pk, _) = keys::cached_or_generate(CircuitKind::Synthetic, size)?;
            let prover = Prover::new(backend);
            let key = prover.prepare(&pk)?;
            drop(pk);
            let mut rng = ChaCha20Rng::from_entropy();
            for run in 0..total {
                let circuit = BuiltinCircuit::new(CircuitKind::Synthetic, size, run as u64 + 1)?;
                let tl = Timeline::new();
                let t = Instant::now();
                prover.prove(&key, circuit, Fr::rand(&mut rng), Fr::rand(&mut rng), &tl)?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
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
    let mut first = measurement(info, op_name(op), size, &times[args.warmup..]);
    first.phases_ms = median_phases(spans_per_run.get(args.warmup..).unwrap_or(&[]));
    first.bases_upload_ms = bases_upload_ms;
    let mut out = vec![first];
    if !device_times.is_empty() {
        out.push(measurement(info, "prove-device", size, &device_times[args.warmup..]));
    }
    Ok(out)
}

/// The device spans finished since the last drain, total ms per name (empty on the CPU).
fn span_totals(backend: &AnyBackend) -> BTreeMap<String, f64> {
    let mut totals = BTreeMap::new();
    for s in backend.drain_device_spans() {
        *totals.entry(s.name).or_insert(0.0) += s.end_ns.saturating_sub(s.start_ns) as f64 / 1e6;
    }
    totals
}

/// Per span name, the median over the runs (a name missing from a run counts as 0 there).
fn median_phases(runs: &[BTreeMap<String, f64>]) -> BTreeMap<String, f64> {
    let names: std::collections::BTreeSet<&String> = runs.iter().flat_map(|r| r.keys()).collect();
    names
        .into_iter()
        .map(|name| {
            let times: Vec<f64> = runs.iter().map(|r| r.get(name).copied().unwrap_or(0.0)).collect();
            (name.clone(), median(&times))
        })
        .collect()
}

fn median(times: &[f64]) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[mid],
        _ => (sorted[mid - 1] + sorted[mid]) / 2.0,
    }
}

/// `ark-groth16`'s prover on the same circuit and key as `prove`: the reference.
fn measure_arkworks(size: u32, args: &BenchArgs) -> Result<Measurement, CliError> {
    let (pk, _) = keys::cached_or_generate(CircuitKind::Synthetic, size)?;
    let mut rng = ChaCha20Rng::from_entropy();
    let mut times = Vec::new();
    for run in 0..args.warmup + args.runs {
        let circuit = BuiltinCircuit::new(CircuitKind::Synthetic, size, run as u64 + 1)?;
        let t = Instant::now();
        Groth16::<Curve, LibsnarkReduction>::create_proof_with_reduction(
            circuit,
            &pk,
            Fr::rand(&mut rng),
            Fr::rand(&mut rng),
        )
        .map_err(|e| CliError::Usage(format!("arkworks prover: {e}")))?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let cpu = backend::open(BackendKind::Cpu)?.info();
    let mut m = measurement(&cpu, "prove", size, &times[args.warmup..]);
    m.backend = "arkworks".to_string();
    Ok(m)
}

fn measurement(info: &BackendInfo, op: &str, size: u32, times: &[f64]) -> Measurement {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    Measurement {
        backend: info.kind.name().to_string(),
        device: info.device.clone(),
        driver: info.driver.clone(),
        op: op.to_string(),
        size,
        median_ms: median(times),
        min_ms: sorted.first().copied().unwrap_or(0.0),
        max_ms: sorted.last().copied().unwrap_or(0.0),
        runs: sorted.len(),
        commit: stamp::COMMIT.to_string(),
        date: stamp::today_utc(),
        phases_ms: BTreeMap::new(),
        bases_upload_ms: None,
    }
}

/// One row per (op, size), one column per backend; where the CPU ran too, each GPU
/// backend's speed-up over it.
fn print_table(results: &[Measurement]) {
    let mut backends: Vec<&str> = results.iter().map(|m| m.backend.as_str()).collect();
    backends.dedup();
    backends.sort();
    backends.dedup();
    let mut rows: Vec<(&str, u32)> = results.iter().map(|m| (m.op.as_str(), m.size)).collect();
    rows.sort();
    rows.dedup();
    print!("{:<14}{:>5}", "op", "size");
    for b in &backends {
        print!("{:>14}", format!("{b} ms"));
    }
    let has_cpu = backends.contains(&"cpu");
    if has_cpu {
        for b in backends.iter().filter(|b| **b != "cpu") {
            print!("{:>14}", format!("{b}/cpu"));
        }
    }
    println!();
    for (op, size) in rows {
        let get =
            |b: &str| results.iter().find(|m| m.op == op && m.size == size && m.backend == b).map(|m| m.median_ms);
        print!("{op:<14}{size:>5}");
        for b in &backends {
            match get(b) {
                Some(ms) => print!("{ms:>14.3}"),
                None => print!("{:>14}", "-"),
            }
        }
        if has_cpu {
            for b in backends.iter().filter(|b| **b != "cpu") {
                match (get("cpu"), get(b)) {
                    (Some(cpu), Some(ms)) if ms > 0.0 => print!("{:>13.1}x", cpu / ms),
                    _ => print!("{:>14}", "-"),
                }
            }
        }
        println!();
    }
    for m in results.iter().filter(|m| !m.phases_ms.is_empty()) {
        let phases: Vec<String> = m.phases_ms.iter().map(|(name, ms)| format!("{name} {ms:.2}")).collect();
        println!("  {} {} 2^{} device ms (median): {}", m.backend, m.op, m.size, phases.join(", "));
    }
    for m in results {
        if let Some(ms) = m.bases_upload_ms {
            println!("  {} {} 2^{} bases uploaded and prepared in {ms:.1} ms (once)", m.backend, m.op, m.size);
        }
    }
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

    #[test]
    fn median_of_even_and_odd() {
        let info = backend::open(BackendKind::Cpu).unwrap().info();
        assert_eq!(measurement(&info, "ntt", 3, &[3.0, 1.0, 2.0]).median_ms, 2.0);
        assert_eq!(measurement(&info, "ntt", 3, &[4.0, 1.0, 2.0, 3.0]).median_ms, 2.5);
    }

    #[test]
    fn phases_take_the_median_per_name_and_count_a_missing_one_as_zero() {
        let run = |pairs: &[(&str, f64)]| pairs.iter().map(|(n, ms)| (n.to_string(), *ms)).collect();
        let runs: Vec<BTreeMap<String, f64>> = vec![
            run(&[("msm_g1", 10.0), ("msm_g1.sort", 1.0)]),
            run(&[("msm_g1", 12.0), ("msm_g1.sort", 3.0), ("big", 4.0)]),
            run(&[("msm_g1", 11.0), ("msm_g1.sort", 2.0)]),
        ];
        let phases = median_phases(&runs);
        assert_eq!(phases["msm_g1"], 11.0);
        assert_eq!(phases["msm_g1.sort"], 2.0);
        assert_eq!(phases["big"], 0.0);
        assert_eq!(phases.len(), 3);
    }
}
