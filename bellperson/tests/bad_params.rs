//! Bad bellperson files and witnesses: each a typed error that says what, never a key or a proof.

mod common;

use ark_ec::AffineRepr;
use ark_ff::{Field, UniformRand};
use ark_serialize::CanonicalSerialize;
use bellpepper_core::Circuit;
use common::circuits::MiMC;
use common::{mimc, parts, Instance};
use g16::backend::CpuBackend;
use g16::prover::{KeyError, PointChecks, PointProblem, ProveError, Randomness};
use g16::{Fr, G1Affine, Prover, Timeline};
use g16_bellperson::{compile, proof, read_vk, BellpersonError, DecodedParams};
use proptest::prelude::*;

/// Where the h query's points start in a `.params` file of `inputs` public inputs (ONE included).
fn h_offset(inputs: usize) -> usize {
    let (g1, g2) = (96, 192);
    3 * g1 + 3 * g2 + 4 + inputs * g1 + 4
}

fn read(bytes: &[u8]) -> Result<g16::CheckedKey, BellpersonError> {
    let circuit = &mimc().compiled;
    DecodedParams::from_bytes(bytes, circuit)?.check(PointChecks::Full, circuit)
}

#[test]
fn the_untouched_file_reads_and_its_vk_is_bellpersons() {
    let f = mimc();
    let key = read(&f.params_bytes).expect("reads");
    let mut vk_bytes = Vec::new();
    f.params.vk.write(&mut vk_bytes).unwrap();
    assert_eq!(&read_vk(&vk_bytes).expect("vk reads"), key.verifying_key());
    assert_eq!(&vk_bytes[..], &f.params_bytes[..vk_bytes.len()], "the vk is the file's head");
}

