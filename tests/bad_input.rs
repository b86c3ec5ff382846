//! Bad input gets a typed error with a clear message — never a panic, never a proof.

mod common;

use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{Field, UniformRand};
use ark_serialize::CanonicalSerialize;
use common::{fresh_rng, setup, CubicCircuit};
use g16::backend::{BackendError, CpuBackend};
use g16::circuits::{BuiltinCircuit, CircuitError, CircuitKind};
use g16::prover::synthesis::domain_for;
use g16::compiled::ShapeMismatch;
use g16::prover::{verify, ProveError, Prover, Randomness};
use g16::prover::{CheckedKey, KeyError, PointProblem};
use g16::sample::g1_outside_subgroup;
use g16::timeline::Timeline;
use g16::{Fr, G1Affine, G2Affine, ProvingKey};

fn checked(pk: &ProvingKey) -> CheckedKey {
    CheckedKey::new(pk.clone()).expect("a valid key")
}

fn read_proving_key(bytes: &[u8]) -> Result<ProvingKey, KeyError> {
    CheckedKey::read(bytes).map(CheckedKey::into_inner)
}

fn serialize(pk: &ProvingKey, compressed: bool) -> Vec<u8> {
    let mut v = Vec::new();
    if compressed {
        pk.serialize_compressed(&mut v).unwrap();
    } else {
        pk.serialize_uncompressed(&mut v).unwrap();
    }
    v
}

fn small_key() -> (ProvingKey, CubicCircuit) {
    let mut rng = fresh_rng("small_key");
    let circuit = CubicCircuit { x: Fr::rand(&mut rng), w: Fr::rand(&mut rng), cheat: false };
    (setup(circuit.clone(), &mut rng).into_inner(), circuit)
}

#[test]
fn keys_round_trip_compressed_and_uncompressed() {
    let (pk, _) = small_key();
    for compressed in [true, false] {
        let back = read_proving_key(&serialize(&pk, compressed)).expect("valid key");
        assert_eq!(back, pk);
    }
}

#[test]
fn truncated_keys_are_refused() {
    let (pk, _) = small_key();
    for compressed in [true, false] {
        let bytes = serialize(&pk, compressed);
        for cut in [1, 40, bytes.len() / 2, bytes.len() - 1] {
            match read_proving_key(&bytes[..cut]) {
                Err(KeyError::Truncated { len, .. }) => assert_eq!(len, cut),
                other => panic!("cut at {cut}: expected Truncated, got {other:?}"),
            }
        }
    }
    assert!(matches!(read_proving_key(&[]), Err(KeyError::Truncated { len: 0, .. })));
}

#[test]
fn garbage_and_trailing_bytes_are_refused() {
    let (pk, _) = small_key();
    let mut bytes = serialize(&pk, true);
    bytes.extend_from_slice(b"extra");
    assert!(matches!(read_proving_key(&bytes), Err(KeyError::TrailingBytes { extra: 5, .. })));
    // Random bytes: some error, and a message that says what is wrong.
    let mut rng = fresh_rng("garbage");
    for _ in 0..20 {
        let len = 1 + (u64::rand(&mut rng) % 4000) as usize;
        let junk: Vec<u8> = (0..len).map(|_| u8::rand(&mut rng)).collect();
        let err = read_proving_key(&junk).expect_err("random bytes are not a key");
        assert!(!err.to_string().is_empty());
    }
    // A coordinate ≥ p in an uncompressed point.
    let mut bytes = serialize(&pk, false);
    // 0x1f keeps the flag bits clear (uncompressed, finite) and makes x > p ≈ 0x1a01….
    bytes[0] = 0x1f;
    bytes[1..48].iter_mut().for_each(|b| *b = 0xff);
    let err = read_proving_key(&bytes);
    assert!(matches!(err, Err(KeyError::Malformed { .. })), "coordinate out of range: {err:?}");
}

#[test]
fn points_off_the_curve_are_named() {
    let (pk, _) = small_key();
    let mut bad = pk.clone();
    let p = bad.a_query[2];
    bad.a_query[2] = G1Affine::new_unchecked(p.x, p.y + ark_bls12_381::Fq::ONE);
    match read_proving_key(&serialize(&bad, false)) {
        Err(KeyError::InvalidPoint { query: "a_query", index: 2, problem: PointProblem::NotOnCurve }) => {}
        other => panic!("expected a_query[2] off the curve, got {other:?}"),
    }
    let mut bad = pk.clone();
    let q = bad.b_g2_query[1];
    bad.b_g2_query[1] = G2Affine::new_unchecked(q.x, q.y + ark_bls12_381::Fq2::ONE);
    let err = read_proving_key(&serialize(&bad, false)).expect_err("off-curve G2");
    assert!(
        matches!(err, KeyError::InvalidPoint { query: "b_g2_query", index: 1, problem: PointProblem::NotOnCurve }),
        "{err:?}"
    );
    assert!(err.to_string().contains("b_g2_query[1] is not on the curve"), "{err}");
}

