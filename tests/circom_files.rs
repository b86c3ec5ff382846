//! circom's and snarkjs's files, read from real ones (tests/circom/fixtures, made by
//! tests/circom/fixtures.sh): what is decoded agrees with what snarkjs says it wrote, and
//! thousands of truncated, flipped and mutated copies of each are a typed error or a valid
//! value, never a panic or an allocation of what a count only claims.

use std::alloc::{GlobalAlloc, Layout, System};

use ark_bls12_381::{Fq, Fq2};
use ark_ec::AffineRepr;
use ark_ff::UniformRand;
use g16::backend::cpu::CpuBackend;
use g16::circom::json::{proof_json, public_json, read_proof_json, read_public_json};
use g16::circom::roots::Reindex;
use g16::circom::zkey::{read_header, read_unchecked};
use g16::circom::{read_wtns, write_new_zkey, write_wtns, CircomError, R1cs, Zkey};
use g16::circuits::{BuiltinCircuit, CircuitKind};
use g16::compiled::file::CircuitFile;
use g16::prover::{verify, Randomness};
use g16::prover::{KeyError, PointProblem, Qap};
use g16::sample::g1_outside_subgroup;
use g16::{Fr, G1Affine, G2Affine, Prover, Timeline};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sha2::{Digest, Sha256};

/// Every allocation of this test binary is below 64 MiB, or the binary aborts: the files here
/// are a few KiB, so a larger one can only come from a count a mutated file claims.
struct Bounded;

const ALLOCATION_LIMIT: usize = 64 << 20;

