//! g16 keys written as bellperson `.params` files: bellperson's own file comes back byte for
//! byte, and a key g16's setup made for a bellpepper circuit is read by bellperson, which
//! proves with it exactly what g16 proves.

mod common;

use ark_ec::AffineRepr;
use bellperson::groth16::Parameters;
use blstrs::Bls12;
use common::circuits::MiMC;
use common::{mimc, parts, proofs_equal_bellperson, sha, Fixture};
use g16::backend::CpuBackend;
use g16::compiled::Qap;
use g16::prover::{setup, CheckedKey, PointChecks};
use g16::{G1Affine, Timeline};
use g16_bellperson::{compile, write_params, write_vk, BellpersonError, DecodedParams};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn read(fixture: &Fixture) -> CheckedKey {
    DecodedParams::from_bytes(&fixture.params_bytes, &fixture.compiled)
        .and_then(|d| d.check(PointChecks::Full, &fixture.compiled))
        .expect("bellperson's file reads")
}

#[test]
fn bellpersons_files_are_written_back_byte_for_byte() {
    for fixture in [mimc(), sha(), parts()] {
        let key = read(fixture);
        let mut bytes = Vec::new();
        write_params(&key, &fixture.compiled, &mut bytes).expect("writes");
        assert!(bytes == fixture.params_bytes, "{}: the written file differs from bellperson's", fixture.name);
        let (mut vk, mut theirs) = (Vec::new(), Vec::new());
        write_vk(key.proving_key(), &mut vk).unwrap();
        fixture.params.vk.write(&mut theirs).unwrap();
        assert!(vk == theirs, "{}: the written .vk differs from bellperson's", fixture.name);
    }
}

#[test]
fn a_key_from_g16s_setup_proves_in_bellperson_as_in_g16() {
    let backend = CpuBackend::new();
    let compiled = &mimc().compiled;
    let key = setup::generate_compiled(compiled, &mut ChaCha20Rng::seed_from_u64(9), &backend, &Timeline::disabled())
        .expect("g16's setup");
    let mut bytes = Vec::new();
    write_params(&key, compiled, &mut bytes).expect("writes");
    // bellperson's reader with its point checks on.
    let params = Parameters::<Bls12>::read(&bytes[..], true).expect("bellperson reads g16's file");
    let fixture = Fixture { name: "mimc", params, params_bytes: bytes, compiled: compiled.clone() };
    proofs_equal_bellperson(&backend, &fixture, &[11, 12]);
}

#[test]
fn a_key_written_for_another_circuit_is_refused() {
    let key = read(mimc());
    let other = compile(MiMC { xl: None, xr: None, constants: MiMC::constants(321) }).unwrap();
    let written = write_params(&key, &other, &mut Vec::new());
    assert!(matches!(written, Err(BellpersonError::Shape(_))), "{:?}", written.map(|_| ()));

    // A point where the circuit's B has no coefficient: the file would drop it.
    let mut pk = key.proving_key().clone();
    let absent = pk.b_g1_query.iter().position(|p| p.is_zero()).expect("MiMC has variables outside B");
    pk.b_g1_query[absent] = G1Affine::generator();
    let key = CheckedKey::with_checks(pk, Qap::Libsnark, PointChecks::Full).unwrap();
    match write_params(&key, &mimc().compiled, &mut Vec::new()) {
        Err(BellpersonError::NotThisCircuit(why)) => {
            assert!(why.contains(&format!("variable {absent}")) && why.contains("b_g1"), "{why}")
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}
