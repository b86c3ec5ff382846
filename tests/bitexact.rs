//! The prover against arkworks: for the same (r, s), the same proof bit for bit (as points and
//! as serialized bytes), and arkworks' verifier accepts it — for every built-in circuit at
//! several sizes and a user circuit with several public inputs.

mod common;

use ark_ff::{UniformRand, Zero};
use ark_groth16::{prepare_verifying_key, r1cs_to_qap::LibsnarkReduction, Groth16};
use ark_relations::gr1cs::ConstraintSynthesizer;
use ark_serialize::CanonicalSerialize;
use common::{fresh_rng, setup, CubicCircuit};
use g16::backend::CpuBackend;
use g16::circuits::{BuiltinCircuit, CircuitKind};
use g16::prover::{synthesize, verify, Prover, Randomness};
use g16::timeline::{Layer, Report, Timeline};
use g16::{CheckedKey, Curve, Fr, Proof};

fn bytes(p: &Proof) -> Vec<u8> {
    let mut v = Vec::new();
    p.serialize_compressed(&mut v).expect("serialize");
    v
}

/// Proves `circuit` with g16 (CPU backend) and with arkworks for each (r, s), and compares.
fn assert_bit_exact<C>(checked: &CheckedKey, circuit: &C, public_inputs: &[Fr], randomness: &[(Fr, Fr)])
where
    C: ConstraintSynthesizer<Fr> + Clone,
{
    let cpu = CpuBackend::new();
    let prover = Prover::new(&cpu);
    let key = prover.prepare(checked).expect("prepare");
    let pk = checked.proving_key();
    let pvk = prepare_verifying_key(&pk.vk);
    for &(r, s) in randomness {
        let ours = prover
            .prove_with(&key, circuit.clone(), Randomness::fixed_for_tests(r, s), &Timeline::disabled())
            .expect("g16 prove");
        let theirs = Groth16::<Curve, LibsnarkReduction>::create_proof_with_reduction(circuit.clone(), pk, r, s)
            .expect("arkworks prove");
        assert_eq!(ours, theirs, "proof differs from arkworks for r={r}, s={s}");
        assert_eq!(bytes(&ours), bytes(&theirs));
        assert!(
            Groth16::<Curve>::verify_proof(&pvk, &ours, public_inputs).expect("verify"),
            "arkworks rejects the proof"
        );
        assert!(verify(&key, &ours, public_inputs).expect("verify"));
    }
}

/// The default API draws (r, s) for each proof: two proofs of one witness differ (so neither
/// reveals that they prove the same statement with the same witness), and both verify, on the
/// direct and the compiled path.
#[test]
fn proofs_of_one_witness_differ_and_both_verify() {
    let mut rng = fresh_rng("zero-knowledge");
    let circuit = BuiltinCircuit::new(CircuitKind::Synthetic, 8, u64::rand(&mut rng)).expect("circuit");
    let checked = setup(circuit.clone(), &mut rng);
    let cpu = CpuBackend::new();
    let prover = Prover::new(&cpu);
    let key = prover.prepare(&checked).expect("prepare");
    let inputs = circuit.public_inputs();
    let mut os = rand::rngs::OsRng;
    let first = prover.prove(&key, circuit.clone(), &mut os, &Timeline::disabled()).expect("prove");
    let second = prover.prove(&key, circuit.clone(), &mut os, &Timeline::disabled()).expect("prove");
    assert_ne!(first, second, "two proofs of one witness are equal: (r, s) was not drawn afresh");
    assert!(verify(&key, &first, &inputs).unwrap() && verify(&key, &second, &inputs).unwrap());
    let compiled = prover.prepare_circuit(&g16::compiled::compile(circuit.clone()).unwrap()).expect("prepare");
    let z = g16::compiled::witness(circuit).unwrap();
    let a = prover.prove_assignment(&key, &compiled, &z, &mut os, &Timeline::disabled()).expect("prove z");
    let b = prover.prove_assignment(&key, &compiled, &z, &mut os, &Timeline::disabled()).expect("prove z");
    assert!(a != b && a != first, "proofs from the assignment repeat");
    assert!(verify(&key, &a, &inputs).unwrap() && verify(&key, &b, &inputs).unwrap());
}

fn builtin(kind: CircuitKind, sizes: &[u32]) {
    let mut rng = fresh_rng(kind.name());
    for &size in sizes {
        let seed = u64::rand(&mut rng);
        let circuit = BuiltinCircuit::new(kind, size, seed).expect("circuit");
        let pk = setup(circuit.clone(), &mut rng);
        let inputs = circuit.public_inputs();
        assert!(!inputs.is_empty(), "{kind} has public inputs");
        let randomness = [(Fr::rand(&mut rng), Fr::rand(&mut rng)), (Fr::rand(&mut rng), Fr::rand(&mut rng))];
        assert_bit_exact(&pk, &circuit, &inputs, &randomness);
        // Another witness (seed) under the same key.
        let other = BuiltinCircuit::new(kind, size, seed.wrapping_add(1)).expect("circuit");
        assert_bit_exact(&pk, &other, &other.public_inputs(), &[(Fr::rand(&mut rng), Fr::rand(&mut rng))]);
    }
}