#[test]
fn a_truncated_file_is_refused() {
    let bytes = &mimc().params_bytes;
    for len in [0, 1, 95, 96 * 3, h_offset(2) - 2, h_offset(2) + 1000, bytes.len() - 1] {
        match read(&bytes[..len]) {
            Err(BellpersonError::Key(KeyError::Truncated { .. })) => {}
            other => panic!("truncated at {len}: {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn trailing_bytes_are_refused() {
    let mut bytes = mimc().params_bytes.clone();
    bytes.extend_from_slice(&[0; 5]);
    assert!(matches!(read(&bytes), Err(BellpersonError::Key(KeyError::TrailingBytes { extra: 5, .. }))));
}

#[test]
fn a_file_for_another_circuit_is_refused_by_its_counts() {
    // Parameters of MiMC's 322 rounds against the circuit of 321.
    let other = compile(MiMC { xl: None, xr: None, constants: MiMC::constants(321) }).unwrap();
    match DecodedParams::from_bytes(&mimc().params_bytes, &other) {
        // The same domain; two aux variables fewer (a square and a round's output).
        Err(BellpersonError::Counts { what: "l", file: 645, circuit: 643 }) => {}
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("another circuit's parameters were read"),
    }
    // And a circuit of other inputs stops at the first length, ic.
    match DecodedParams::from_bytes(&mimc().params_bytes, &parts().compiled) {
        Err(BellpersonError::Counts { what: "ic", file: 2, .. }) => {}
        other => panic!("wrong result: {:?}", other.err()),
    }
}

#[test]
fn a_point_off_the_curve_is_named() {
    let mut bytes = mimc().params_bytes.clone();
    let at = h_offset(2) + 3 * 96 + 95; // the last byte of h[3]'s y
    bytes[at] ^= 1;
    match read(&bytes) {
        Err(BellpersonError::Key(KeyError::InvalidPoint { query: "h_query", index: 3, problem: PointProblem::NotOnCurve })) => {}
        other => panic!("wrong result: {:?}", other.err()),
    }
}

/// A point of the curve outside the prime-order subgroup (the curve's cofactor is large, so the
/// first x whose y exists gives one).
fn outside_subgroup() -> G1Affine {
    let mut x = ark_bls12_381::Fq::from(1u64);
    loop {
        if let Some(y) = (x * x * x + ark_bls12_381::Fq::from(4u64)).sqrt() {
            let p = G1Affine::new_unchecked(x, y);
            if p.is_on_curve() && !p.is_in_correct_subgroup_assuming_on_curve() {
                return p;
            }
        }
        x += ark_bls12_381::Fq::from(1u64);
    }
}

#[test]
fn a_point_outside_the_subgroup_is_named() {
    let mut bytes = mimc().params_bytes.clone();
    let at = h_offset(2) + 5 * 96;
    let mut encoded = Vec::new();
    outside_subgroup().serialize_uncompressed(&mut encoded).unwrap();
    bytes[at..at + 96].copy_from_slice(&encoded);
    match read(&bytes) {
        Err(BellpersonError::Key(KeyError::InvalidPoint { query: "h_query", index: 5, problem: PointProblem::NotInSubgroup })) => {}
        other => panic!("wrong result: {:?}", other.err()),
    }
}

#[test]
fn an_identity_alpha_or_input_point_is_refused() {
    let identity = {
        let mut e = Vec::new();
        G1Affine::zero().serialize_uncompressed(&mut e).unwrap();
        e
    };
    let mut bytes = mimc().params_bytes.clone();
    bytes[..96].copy_from_slice(&identity);
    assert!(matches!(
        read(&bytes),
        Err(BellpersonError::Key(KeyError::InvalidPoint { query: "alpha_g1", problem: PointProblem::Identity, .. }))
    ));
    let mut bytes = mimc().params_bytes.clone();
    let ic1 = 3 * 96 + 3 * 192 + 4 + 96;
    bytes[ic1..ic1 + 96].copy_from_slice(&identity);
    assert!(matches!(
        read(&bytes),
        Err(BellpersonError::Key(KeyError::InvalidPoint { query: "gamma_abc_g1", index: 1, problem: PointProblem::InputIdentity }))
    ));
    let vk_len = 3 * 96 + 3 * 192 + 4 + 2 * 96;
    assert!(matches!(
        read_vk(&bytes[..vk_len]),
        Err(BellpersonError::Key(KeyError::InvalidPoint { query: "ic", index: 1, problem: PointProblem::InputIdentity }))
    ));
}

#[test]
fn an_unsatisfied_witness_names_its_constraint_and_makes_no_proof() {
    let f = mimc();
    let key = read(&f.params_bytes).unwrap();
    let backend = CpuBackend::new();
    let prover = Prover::new(&backend);
    let (prepared, circuit) = (prover.prepare(&key).unwrap(), prover.prepare_circuit(&f.compiled).unwrap());
    let (instance, _) = Instance::of(f, 9);
    let mut z = instance.witness();
    // The square of round 10: z = [ONE, image, xl, xr, then per round (xl+c)², xl'].
    let at = 2 + 2 + 2 * 10;
    z[at] += Fr::from(1u64);
    let mut rng = rand::thread_rng();
    let randomness = Randomness::fixed_for_tests(Fr::rand(&mut rng), Fr::rand(&mut rng));
    match prover.prove_assignment_with(&prepared, &circuit, &z, randomness, &Timeline::disabled()) {
        Err(ProveError::Unsatisfied { row }) => assert_eq!(row, 2 * 10, "the first constraint of round 10"),
        other => panic!("wrong result: {:?}", other.map(|_| ())),
    }
}

#[test]
fn a_proof_of_other_length_or_off_curve_is_refused() {
    assert!(proof::from_bytes(&[0u8; 191]).is_err());
    let mut bytes = [0u8; proof::PROOF_BYTES];
    bytes[0] = 0x80 | 0x1f; // compressed, x large: not a field element or not on the curve
    bytes[1..48].fill(0xff);
    assert!(proof::from_bytes(&bytes).is_err());
}

#[test]
fn a_circuit_naming_an_unallocated_variable_is_malformed() {
    struct Bad;
    impl Circuit<g16_bellperson::Scalar> for Bad {
        fn synthesize<CS: bellpepper_core::ConstraintSystem<g16_bellperson::Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), bellpepper_core::SynthesisError> {
            let ghost = bellpepper_core::Variable::new_unchecked(bellpepper_core::Index::Aux(7));
            cs.enforce(|| "ghost", |lc| lc + ghost, |lc| lc + CS::one(), |lc| lc);
            Ok(())
        }
    }
    assert!(matches!(compile(Bad), Err(BellpersonError::Malformed(_))));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// One flipped bit anywhere: refused, or (a flag bit the encoding ignores) the same key.
    #[test]
    fn a_flipped_bit_is_refused_or_changes_nothing(at in 0usize..1 << 30, bit in 0u8..8) {
        let original = read(&mimc().params_bytes).unwrap();
        let mut bytes = mimc().params_bytes.clone();
        let at = at % bytes.len();
        bytes[at] ^= 1 << bit;
        match read(&bytes) {
            Err(_) => {}
            Ok(key) => prop_assert!(key == original, "byte {} bit {} gave another key", at, bit),
        }
    }

    /// Any prefix is refused.
    #[test]
    fn any_prefix_is_refused(len in 0usize..1 << 30) {
        let bytes = &mimc().params_bytes;
        prop_assert!(read(&bytes[..len % bytes.len()]).is_err());
    }
}
