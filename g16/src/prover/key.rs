//! Proving keys: reading them (compressed or uncompressed `ark_groth16::ProvingKey`) and
//! checking every point, so that the only key a prover accepts is a [`CheckedKey`].

use std::io::Read;
use std::path::{Path, PathBuf};

use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_ec::AffineRepr;
use ark_groth16::{r1cs_to_qap::LibsnarkReduction, Groth16};
use ark_relations::gr1cs::ConstraintSynthesizer;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, SerializationError, Validate};
use rand::{CryptoRng, RngCore};
use rayon::prelude::*;

pub use crate::compiled::shape::{KeyShape, Qap};
use crate::curve::{Curve, Fr, ProvingKey, VerifyingKey};

/// Why a point of a key was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointProblem {
    NotOnCurve,
    NotInSubgroup,
    /// α, β, γ or δ is the identity: such a key makes proofs that verify for any statement.
    Identity,
    /// A public input's point (arkworks' `gamma_abc_g1`, snarkjs's IC) is the identity: that
    /// input drops out of the verifier's equation, so a proof verifies with any value for it.
    InputIdentity,
}

impl std::fmt::Display for PointProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PointProblem::NotOnCurve => "is not on the curve",
            PointProblem::NotInSubgroup => "is not in the prime-order subgroup",
            PointProblem::Identity => "is the identity (such a key would verify anything)",
            PointProblem::InputIdentity => {
                "is the identity (the verifier would accept any value of that public input)"
            }
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("cannot read key file {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("cannot write key file {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("key is truncated: it ends after {len} bytes, inside the {format} encoding")]
    Truncated { len: usize, format: &'static str },
    #[error("key is malformed ({format} encoding): {detail}")]
    Malformed { format: &'static str, detail: String },
    #[error("key has {extra} unexpected bytes after its end ({format} encoding, {used} bytes used)")]
    TrailingBytes { extra: usize, used: usize, format: &'static str },
    #[error("key point {query}[{index}] {problem}")]
    InvalidPoint { query: &'static str, index: usize, problem: PointProblem },
    #[error("key is inconsistent: {0}")]
    Inconsistent(String),
    #[error("setup failed: {0}")]
    Setup(String),
}

/// A reader that remembers whether a read ran past the end, because arkworks reports a short
/// read as "invalid data" and a truncated file deserves its own message.
struct EofTracking<'a> {
    inner: &'a [u8],
    hit_eof: bool,
}

impl Read for EofTracking<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n < buf.len() {
            self.hit_eof = true;
        }
        Ok(n)
    }
}

/// Which checks a key's points get when it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointChecks {
    /// On the curve and in the prime-order subgroup: for any key from outside.
    Full,
    /// On the curve only, for bytes known to equal a key that passed `Full` before: the key
    /// store proves that with a digest (`key_store.rs`); a service's shared store holds only
    /// packages its servers checked when they were registered. The subgroup checks are most of
    /// the reading time (about 85 s for a 2^22 key on 32 threads), the curve equation a small
    /// part of it.
    CurveOnly,
}

/// A proving key whose every point was checked — on the curve, in the prime-order subgroup, and
/// α, β, γ, δ not the identity — and whose sizes agree with each other. It is the only key a
/// [`crate::prover::Prover`] prepares, so a key that was never checked cannot reach a device.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedKey {
    pk: ProvingKey,
    shape: KeyShape,
}

impl CheckedKey {
    /// Checks a key from elsewhere (every point: allow about a minute for a 2^22 key on 32 threads).
    pub fn new(pk: ProvingKey) -> Result<CheckedKey, KeyError> {
        Self::with_qap(pk, Qap::Libsnark)
    }

    /// Checks a key whose H points follow `qap` (a snarkjs key, read by `circom::zkey`).
    pub fn with_qap(pk: ProvingKey, qap: Qap) -> Result<CheckedKey, KeyError> {
        Self::with_checks(pk, qap, PointChecks::Full)
    }

    /// [`CheckedKey::with_qap`] with a choice of point checks ([`PointChecks::CurveOnly`] only
    /// for a key that passed every check before).
    pub fn with_checks(pk: ProvingKey, qap: Qap, checks: PointChecks) -> Result<CheckedKey, KeyError> {
        let shape = validate(&pk, checks, qap)?;
        Ok(CheckedKey { pk, shape })
    }

    /// Reads a key from bytes, compressed or not (told apart by the compression flag of its
    /// first point), and checks it. A truncated or padded encoding, a malformed point or a key
    /// whose sizes disagree is a typed error that says where.
    pub fn read(bytes: &[u8]) -> Result<CheckedKey, KeyError> {
        Self::read_with(bytes, PointChecks::Full)
    }

