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
    /// Register a circuit: a snarkjs zkey, or a compiled circuit and its arkworks key.
    Register {
        #[arg(long)]
        name: String,
        #[arg(long, conflicts_with_all = ["compiled", "key"])]
        zkey: Option<PathBuf>,
        #[arg(long, requires = "key")]
        compiled: Option<PathBuf>,
        #[arg(long)]
        key: Option<PathBuf>,
    },
    /// The circuits registered.
    List,
    /// Queue a proof of a witness (.wtns); with --out, wait and write proof.json, public.json
    /// and proof.bin there.
    Prove {
        #[arg(long)]
        circuit: String,
        #[arg(long)]
        witness: PathBuf,
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
            ClientCommand::Register { name, zkey, compiled, key } => {
                let info = match (zkey, compiled, key) {
                    (Some(zkey), None, None) => client.register_zkey(&name, &read(&zkey)?).await?,
                    (None, Some(circuit), Some(key)) => {
                        client.register_compiled(&name, &read(&circuit)?, &read(&key)?).await?
                    }
                    _ => return Err(CliError::Usage("register takes --zkey, or --compiled and --key".into())),
                };
                println!(
                    "registered {}: {} constraints, {} variables, {} public inputs, domain {}, sha256 {}",
                    info.name, info.constraints, info.variables, info.public_inputs, info.domain_size, info.digest
                );
            }
            ClientCommand::List => {
                for c in client.circuits().await? {
                    let kind = PackageKind::try_from(c.kind).map_or("?", |k| k.as_str_name());
                    println!("{}  {kind}  {} constraints  {} variables  sha256 {}", c.name, c.constraints, c.variables, c.digest);
                }
            }
            ClientCommand::Prove { circuit, witness, priority, deadline_secs, out } => {
                let options = ProveOptions { priority, deadline: deadline_secs.map(Duration::from_secs), trace: false };
                let job = client.prove(&circuit, WitnessFormat::Wtns, &read(&witness)?, options).await?;
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
    for (name, bytes) in [
        ("proof.json", proof.proof_json.as_bytes()),
        ("public.json", proof.public_json.as_bytes()),
        ("proof.bin", proof.arkworks.as_slice()),
    ] {
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