// SAFETY: forwards to the system allocator, refusing (null: an allocation failure) any
// request over the limit, which GlobalAlloc permits.
unsafe impl GlobalAlloc for Bounded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > ALLOCATION_LIMIT {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > ALLOCATION_LIMIT {
            return std::ptr::null_mut();
        }
        // SAFETY: as for `dealloc`; the new size is the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Bounded = Bounded;

const R1CS: &[u8] = include_bytes!("circom/fixtures/small.r1cs");
const WTNS: &[u8] = include_bytes!("circom/fixtures/small.wtns");
const ZKEY: &[u8] = include_bytes!("circom/fixtures/small.zkey");
const VK_JSON: &str = include_str!("circom/fixtures/small_vk.json");
const PROOF_JSON: &str = include_str!("circom/fixtures/small_proof.json");
const PUBLIC_JSON: &str = include_str!("circom/fixtures/small_public.json");
const R1CS_BN128: &[u8] = include_bytes!("circom/fixtures/small_bn128.r1cs");
const WTNS_BN128: &[u8] = include_bytes!("circom/fixtures/small_bn128.wtns");
const ZKEY_BN128: &[u8] = include_bytes!("circom/fixtures/small_bn128.zkey");

#[test]
fn the_r1cs_and_witness_decode_and_satisfy_each_other() {
    let r1cs = R1cs::from_bytes(R1CS).unwrap();
    // small.circom: out <== t·(x + 7) − 3y with t <== x·y; public x; z = [1, out, x, y, t].
    assert_eq!((r1cs.num_wires, r1cs.num_outputs, r1cs.num_public_inputs, r1cs.num_private_inputs), (5, 1, 1, 1));
    assert_eq!((r1cs.num_constraints(), r1cs.num_instance()), (2, 3));
    let z = read_wtns(WTNS).unwrap();
    let f = |v: u64| Fr::from(v);
    assert_eq!(z, vec![f(1), f(627), f(5), f(11), f(55)]);
    for qap in [Qap::Libsnark, Qap::Snarkjs] {
        let circuit = r1cs.clone().into_circuit(qap).unwrap();
        assert_eq!((circuit.num_variables(), circuit.num_instance(), circuit.domain_size()), (5, 3, 8));
        circuit.check_assignment(&z).unwrap();
        let [a, b, c] = circuit.evaluate(&z);
        for row in 0..circuit.num_constraints() {
            assert_eq!(a[row] * b[row], c[row], "{qap:?}: row {row}");
        }
        // The input rows: a = z_i.
        assert_eq!(&a[2..5], &z[..3]);
    }
    // A witness that breaks the second constraint.
    let mut bad = z.clone();
    bad[1] += f(1);
    let [a, b, c] = r1cs.clone().into_circuit(Qap::Snarkjs).unwrap().evaluate(&bad);
    assert!(a[0] * b[0] == c[0] && a[1] * b[1] != c[1]);
}

#[test]
fn a_written_witness_is_the_bytes_circom_writes() {
    let z = read_wtns(WTNS).unwrap();
    assert_eq!(write_wtns(&z), WTNS, "the fixture (written by circom's generator) is reproduced byte for byte");
    let z: Vec<Fr> = (0..100u64).map(|i| -Fr::from(i * i + 1)).collect();
    assert_eq!(read_wtns(&write_wtns(&z)).unwrap(), z);
}

#[test]
fn the_zkey_is_the_key_snarkjs_exported_and_the_r1cs_it_was_made_from() {
    let zkey = Zkey::from_bytes(ZKEY).unwrap();
    let header = read_header(ZKEY).unwrap();
    assert_eq!((header.num_variables, header.num_public, header.domain_size), (5, 2, 8));
    let vk = zkey.key.verifying_key();
    let json: serde_json::Value = serde_json::from_str(VK_JSON).unwrap();
    assert_eq!(json["nPublic"], 2);
    assert_eq!(vk.alpha_g1, g1_json(&json["vk_alpha_1"]));
    assert_eq!(vk.beta_g2, g2_json(&json["vk_beta_2"]));
    assert_eq!(vk.gamma_g2, g2_json(&json["vk_gamma_2"]));
    assert_eq!(vk.delta_g2, g2_json(&json["vk_delta_2"]));
    let ic: Vec<G1Affine> = json["IC"].as_array().unwrap().iter().map(g1_json).collect();
    assert_eq!(vk.gamma_abc_g1, ic);
    // e(α, β) as snarkjs computed it: a pairing's output in 12 decimal coordinates.
    let alphabeta = <g16::Curve as ark_ec::pairing::Pairing>::pairing(vk.alpha_g1, vk.beta_g2).0;
    let flat: Vec<String> = json["vk_alphabeta_12"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c6| c6.as_array().unwrap().iter().flat_map(|c2| c2.as_array().unwrap().iter()))
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let ours: Vec<String> = [alphabeta.c0, alphabeta.c1]
        .iter()
        .flat_map(|c6| [c6.c0, c6.c1, c6.c2])
        .flat_map(|c2| [c2.c0.to_string(), c2.c1.to_string()])
        .collect();
    assert_eq!(ours, flat, "e(α, β)");

    // A and B are the r1cs's (the coefficients' R² factor undone), A with the input rows,
    // each row moved to where snarkjs's root puts it in g16's domain.
    let r1cs = R1cs::from_bytes(R1CS).unwrap();
    let from_r1cs = r1cs.into_circuit(Qap::Snarkjs).unwrap();
    let (za, zb, zc) = zkey.circuit.matrices();
    let (ra, rb, _) = from_r1cs.matrices();
    assert!(zc.is_none());
    assert_eq!((za.rows(), zb.rows(), zkey.circuit.num_constraints()), (8, 8, 2));
    let reindex = Reindex::new(8).unwrap();
    for i in 0..8 {
        let empty = (&[][..], &[][..]);
        assert_eq!(za.row(reindex.row(i)), if i < ra.rows() { ra.row(i) } else { empty }, "A row {i}");
        assert_eq!(zb.row(reindex.row(i)), if i < rb.rows() { rb.row(i) } else { empty }, "B row {i}");
    }
    assert_eq!(zkey.circuit.qap(), Qap::Snarkjs);
    zkey.circuit.check_key(&zkey.key.shape()).unwrap();
    let z = read_wtns(WTNS).unwrap();
    let [a, b, c] = zkey.circuit.evaluate(&z);
    let [_, _, c_r1cs] = from_r1cs.evaluate(&z);
    assert_eq!(a.iter().zip(&b).map(|(a, b)| *a * b).collect::<Vec<_>>(), c);
    for i in 0..2 {
        assert_eq!(c[reindex.row(i)], c_r1cs[i], "A·z ∘ B·z = C·z on constraint {i}");
    }

    // snarkjs's own proof verifies under the key decoded here, with the signals of the witness.
    let proof = read_proof_json(PROOF_JSON).unwrap();
    let public = read_public_json(PUBLIC_JSON).unwrap();
    assert_eq!(public, z[1..3]);
    let pvk = ark_groth16::prepare_verifying_key(vk);
    assert!(ark_groth16::Groth16::<g16::Curve>::verify_proof(&pvk, &proof, &public).unwrap());
    let mut wrong = public.clone();
    wrong[0] += Fr::from(1u64);
    assert!(!ark_groth16::Groth16::<g16::Curve>::verify_proof(&pvk, &proof, &wrong).unwrap());
    // And is written back byte for byte as snarkjs wrote it.
    assert_eq!(proof_json(&proof), PROOF_JSON);
    assert_eq!(public_json(&public), PUBLIC_JSON);
}

#[test]
fn the_cpu_backend_proves_a_zkey_and_a_wrong_witness_does_not_verify() {
    let zkey = Zkey::from_bytes(ZKEY).unwrap();
    let z = read_wtns(WTNS).unwrap();
    let cpu = CpuBackend::new();
    let prover = Prover::new(&cpu);
    let key = prover.prepare(&zkey.key).unwrap();
    let circuit = prover.prepare_circuit(&zkey.circuit).unwrap();
    let mut rng = ark_std::test_rng();
    let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
    let proof = prover.prove_assignment_with(&key, &circuit, &z, Randomness::fixed_for_tests(r, s), &Timeline::new()).unwrap();
    assert!(verify(&key, &proof, &z[1..3]).unwrap());
    // The key carries no C, so a witness that breaks a constraint makes a proof that fails.
    let mut bad = z.clone();
    bad[1] += Fr::from(1u64);
    let proof = prover.prove_assignment_with(&key, &circuit, &bad, Randomness::fixed_for_tests(r, s), &Timeline::new()).unwrap();
    assert!(!verify(&key, &proof, &bad[1..3]).unwrap());
}

#[test]
fn a_zkey_made_here_reads_back_checked_and_its_proofs_verify() {
    let cpu = CpuBackend::new();
    let prover = Prover::new(&cpu);
    let mut rng = ark_std::test_rng();
    let synthetic = BuiltinCircuit::new(CircuitKind::Synthetic, 6, 5).unwrap();
    let cases = [
        (R1cs::from_bytes(R1CS).unwrap().into_circuit(Qap::Snarkjs).unwrap(), read_wtns(WTNS).unwrap()),
        (g16::compiled::compile(synthetic.clone()).unwrap(), g16::compiled::witness(synthetic).unwrap()),
    ];
    for (circuit, z) in cases {
        let bytes = write_new_zkey(&circuit, &mut rand::rngs::OsRng).unwrap();
        let zkey = Zkey::from_bytes(&bytes).unwrap();
        assert_eq!(
            (zkey.circuit.num_constraints(), zkey.circuit.num_variables(), zkey.circuit.num_instance()),
            (circuit.num_constraints(), circuit.num_variables(), circuit.num_instance())
        );
        let key = prover.prepare(&zkey.key).unwrap();
        let prepared = prover.prepare_circuit(&zkey.circuit).unwrap();
        let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
        let public = &z[1..circuit.num_instance()];
        let proof = prover.prove_assignment_with(&key, &prepared, &z, Randomness::fixed_for_tests(r, s), &Timeline::new()).unwrap();
        assert!(verify(&key, &proof, public).unwrap());
        // Another statement for the same proof is refused: the key binds the circuit.
        let mut other = public.to_vec();
        other[0] += Fr::from(1u64);
        assert!(!verify(&key, &proof, &other).unwrap());
        // Two setups of one circuit are different keys (the trapdoor is fresh each time).
        assert_ne!(write_new_zkey(&circuit, &mut rand::rngs::OsRng).unwrap(), bytes);
    }
}

fn fq(v: &serde_json::Value) -> Fq {
    v.as_str().unwrap().parse().unwrap()
}

fn g1_json(v: &serde_json::Value) -> G1Affine {
    assert_eq!(v[2], "1");
    G1Affine::new(fq(&v[0]), fq(&v[1]))
}

fn g2_json(v: &serde_json::Value) -> G2Affine {
    assert_eq!(v[2], serde_json::json!(["1", "0"]));
    let fq2 = |c: &serde_json::Value| Fq2::new(fq(&c[0]), fq(&c[1]));
    G2Affine::new(fq2(&v[0]), fq2(&v[1]))
}

#[test]
fn files_of_another_curve_are_refused_naming_it() {
    for e in [
        R1cs::from_bytes(R1CS_BN128).unwrap_err(),
        read_wtns(WTNS_BN128).unwrap_err(),
        Zkey::from_bytes(ZKEY_BN128).map(|_| ()).unwrap_err(),
    ] {
        assert!(matches!(e, CircomError::WrongField { curve: Some("bn128"), .. }), "{e}");
        assert!(e.to_string().contains("bn128") && e.to_string().contains("BLS12-381"), "{e}");
    }
}

/// A copy of `bytes` with `value` written over the u32 at `at`.
fn with_u32(bytes: &[u8], at: usize, value: u32) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + 4].copy_from_slice(&value.to_le_bytes());
    b
}

