//! Filecoin PoRep baseline harness.
//!
//! Produces the reference numbers the g16 prover is compared against:
//! filecoin-proofs' `seal_commit_phase2` proving with bellperson on the CPU,
//! or with bellperson's SupraSeal backend when built with `--features supraseal`.
//!
//! `params` makes seeded Groth16 parameters, `seal` seals a real sector and
//! writes the C1 output in the JSON shape filecoin-proofs-api (and so lotus and
//! curio) writes it, `c2` proves from such a file. Every subcommand prints one
//! JSON line of timings and appends it to `--json FILE` when given.

use std::fs::{self, File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, ensure, Context, Result};
use bellperson::util_cs::bench_cs::BenchCS;
use bellperson::util_cs::witness_cs::WitnessCS;
use bellperson::{Circuit, ConstraintSystem};
use blstrs::Scalar as Fr;
use clap::{Parser, Subcommand};
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::constants::{
    DefaultPieceDomain, DefaultPieceHasher, DefaultTreeHasher, SectorShapeBase, SECTOR_SIZE_2_KIB, SECTOR_SIZE_512_MIB,
    SECTOR_SIZE_8_MIB,
};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::types::{
    PaddedBytesAmount, PoRepConfig, SealCommitPhase1Output, UnpaddedBytesAmount, VanillaSealProof,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use storage_proofs_core::api_version::ApiVersion;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::sector::SectorId;
use storage_proofs_porep::stacked::{self, StackedCircuit, StackedCompound, StackedDrg};

// SectorShape2KiB, SectorShape8MiB and SectorShape512MiB are all this one
// tree type, so the whole harness is monomorphic over it.
type Tree = SectorShapeBase;
type Compound = StackedCompound<Tree, DefaultPieceHasher>;
type Drg<'a> = StackedDrg<'a, Tree, DefaultPieceHasher>;
type Proofs = Vec<Vec<VanillaSealProof<Tree>>>;

#[cfg(feature = "supraseal")]
const TOOL: &str = "bellperson-supraseal";
#[cfg(not(feature = "supraseal"))]
const TOOL: &str = "bellperson-cpu";

/// The seal proof types this harness supports, spelt (and serialized) as
/// filecoin-proofs-api's `RegisteredSealProof` spells them.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum RegisteredSealProof {
    StackedDrg2KiBV1_1,
    StackedDrg8MiBV1_1,
    StackedDrg512MiBV1_1,
}

impl RegisteredSealProof {
    fn parse(s: &str) -> Result<Self> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "2kib" | "2k" | "2048" => Self::StackedDrg2KiBV1_1,
            "8mib" | "8m" | "8388608" => Self::StackedDrg8MiBV1_1,
            "512mib" | "512m" | "536870912" => Self::StackedDrg512MiBV1_1,
            _ => bail!("unsupported sector size {s:?} (2KiB, 8MiB or 512MiB)"),
        })
    }

    fn label(self) -> &'static str {
        match self {
            Self::StackedDrg2KiBV1_1 => "2KiB",
            Self::StackedDrg8MiBV1_1 => "8MiB",
            Self::StackedDrg512MiBV1_1 => "512MiB",
        }
    }

    fn sector_size(self) -> u64 {
        match self {
            Self::StackedDrg2KiBV1_1 => SECTOR_SIZE_2_KIB,
            Self::StackedDrg8MiBV1_1 => SECTOR_SIZE_8_MIB,
            Self::StackedDrg512MiBV1_1 => SECTOR_SIZE_512_MIB,
        }
    }

    /// The registered-proof number (the FFI/actors enum), which is what a
    /// production porep_id holds.
    fn number(self) -> u64 {
        match self {
            Self::StackedDrg2KiBV1_1 => 5,
            Self::StackedDrg8MiBV1_1 => 6,
            Self::StackedDrg512MiBV1_1 => 7,
        }
    }

    fn config(self) -> PoRepConfig {
        let mut porep_id = [0u8; 32];
        porep_id[..8].copy_from_slice(&self.number().to_le_bytes());
        PoRepConfig::new_groth16(self.sector_size(), porep_id, ApiVersion::V1_1_0)
    }
}