    pub fn load(path: &Path) -> Result<CheckedKey, KeyError> {
        let bytes = std::fs::read(path).map_err(|source| KeyError::Io { path: path.to_path_buf(), source })?;
        Self::read(&bytes)
    }

    /// [`CheckedKey::read`] with a choice of point checks: [`PointChecks::CurveOnly`] only for
    /// bytes proven equal to a key that passed every check before.
    pub fn read_with(bytes: &[u8], checks: PointChecks) -> Result<CheckedKey, KeyError> {
        let compress = match bytes.first() {
            None => return Err(KeyError::Truncated { len: 0, format: "empty file" }),
            Some(b) if b & 0x80 != 0 => Compress::Yes,
            Some(_) => Compress::No,
        };
        let format = if compress == Compress::Yes { "compressed" } else { "uncompressed" };
        let mut reader = EofTracking { inner: bytes, hit_eof: false };
        // Points are checked below, one by one, so a bad one is named; here only the encoding.
        let pk = ProvingKey::deserialize_with_mode(&mut reader, compress, Validate::No).map_err(|e| {
            if reader.hit_eof {
                KeyError::Truncated { len: bytes.len(), format }
            } else {
                KeyError::Malformed { format, detail: describe(e) }
            }
        })?;
        if !reader.inner.is_empty() {
            let extra = reader.inner.len();
            return Err(KeyError::TrailingBytes { extra, used: bytes.len() - extra, format });
        }
        let shape = validate(&pk, checks, Qap::Libsnark)?;
        Ok(CheckedKey { pk, shape })
    }

    /// Runs arkworks' circuit-specific setup (libsnark reduction) for `circuit`: a key made
    /// here is valid by construction. For tests and benchmarks; a real key comes from a
    /// ceremony.
    pub fn generate<C, R>(circuit: C, rng: &mut R) -> Result<CheckedKey, KeyError>
    where
        C: ConstraintSynthesizer<Fr>,
        R: RngCore + CryptoRng,
    {
        let pk = Groth16::<Curve, LibsnarkReduction>::generate_random_parameters_with_reduction(circuit, rng)
            .map_err(|e| KeyError::Setup(e.to_string()))?;
        let shape = KeyShape::of(&pk)?;
        Ok(CheckedKey { pk, shape })
    }

    /// A key made by [`crate::prover::setup`]: valid by construction like arkworks' (its
    /// backends check their points on the curve), its shape already checked.
    pub(crate) fn from_setup(pk: ProvingKey, shape: KeyShape) -> CheckedKey {
        CheckedKey { pk, shape }
    }

    /// Writes the key to `path` (atomically) and returns the bytes written, for callers that
    /// also digest or keep them.
    pub fn write(&self, path: &Path, compress: bool) -> Result<Vec<u8>, KeyError> {
        let bytes = self.to_bytes(compress)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| KeyError::Write { path: path.to_path_buf(), source })?;
        }
        // Write then rename, so a reader never sees half a key.
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, &bytes).map_err(|source| KeyError::Write { path: tmp.clone(), source })?;
        std::fs::rename(&tmp, path).map_err(|source| KeyError::Write { path: path.to_path_buf(), source })?;
        Ok(bytes)
    }

    /// The key's arkworks encoding, compressed or not.
    pub fn to_bytes(&self, compress: bool) -> Result<Vec<u8>, KeyError> {
        let mode = if compress { Compress::Yes } else { Compress::No };
        let mut bytes = Vec::with_capacity(self.pk.serialized_size(mode));
        self.pk
            .serialize_with_mode(&mut bytes, mode)
            .map_err(|e| KeyError::Malformed { format: "serializer", detail: e.to_string() })?;
        Ok(bytes)
    }

    pub fn proving_key(&self) -> &ProvingKey {
        &self.pk
    }

    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.pk.vk
    }

    pub fn shape(&self) -> KeyShape {
        self.shape
    }

    pub fn into_inner(self) -> ProvingKey {
        self.pk
    }
}

fn describe(e: SerializationError) -> String {
    match e {
        SerializationError::InvalidData => {
            "invalid data (a coordinate out of range or a compressed point off the curve)".to_string()
        }
        SerializationError::UnexpectedFlags => {
            "unexpected point flags (mixed compressed and uncompressed points?)".to_string()
        }
        other => other.to_string(),
    }
}

fn check_points<C: SWCurveConfig>(
    checks: PointChecks,
    query: &'static str,
    points: &[Affine<C>],
) -> Result<(), KeyError> {
    let problem = |p: &Affine<C>| match checks {
        PointChecks::Full => point_problem(p),
        PointChecks::CurveOnly => (!p.is_on_curve()).then_some(PointProblem::NotOnCurve),
    };
    match points.par_iter().enumerate().find_map_first(|(index, p)| problem(p).map(|problem| (index, problem))) {
        Some((index, problem)) => Err(KeyError::InvalidPoint { query, index, problem }),
        None => Ok(()),
    }
}