/// The offset of section `id`'s contents in an iden3 file (its first instance).
fn section(bytes: &[u8], id: u32) -> usize {
    let mut at = 12;
    loop {
        let sid = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let size = u64::from_le_bytes(bytes[at + 4..at + 12].try_into().unwrap()) as usize;
        if sid == id {
            return at + 12;
        }
        at += 12 + size;
    }
}

#[test]
fn damaged_files_name_what_is_wrong() {
    // A header that counts one value fewer than the section holds.
    let e = read_wtns(&with_u32(WTNS, section(WTNS, 1) + 36, 4)).unwrap_err();
    assert!(matches!(e, CircomError::TrailingBytes { .. }), "{e}");

    // The r1cs: a wire outside the circuit; the zkey: a coefficient in a fourth matrix.
    let constraints = section(R1CS, 2);
    let e = R1cs::from_bytes(&with_u32(R1CS, constraints + 4, 99)).unwrap_err();
    assert!(e.to_string().contains("wire 99 of 5") && e.to_string().contains(".r1cs section 2"), "{e}");
    let coefficients = section(ZKEY, 4);
    let e = read_unchecked(&with_u32(ZKEY, coefficients + 4, 3)).unwrap_err();
    assert!(e.to_string().contains("matrix 3") && e.to_string().contains(".zkey section 4"), "{e}");
    let e = read_unchecked(&with_u32(ZKEY, section(ZKEY, 1), 2)).unwrap_err();
    assert!(matches!(e, CircomError::Protocol { id: 2, .. }), "{e}");

    // Coordinates not below q in H points 5 and 2: the error names point 2's place in the file,
    // though H decodes in g16's order (where the two points sit the other way round or apart).
    let h = section(ZKEY, 9);
    let mut big = ZKEY.to_vec();
    for k in [5, 2] {
        big[h + 96 * k..h + 96 * k + 48].fill(0xff);
    }
    match read_unchecked(&big).unwrap_err() {
        CircomError::NotCanonical { at, .. } => assert_eq!((at.section, at.offset), (Some(9), h + 2 * 96)),
        e => panic!("{e}"),
    }

    // Points: off the curve, and on the curve outside the subgroup.
    let a = section(ZKEY, 5);
    let mut off = ZKEY.to_vec();
    off[a + 96 + 10] ^= 1;
    let e = Zkey::from_bytes(&off).unwrap_err();
    assert!(
        matches!(
            e,
            CircomError::Key(KeyError::InvalidPoint { query: "a_query", index: 1, problem: PointProblem::NotOnCurve })
        ),
        "{e}"
    );
    let mut outside = ZKEY.to_vec();
    outside[a + 96..a + 192].copy_from_slice(&g1_montgomery(&g1_outside_subgroup()));
    let e = Zkey::from_bytes(&outside).unwrap_err();
    assert!(
        matches!(e, CircomError::Key(KeyError::InvalidPoint { index: 1, problem: PointProblem::NotInSubgroup, .. })),
        "{e}"
    );
    // α the identity: such a key would verify anything.
    let mut alpha = ZKEY.to_vec();
    let header = section(ZKEY, 2);
    let alpha_at = header + 4 + 48 + 4 + 32 + 12;
    alpha[alpha_at..alpha_at + 96].fill(0);
    let e = Zkey::from_bytes(&alpha).unwrap_err();
    assert!(matches!(e, CircomError::Key(KeyError::InvalidPoint { problem: PointProblem::Identity, .. })), "{e}");
    // An IC point the identity: a false value of that public signal would verify.
    let mut ic = ZKEY.to_vec();
    let ic_at = section(ZKEY, 3) + 96;
    ic[ic_at..ic_at + 96].fill(0);
    let e = Zkey::from_bytes(&ic).unwrap_err();
    assert!(
        matches!(
            e,
            CircomError::Key(KeyError::InvalidPoint {
                query: "gamma_abc_g1",
                index: 1,
                problem: PointProblem::InputIdentity
            })
        ),
        "{e}"
    );
}

