//! Bad C1 outputs and parameter files are refused with typed errors, and no proof: another
//! registered proof, sector size or porep id, truncated or edited JSON and bincode, a tampered
//! vanilla proof (the R1CS check names the failing constraint), a parameter file of another
//! circuit, truncated, or with a bit flipped. The parsers get property tests.

mod common;

use common::{circuit, params_dir, params_file, proof, sector, seal};
use g16::prover::PointChecks;
use g16_bellperson::DecodedParams;
use g16_filecoin::{C1Output, FilecoinError, SealProof};
use proptest::prelude::*;
use serde_json::Value;

fn api_value() -> Value {
    serde_json::from_slice(&sector().api_json()).unwrap()
}

fn from_value(v: &Value, asked: Option<SealProof>) -> Result<C1Output, FilecoinError> {
    C1Output::from_json(&serde_json::to_vec(v).unwrap(), asked)
}

#[test]
fn the_lotus_json_filecoin_proofs_json_and_bincode_are_read() {
    params_dir();
    let s = sector();
    assert_eq!(C1Output::from_json(&s.api_json(), None).unwrap().seal_proof(), proof());
    assert_eq!(C1Output::from_json(&s.api_json(), Some(proof())).unwrap().seal_proof(), proof());
    assert_eq!(C1Output::from_json(&s.raw_json, Some(proof())).unwrap().seal_proof(), proof());
    let bin = bincode::serialize(&s.c1).unwrap();
    assert_eq!(C1Output::from_bincode(&bin, proof()).unwrap().seal_proof(), proof());
    // filecoin-proofs' own JSON names no proof: the caller must.
    assert!(matches!(C1Output::from_json(&s.raw_json, None), Err(FilecoinError::NoSealProof)));
}

#[test]
fn a_c1_output_for_another_proof_or_sector_size_is_refused() {
    params_dir();
    let v1: SealProof = "StackedDrg2KiBV1".parse().unwrap();
    let err = C1Output::from_json(&sector().api_json(), Some(v1)).err().expect("refused");
    assert!(matches!(err, FilecoinError::SealProofMismatch { .. }), "{err}");

    // The file names a 512 MiB proof but holds 2 KiB vanilla proofs.
    let mut v = api_value();
    v["registered_proof"] = "StackedDrg512MiBV1_1".into();
    let err = from_value(&v, None).err().expect("refused");
    assert!(matches!(err, FilecoinError::VanillaShape { .. }), "{err}");

    // filecoin-proofs' JSON (no name) of a 2 KiB sector, said to be a 32 GiB one.
    let gib32: SealProof = "StackedDrg32GiBV1_1".parse().unwrap();
    let err = C1Output::from_json(&sector().raw_json, Some(gib32)).err().expect("refused");
    assert!(matches!(err, FilecoinError::PartitionCount { file: 1, expected: 10, .. }), "{err}");

    // A typed output of the 2 KiB tree, said to be a 32 GiB sector's.
    let err = C1Output::from_typed(gib32, seal(proof(), 3).c1).err().expect("refused");
    assert!(matches!(err, FilecoinError::VanillaShape { .. }), "{err}");

    // Non-interactive PoRep (aggregated, another SRS) is not proven here, and says so.
    let mut v = api_value();
    v["registered_proof"] = "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep".into();
    assert!(matches!(from_value(&v, None), Err(FilecoinError::UnsupportedSealProof(_))));

    // A circuit of another proof is refused before any witness.
    let c1 = C1Output::from_json(&sector().raw_json, Some(v1)).unwrap();
    assert!(matches!(c1.partitions(circuit()), Err(FilecoinError::SealProofMismatch { .. })));
}

