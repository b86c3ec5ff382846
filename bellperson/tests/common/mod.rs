//! What the tests share: circuits, their bellperson parameters (made once per test binary by
//! bellperson's own setup, from a seed), and the bit-exactness check on a backend.

#![allow(dead_code)] // reason: each test binary uses part of it

pub mod circuits;

use std::sync::OnceLock;

use bellperson::groth16::{create_proof, generate_random_parameters, prepare_verifying_key, verify_proof, Parameters};
use bellpepper_core::Circuit;
use blstrs::Bls12;
use ff::Field;
use g16::backend::Backend;
use g16::compiled::CompiledCircuit;
use g16::prover::{OnBackend, PointChecks, Randomness};
use g16::{Prover, Timeline};
use g16_bellperson::scalar::to_fr;
use g16_bellperson::{compile, proof, witness, DecodedParams, Scalar};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use circuits::{MiMC, Parts, Sha256Preimage};

/// A circuit with its bellperson parameters, as bytes and as bellperson holds them, and g16's
/// compiled form of its blank (witness-free) instance.
pub struct Fixture {
    pub name: &'static str,
    pub params: Parameters<Bls12>,
    pub params_bytes: Vec<u8>,
    pub compiled: CompiledCircuit,
}

impl Fixture {
    fn make<C: Circuit<Scalar> + Clone>(name: &'static str, blank: C, seed: u64) -> Fixture {
        let compiled = compile(blank.clone()).expect("records the blank circuit");
        let params = generate_random_parameters::<Bls12, _, _>(blank, &mut ChaCha20Rng::seed_from_u64(seed))
            .expect("bellperson's setup");
        let mut params_bytes = Vec::new();
        params.write(&mut params_bytes).expect("params to bytes");
        Fixture { name, params, params_bytes, compiled }
    }
}

pub const MIMC_ROUNDS: usize = 322;
pub const SHA_BYTES: usize = 40;
pub const PARTS: usize = 6;

pub fn mimc() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| Fixture::make("mimc", MiMC { xl: None, xr: None, constants: MiMC::constants(MIMC_ROUNDS) }, 1))
}

pub fn sha() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| Fixture::make("sha256", Sha256Preimage { preimage: None, len: SHA_BYTES }, 2))
}

pub fn parts() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| Fixture::make("parts", Parts { xs: vec![None; PARTS] }, 3))
}

/// A full instance of a fixture's circuit and its public inputs (ONE excluded), from `seed`.
pub enum Instance {
    MiMC(MiMC),
    Sha(Sha256Preimage),
    Parts(Parts),
}

impl Instance {
    pub fn of(fixture: &Fixture, seed: u64) -> (Instance, Vec<Scalar>) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        match fixture.name {
            "mimc" => {
                let (xl, xr) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
                let constants = MiMC::constants(MIMC_ROUNDS);
                let image = MiMC::image(xl, xr, &constants);
                (Instance::MiMC(MiMC { xl: Some(xl), xr: Some(xr), constants }), vec![image])
            }
            "sha256" => {
                let preimage: Vec<u8> = (0..SHA_BYTES).map(|_| rand::Rng::gen(&mut rng)).collect();
                let public = Sha256Preimage::public_inputs(&preimage);
                (Instance::Sha(Sha256Preimage { preimage: Some(preimage), len: SHA_BYTES }), public)
            }
            "parts" => {
                let xs: Vec<Scalar> = (0..PARTS).map(|_| Scalar::random(&mut rng)).collect();
                let public = Parts::public_inputs(&xs);
                (Instance::Parts(Parts { xs: xs.into_iter().map(Some).collect() }), public)
            }
            other => unreachable!("no fixture {other}"),
        }
    }

    pub fn witness(&self) -> Vec<g16::Fr> {
        match self {
            Instance::MiMC(c) => witness(c.clone()),
            Instance::Sha(c) => witness(c.clone()),
            Instance::Parts(c) => witness(c.clone()),
        }
        .expect("witness")
    }

    /// bellperson's proof for (r, s), as its bytes.
    pub fn bellperson_proof(&self, params: &Parameters<Bls12>, r: Scalar, s: Scalar) -> Vec<u8> {
        let proof = match self {
            Instance::MiMC(c) => create_proof(c.clone(), params, r, s),
            Instance::Sha(c) => create_proof(c.clone(), params, r, s),
            Instance::Parts(c) => create_proof(c.clone(), params, r, s),
        }
        .expect("bellperson proves");
        let mut bytes = Vec::new();
        proof.write(&mut bytes).expect("proof to bytes");
        bytes
    }
}

/// The fixture's key read from its `.params` bytes (subgroup checks on the backend), then, for
/// instances from several seeds and fresh (r, s): g16's proof on `backend` equals bellperson's
/// byte for byte, bellperson's verifier accepts it, and refuses it for another input.
pub fn proofs_equal_bellperson<B: Backend>(backend: &B, fixture: &Fixture, seeds: &[u64]) {
    let name = fixture.name;
    let key = DecodedParams::from_bytes(&fixture.params_bytes, &fixture.compiled)
        .and_then(|d| d.check(PointChecks::FullOn(&OnBackend(backend)), &fixture.compiled))
        .unwrap_or_else(|e| panic!("{name}: params refused: {e}"));
    let prover = Prover::new(backend);
    let prepared = prover.prepare(&key).expect("prepare key");
    let circuit = prover.prepare_circuit(&fixture.compiled).expect("prepare circuit");
    let pvk = prepare_verifying_key(&fixture.params.vk);
    for &seed in seeds {
        let (instance, public) = Instance::of(fixture, seed);
        let z = instance.witness();
        let public_fr: Vec<g16::Fr> = public.iter().map(to_fr).collect();
        assert_eq!(&z[1..fixture.compiled.num_instance()], &public_fr[..], "{name}: the witness's public inputs");
        let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5eed);
        let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let ours = prover
            .prove_assignment_with(&prepared, &circuit, &z, Randomness::fixed_for_tests(to_fr(&r), to_fr(&s)), &Timeline::disabled())
            .unwrap_or_else(|e| panic!("{name}: g16 proves: {e}"));
        let ours = proof::to_bytes(&ours);
        let theirs = instance.bellperson_proof(&fixture.params, r, s);
        assert_eq!(ours.to_vec(), theirs, "{name}, seed {seed}: g16's proof differs from bellperson's");
        let read = bellperson::groth16::Proof::<Bls12>::read(&ours[..]).expect("bellperson reads g16's proof");
        assert!(verify_proof(&pvk, &read, &public).expect("verify"), "{name}: bellperson rejects g16's proof");
        let mut wrong = public.clone();
        wrong[0] += Scalar::ONE;
        assert!(!verify_proof(&pvk, &read, &wrong).expect("verify"), "{name}: a proof verified for a false input");
        let back = proof::from_bytes(&ours).expect("reads back");
        assert!(g16::prover::verify(&prepared, &back, &public_fr).expect("g16 verifies"), "{name}: g16's verifier");
    }
}