#[test]
fn synthetic_is_bit_exact() {
    let min = CircuitKind::Synthetic.min_size();
    builtin(CircuitKind::Synthetic, &[min, 8, 11]);
}

#[test]
fn poseidon_is_bit_exact() {
    let min = CircuitKind::Poseidon.min_size();
    builtin(CircuitKind::Poseidon, &[min, min + 1, min + 3]);
}

#[test]
fn sha256_is_bit_exact() {
    let min = CircuitKind::Sha256.min_size();
    builtin(CircuitKind::Sha256, &[min, min + 1]);
}

#[test]
fn user_circuit_with_public_inputs_and_edge_randomness() {
    let mut rng = fresh_rng("user_circuit");
    let circuit = CubicCircuit { x: Fr::rand(&mut rng), w: Fr::rand(&mut rng), cheat: false };
    let pk = setup(circuit.clone(), &mut rng);
    let one = Fr::from(1u64);
    let randomness = [
        (Fr::rand(&mut rng), Fr::rand(&mut rng)),
        (Fr::zero(), Fr::zero()), // no zero-knowledge: arkworks skips B in G1
        (Fr::zero(), Fr::rand(&mut rng)),
        (Fr::rand(&mut rng), Fr::zero()),
        (one, -one),
    ];
    assert_bit_exact(&pk, &circuit, &circuit.public_inputs(), &randomness);
}

#[test]
fn zero_witness_values_are_fine() {
    // x = 0 and w = 0 make most of the assignment zero: MSMs over zero scalars.
    let mut rng = fresh_rng("zero_witness");
    let circuit = CubicCircuit { x: Fr::zero(), w: Fr::zero(), cheat: false };
    let pk = setup(circuit.clone(), &mut rng);
    assert_bit_exact(&pk, &circuit, &circuit.public_inputs(), &[(Fr::rand(&mut rng), Fr::rand(&mut rng))]);
}

#[test]
fn prover_timeline_nests_steps_and_device_spans() {
    let mut rng = fresh_rng("timeline");
    let circuit = BuiltinCircuit::new(CircuitKind::Synthetic, 10, 7).expect("circuit");
    let pk = setup(circuit.clone(), &mut rng);
    let cpu = CpuBackend::new();
    let prover = Prover::new(&cpu);
    let key = prover.prepare(&pk).expect("prepare");
    let tl = Timeline::new();
    prover.prove(&key, circuit, &mut rng, &tl).expect("prove");
    let report = Report::from_events(&tl.events());
    let prove = report.span_by_name("prove").expect("prove span");
    for step in [
        "SYNTH",
        "device",
        "stage",
        "h",
        "ntt_inverse_a",
        "ntt_coset_c",
        "h_combine",
        "ntt_coset_inverse_h",
        "msm_g1_a",
        "msm_g1_b",
        "msm_g2_b",
        "msm_g1_l",
        "msm_g1_h",
        "assemble",
    ] {
        let span = report.span_by_name(step).unwrap_or_else(|| panic!("no span {step}"));
        assert!(span.start_ns >= prove.start_ns && span.end_ns <= prove.end_ns, "{step} inside prove");
    }
    // Each MSM step holds exactly the CPU backend's msm device span.
    let msm = report.span_by_name("msm_g1_h").unwrap();
    let children: Vec<_> = report.spans.iter().filter(|s| s.parent == Some(msm.id)).collect();
    assert_eq!(children.len(), 1);
    assert_eq!((children[0].layer, children[0].name.as_str()), (Layer::Device, "msm_g1"));
    assert!(msm.covered_ns > 0 && msm.covered_ns <= msm.dur_ns());
    let busy = report.device_busy.expect("device spans recorded");
    assert!(busy > 0.0 && busy <= 1.0, "device busy {busy}");
}

#[test]
fn synthesis_reduces_like_arkworks() {
    // a, b, c rows padded to next_pow2(constraints + inputs), input-copy rows in a.
    let mut rng = fresh_rng("synthesis");
    let circuit = CubicCircuit { x: Fr::rand(&mut rng), w: Fr::rand(&mut rng), cheat: false };
    let syn = synthesize(circuit.clone()).expect("synthesize");
    assert_eq!(syn.num_constraints, 4);
    assert_eq!(syn.num_instance, 3);
    assert_eq!(syn.domain_size(), 8);
    assert_eq!(syn.public_inputs(), circuit.public_inputs().as_slice());
    for i in 0..syn.num_constraints {
        assert_eq!(syn.a[i] * syn.b[i], syn.c[i], "row {i}");
    }
    assert_eq!(&syn.a[4..7], &syn.assignment[..3]);
    assert!(syn.b[4..].iter().chain(&syn.c[4..]).all(|v| v.is_zero()));
}
