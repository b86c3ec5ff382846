//! `g16`: prove, benchmark and inspect Groth16 proofs on the CPU, CUDA and wgpu backends.

mod bench;
mod keys;
mod plot;
mod progress;
mod prove;
mod stamp;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use g16::backends as backend;
use g16_core::backend::BackendKind;
use g16_core::circuits::CircuitKind;

// Synthesis builds and frees millions of small heap objects per partition (arkworks' linear
// combinations), on many threads at once. With glibc's malloc, 30 synthesis workers on the
// two-H200 host each took 2.8× as long per partition as 8 did; mimalloc's per-thread heaps
// avoid the shared arenas and the page-table traffic of returning memory eagerly.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "g16", version, about = "Groth16 prover for BLS12-381 on pluggable GPU backends")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every backend and device: available, or why not.
    Devices,
    /// Generate a proving/verifying key for a built-in circuit and save it (and cache it).
    Setup {
        #[arg(long, default_value = prove::DEFAULT_CIRCUIT, value_parser = parse_circuit)]
        circuit: CircuitKind,
        /// log2 of the number of constraints.
        #[arg(long, default_value_t = prove::DEFAULT_SIZE)]
        size: u32,
        /// Where to write the proving key (it is cached for `prove` in any case).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write points compressed (half the size, slower to load).
        #[arg(long)]
        compress: bool,
        /// Seed of the setup's toxic waste (tests and benchmarks only: a real setup is a ceremony).
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Prove instances of a built-in circuit, verify them, and print the timeline report.
    Prove(prove::ProveArgs),
    /// Compare backends: median times of MSM, NTT and full proofs over a range of sizes.
    Bench(bench::BenchArgs),
    /// Work with saved timelines.
    Timeline {
        #[command(subcommand)]
        command: TimelineCommand,
    },
}

#[derive(Subcommand)]
enum TimelineCommand {
    /// The report for a saved TIMELINE text file or Chrome trace JSON.
    Report {
        file: PathBuf,
        /// Warn about spans whose unattributed share is above PCT percent.
        #[arg(long, default_value_t = 10.0, value_name = "PCT")]
        gap_warn: f64,
    },
}

fn parse_circuit(s: &str) -> Result<CircuitKind, String> {
    s.parse().map_err(|e: g16_core::circuits::CircuitError| e.to_string())
}

pub(crate) fn parse_backend(s: &str) -> Result<BackendKind, String> {
    s.parse().map_err(|e: g16_core::BackendError| e.to_string())
}

/// Everything the CLI can fail with, reported plainly.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Prove(#[from] g16_core::ProveError),
    #[error(transparent)]
    Key(#[from] g16_core::prover::KeyError),
    #[error(transparent)]
    Backend(#[from] g16_core::BackendError),
    #[error(transparent)]
    Circuit(#[from] g16_core::circuits::CircuitError),
    #[error(transparent)]
    Timeline(#[from] g16_core::timeline::TimelineError),
    #[error(transparent)]
    Engine(#[from] g16_core::engine::EngineError),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error("setup failed: {0}")]
    Setup(String),
    #[error("{0}")]
    Usage(String),
    #[error("{failed} of {total} proofs did not verify")]
    NotVerified { failed: usize, total: usize },
}

pub(crate) fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> CliError {
    let what = what.into();
    move |source| CliError::Io { what, source }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Devices => devices(),
        Command::Setup { circuit, size, out, compress, seed } => {
            keys::setup_command(circuit, size, out, compress, seed)
        }
        Command::Prove(args) => prove::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Timeline { command: TimelineCommand::Report { file, gap_warn } } => timeline_report(&file, gap_warn),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn devices() -> Result<(), CliError> {
    for probe in backend::probe_all() {
        let mark = if probe.preferred { "*" } else { " " };
        match &probe.status {
            Ok(info) => {
                let memory = info
                    .memory_bytes
                    .map(|b| format!(", {:.1} GiB", b as f64 / (1u64 << 30) as f64))
                    .unwrap_or_default();
                println!(
                    "{mark} {:<5} available: {} [{}{memory}; NTT up to 2^{}; {}]",
                    probe.kind.name(),
                    info.device,
                    info.driver,
                    info.max_ntt_log2,
                    info.capabilities.join(", ")
                );
            }
            Err(e) => println!("{mark} {:<5} unavailable: {}", probe.kind.name(), reason(e)),
        }
    }
    println!("(* = what --backend auto uses)");
    Ok(())
}

/// The reason alone, without the "<backend> backend unavailable:" prefix `devices` already shows.
fn reason(e: &g16_core::BackendError) -> String {
    match e {
        g16_core::BackendError::Unavailable { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

fn timeline_report(file: &std::path::Path, gap_warn: f64) -> Result<(), CliError> {
    let events = g16_core::timeline::read_file(file)?;
    if events.is_empty() {
        return Err(CliError::Usage(format!("{} holds no timeline events", file.display())));
    }
    print!("{}", g16_core::timeline::Report::from_events(&events).render(gap_warn / 100.0));
    Ok(())
}