fn point_problem<C: SWCurveConfig>(p: &Affine<C>) -> Option<PointProblem> {
    if !p.is_on_curve() {
        Some(PointProblem::NotOnCurve)
    } else if !p.is_in_correct_subgroup_assuming_on_curve() {
        Some(PointProblem::NotInSubgroup)
    } else {
        None
    }
}

/// Every point on the curve and in the subgroup, α, β, γ, δ not the identity, and the lengths
/// consistent with each other.
fn validate(pk: &ProvingKey, checks: PointChecks, qap: Qap) -> Result<KeyShape, KeyError> {
    let vk = &pk.vk;
    check_points(checks, "alpha_g1", &[vk.alpha_g1])?;
    check_points(checks, "beta_g1", &[pk.beta_g1])?;
    check_points(checks, "delta_g1", &[pk.delta_g1])?;
    check_points(checks, "beta_g2", &[vk.beta_g2])?;
    check_points(checks, "gamma_g2", &[vk.gamma_g2])?;
    check_points(checks, "delta_g2", &[vk.delta_g2])?;
    check_points(checks, "gamma_abc_g1", &vk.gamma_abc_g1)?;
    check_points(checks, "a_query", &pk.a_query)?;
    check_points(checks, "b_g1_query", &pk.b_g1_query)?;
    check_points(checks, "b_g2_query", &pk.b_g2_query)?;
    check_points(checks, "h_query", &pk.h_query)?;
    check_points(checks, "l_query", &pk.l_query)?;
    // The trapdoor's images: with any of them the identity, the verifier's equation holds for
    // proofs of any statement (a key whose every point is the identity "verifies" anything).
    let identities = [
        ("alpha_g1", vk.alpha_g1.is_zero()),
        ("beta_g1", pk.beta_g1.is_zero()),
        ("delta_g1", pk.delta_g1.is_zero()),
        ("beta_g2", vk.beta_g2.is_zero()),
        ("gamma_g2", vk.gamma_g2.is_zero()),
        ("delta_g2", vk.delta_g2.is_zero()),
    ];
    if let Some((query, _)) = identities.iter().find(|(_, zero)| *zero) {
        return Err(KeyError::InvalidPoint { query, index: 0, problem: PointProblem::Identity });
    }
    // A real setup never makes a public input's point the identity: every input has its own
    // row in A (the reductions' input rows), so its point holds β·u_i(τ)/γ with u_i(τ) ≠ 0.
    if let Some(index) = vk.gamma_abc_g1.iter().position(|p| p.is_zero()) {
        return Err(KeyError::InvalidPoint { query: "gamma_abc_g1", index, problem: PointProblem::InputIdentity });
    }
    KeyShape::of_qap(pk, qap)
}

impl KeyShape {
    /// An arkworks key's shape, its sizes checked against each other.
    pub fn of(pk: &ProvingKey) -> Result<KeyShape, KeyError> {
        Self::of_qap(pk, Qap::Libsnark)
    }

    /// The shape of a key whose H points follow `qap`.
    pub fn of_qap(pk: &ProvingKey, qap: Qap) -> Result<KeyShape, KeyError> {
        let num_variables = pk.a_query.len();
        let num_instance = pk.vk.gamma_abc_g1.len();
        let domain_size = match qap {
            Qap::Libsnark => pk.h_query.len() + 1,
            Qap::Snarkjs => pk.h_query.len(),
        };
        let inconsistent = |what: &str, got: usize, want: usize| {
            Err(KeyError::Inconsistent(format!("{what} has {got} points, expected {want}")))
        };
        if num_instance == 0 {
            return inconsistent("gamma_abc_g1", 0, 1);
        }
        if pk.b_g1_query.len() != num_variables {
            return inconsistent("b_g1_query", pk.b_g1_query.len(), num_variables);
        }
        if pk.b_g2_query.len() != num_variables {
            return inconsistent("b_g2_query", pk.b_g2_query.len(), num_variables);
        }
        if num_variables < num_instance || pk.l_query.len() != num_variables - num_instance {
            return inconsistent("l_query", pk.l_query.len(), num_variables.saturating_sub(num_instance));
        }
        if !domain_size.is_power_of_two() || domain_size < 2 {
            let expected = match qap {
                Qap::Libsnark => "a power of two minus one",
                Qap::Snarkjs => "a power of two",
            };
            return Err(KeyError::Inconsistent(format!(
                "h_query has {} points; a radix-2 domain needs {expected}",
                pk.h_query.len()
            )));
        }
        Ok(KeyShape { num_instance, num_variables, domain_size, qap })
    }
}
