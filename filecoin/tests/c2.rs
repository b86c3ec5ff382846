//! Filecoin PoRep C2 by g16 on a real 2 KiB sector: the C1 output as lotus writes it, read by
//! g16; the parameter file filecoin-proofs reads, read by g16 with every point checked (see
//! `key_on`); the partition proven on g16's engine. For the same (r, s) the proof equals
//! bellperson's `create_proof` byte for byte, and filecoin-proofs' `verify_seal` accepts g16's
//! C2 output (with (r, s) fixed, and drawn from the OS as in production).
//!
//! GPU backends prove the same circuit (2^22) in `gpu` below; on a software adapter such as
//! lavapipe one 2^22 proof takes longer than CI's whole budget, so those tests are `#[ignore]`d
//! here and run on the GPU machine (`benches/device.sh filecoin`).

mod common;

use bellperson::groth16::{create_proof, Proof as BellpersonProof};
use blstrs::Bls12;
use common::{circuit, params_dir, params_file, proof, sector, Tree};
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::{as_safe_commitment, DefaultPieceDomain, DefaultPieceHasher};
use g16::backend::{Backend, CpuBackend};
use g16::engine::{Engine, EngineConfig, EngineDevice};
use g16::prover::{OnBackend, Randomness};
use g16::trust::CheckedFiles;
use g16::{CheckedKey, Timeline};
use g16_bellperson::scalar::to_fr;
use g16_filecoin::{prove_on, read_c2_output, C1Output, PoRepCircuit};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::parameter_cache::read_cached_params;
use storage_proofs_porep::stacked::{self, StackedCompound, StackedDrg, Tau};

/// The parameter file read against the circuit, every point checked the first time its bytes
/// are seen (recorded by digest under target/tmp, as `g16 filecoin c2` records them): on the
/// device for a GPU backend, on the host's cores for the CPU, where the batched subgroup checks
/// take ~11 M points in about a minute on CI's two cores (one by one they took 10–15 minutes).
fn key_on<B: Backend>(backend: &B) -> CheckedKey {
    let decoded = circuit().read_params(&params_dir()).expect("g16 reads the parameter file");
    let files = CheckedFiles::new(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("checked"));
    let checker = OnBackend(backend);
    let digest = decoded.digest();
    let (checks, how) = files.checks(&digest, &checker);
    let started = std::time::Instant::now();
    let key = decoded.check(checks, circuit().compiled()).expect("every point of the parameters checks");
    eprintln!("parameters checked ({how:?}) in {:.1} s", started.elapsed().as_secs_f64());
    files.record(&digest).unwrap();
    key
}

/// bellperson's proof of the sector's partition for (r, s): the circuit filecoin-proofs' C2
/// builds, proven by `create_proof` with the parameters as filecoin-proofs maps them.
fn bellperson_proof(r: blstrs::Scalar, s: blstrs::Scalar) -> Vec<u8> {
    let c1 = &sector().c1;
    let params = read_cached_params(&params_file()).expect("bellperson maps the parameter file");
    let public = storage_proofs_porep::stacked::PublicParams::<Tree>::clone(&public_params());
    let inputs = stacked::PublicInputs {
        replica_id: c1.replica_id,
        tau: Some(Tau {
            comm_d: DefaultPieceDomain::try_from_bytes(&c1.comm_d).unwrap(),
            comm_r: as_safe_commitment::<<<Tree as storage_proofs_core::merkle::MerkleTreeTrait>::Hasher as Hasher>::Domain, _>(&c1.comm_r, "comm_r").unwrap(),
        }),
        k: None,
        seed: Some(c1.seed),
    };
    let circuit = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::circuit(
        &inputs,
        (),
        &c1.vanilla_proofs[0],
        &public,
        Some(0),
    )
    .unwrap();
    let proof: BellpersonProof<Bls12> = create_proof(circuit, &params, r, s).expect("bellperson proves");
    let mut bytes = Vec::new();
    proof.write(&mut bytes).unwrap();
    bytes
}

fn public_params() -> stacked::PublicParams<Tree> {
    let config = proof().porep_config();
    let setup = storage_proofs_core::compound_proof::SetupParams {
        vanilla_params: filecoin_proofs::parameters::setup_params(&config).unwrap(),
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    };
    <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::setup(&setup)
        .unwrap()
        .vanilla_params
}

/// An engine over one device, the PoRep circuit's key resident on it.
fn engine_on<B: Backend + 'static>(backend: B, key: CheckedKey, circuit: &PoRepCircuit) -> Engine<B> {
    let tl = Timeline::disabled();
    let device = EngineDevice::prepare_compiled("dev0", backend, &key, circuit.compiled(), &tl).expect("the key goes to the device");
    Engine::start(vec![device], EngineConfig::default(), &tl).expect("the engine starts")
}