#[test]
fn points_outside_the_subgroup_are_named() {
    let (pk, _) = small_key();
    let outsider = g1_outside_subgroup();
    for compressed in [true, false] {
        let mut bad = pk.clone();
        let last = bad.h_query.len() - 1;
        bad.h_query[last] = outsider;
        match read_proving_key(&serialize(&bad, compressed)) {
            Err(KeyError::InvalidPoint { query: "h_query", index, problem: PointProblem::NotInSubgroup }) => {
                assert_eq!(index, last)
            }
            other => panic!("expected h_query[{last}] outside the subgroup, got {other:?}"),
        }
    }
}

#[test]
fn inconsistent_key_lengths_are_refused() {
    let (pk, _) = small_key();
    let mut bad = pk.clone();
    bad.b_g1_query.pop();
    assert!(matches!(read_proving_key(&serialize(&bad, true)), Err(KeyError::Inconsistent(_))));
    let mut bad = pk;
    bad.h_query.push(G1Affine::generator());
    assert!(matches!(read_proving_key(&serialize(&bad, true)), Err(KeyError::Inconsistent(_))));
}

#[test]
fn a_key_for_another_circuit_is_refused_before_proving() {
    let mut rng = fresh_rng("key_mismatch");
    let small = BuiltinCircuit::new(CircuitKind::Synthetic, 6, 1).unwrap();
    let large = BuiltinCircuit::new(CircuitKind::Synthetic, 7, 1).unwrap();
    let pk = setup(small, &mut rng);
    let cpu = CpuBackend::new();
    let prover = Prover::new(&cpu);
    let key = prover.prepare(&pk).unwrap();
    let tl = Timeline::new();
    let err = prover.prove_with(&key, large, Randomness::fixed_for_tests(Fr::rand(&mut rng), Fr::rand(&mut rng)), &tl).expect_err("mismatched key");
    assert!(matches!(err, ProveError::Shape(ShapeMismatch::Key { .. })), "{err}");
    // The device section stopped at the check: nothing was staged or computed.
    let events = tl.events();
    assert!(!events.iter().any(|e| e.name == "stage" || e.name.starts_with("msm")), "work done despite the mismatch");

    let (cubic_pk, cubic) = small_key();
    let key = prover.prepare(&checked(&cubic_pk)).unwrap();
    let other_cpu = CpuBackend::new();
    let other = Prover::new(&other_cpu);
    assert!(matches!(other.prove_with(&key, cubic, Randomness::fixed_for_tests(Fr::ONE, Fr::ONE), &tl), Err(ProveError::KeyForAnotherBackend)));
}

#[test]
fn an_unsatisfied_witness_fails_before_any_device_work() {
    let (pk, circuit) = small_key();
    let cpu = CpuBackend::new();
    let prover = Prover::new(&cpu);
    let key = prover.prepare(&checked(&pk)).unwrap();
    let tl = Timeline::new();
    let cheat = CubicCircuit { cheat: true, ..circuit };
    match prover.prove_with(&key, cheat, Randomness::fixed_for_tests(Fr::ONE, Fr::ONE), &tl) {
        Err(ProveError::Unsatisfied { row, .. }) => assert!(row < 4),
        other => panic!("expected Unsatisfied, got {other:?}"),
    }
    assert!(!tl.events().iter().any(|e| e.name == "device"), "the device section must not start");
}

#[test]
fn verify_checks_the_public_input_count_and_values() {
    let (pk, circuit) = small_key();
    let cpu = CpuBackend::new();
    let prover = Prover::new(&cpu);
    let key = prover.prepare(&checked(&pk)).unwrap();
    let proof = prover.prove_with(&key, circuit.clone(), Randomness::fixed_for_tests(Fr::from(3u64), Fr::from(4u64)), &Timeline::disabled()).unwrap();
    let mut inputs = circuit.public_inputs();
    assert!(verify(&key, &proof, &inputs).unwrap());
    inputs[1] += Fr::ONE;
    assert!(!verify(&key, &proof, &inputs).unwrap(), "a wrong public input must not verify");
    assert!(matches!(verify(&key, &proof, &inputs[..1]), Err(ProveError::PublicInputCount { expected: 2, got: 1 })));
    let tampered = g16::Proof { a: (proof.a + G1Affine::generator()).into_affine(), ..proof };
    assert!(!verify(&key, &tampered, &circuit.public_inputs()).unwrap());
}

