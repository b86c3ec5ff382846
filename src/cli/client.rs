//! `g16 client`: talks to a `g16 serve` (any server of a fleet): registers circuits, sends
//! witnesses, awaits proofs and writes them as `g16 prove` does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use g16_client::{Client, ClientError, PackageKind, Priority, ProveOptions, WitnessFormat};

use crate::cli::{io_err, CliError};

#[derive(clap::Args, Debug)]
pub struct ClientArgs {
    /// The server.
    #[arg(long, default_value = "http://127.0.0.1:7316")]
    pub server: String,
    /// A file holding the server's bearer token.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    #[command(subcommand)]
    pub command: ClientCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum ClientCommand {
    /// Register a circuit: a snarkjs zkey, a compiled circuit and its arkworks key, or
    /// Filecoin's PoRep circuit of a registered seal proof and its parameter file on the server.
    Register {
        #[arg(long)]
        name: String,
        #[arg(long, conflicts_with_all = ["compiled", "key", "filecoin_proof"])]
        zkey: Option<PathBuf>,
        #[arg(long, requires = "key", conflicts_with = "filecoin_proof")]
        compiled: Option<PathBuf>,
        #[arg(long)]
        key: Option<PathBuf>,
        /// Filecoin's PoRep: the registered seal proof (e.g. StackedDrg32GiBV1_1), whose
        /// circuit the server compiles.
        #[arg(long, requires = "params")]
        filecoin_proof: Option<String>,
        /// With --filecoin-proof: the proof's parameter file (`v28-stacked-proof-of-replication-….params`),
        /// a path on the server inside its --package-dir (the file is not uploaded).
        #[arg(long, requires = "filecoin_proof")]
        params: Option<String>,
        /// --zkey, --compiled and --key are paths on the server, inside its --package-dir:
        /// nothing is uploaded, and the server reads the files at its disk's speed.
        #[arg(long, conflicts_with = "filecoin_proof")]
        on_server: bool,
    },
    /// The circuits registered.
    List,
    /// Queue a proof of a witness (.wtns), or of a sector's C1 output for a Filecoin circuit;
    /// with --out, wait and write proof.json, public.json and proof.bin there (for a C1
    /// output, c2.bin: the C2 output, as `g16 filecoin c2` writes it).
    Prove {
        #[arg(long)]
        circuit: String,
        #[arg(long, required_unless_present = "c1", conflicts_with = "c1")]
        witness: Option<PathBuf>,
        /// A sector's C1 output (lotus's/curio's JSON, or filecoin-proofs' JSON or bincode).
        #[arg(long)]
        c1: Option<PathBuf>,
        /// low, normal, high or urgent.
        #[arg(long, default_value = "normal", value_parser = parse_priority)]
        priority: Priority,
        /// Seconds from now after which the job is not started.
        #[arg(long)]
        deadline_secs: Option<u64>,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Wait for a job and write its proof into DIR.
    Await {
        job: String,
        #[arg(long, default_value = ".")]
        out: PathBuf,
    },
    Cancel {
        job: String,
    },
    /// Queue depth, devices, keys resident.
    Status,
    /// Load: JOBS proofs of one witness from CLIENTS concurrent connections, each proof
    /// verified by the server; proofs per minute, latency, and the devices' busy share, as a
    /// JSON line (appended to --json where given).
    Load {
        #[arg(long)]
        circuit: String,
        #[arg(long)]
        witness: PathBuf,
        #[arg(long, default_value_t = 64)]
        jobs: usize,
        #[arg(long, default_value_t = 8)]
        clients: usize,
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

fn parse_priority(s: &str) -> Result<Priority, String> {
    match s.to_ascii_lowercase().as_str() {
        "low" => Ok(Priority::Low),
        "normal" => Ok(Priority::Normal),
        "high" => Ok(Priority::High),
        "urgent" => Ok(Priority::Urgent),
        other => Err(format!("unknown priority '{other}' (expected low, normal, high or urgent)")),
    }
}

impl From<ClientError> for CliError {
    fn from(e: ClientError) -> Self {
        CliError::Usage(e.to_string())
    }
}

fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(io_err(format!("cannot read {}", path.display())))
}

pub fn run(args: ClientArgs) -> Result<(), CliError> {
    let token = match &args.token_file {
        Some(path) => Some(std::fs::read_to_string(path).map_err(io_err(format!("cannot read {}", path.display())))?),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io_err("cannot start the async runtime"))?;
    runtime.block_on(async move {
        let mut client = Client::connect(&args.server, token.as_deref().map(str::trim)).await?;
        match args.command {
            ClientCommand::Register { name, zkey, compiled, key, filecoin_proof, params, on_server } => {
                let on_server_path = |p: &std::path::Path| {
                    p.to_str()
                        .map(str::to_string)
                        .ok_or_else(|| CliError::Usage(format!("{}: a path on the server must be UTF-8", p.display())))
                };
                let info = match (zkey, compiled, key, filecoin_proof, params) {
                    (Some(zkey), None, None, None, None) if on_server => {
                        client.register_path(&name, PackageKind::Zkey, &on_server_path(&zkey)?, None).await?
                    }
                    (None, Some(circuit), Some(key), None, None) if on_server => {
                        let key = on_server_path(&key)?;
                        client
                            .register_path(&name, PackageKind::Compiled, &on_server_path(&circuit)?, Some(&key))
                            .await?
                    }
                    // Each file is sent as it is read.
                    (Some(zkey), None, None, None, None) => {
                        client.register_files(&name, PackageKind::Zkey, &[zkey]).await?
                    }
                    (None, Some(circuit), Some(key), None, None) => {
                        client.register_files(&name, PackageKind::Compiled, &[circuit, key]).await?
                    }
                    (None, None, None, Some(proof), Some(params)) => {
                        client.register_filecoin(&name, &proof, &params).await?
                    }
                    _ => {
                        return Err(CliError::Usage(
                            "register takes --zkey, --compiled and --key, or --filecoin-proof and --params".into(),
                        ))
                    }
                };
                println!(
                    "registered {}: {} constraints, {} variables, {} public inputs, domain {}, sha256 {}",
                    info.name, info.constraints, info.variables, info.public_inputs, info.domain_size, info.digest
                );
            }
            ClientCommand::List => {
                for c in client.circuits().await? {
                    let kind = PackageKind::try_from(c.kind).map_or("?", |k| k.as_str_name());
                    let porep = if c.seal_proof.is_empty() {
                        String::new()
                    } else {
                        format!(" ({}, {} partitions)", c.seal_proof, c.partitions)
                    };
                    println!(
                        "{}  {kind}{porep}  {} constraints  {} variables  sha256 {}",
                        c.name, c.constraints, c.variables, c.digest
                    );
                }
            }
            ClientCommand::Prove { circuit, witness, c1, priority, deadline_secs, out } => {
                let options = ProveOptions { priority, deadline: deadline_secs.map(Duration::from_secs) };
                let (format, path) = match (witness, c1) {
                    (Some(witness), None) => (WitnessFormat::Wtns, witness),
                    (None, Some(c1)) => (WitnessFormat::FilecoinC1, c1),
                    _ => return Err(CliError::Usage("prove takes --witness or --c1".into())),
                };
                let job = client.prove(&circuit, format, &read(&path)?, options).await?;
                println!("job {job} queued");
                if let Some(out) = out {
                    write_result(&mut client, &job, &out).await?;
                }
            }
            ClientCommand::Await { job, out } => write_result(&mut client, &job, &out).await?,
            ClientCommand::Cancel { job } => {
                let event = client.cancel(&job).await?;
                let state = g16_client::proto::JobState::try_from(event.state).map_or("?", |s| s.as_str_name());
                println!("job {job}: {state}");
            }
            ClientCommand::Load { circuit, witness, jobs, clients, json } => {
                let line = load(&client, &circuit, &read(&witness)?, jobs, clients.max(1)).await?;
                println!("{line}");
                if let Some(path) = json {
                    use std::io::Write;
                    let mut f = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&path)
                        .map_err(io_err(format!("cannot open {}", path.display())))?;
                    writeln!(f, "{line}").map_err(io_err(format!("cannot write {}", path.display())))?;
                }
            }
            ClientCommand::Status => {
                let s = client.status().await?;
                println!(
                    "worker {} ({}); queued low/normal/high/urgent {:?}, running {}; witnesses {} of {} bytes",
                    s.worker,
                    if s.fleet { "fleet" } else { "alone" },
                    s.queued,
                    s.running,
                    s.witness_bytes_in_flight,
                    s.witness_bytes_budget
                );
                for d in s.devices {
                    println!(
                        "  {} ({}): busy {:.0} %, memory {} bytes, resident {} bytes: {}",
                        d.name,
                        d.backend,
                        d.busy * 100.0,
                        d.memory_bytes,
                        d.resident_bytes,
                        d.resident_circuits.join(", ")
                    );
                }
            }
        }
        Ok(())
    })
}

async fn write_result(client: &mut Client, job: &str, out: &Path) -> Result<(), CliError> {
    let result = client.await_job(job).await?;
    let proof = result.proof.unwrap_or_default();
    std::fs::create_dir_all(out).map_err(io_err(format!("cannot create {}", out.display())))?;
    let files: &[(&str, &[u8])] = if proof.filecoin_c2.is_empty() {
        &[
            ("proof.json", proof.proof_json.as_bytes()),
            ("public.json", proof.public_json.as_bytes()),
            ("proof.bin", proof.arkworks.as_slice()),
        ]
    } else {
        &[("c2.bin", proof.filecoin_c2.as_slice())]
    };
    for &(name, bytes) in files {
        let path = out.join(name);
        std::fs::write(&path, bytes).map_err(io_err(format!("cannot write {}", path.display())))?;
    }
    println!(
        "job {job}: proof {} by {} (queued {:.0} ms, proving {:.0} ms); written to {}",
        if result.verified { "verified" } else { "not verified" },
        result.worker,
        result.queued_ms,
        result.proving_ms,
        out.display()
    );
    Ok(())
}

/// Runs the load and describes it as one JSON line. Latency is from the first byte of the
/// upload to the proof in hand.
/// One job of a load, as its client saw it (ms, and `ended` in seconds into the load).
struct Sample {
    latency: f64,
    accepted: f64,
    queued: f64,
    proving: f64,
    ended: f64,
}

async fn load(client: &Client, circuit: &str, witness: &[u8], jobs: usize, clients: usize) -> Result<String, CliError> {
    let before = client.clone().status().await?;
    let started = std::time::Instant::now();
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let witness = g16_client::Bytes::copy_from_slice(witness);
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (mut client, next, witness, circuit) = (client.clone(), next.clone(), witness.clone(), circuit.to_string());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < jobs {
                let t = std::time::Instant::now();
                let job = client
                    .prove_shared(&circuit, WitnessFormat::Wtns, witness.clone(), ProveOptions::default())
                    .await?;
                let accepted = t.elapsed().as_secs_f64() * 1e3;
                let result = client.await_job(&job).await?;
                if !result.verified {
                    return Err(CliError::Usage(format!("job {job}: the server did not verify the proof")));
                }
                latencies.push(Sample {
                    latency: t.elapsed().as_secs_f64() * 1e3,
                    accepted,
                    queued: result.queued_ms,
                    proving: result.proving_ms,
                    ended: started.elapsed().as_secs_f64(),
                });
            }
            Ok::<_, CliError>(latencies)
        }));
    }
    let mut both: Vec<Sample> = Vec::new();
    for t in tasks {
        both.extend(t.await.map_err(|e| CliError::Usage(e.to_string()))??);
    }
    let wall = started.elapsed().as_secs_f64();
    let after = client.clone().status().await?;
    let sorted = |f: fn(&Sample) -> f64| {
        let mut v: Vec<f64> = both.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let latencies = sorted(|s| s.latency);
    let quantile = |v: &[f64], q: f64| v.get(((v.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0.0);
    let median = |f: fn(&Sample) -> f64| quantile(&sorted(f), 0.5);
    // Steady state: proofs between the first and the last to finish, so the load's ramp (the
    // first uploads, before any device work) and its tail do not count.
    let (first, last) = both.iter().fold((f64::MAX, 0.0f64), |(a, b), s| (a.min(s.ended), b.max(s.ended)));
    let steady = if both.len() > 1 && last > first { (both.len() - 1) as f64 / (last - first) * 60.0 } else { 0.0 };
    let at = |q: f64| quantile(&latencies, q);
    let device = after.devices.first();
    let line = serde_json::json!({
        "op": "serve-prove",
        "circuit": circuit,
        "backend": device.map(|d| d.backend.clone()),
        "device": device.map(|d| d.name.clone()),
        "jobs": latencies.len(),
        "clients": clients,
        "witness_bytes": witness.len(),
        "wall_ms": wall * 1e3,
        "proofs_per_min": latencies.len() as f64 / wall * 60.0,
        "steady_proofs_per_min": steady,
        "latency_ms": { "min": at(0.0), "median": at(0.5), "p95": at(0.95), "max": at(1.0) },
        // Medians of where a job's latency went: until the server accepted it (the upload, its
        // checks, the queue's insert), queued and proving as the server measured them, and
        // the rest (the result's way back, and the await's wake-up).
        "phases_ms": {
            "accepted": median(|s| s.accepted),
            "queued": median(|s| s.queued),
            "proving": median(|s| s.proving),
            "return": median(|s| s.latency - s.accepted - s.queued - s.proving),
        },
        // The share of the load's wall time each device's compute lock was held.
        "device_busy": after
            .devices
            .iter()
            .zip(&before.devices)
            .map(|(a, b)| (a.busy_seconds - b.busy_seconds) / wall)
            .collect::<Vec<_>>(),
        "queued_before": before.queued.iter().sum::<u64>(),
        "includes": "latency: upload of a .wtns over loopback gRPC, queue, proof on the server's devices, verification, the result back; accepted: until the server accepted the upload",
        "commit": crate::cli::stamp::COMMIT,
        "date": crate::cli::stamp::today_utc(),
    });
    Ok(line.to_string())
}
