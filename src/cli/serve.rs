//! `g16 serve`: the proving service on this host's devices (see g16-service), its queue in
//! memory or, with `--queue postgres://…`, in a database it shares with a fleet.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use g16::backends;
use g16::settings::Settings;
use g16_queue::{JobStore, MemoryStore, PgStore};
use g16_service::ServeConfig;

use crate::cli::{io_err, CliError};

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The gRPC address. Off loopback only with --token-file.
    #[arg(long, default_value = "127.0.0.1:7316")]
    pub listen: SocketAddr,
    /// Where /metrics and /healthz are served.
    #[arg(long, default_value = "127.0.0.1:7317")]
    pub metrics: SocketAddr,
    /// Serve no /metrics or /healthz.
    #[arg(long)]
    pub no_metrics: bool,
    /// A file holding the bearer token every call must carry (required off loopback).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// The devices to prove on, as `g16 prove --devices` takes them (default: the first
    /// available backend's device 0).
    #[arg(long)]
    pub devices: Option<String>,
    /// A PostgreSQL URL: jobs, circuits and blobs in a database that other servers share.
    /// Without it the queue is this server's memory.
    #[arg(long)]
    pub queue: Option<String>,
    /// Packages may be registered by a path inside this directory (a Filecoin PoRep circuit's
    /// parameter file must be: it is never uploaded).
    #[arg(long)]
    pub package_dir: Option<PathBuf>,
    /// Jobs queued at once; beyond it, requests are refused (RESOURCE_EXHAUSTED).
    #[arg(long, default_value_t = 4096)]
    pub max_queued: u64,
    /// Host memory for witnesses in flight, MiB.
    #[arg(long, default_value_t = 4096)]
    pub witness_budget_mib: u64,
    /// Seconds a taken job stays this server's without a heartbeat.
    #[arg(long, default_value_t = 30)]
    pub lease_secs: u64,
    /// Seconds in-flight jobs may take to finish after SIGTERM or Ctrl-C.
    #[arg(long, default_value_t = 120)]
    pub grace_secs: u64,
    /// Hours a settled job's result stays readable (then the queue forgets it).
    #[arg(long, default_value_t = 24)]
    pub keep_results_hours: u64,
    /// This server's name in the queue (default host:pid).
    #[arg(long)]
    pub worker: Option<String>,
    /// Return proofs without verifying them first.
    #[arg(long)]
    pub no_verify: bool,
    /// Leave a registered circuit's key off the devices until its first job (by default it is
    /// prepared as it is registered, where the devices have room beside the keys they hold).
    #[arg(long)]
    pub prepare_on_first_job: bool,
}

pub fn run(settings: &Settings, args: ServeArgs) -> Result<(), CliError> {
    let token = match &args.token_file {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(io_err(format!("cannot read {}", path.display())))?;
            let token = text.trim().to_string();
            if token.is_empty() || !token.chars().all(|c| c.is_ascii_graphic()) {
                return Err(CliError::Usage(format!("{}: a token is visible ASCII, not empty", path.display())));
            }
            Some(token)
        }
        None => None,
    };
    let mut config = ServeConfig {
        listen: args.listen,
        metrics: (!args.no_metrics).then_some(args.metrics),
        token,
        package_dir: args.package_dir.clone(),
        // Filecoin PoRep circuits, recorded once and read after, where `g16 filecoin c2` keeps them.
        circuit_cache: Some(settings.cache_root().join("filecoin")),
        max_queued: args.max_queued,
        witness_budget: args.witness_budget_mib << 20,
        lease: Duration::from_secs(args.lease_secs.max(1)),
        shutdown_grace: Duration::from_secs(args.grace_secs),
        verify: !args.no_verify,
        prepare_on_register: !args.prepare_on_first_job,
        keep_results: Duration::from_secs(args.keep_results_hours * 3600),
        ..ServeConfig::default()
    };
    if let Some(worker) = &args.worker {
        config.worker = worker.clone();
    }
    let specs = match &args.devices {
        Some(list) => backends::parse_device_list(list)?,
        None => backends::parse_device_list("auto:0")?,
    };
    let mut devices = Vec::new();
    for spec in &specs {
        devices.push((spec.label(), backends::open_spec(spec, settings)?));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("g16-serve")
        .build()
        .map_err(io_err("cannot start the async runtime"))?;
    runtime.block_on(async move {
        let (store, fleet): (Arc<dyn JobStore>, bool) = match &args.queue {
            Some(url) => (Arc::new(PgStore::connect(url).await.map_err(g16_service::ServiceError::from)?), true),
            None => (Arc::new(MemoryStore::new()), false),
        };
        let labels: Vec<String> = devices.iter().map(|(l, _)| l.clone()).collect();
        let bound = g16_service::bind(config.clone(), store, fleet, devices).await?;
        println!(
            "g16 serve: listening on {} (metrics {}), devices {}, queue {}, worker {}",
            bound.grpc_addr().map_or("?".into(), |a| a.to_string()),
            bound.metrics_addr().map_or("off".into(), |a| a.to_string()),
            labels.join(","),
            if fleet { "postgres (fleet)" } else { "memory" },
            config.worker,
        );
        bound.serve(shutdown_signal()).await?;
        println!("g16 serve: drained and stopped");
        Ok::<(), CliError>(())
    })
}

/// SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