/// A sector sealed under porep id 0 (V1) whose C1 output claims V1_1 (porep id 5): the graph and
/// challenges filecoin-proofs derives for V1_1 are not the ones the vanilla proofs answer.
#[test]
fn a_c1_output_of_another_porep_id_is_refused_with_the_input_named() {
    params_dir();
    let v1: SealProof = "StackedDrg2KiBV1".parse().unwrap();
    let other = seal(v1, 7);
    let mut v: Value = serde_json::from_slice(&other.api_json()).unwrap();
    assert_eq!(v["registered_proof"], "StackedDrg2KiBV1");
    v["registered_proof"] = "StackedDrg2KiBV1_1".into();
    let c1 = from_value(&v, None).expect("the file itself is well formed");
    let partition = c1.partitions(circuit()).unwrap().remove(0);
    let err = partition.witness().expect_err("refused");
    assert!(matches!(err, FilecoinError::PublicInputs { partition: 0, .. }), "{err}");
}

#[test]
fn a_tampered_vanilla_proof_fails_the_r1cs_check_at_a_named_constraint() {
    params_dir();
    let mut v = api_value();
    // One byte of a sibling on the path from the challenged replica node to comm_r_last.
    let proofs = &mut v["vanilla_proofs"]["StackedDrg2KiBV1"][0][1];
    let byte = &mut proofs["comm_r_last_proof"]["data"]["Single"]["path"]["path"][0]["hashes"][0][5];
    *byte = (byte.as_u64().unwrap() ^ 1).into();
    let c1 = from_value(&v, None).expect("well formed");
    let z = c1.partitions(circuit()).unwrap().remove(0).witness().expect("the values still compute");
    let err = circuit().check_witness(0, &z).expect_err("unsatisfied");
    let FilecoinError::Unsatisfied { partition: 0, row } = err else { panic!("{err}") };
    assert!(row < circuit().compiled().num_constraints());
    // The untampered witness satisfies every constraint.
    let z = sector().c1_output().partitions(circuit()).unwrap().remove(0).witness().unwrap();
    circuit().check_witness(0, &z).unwrap();
}