/// filecoin-proofs-api wraps the vanilla proofs in an externally tagged enum
/// keyed by the shape's V1 name; mirroring it keeps our C1 files
/// interchangeable with the ones lotus and curio write.
#[allow(clippy::enum_variant_names)]
#[derive(Serialize, Deserialize)]
enum VanillaProofs {
    StackedDrg2KiBV1(Proofs),
    StackedDrg8MiBV1(Proofs),
    StackedDrg512MiBV1(Proofs),
}

impl VanillaProofs {
    fn wrap(proof: RegisteredSealProof, p: Proofs) -> Self {
        match proof {
            RegisteredSealProof::StackedDrg2KiBV1_1 => Self::StackedDrg2KiBV1(p),
            RegisteredSealProof::StackedDrg8MiBV1_1 => Self::StackedDrg8MiBV1(p),
            RegisteredSealProof::StackedDrg512MiBV1_1 => Self::StackedDrg512MiBV1(p),
        }
    }

    fn unwrap(self, proof: RegisteredSealProof) -> Result<Proofs> {
        Ok(match (proof, self) {
            (RegisteredSealProof::StackedDrg2KiBV1_1, Self::StackedDrg2KiBV1(p))
            | (RegisteredSealProof::StackedDrg8MiBV1_1, Self::StackedDrg8MiBV1(p))
            | (RegisteredSealProof::StackedDrg512MiBV1_1, Self::StackedDrg512MiBV1(p)) => p,
            _ => bail!("vanilla proofs do not match registered_proof {proof:?}"),
        })
    }
}

/// filecoin-proofs-api's `SealCommitPhase1Output`, field for field.
#[derive(Serialize, Deserialize)]
struct C1File {
    registered_proof: RegisteredSealProof,
    vanilla_proofs: VanillaProofs,
    comm_r: [u8; 32],
    comm_d: [u8; 32],
    replica_id: <DefaultTreeHasher as Hasher>::Domain,
    seed: [u8; 32],
    ticket: [u8; 32],
}

/// What `verify_seal` needs beyond the C1 output; C1 does not carry it.
#[derive(Serialize, Deserialize)]
struct C1Meta {
    registered_proof: RegisteredSealProof,
    prover_id: String,
    sector_id: u64,
    sector_size: u64,
}

#[derive(Parser)]
#[command(version, about = "Filecoin PoRep C2 baseline harness (bellperson / supraseal)")]
struct Cli {
    /// Append each result line to this file as well as printing it.
    #[arg(long, global = true)]
    json: Option<PathBuf>,
    /// Forward filecoin-proofs/bellperson info logs to stderr.
    #[arg(long, short, global = true)]
    verbose: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Make seeded PoRep Groth16 parameters (.params, .vk, .meta) in $FIL_PROOFS_PARAMETER_CACHE.
    Params {
        #[arg(long)]
        sector: String,
        /// 0x6716 is the seed the project's own tests use.
        #[arg(long, default_value_t = 0x6716)]
        seed: u64,
    },
    /// Seal one full sector of seeded random data through C1.
    Seal {
        #[arg(long)]
        sector: String,
        /// Scratch directory for the staged, sealed and cache files.
        #[arg(long)]
        work: PathBuf,
        /// C1 output JSON; OUT.meta.json is written beside it.
        #[arg(long)]
        c1: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Run seal_commit_phase2 on a C1 JSON and verify the proof.
    C2 {
        #[arg(long)]
        c1: PathBuf,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 1)]
        runs: usize,
        /// Untimed C2 runs first, e.g. to take parameter loading out of the median.
        #[arg(long, default_value_t = 0)]
        warmup: usize,
    },
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    log::set_logger(&LOGGER).expect("logger set twice");
    log::set_max_level(log::LevelFilter::Info);
    LOGGER.verbose.store(cli.verbose, Ordering::Relaxed);

    let line = match cli.cmd {
        Cmd::Params { sector, seed } => params(RegisteredSealProof::parse(&sector)?, seed)?,
        Cmd::Seal { sector, work, c1, seed } => seal(RegisteredSealProof::parse(&sector)?, &work, &c1, seed)?,
        Cmd::C2 { c1, out, runs, warmup } => c2(&c1, &out, runs.max(1), warmup)?,
    };
    emit(line, cli.json.as_deref())
}