fn g1_montgomery(p: &G1Affine) -> Vec<u8> {
    use ark_ff::{BigInteger, Field, PrimeField};
    let r = Fq::from(2u64).pow([384]);
    let (x, y) = p.xy().unwrap();
    [(x * r).into_bigint().to_bytes_le(), (y * r).into_bigint().to_bytes_le()].concat()
}

/// A mutation of a file: where and how.
#[derive(Clone, Debug)]
enum Mutation {
    Truncate(usize),
    FlipBit(usize, u8),
    /// A u32 (a count, an id, an index) overwritten with a value near a boundary.
    Word(usize, u32),
    Byte(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let word = prop_oneof![
        Just(0u32),
        Just(1),
        Just(2),
        Just(u32::MAX),
        Just(0x8000_0000),
        Just(0x0100_0000),
        0u32..64,
        any::<u32>()
    ];
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit(at, bit)),
        (any::<usize>(), word).prop_map(|(at, v)| Mutation::Word(at, v)),
        (any::<usize>(), any::<u8>()).prop_map(|(at, v)| Mutation::Byte(at, v)),
        (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..64)).prop_map(|(at, v)| Mutation::Insert(at, v)),
        (any::<usize>(), 1usize..64).prop_map(|(at, n)| Mutation::Delete(at, n)),
    ]
}