#[test]
fn edited_fields_and_zero_commitments_are_refused() {
    params_dir();
    let mut v = api_value();
    v["comm_r"] = serde_json::json!(vec![0u8; 32]);
    assert!(matches!(from_value(&v, None), Err(FilecoinError::Zero("comm_r"))));
    let mut v = api_value();
    v["seed"] = serde_json::json!(vec![0u8; 32]);
    assert!(matches!(from_value(&v, None), Err(FilecoinError::Zero("seed"))));
    let mut v = api_value();
    v["comm_d"] = serde_json::json!([1, 2, 3]);
    assert!(matches!(from_value(&v, None), Err(FilecoinError::Json(_))));
    let mut v = api_value();
    v["vanilla_proofs"]["StackedDrg2KiBV1"][0].as_array_mut().unwrap().pop();
    assert!(matches!(from_value(&v, None), Err(FilecoinError::ChallengeCount { file: 1, expected: 2, .. })));
    let mut v = api_value();
    v["vanilla_proofs"] = serde_json::json!([]);
    assert!(matches!(from_value(&v, None), Err(FilecoinError::Json(_))));
    let mut v = api_value();
    v["registered_proof"] = 5.into();
    assert!(matches!(from_value(&v, None), Err(FilecoinError::Json(_))));
    assert!(matches!(C1Output::from_json(b"", None), Err(FilecoinError::Json(_))));
    assert!(matches!(C1Output::from_bincode(b"", proof()), Err(FilecoinError::Bincode(_))));
    let path = common::tempdir("c1").join("c1.bin");
    std::fs::write(&path, bincode::serialize(&sector().c1).unwrap()).unwrap();
    assert!(matches!(C1Output::read(&path, None), Err(FilecoinError::NoSealProof)));
    assert!(C1Output::read(&path, Some(proof())).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any prefix of the JSON or bincode, and any byte changed: an error or a C1 output that
    /// passed every check, never a panic.
    #[test]
    fn truncated_or_edited_c1_files_never_panic(cut in 0.0f64..1.0, at in 0.0f64..1.0, byte: u8) {
        params_dir();
        let json = sector().api_json();
        let n = (cut * json.len() as f64) as usize;
        prop_assert!(C1Output::from_json(&json[..n], None).is_err());
        let mut edited = json.clone();
        let i = (at * json.len() as f64) as usize;
        edited[i] = byte;
        let _ = C1Output::from_json(&edited, None);
        let bin = bincode::serialize(&sector().c1).unwrap();
        let n = (cut * bin.len() as f64) as usize;
        prop_assert!(C1Output::from_bincode(&bin[..n], proof()).is_err());
        let mut edited = bin.clone();
        let i = (at * bin.len() as f64) as usize;
        edited[i] = byte;
        let _ = C1Output::from_bincode(&edited, proof());
    }
}

/// A bellpepper circuit of a few constraints: its parameters are another circuit's.
#[derive(Clone)]
struct Square(Option<blstrs::Scalar>);

impl bellpepper_core::Circuit<blstrs::Scalar> for Square {
    fn synthesize<CS: bellpepper_core::ConstraintSystem<blstrs::Scalar>>(
        self,
        cs: &mut CS,
    ) -> Result<(), bellpepper_core::SynthesisError> {
        let x = cs.alloc(|| "x", || self.0.ok_or(bellpepper_core::SynthesisError::AssignmentMissing))?;
        let y = cs.alloc_input(|| "y", || self.0.map(|x| x * x).ok_or(bellpepper_core::SynthesisError::AssignmentMissing))?;
        cs.enforce(|| "x*x=y", |lc| lc + x, |lc| lc + x, |lc| lc + y);
        Ok(())
    }
}

#[test]
fn a_parameter_file_of_another_circuit_is_refused_by_its_counts() {
    params_dir();
    let dir = common::tempdir("other-params");
    let params = bellperson::groth16::generate_random_parameters::<blstrs::Bls12, _, _>(
        Square(None),
        &mut <rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(1),
    )
    .unwrap();
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    std::fs::write(dir.join(circuit().params_file_name().unwrap()), &bytes).unwrap();
    let err = circuit().read_params(&dir).err().expect("refused");
    assert!(
        matches!(err, FilecoinError::Bellperson(g16_bellperson::BellpersonError::Counts { .. })),
        "{err}"
    );
    let missing = common::tempdir("no-params");
    assert!(matches!(
        circuit().read_params(&missing),
        Err(FilecoinError::Bellperson(g16_bellperson::BellpersonError::Io { .. }))
    ));
}

/// The real parameter file cut short, and with one bit flipped in a point: refused, the point
/// named (the curve equation catches it; a file whose digest was recorded is checked so too).
#[test]
fn a_truncated_or_bit_flipped_parameter_file_is_refused() {
    let real = params_file();
    let dir = common::tempdir("bad-params");
    let name = circuit().params_file_name().unwrap();
    let mut bytes = std::fs::read(&real).unwrap();
    for cut in [100, 10_000, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(dir.join(&name), &bytes[..cut]).unwrap();
        let err = circuit().read_params(&dir).err().expect("refused");
        assert!(err.to_string().contains("trunc") || err.to_string().contains("end"), "cut at {cut}: {err}");
    }
    // vk (α₁, β₁, β₂, γ₂, δ₁, δ₂ = 96·3 + 192·3 bytes), the IC's length and 40 points, then
    // h's length: flip a bit in the x coordinate of h[1000].
    let h0 = 96 * 3 + 192 * 3 + 4 + 40 * 96 + 4;
    let at = h0 + 1000 * 96 + 20;
    bytes[at] ^= 0x08;
    let decoded = DecodedParams::from_bytes(&bytes, circuit().compiled());
    let err = match decoded {
        Err(e) => e.to_string(),
        Ok(d) => d.check(PointChecks::CurveOnly, circuit().compiled()).expect_err("refused").to_string(),
    };
    assert!(err.contains("h") && err.contains("1000"), "{err}");
}