fn compound_public_params(cfg: &PoRepConfig) -> Result<compound_proof::PublicParams<'static, Drg<'static>>> {
    // Built exactly as seal_commit_phase2 builds it, so the cache identifier
    // (and so the file name) is the one the prover looks up.
    let setup = compound_proof::SetupParams {
        vanilla_params: setup_params(cfg)?,
        partitions: Some(usize::from(cfg.partitions)),
        priority: false,
    };
    <Compound as CompoundProof<Drg<'_>, _>>::setup(&setup)
}

fn params(proof: RegisteredSealProof, seed: u64) -> Result<Value> {
    use storage_proofs_core::parameter_cache::{
        parameter_cache_params_path, parameter_cache_verifying_key_path, CacheableParameters,
    };
    // The cache trait is generic over circuit and parameter types; name them.
    type Circ = StackedCircuit<Tree, DefaultPieceHasher>;
    type Pp = stacked::PublicParams<Tree>;
    let cfg = proof.config();
    let pp = compound_public_params(&cfg)?;
    let id = <Compound as CacheableParameters<Circ, Pp>>::cache_identifier(&pp.vanilla_params);
    let params_path = parameter_cache_params_path(&id);
    let vk_path = parameter_cache_verifying_key_path(&id);
    let existed = params_path.exists() && vk_path.exists();

    let start = Instant::now();
    if !existed {
        if cfg!(feature = "supraseal") {
            // storage-proofs refuses to generate parameters in supraseal builds.
            bail!("no parameters at {}; make them with the CPU build", params_path.display());
        }
        let blank = || <Compound as CompoundProof<Drg<'_>, _>>::blank_circuit(&pp.vanilla_params);
        // One RNG for both calls: the vk is read back from the freshly written
        // params, so the second call does not draw from it, but passing it keeps
        // generation possible should the params file already exist alone.
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        <Compound as CacheableParameters<Circ, Pp>>::get_param_metadata(blank(), &pp.vanilla_params)?;
        <Compound as CacheableParameters<Circ, Pp>>::get_groth_params(Some(&mut rng), blank(), &pp.vanilla_params)?;
        <Compound as CacheableParameters<Circ, Pp>>::get_verifying_key(Some(&mut rng), blank(), &pp.vanilla_params)?;
    }
    let gen_ms = ms(start.elapsed());

    Ok(json!({
        "op": "params",
        "sector": proof.label(),
        "seed": seed,
        "generated": !existed,
        "params_ms": if existed { Value::Null } else { json!(gen_ms) },
        "params_path": params_path,
        "params_bytes": fs::metadata(&params_path)?.len(),
        "params_sha256": sha256_file(&params_path)?,
        "vk_sha256": sha256_file(&vk_path)?,
    }))
}