fn apply(bytes: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for m in mutations {
        let at = |i: usize| if b.is_empty() { 0 } else { i % b.len() };
        match m {
            Mutation::Truncate(n) => b.truncate(n % (bytes.len() + 1)),
            Mutation::FlipBit(i, bit) if !b.is_empty() => {
                let i = at(*i);
                b[i] ^= 1 << bit;
            }
            // Aligned: the formats' counts and ids are u32s at multiples of 4.
            Mutation::Word(i, v) if b.len() >= 4 => {
                let i = at(*i) & !3;
                let i = i.min(b.len() - 4);
                b[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            Mutation::Byte(i, v) if !b.is_empty() => {
                let i = at(*i);
                b[i] = *v;
            }
            Mutation::Insert(i, v) => {
                let i = if b.is_empty() { 0 } else { i % (b.len() + 1) };
                b.splice(i..i, v.iter().copied());
            }
            Mutation::Delete(i, n) => {
                let i = at(*i);
                let end = (i + n).min(b.len());
                b.drain(i..end);
            }
            _ => {}
        }
    }
    b
}

/// Runs `parse` on `cases` mutations of `bytes` (one to four mutations each) and on every
/// truncation; it must return, never panic.
fn fuzz<T>(bytes: &[u8], cases: u32, parse: impl Fn(&[u8]) -> Result<T, String>) {
    for cut in 0..bytes.len() {
        let _ = parse(&bytes[..cut]);
    }
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    runner
        .run(&proptest::collection::vec(mutation(), 1..5), |m| {
            let _ = parse(&apply(bytes, &m));
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_r1cs_files_never_panic() {
    fuzz(R1CS, 5000, |b| R1cs::from_bytes(b).and_then(|r| r.into_circuit(Qap::Snarkjs)).map_err(|e| e.to_string()));
}

#[test]
fn mutated_witnesses_never_panic() {
    fuzz(WTNS, 3000, |b| read_wtns(b).map_err(|e| e.to_string()));
}

#[test]
fn mutated_zkeys_never_panic() {
    // Decoding alone for most cases; every point checked for some (the subgroup checks cost
    // milliseconds each).
    fuzz(ZKEY, 5000, |b| read_unchecked(b).map_err(|e| e.to_string()));
    fuzz(ZKEY, 1000, |b| Zkey::from_bytes(b).map_err(|e| e.to_string()));
}

#[test]
fn mutated_compiled_circuit_files_never_panic() {
    let circuit = R1cs::from_bytes(R1CS).unwrap().into_circuit(Qap::Snarkjs).unwrap();
    let bytes = CircuitFile { circuit, key_digest: Some([3; 32]) }.to_bytes();
    fuzz(&bytes, 2000, |b| CircuitFile::from_bytes(b).map_err(|e| e.to_string()));
    // With the checksum made to match, so that mutations reach the counts and matrices.
    let body = bytes.len() - 32;
    fuzz(&bytes[..body], 5000, |b| {
        let mut file = b.to_vec();
        file.extend_from_slice(&Sha256::digest(b));
        CircuitFile::from_bytes(&file).map_err(|e| e.to_string())
    });
}

#[test]
fn random_bytes_behind_each_magic_never_panic() {
    // A valid magic and version, then anything: every reader's header and section table.
    let config = Config { cases: 3000, failure_persistence: None, ..Config::default() };
    let body = proptest::collection::vec(any::<u8>(), 0..600);
    TestRunner::new(config)
        .run(&(0usize..3, body), |(kind, body)| {
            let head: &[u8] = [&b"r1cs\x01\0\0\0"[..], b"wtns\x02\0\0\0", b"zkey\x01\0\0\0"][kind];
            let bytes = [head, &body].concat();
            let _ = R1cs::from_bytes(&bytes);
            let _ = read_wtns(&bytes);
            let _ = Zkey::from_bytes(&bytes);
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_json_never_panics() {
    fuzz(PROOF_JSON.as_bytes(), 1000, |b| read_proof_json(&String::from_utf8_lossy(b)).map_err(|e| e.to_string()));
    fuzz(PUBLIC_JSON.as_bytes(), 500, |b| read_public_json(&String::from_utf8_lossy(b)).map_err(|e| e.to_string()));
}
