//! What the tests share (this crate's, and g16-service's tests/filecoin.rs, which includes this
//! file): a real 2 KiB sector sealed by filecoin-proofs (add_piece, PC1, PC2, C1), the PoRep
//! circuit compiled by g16, and its Groth16 parameters made by g16's setup from a seeded RNG and
//! written as bellperson's files (as filecoin-proofs names and reads them).
//!
//! The parameters take minutes on two cores, so they are made once into
//! `FIL_PROOFS_PARAMETER_CACHE` (default: `target/tmp/filecoin-params`) and reused; the same
//! seed makes the same bytes anywhere.

#![allow(dead_code)] // reason: each test binary uses part of it

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Once, OnceLock};

use filecoin_proofs::{
    add_piece, generate_piece_commitment, seal_commit_phase1, seal_pre_commit_phase1, seal_pre_commit_phase2,
    PaddedBytesAmount, SealCommitPhase1Output, SectorShape2KiB, UnpaddedBytesAmount,
};
use g16::backend::CpuBackend;
use g16::prover::setup;
use g16::Timeline;
use g16_filecoin::{C1Output, PoRepCircuit, SealProof};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use storage_proofs_core::sector::SectorId;

pub type Tree = SectorShape2KiB;

/// The seed the project makes its Filecoin test parameters from (benches/filecoin-harness too).
pub const PARAMS_SEED: u64 = 0x6716;

pub fn proof() -> SealProof {
    "StackedDrg2KiBV1_1".parse().unwrap()
}

/// Points filecoin-proofs at the parameter directory before anything reads its settings (they
/// are read once per process): call first in every test.
pub fn params_dir() -> PathBuf {
    static INIT: Once = Once::new();
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    INIT.call_once(|| {
        let dir = std::env::var_os("FIL_PROOFS_PARAMETER_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("filecoin-params"));
        std::fs::create_dir_all(&dir).unwrap();
        // SAFETY-free in edition 2021; set before filecoin-proofs' settings are first read.
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &dir);
        DIR.set(dir).unwrap();
    });
    DIR.get().unwrap().clone()
}

/// A sealed sector: its C1 output (as filecoin-proofs returns it) and what verify_seal needs.
pub struct Sector {
    pub proof: SealProof,
    pub c1: SealCommitPhase1Output<Tree>,
    /// filecoin-proofs' own JSON of it (no registered proof named).
    pub raw_json: Vec<u8>,
    pub prover_id: [u8; 32],
    pub sector_id: u64,
}

impl Sector {
    pub fn c1_output(&self) -> C1Output {
        C1Output::from_json(&self.raw_json, Some(self.proof)).expect("a fresh C1 output is well formed")
    }

    /// The C1 output as lotus and curio write it (filecoin-proofs-api's JSON).
    pub fn api_json(&self) -> Vec<u8> {
        self.c1_output().to_api_json().unwrap()
    }
}

/// Seals a 2 KiB sector of random data (from `seed`) with `proof`'s configuration.
pub fn seal(proof: SealProof, seed: u64) -> Sector {
    params_dir();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let config = proof.porep_config();
    let dir = tempdir(&format!("sector-{seed}-{}", proof.id()));
    let unpadded = UnpaddedBytesAmount::from(PaddedBytesAmount(config.sector_size.into()));
    let data: Vec<u8> = (0..u64::from(unpadded)).map(|_| rng.gen()).collect();
    let piece = generate_piece_commitment(&data[..], unpadded).unwrap();
    let staged = dir.join("staged");
    let mut staged_file = File::create(&staged).unwrap();
    add_piece(&data[..], &mut staged_file, unpadded, &[]).unwrap();
    staged_file.seek(SeekFrom::Start(0)).unwrap();
    let sealed = dir.join("sealed");
    File::create(&sealed).unwrap();
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let (prover_id, ticket, seed_bytes): ([u8; 32], [u8; 32], [u8; 32]) = (rng.gen(), rng.gen(), rng.gen());
    let sector_id = rng.gen::<u64>() >> 1;
    let pc1 = seal_pre_commit_phase1::<_, _, _, Tree>(
        &config,
        &cache,
        &staged,
        &sealed,
        prover_id,
        SectorId::from(sector_id),
        ticket,
        std::slice::from_ref(&piece),
    )
    .unwrap();
    let pc2 = seal_pre_commit_phase2(&config, pc1, &cache, &sealed).unwrap();
    let c1 = seal_commit_phase1::<_, Tree>(
        &config,
        &cache,
        &sealed,
        prover_id,
        SectorId::from(sector_id),
        ticket,
        seed_bytes,
        pc2,
        &[piece],
    )
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let raw_json = serde_json::to_vec(&c1).unwrap();
    Sector { proof, c1, raw_json, prover_id, sector_id }
}

pub fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("filecoin-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The 2 KiB V1_1 sector every test of a binary shares.
pub fn sector() -> &'static Sector {
    static S: OnceLock<Sector> = OnceLock::new();
    S.get_or_init(|| seal(proof(), 1))
}

/// The PoRep circuit, compiled once per test binary.
pub fn circuit() -> &'static PoRepCircuit {
    static C: OnceLock<PoRepCircuit> = OnceLock::new();
    C.get_or_init(|| PoRepCircuit::compile(proof()).expect("the blank circuit records"))
}

/// The parameter file (and .vk), made by g16's setup from the seed when missing and written
/// as bellperson's setup writes them, under the names filecoin-proofs reads. (storage-proofs'
/// own setup, which benches/filecoin-harness runs, takes ~12 min and 5 GB on two cores; g16's
/// a few minutes. bellperson's reader and prover take g16's file, as its tests show.)
pub fn params_file() -> PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let dir = params_dir();
        let (params, vk) = (circuit().params_file_name().unwrap(), circuit().vk_file_name().unwrap());
        let path = dir.join(&params);
        if !path.exists() || !dir.join(&vk).exists() {
            eprintln!(
                "making the 2 KiB PoRep parameters with g16's setup from seed {PARAMS_SEED} into {}",
                dir.display()
            );
            let started = std::time::Instant::now();
            let compiled = circuit().compiled();
            let mut rng = ChaCha20Rng::seed_from_u64(PARAMS_SEED);
            let key = setup::generate_compiled(compiled, &mut rng, &CpuBackend::new(), &Timeline::disabled())
                .expect("g16's setup of the PoRep circuit");
            circuit().write_params(&key, &dir).expect("the parameter files written");
            eprintln!("parameters made in {:.0} s", started.elapsed().as_secs_f64());
        }
        path
    })
    .clone()
}