fn seal(proof: RegisteredSealProof, work: &Path, c1_path: &Path, seed: u64) -> Result<Value> {
    let cfg = proof.config();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    // Everything derives from --seed, so a seed names the same sector on every
    // machine. Ticket and seed must be nonzero: C2 rejects an all-zero seed.
    let prover_id: [u8; 32] = rng.gen();
    let sector_id = SectorId::from(rng.gen_range(1..1u64 << 32));
    let ticket = nonzero(&mut rng);
    let seed_bytes = nonzero(&mut rng);

    fs::create_dir_all(work)?;
    let cache_dir = work.join("cache");
    // A rerun must not find the previous run's trees and labels.
    if cache_dir.exists() {
        fs::remove_dir_all(&cache_dir)?;
    }
    fs::create_dir_all(&cache_dir)?;
    let staged = work.join("staged");
    let sealed = work.join("sealed");

    // One piece filling the whole sector, as a committed-capacity-free deal would.
    let piece_size = UnpaddedBytesAmount::from(PaddedBytesAmount(proof.sector_size()));
    let mut data = vec![0u8; usize::from(piece_size)];
    rng.fill(&mut data[..]);

    let t = Instant::now();
    let piece = filecoin_proofs::generate_piece_commitment(&data[..], piece_size)?;
    let commp_ms = ms(t.elapsed());

    let t = Instant::now();
    let mut staged_file = BufWriter::new(File::create(&staged)?);
    let (added, _) = filecoin_proofs::add_piece(&data[..], &mut staged_file, piece_size, &[])?;
    staged_file.flush()?;
    drop(staged_file);
    let add_piece_ms = ms(t.elapsed());
    ensure!(added.commitment == piece.commitment, "add_piece and commP disagree");
    drop(data);
    File::create(&sealed)?;
    let pieces = [piece];

    let t = Instant::now();
    let pc1 = filecoin_proofs::seal_pre_commit_phase1::<_, _, _, Tree>(
        &cfg, &cache_dir, &staged, &sealed, prover_id, sector_id, ticket, &pieces,
    )?;
    let pc1_ms = ms(t.elapsed());

    let t = Instant::now();
    let pre = filecoin_proofs::seal_pre_commit_phase2::<_, _, Tree>(&cfg, pc1, &cache_dir, &sealed)?;
    let pc2_ms = ms(t.elapsed());

    let t = Instant::now();
    let c1 = filecoin_proofs::seal_commit_phase1::<_, Tree>(
        &cfg, &cache_dir, &sealed, prover_id, sector_id, ticket, seed_bytes, pre, &pieces,
    )?;
    let c1_ms = ms(t.elapsed());

    let partitions = c1.vanilla_proofs.len();
    let file = C1File {
        registered_proof: proof,
        vanilla_proofs: VanillaProofs::wrap(proof, c1.vanilla_proofs),
        comm_r: c1.comm_r,
        comm_d: c1.comm_d,
        replica_id: c1.replica_id,
        seed: c1.seed,
        ticket: c1.ticket,
    };
    serde_json::to_writer(BufWriter::new(File::create(c1_path)?), &file)?;
    let meta = C1Meta {
        registered_proof: proof,
        prover_id: hex::encode(prover_id),
        sector_id: u64::from(sector_id),
        sector_size: proof.sector_size(),
    };
    fs::write(meta_path(c1_path), serde_json::to_vec_pretty(&meta)?)?;

    Ok(json!({
        "op": "seal",
        "sector": proof.label(),
        "seed": seed,
        "partitions": partitions,
        "comm_r": hex::encode(file.comm_r),
        "comm_d": hex::encode(file.comm_d),
        "commp_ms": commp_ms,
        "add_piece_ms": add_piece_ms,
        "pc1_ms": pc1_ms,
        "pc2_ms": pc2_ms,
        "c1_ms": c1_ms,
        "c1_bytes": fs::metadata(c1_path)?.len(),
    }))
}