#[test]
fn sizes_beyond_the_domain_or_circuit_are_errors() {
    let max = <Fr as ark_ff::FftField>::TWO_ADICITY;
    assert!(domain_for(1 << 20).is_ok());
    assert!(matches!(domain_for((1usize << max) + 1), Err(ProveError::DomainTooLarge { .. })));
    for kind in CircuitKind::ALL {
        assert!(matches!(BuiltinCircuit::new(kind, kind.max_size() + 1, 0), Err(CircuitError::SizeOutOfRange { .. })));
        if let Some(below) = kind.min_size().checked_sub(1) {
            assert!(matches!(BuiltinCircuit::new(kind, below, 0), Err(CircuitError::SizeOutOfRange { .. })));
        }
    }
}

#[test]
fn backend_misuse_is_typed() {
    use g16::backend::{Backend, NttKind, Scalars};
    let cpu = CpuBackend::new();
    let mut odd = cpu.upload_scalars(&[Fr::ONE; 12]).unwrap();
    assert!(matches!(cpu.ntt(&mut odd, NttKind::Inverse), Err(BackendError::NttSize { len: 12, .. })));
    let bases = cpu.upload_g1_bases(&[G1Affine::generator(); 4]).unwrap();
    assert!(matches!(cpu.msm_g1(&bases, Scalars::Host(&[Fr::ONE; 5])), Err(BackendError::LengthMismatch { .. })));
}

#[test]
fn a_key_with_an_identity_in_its_trapdoor_points_is_refused() {
    let (pk, _) = small_key();
    let zero1 = G1Affine::zero();
    let zero2 = G2Affine::zero();
    type Edit = fn(&mut ProvingKey, G1Affine, G2Affine);
    let edits: [(&str, Edit); 6] = [
        ("alpha_g1", |k, z, _| k.vk.alpha_g1 = z),
        ("beta_g1", |k, z, _| k.beta_g1 = z),
        ("delta_g1", |k, z, _| k.delta_g1 = z),
        ("beta_g2", |k, _, z| k.vk.beta_g2 = z),
        ("gamma_g2", |k, _, z| k.vk.gamma_g2 = z),
        ("delta_g2", |k, _, z| k.vk.delta_g2 = z),
    ];
    for (name, edit) in edits {
        let mut bad = pk.clone();
        edit(&mut bad, zero1, zero2);
        for compressed in [true, false] {
            match read_proving_key(&serialize(&bad, compressed)) {
                Err(KeyError::InvalidPoint { query, problem: PointProblem::Identity, .. }) => assert_eq!(query, name),
                other => panic!("{name} the identity: expected a refusal, got {other:?}"),
            }
        }
    }
    // A public input's point the identity: that input would verify with any value.
    for index in 0..pk.vk.gamma_abc_g1.len() {
        let mut bad = pk.clone();
        bad.vk.gamma_abc_g1[index] = zero1;
        match read_proving_key(&serialize(&bad, false)) {
            Err(KeyError::InvalidPoint { query: "gamma_abc_g1", index: i, problem: PointProblem::InputIdentity }) => {
                assert_eq!(i, index)
            }
            other => panic!("gamma_abc_g1[{index}] the identity: expected a refusal, got {other:?}"),
        }
    }
    // A key of identities everywhere: every point is on the curve and in the subgroup, and it
    // would verify any proof; it is refused.
    let mut all = pk.clone();
    all.vk.alpha_g1 = zero1;
    all.beta_g1 = zero1;
    all.delta_g1 = zero1;
    all.vk.beta_g2 = zero2;
    all.vk.gamma_g2 = zero2;
    all.vk.delta_g2 = zero2;
    all.vk.gamma_abc_g1.iter_mut().for_each(|p| *p = zero1);
    for q in [&mut all.a_query, &mut all.b_g1_query, &mut all.h_query, &mut all.l_query] {
        q.iter_mut().for_each(|p| *p = zero1);
    }
    all.b_g2_query.iter_mut().for_each(|p| *p = zero2);
    let err = read_proving_key(&serialize(&all, false)).expect_err("an all-identity key");
    assert!(err.to_string().contains("identity"), "{err}");
}
