//! `proof.json` and `public.json` byte for byte as `snarkjs groth16 prove` writes them, and
//! read back.
//!
//! snarkjs writes `JSON.stringify(value, null, 1)`: one space of indentation per level, `": "`
//! after keys, no newline at the end. Numbers are decimal strings. Points are projective
//! with z = 1 (the identity as [0, 1, 0]); a G2 coordinate is [c0, c1].
//!
//! ```text
//! {
//!  "pi_a": [ x, y, "1" ],
//!  "pi_b": [ [x0, x1], [y0, y1], ["1", "0"] ],
//!  "pi_c": [ x, y, "1" ],
//!  "protocol": "groth16",
//!  "curve": "bls12381"
//! }
//! ```

use std::str::FromStr;

use ark_bls12_381::{Fq, Fq2};
use ark_ec::AffineRepr;
use ark_ff::{One, Zero};
use serde::{Deserialize, Serialize};

use crate::curve::{Fr, G1Affine, G2Affine, Proof};

/// Why a JSON proof or signal list cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    #[error("not JSON of the expected shape: {0}")]
    Shape(#[from] serde_json::Error),
    #[error("{what}: {value:?} is not a decimal number below the field's prime")]
    Number { what: &'static str, value: String },
    #[error("{0} is not a point of the curve's prime-order subgroup")]
    Point(&'static str),
    #[error("protocol {protocol:?} on curve {curve:?}; expected groth16 on bls12381")]
    Protocol { protocol: String, curve: String },
}

#[derive(Serialize, Deserialize)]
struct ProofJson {
    pi_a: [String; 3],
    pi_b: [[String; 2]; 3],
    pi_c: [String; 3],
    protocol: String,
    curve: String,
}

/// `proof.json`.
pub fn proof_json(proof: &Proof) -> String {
    let value = ProofJson {
        pi_a: g1(&proof.a),
        pi_b: g2(&proof.b),
        pi_c: g1(&proof.c),
        protocol: "groth16".into(),
        curve: "bls12381".into(),
    };
    stringify(&value)
}

/// `public.json`: the public signals, outputs first, then public inputs.
pub fn public_json(signals: &[Fr]) -> String {
    if signals.is_empty() {
        // snarkjs's JSON writer (bfj) opens and closes an empty array on two lines.
        return "[\n]".into();
    }
    stringify(&signals.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

/// Reads a `proof.json` (as snarkjs or [`proof_json`] writes it), every point checked.
pub fn read_proof_json(text: &str) -> Result<Proof, JsonError> {
    let p: ProofJson = serde_json::from_str(text)?;
    if p.protocol != "groth16" || p.curve != "bls12381" {
        return Err(JsonError::Protocol { protocol: p.protocol, curve: p.curve });
    }
    Ok(Proof { a: parse_g1(&p.pi_a, "pi_a")?, b: parse_g2(&p.pi_b, "pi_b")?, c: parse_g1(&p.pi_c, "pi_c")? })
}

/// Reads a `public.json`.
pub fn read_public_json(text: &str) -> Result<Vec<Fr>, JsonError> {
    let signals: Vec<String> = serde_json::from_str(text)?;
    signals.iter().map(|s| number(s, "a public signal")).collect()
}

fn stringify<T: Serialize>(value: &T) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, serde_json::ser::PrettyFormatter::with_indent(b" "));
    // Serializing strings and arrays of them into memory cannot fail.
    if value.serialize(&mut ser).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

fn g1(p: &G1Affine) -> [String; 3] {
    match p.xy() {
        Some((x, y)) => [x.to_string(), y.to_string(), "1".into()],
        None => ["0".into(), "1".into(), "0".into()],
    }
}

fn g2(p: &G2Affine) -> [[String; 2]; 3] {
    let pair = |v: Fq2| [v.c0.to_string(), v.c1.to_string()];
    match p.xy() {
        Some((x, y)) => [pair(x), pair(y), pair(Fq2::one())],
        None => [pair(Fq2::zero()), pair(Fq2::one()), pair(Fq2::zero())],
    }
}

/// A decimal number below the prime of `F`, as snarkjs writes one (no sign, no leading zeros
/// needed).
fn number<F: FromStr + ark_ff::PrimeField>(s: &str, what: &'static str) -> Result<F, JsonError> {
    let bad = || JsonError::Number { what, value: s.chars().take(100).collect() };
    if s.is_empty() || s.len() > 200 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    // arkworks reduces a decimal string modulo the prime; a canonical one prints back the same.
    let v = F::from_str(s).map_err(|_| bad())?;
    (v.to_string() == s.trim_start_matches('0') || (v.is_zero() && s.bytes().all(|b| b == b'0')))
        .then_some(v)
        .ok_or_else(bad)
}

/// Projective [x, y, z] into affine.
fn projective<F: ark_ff::Field>(x: F, y: F, z: F) -> Option<(F, F)> {
    let zi = z.inverse()?;
    Some((x * zi, y * zi))
}

fn parse_g1(p: &[String; 3], what: &'static str) -> Result<G1Affine, JsonError> {
    let [x, y, z] = [number::<Fq>(&p[0], what)?, number(&p[1], what)?, number(&p[2], what)?];
    let point = match projective(x, y, z) {
        None => G1Affine::zero(),
        Some((x, y)) => G1Affine::new_unchecked(x, y),
    };
    checked(point, what)
}

fn parse_g2(p: &[[String; 2]; 3], what: &'static str) -> Result<G2Affine, JsonError> {
    let fq2 = |c: &[String; 2]| -> Result<Fq2, JsonError> { Ok(Fq2::new(number(&c[0], what)?, number(&c[1], what)?)) };
    let point = match projective(fq2(&p[0])?, fq2(&p[1])?, fq2(&p[2])?) {
        None => G2Affine::zero(),
        Some((x, y)) => G2Affine::new_unchecked(x, y),
    };
    checked(point, what)
}

fn checked<C: ark_ec::short_weierstrass::SWCurveConfig>(
    p: ark_ec::short_weierstrass::Affine<C>,
    what: &'static str,
) -> Result<ark_ec::short_weierstrass::Affine<C>, JsonError> {
    (p.is_on_curve() && p.is_in_correct_subgroup_assuming_on_curve()).then_some(p).ok_or(JsonError::Point(what))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::CurveGroup;
    use ark_ff::UniformRand;

    #[test]
    fn proofs_and_signals_round_trip_in_snarkjs_layout() {
        let mut rng = ark_std::test_rng();
        let proof = Proof {
            a: (G1Affine::generator() * Fr::rand(&mut rng)).into_affine(),
            b: (G2Affine::generator() * Fr::rand(&mut rng)).into_affine(),
            c: G1Affine::zero(),
        };
        let text = proof_json(&proof);
        assert!(text.starts_with("{\n \"pi_a\": [\n  \""), "{text}");
        assert!(text.contains("\n \"pi_c\": [\n  \"0\",\n  \"1\",\n  \"0\"\n ],\n"), "{text}");
        assert!(text.contains("  [\n   \"1\",\n   \"0\"\n  ]\n ],\n \"pi_c\""), "{text}");
        assert!(text.ends_with("\"protocol\": \"groth16\",\n \"curve\": \"bls12381\"\n}"), "{text}");
        assert_eq!(read_proof_json(&text).unwrap(), proof);
        let signals = [Fr::from(0u64), Fr::from(200u64), -Fr::from(1u64)];
        let public = public_json(&signals);
        assert_eq!(&public[..16], "[\n \"0\",\n \"200\",\n");
        assert_eq!(read_public_json(&public).unwrap(), signals);
        assert_eq!(public_json(&[]), "[\n]");
        assert_eq!(read_public_json("[\n]").unwrap(), vec![]);
    }

    #[test]
    fn bad_numbers_and_points_are_refused() {
        let r = "52435875175126190479447740508185965837690552500527637822603658699938581184513";
        for bad in [r, "-1", "", "1e3", " 1", "0x10"] {
            assert!(read_public_json(&format!("[\"{bad}\"]")).is_err(), "{bad:?}");
        }
        assert_eq!(read_public_json("[\"007\"]").unwrap(), vec![Fr::from(7u64)]);
        let mut rng = ark_std::test_rng();
        let p = (G1Affine::generator() * Fr::rand(&mut rng)).into_affine();
        let proof = Proof { a: p, b: G2Affine::generator(), c: p };
        let text = proof_json(&proof).replacen(&p.y.to_string(), "5", 1);
        assert!(matches!(read_proof_json(&text), Err(JsonError::Point("pi_a"))));
        let text = proof_json(&proof).replace("bls12381", "bn128");
        assert!(matches!(read_proof_json(&text), Err(JsonError::Protocol { .. })));
    }
}
