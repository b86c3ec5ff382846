//! `g16`: prove, benchmark and inspect Groth16 proofs on the CPU, CUDA and wgpu backends.

mod cli;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use g16::settings::Settings;
use g16::backend::BackendKind;
use g16::circuits::CircuitKind;

use cli::{
    bench, client, compile, devices, inspect, parse_backend, parse_circuit, plan, prove, prove_files, report, serve,
    setup, CliError,
};

// Synthesis builds and frees millions of small heap objects per partition (arkworks' linear
// combinations), on many threads at once. With glibc's malloc, 30 synthesis workers on a
// 32-thread host each took 2.8× as long per partition as 8 did; mimalloc's per-thread heaps
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
    /// Generate a proving/verifying key for a built-in circuit and save it (and store it).
    Setup {
        #[arg(long, default_value = prove::DEFAULT_CIRCUIT, value_parser = parse_circuit)]
        circuit: CircuitKind,
        /// log2 of the number of constraints.
        #[arg(long, default_value_t = prove::DEFAULT_SIZE)]
        size: u32,
        /// Where to write the proving key (it is stored for `prove` in any case).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write points compressed (half the size, slower to load).
        #[arg(long)]
        compress: bool,
        /// Derive the setup's toxic waste from this seed instead of the OS's randomness: the same
        /// key anywhere, and anyone who knows the seed can forge proofs for it (tests and
        /// benchmarks only; such a key is written only to --out or --zkey, never stored).
        #[arg(long)]
        seed: Option<u64>,
        /// Write a snarkjs `.zkey` here instead (for `snarkjs groth16 prove` and `g16 prove
        /// --zkey`): a one-party setup on snarkjs's conventions, no powers of tau needed.
        #[arg(long, conflicts_with_all = ["out", "compress"])]
        zkey: Option<PathBuf>,
        /// With --zkey: the circuit of a circom `.r1cs` instead of a built-in one.
        #[arg(long, requires = "zkey")]
        r1cs: Option<PathBuf>,
        /// Where the key's scalar multiplications run: `cpu` is arkworks' own fixed-base
        /// method; every backend makes the same key, byte for byte.
        #[arg(long, default_value = "auto", value_parser = cli::parse_backend, conflicts_with = "zkey")]
        backend: BackendKind,
    },
    /// Compile a built-in circuit's constraint system once, into a file (proofs then compute
    /// witnesses alone).
    Compile {
        #[arg(long, default_value = prove::DEFAULT_CIRCUIT, value_parser = parse_circuit)]
        circuit: CircuitKind,
        /// log2 of the number of constraints.
        #[arg(long, default_value_t = prove::DEFAULT_SIZE)]
        size: u32,
        /// Where to write the compiled circuit.
        #[arg(long)]
        out: PathBuf,
    },
    /// Write the witness of one instance of a built-in circuit (a .wtns file, for
    /// `prove --compiled`).
    Witness {
        #[arg(long, default_value = prove::DEFAULT_CIRCUIT, value_parser = parse_circuit)]
        circuit: CircuitKind,
        /// log2 of the number of constraints.
        #[arg(long, default_value_t = prove::DEFAULT_SIZE)]
        size: u32,
        /// Which instance (as `prove --seed` picks the first partition's).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        out: PathBuf,
    },
    /// Prove instances of a built-in circuit, verify them, and print the timeline report; or
    /// one proof from files (--zkey and --wtns, or --compiled, --witness and --key).
    Prove(Box<prove::ProveArgs>),
    /// Compare backends: median times of MSM, NTT and full proofs over a range of sizes.
    Bench(bench::BenchArgs),
    /// The device memory a built-in circuit's proofs need (resident key and circuit, each
    /// proof's vectors and MSM workspace) and whether a device, or a card of --memory-gib,
    /// holds it.
    Plan {
        #[arg(long, default_value = prove::DEFAULT_CIRCUIT, value_parser = parse_circuit)]
        circuit: CircuitKind,
        /// log2 of the number of constraints.
        #[arg(long, default_value_t = prove::DEFAULT_SIZE)]
        size: u32,
        /// The device to plan for (its memory is read); unused with --memory-gib.
        #[arg(long, default_value = "auto", value_parser = parse_backend)]
        backend: BackendKind,
        /// Plan for a card of this much memory instead of a device of this machine.
        #[arg(long)]
        memory_gib: Option<f64>,
    },
    /// What a file holds (a snarkjs zkey, a circom wtns or r1cs, a compiled circuit, an
    /// arkworks proving key): curve, sizes, SHA-256, and whether a key's points check.
    Inspect { file: PathBuf },
    /// The proving service: circuits resident on this host's devices, witnesses in and
    /// verified proofs out over gRPC; alone, or one of a fleet on PostgreSQL (--queue).
    Serve(Box<serve::ServeArgs>),
    /// Talk to a `g16 serve`: register circuits, prove witnesses, await proofs.
    Client(client::ClientArgs),
    /// Filecoin's proofs on g16: `c2` proves a sector's C1 output (PoRep C2).
    #[cfg(feature = "filecoin")]
    Filecoin {
        #[command(subcommand)]
        command: cli::filecoin::FilecoinCommand,
    },
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