/// The whole check on one backend: g16's C2 of the lotus-format C1 output, bit-exact with
/// bellperson for a fixed (r, s) and accepted by verify_seal, then once more with (r, s) from
/// the OS, accepted too.
fn c2_equals_bellperson_and_verifies<B: Backend + 'static>(backend: B) {
    params_dir();
    params_file();
    let s = sector();
    let key = key_on(&backend);
    let engine = engine_on(backend, key, circuit());
    let c1 = C1Output::from_json(&s.api_json(), None).expect("g16 reads the C1 JSON lotus writes");
    assert_eq!(c1.seal_proof(), proof());

    let mut rng = ChaCha20Rng::seed_from_u64(0xc2);
    let (r, s_) = (<blstrs::Scalar as ff::Field>::random(&mut rng), <blstrs::Scalar as ff::Field>::random(&mut rng));
    let fixed = move |_: usize| Randomness::fixed_for_tests(to_fr(&r), to_fr(&s_));
    let partitions = c1.partitions(circuit()).unwrap();
    let ours = prove_on(&engine, None, partitions, Some(&fixed)).expect("g16 proves the C2");
    assert_eq!(ours.len(), 192);
    let theirs = bellperson_proof(r, s_);
    assert_eq!(ours, theirs, "g16's C2 proof differs from bellperson's for the same (r, s)");
    let c1 = s.c1_output();
    assert!(c1.verify_seal(s.prover_id, s.sector_id, &ours).unwrap(), "verify_seal rejects g16's C2 output");

    // Production: (r, s) from the OS; the proof differs from the first and still verifies.
    let fresh = prove_on(&engine, None, s.c1_output().partitions(circuit()).unwrap(), None).unwrap();
    assert_ne!(fresh, ours);
    assert!(c1.verify_seal(s.prover_id, s.sector_id, &fresh).unwrap(), "verify_seal rejects g16's C2 output");
    // Another sector's ids: verify_seal refuses, so the acceptance above means something.
    assert!(!c1.verify_seal(s.prover_id, s.sector_id ^ 1, &fresh).unwrap_or(false));
    assert_eq!(read_c2_output(&fresh, 1).unwrap().len(), 1);
    engine.shutdown();
}

#[test]
fn cpu_c2_equals_bellperson_and_verify_seal_accepts_it() {
    c2_equals_bellperson_and_verifies(CpuBackend::new());
}

/// The circuit g16 records from the blank circuit has the 2 KiB partition's size that
/// filecoin-proofs' measurements say, and the parameter file (g16's setup of it) reads against
/// it. That it is the very circuit filecoin-proofs proves is the C2 test's: bellperson
/// synthesizes its own and proves with the same file, byte for byte what g16 proves.
#[test]
fn the_recorded_circuit_is_the_parameters_circuit() {
    params_dir();
    let c = circuit().compiled();
    assert_eq!(c.num_instance(), 40, "public inputs with ONE");
    assert_eq!(c.num_constraints(), 2_687_921, "constraints (the 40 input rows follow them)");
    assert_eq!(c.num_variables(), 40 + 2_685_673);
    assert_eq!(c.domain_size(), 1 << 22);
    params_file();
    circuit().read_params(&params_dir()).expect("counts agree with the parameter file");
}

#[cfg(any(feature = "cuda", feature = "wgpu"))]
mod gpu {
    use super::*;
    use g16::backend::conformance::open_or_skip;
    use g16::BackendKind;

    fn settings() -> g16::settings::Settings {
        g16::settings::Settings {
            cache_dir: Some(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("g16-cache")),
            ..Default::default()
        }
    }

    #[cfg(feature = "cuda")]
    #[test]
    #[ignore = "a 2^22 proof: for a hardware GPU (benches/device.sh filecoin), not lavapipe on CI"]
    fn cuda_c2_equals_bellperson_and_verify_seal_accepts_it() {
        let Some(b) = open_or_skip("cuda", "G16_REQUIRE_CUDA", g16::backends::open(BackendKind::Cuda, &settings())) else {
            return;
        };
        c2_equals_bellperson_and_verifies(b);
    }

    #[cfg(feature = "wgpu")]
    #[test]
    #[ignore = "a 2^22 proof: for a hardware GPU (benches/device.sh filecoin), not lavapipe on CI"]
    fn wgpu_c2_equals_bellperson_and_verify_seal_accepts_it() {
        let Some(b) = open_or_skip("wgpu", "G16_REQUIRE_WGPU", g16::backends::open(BackendKind::Wgpu, &settings())) else {
            return;
        };
        c2_equals_bellperson_and_verifies(b);
    }
}