fn c2(c1_path: &Path, out: &Path, runs: usize, warmup: usize) -> Result<Value> {
    let meta: C1Meta = serde_json::from_slice(&fs::read(meta_path(c1_path))?).context("reading the C1 meta file")?;
    let file: C1File = serde_json::from_reader(BufReader::new(File::open(c1_path)?)).context("reading the C1 file")?;
    let proof = file.registered_proof;
    ensure!(meta.registered_proof == proof, "meta and C1 disagree on registered_proof");
    let cfg = proof.config();
    let prover_id: [u8; 32] =
        hex::decode(&meta.prover_id)?.try_into().map_err(|_| anyhow::anyhow!("prover_id must be 32 bytes"))?;
    let sector_id = SectorId::from(meta.sector_id);
    let c1 = SealCommitPhase1Output::<Tree> {
        vanilla_proofs: file.vanilla_proofs.unwrap(proof)?,
        comm_r: file.comm_r,
        comm_d: file.comm_d,
        replica_id: file.replica_id,
        seed: file.seed,
        ticket: file.ticket,
    };
    let partitions = c1.vanilla_proofs.len();
    let pp = compound_public_params(&cfg)?;

    // Constraint count from a counting-only system over the blank circuit: cheap,
    // no witness values are computed.
    let mut counter = BenchCS::<Fr>::new();
    <Compound as CompoundProof<Drg<'_>, _>>::blank_circuit(&pp.vanilla_params).synthesize(&mut counter)?;
    let constraints = counter.num_constraints();

    let mut c2_runs = Vec::new();
    let mut synth_runs = Vec::new();
    let mut bp_synth_runs = Vec::new();
    let mut bp_prover_runs = Vec::new();
    let mut proof_bytes = Vec::new();
    for i in 0..warmup + runs {
        let timed = i >= warmup;
        // The same partition circuits seal_commit_phase2 builds, synthesized into
        // a witness-only system; this is the witness-generation part of C2.
        let synth = synthesize_witness(&pp.vanilla_params, &c1)?;

        LOGGER.take();
        let t = Instant::now();
        let output = filecoin_proofs::seal_commit_phase2::<Tree>(&cfg, copy(&c1), prover_id, sector_id)?;
        let c2_ms = ms(t.elapsed());
        let (bp_synth, bp_prover) = LOGGER.take();

        if timed {
            c2_runs.push(c2_ms);
            synth_runs.push(synth);
            bp_synth_runs.push(bp_synth);
            bp_prover_runs.push(bp_prover);
        }
        proof_bytes = output.proof;
    }

    let t = Instant::now();
    let ok = filecoin_proofs::verify_seal::<Tree>(
        &cfg,
        c1.comm_r,
        c1.comm_d,
        prover_id,
        sector_id,
        c1.ticket,
        c1.seed,
        &proof_bytes,
    )?;
    let verify_ms = ms(t.elapsed());
    fs::write(out, &proof_bytes)?;
    ensure!(ok, "verify_seal rejected the proof");

    let c2_med = median(&c2_runs);
    let synth_med = median(&synth_runs);
    Ok(json!({
        "op": "c2",
        "sector": proof.label(),
        "partitions": partitions,
        "constraints_per_partition": constraints,
        "warmup": warmup,
        "median_ms": c2_med,
        "c2_ms": c2_med,
        "c2_runs_ms": c2_runs,
        "synthesis_ms": synth_med,
        "synthesis_runs_ms": synth_runs,
        "prover_ms": c2_med - synth_med,
        "prover_ms_is": "derived: c2_ms - synthesis_ms (c2_ms also holds seal_commit_phase2's own verify_seal and, without --warmup, parameter loading)",
        "bellperson_synthesis_ms": median_opt(&bp_synth_runs),
        "bellperson_prover_ms": median_opt(&bp_prover_runs),
        "bellperson_ms_are": "bellperson's own 'synthesis time'/'prover time' log lines inside seal_commit_phase2, summed over batches",
        "verify_ms": verify_ms,
        "verified": ok,
        "proof_bytes": proof_bytes.len(),
    }))
}

/// Builds every partition circuit and synthesizes it into bellperson's
/// witness-only constraint system, in parallel over partitions as
/// `circuit_proofs` does. Returns milliseconds.
fn synthesize_witness(vanilla_params: &stacked::PublicParams<Tree>, c1: &SealCommitPhase1Output<Tree>) -> Result<f64> {
    use rayon::prelude::*;
    let public_inputs = stacked::PublicInputs {
        replica_id: c1.replica_id,
        tau: Some(stacked::Tau {
            comm_d: DefaultPieceDomain::try_from_bytes(&c1.comm_d)?,
            comm_r: filecoin_proofs::as_safe_commitment(&c1.comm_r, "comm_r")?,
        }),
        k: None,
        seed: Some(c1.seed),
    };
    let t = Instant::now();
    c1.vanilla_proofs
        .par_iter()
        .enumerate()
        .map(|(k, vanilla)| -> Result<()> {
            let circuit = <Compound as CompoundProof<Drg<'_>, _>>::circuit(
                &public_inputs,
                Default::default(),
                vanilla,
                vanilla_params,
                Some(k),
            )?;
            let mut cs = WitnessCS::<Fr>::new();
            circuit.synthesize(&mut cs)?;
            Ok(())
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ms(t.elapsed()))
}

/// `SealCommitPhase1Output` is not `Clone` (its tree type parameter is not),
/// and seal_commit_phase2 consumes it, so each run gets a field-wise copy.
fn copy(c1: &SealCommitPhase1Output<Tree>) -> SealCommitPhase1Output<Tree> {
    SealCommitPhase1Output {
        vanilla_proofs: c1.vanilla_proofs.clone(),
        comm_r: c1.comm_r,
        comm_d: c1.comm_d,
        replica_id: c1.replica_id,
        seed: c1.seed,
        ticket: c1.ticket,
    }
}