fn run(cli: Cli) -> Result<(), CliError> {
    let settings = Settings::from_env()?;
    for name in g16::settings::unknown_variables() {
        eprintln!("note: {name} is not a g16 setting and is ignored (docs/tuning.md lists them)");
    }
    match cli.command {
        Command::Devices => devices::run(&settings),
        // --out and --compress conflict with --zkey: none is given here.
        Command::Setup { circuit, size, seed, zkey: Some(zkey), r1cs, .. } => {
            setup::run_zkey(circuit, size, r1cs.as_deref(), &zkey, seed)
        }
        Command::Setup { circuit, size, out, compress, seed, zkey: None, backend, .. } => {
            setup::run(&settings, circuit, size, out, compress, seed, backend)
        }
        Command::Compile { circuit, size, out } => compile::run(&settings, circuit, size, &out),
        Command::Witness { circuit, size, seed, out } => prove_files::write_witness(circuit, size, seed, &out),
        Command::Prove(args) => prove::run(&settings, *args),
        Command::Bench(args) => bench::run(&settings, args),
        Command::Inspect { file } => inspect::run(&file),
        Command::Plan { circuit, size, backend, memory_gib } => {
            plan::run(&settings, circuit, size, backend, memory_gib)
        }
        Command::Serve(args) => serve::run(&settings, *args),
        Command::Client(args) => client::run(args),
        #[cfg(feature = "filecoin")]
        Command::Filecoin { command } => cli::filecoin::run(&settings, command),
        Command::Timeline { command: TimelineCommand::Report { file, gap_warn } } => report::run(&file, gap_warn),
    }
}

fn main() -> ExitCode {
    quiet_vulkan_device_selection();
    let cli = Cli::parse();
    #[cfg(feature = "filecoin")]
    filecoin_parameter_directory(&cli);
    if !matches!(cli.command, Command::Serve(_)) {
        end_quietly_on_a_closed_pipe();
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Mesa's device-select Vulkan layer connects to Wayland to find the desktop's default GPU, and
/// where there is no desktop (`XDG_RUNTIME_DIR` unset: a server, a container, CI) libwayland
/// prints an error line for each attempt, before every proof, about a backend g16 never uses.
/// g16 orders adapters itself, so the layer has nothing to decide; it is turned off for this
/// process unless the user set `NODEVICE_SELECT` either way. Runs first, before any thread.
fn quiet_vulkan_device_selection() {
    let no_desktop = std::env::var_os("XDG_RUNTIME_DIR").is_none_or(|d| d.is_empty());
    if no_desktop && std::env::var_os("NODEVICE_SELECT").is_none() {
        std::env::set_var("NODEVICE_SELECT", "1");
    }
}

/// filecoin-proofs' `verify_seal` reads the sector's verifying key (the `.vk` beside the
/// `.params`) from its parameter directory, which it takes once from FIL_PROOFS_PARAMETER_CACHE
/// (else /var/tmp/filecoin-proof-parameters). `g16 filecoin c2 --params DIR` names that
/// directory, so its verify_seal reads DIR too, whatever the variable said. Runs before any
/// thread.
#[cfg(feature = "filecoin")]
fn filecoin_parameter_directory(cli: &Cli) {
    if let Command::Filecoin { command: cli::filecoin::FilecoinCommand::C2(args) } = &cli.command {
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &args.params);
    }
}

/// Rust ignores SIGPIPE, so `println!` to a reader that has gone (`g16 devices | head -1`)
/// panics. A command that only prints ends quietly instead, as other command-line tools do. Not
/// `g16 serve`: a client that leaves must cost its socket write an error, not the server.
fn end_quietly_on_a_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: runs on the main thread before any other thread starts (the backends and the
    // engine start theirs later) and only restores the default disposition of one signal.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