fn nonzero(rng: &mut ChaCha20Rng) -> [u8; 32] {
    loop {
        let v: [u8; 32] = rng.gen();
        if v != [0; 32] {
            return v;
        }
    }
}

fn meta_path(c1: &Path) -> PathBuf {
    let name = c1.file_name().and_then(|n| n.to_str()).unwrap_or("c1");
    let stem = name.strip_suffix(".json").unwrap_or(name);
    c1.with_file_name(format!("{stem}.meta.json"))
}

fn sha256_file(path: &Path) -> Result<String> {
    let mut hasher = Sha256::new();
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(hex::encode(hasher.finalize()));
        }
        hasher.update(&buf[..n]);
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn median_opt(v: &[Option<f64>]) -> Value {
    let got: Vec<f64> = v.iter().flatten().copied().collect();
    if got.len() == v.len() && !got.is_empty() {
        json!(median(&got))
    } else {
        Value::Null
    }
}

/// Adds the fields every line carries, prints the line and appends it to `json`.
fn emit(mut line: Value, json_file: Option<&Path>) -> Result<()> {
    let obj = line.as_object_mut().expect("result is an object");
    let mut all = serde_json::Map::new();
    all.insert("tool".into(), json!(TOOL));
    all.append(obj);
    all.entry("runs").or_insert(json!(1));
    if let Some(Value::Array(r)) = all.get("c2_runs_ms") {
        all.insert("runs".into(), json!(r.len()));
    }
    all.insert("threads".into(), json!(rayon::current_num_threads()));
    all.insert("date".into(), json!(utc_now()));
    let host = fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    all.insert(
        "host".into(),
        json!({
            "name": host.trim(),
            "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        }),
    );
    let text = serde_json::to_string(&Value::Object(all))?;
    println!("{text}");
    if let Some(path) = json_file {
        let mut f = OpenOptions::new().create(true).append(true).open(path)?;
        writeln!(f, "{text}")?;
    }
    Ok(())
}

/// RFC 3339 UTC timestamp without pulling in a date crate.
fn utc_now() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let (days, rem) = ((secs / 86400) as i64, secs % 86400);
    // Howard Hinnant's days-to-civil conversion.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

/// Captures bellperson's own "synthesis time" / "prover time" log lines, which
/// split C2 from inside the prover, and optionally forwards all info logs.
struct Capture {
    verbose: AtomicBool,
    times: Mutex<(Option<f64>, Option<f64>)>,
}

static LOGGER: Capture = Capture { verbose: AtomicBool::new(false), times: Mutex::new((None, None)) };

impl Capture {
    fn take(&self) -> (Option<f64>, Option<f64>) {
        std::mem::take(&mut *self.times.lock().unwrap())
    }
}

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }

    fn log(&self, record: &log::Record) {
        if record.target().starts_with("bellperson") {
            let msg = record.args().to_string();
            let slot = if let Some(d) = msg.strip_prefix("synthesis time: ") {
                Some((0, d.to_string()))
            } else {
                msg.strip_prefix("prover time: ").map(|d| (1, d.to_string()))
            };
            if let Some((which, d)) = slot {
                if let Some(v) = parse_debug_duration_ms(&d) {
                    let mut t = self.times.lock().unwrap();
                    let e = if which == 0 { &mut t.0 } else { &mut t.1 };
                    *e = Some(e.unwrap_or(0.0) + v);
                }
            }
        }
        if self.verbose.load(Ordering::Relaxed) {
            eprintln!("[{} {}] {}", record.level(), record.target(), record.args());
        }
    }

    fn flush(&self) {}
}

/// Parses `Duration`'s Debug output ("1.5s", "12.3ms", "4µs", "7ns").
fn parse_debug_duration_ms(s: &str) -> Option<f64> {
    let s = s.trim();
    for (suffix, scale) in [("ms", 1.0), ("µs", 1e-3), ("us", 1e-3), ("ns", 1e-6), ("s", 1e3)] {
        if let Some(n) = s.strip_suffix(suffix) {
            return n.parse::<f64>().ok().map(|v| v * scale);
        }
    }
    None
}
