//! Proving keys: reading them (compressed or uncompressed `ark_groth16::ProvingKey`) and
//! checking every point, so that the only key a prover accepts is a [`CheckedKey`].

mod decode;
mod subgroup;
mod zcash;

use std::path::{Path, PathBuf};

use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_ec::AffineRepr;
use ark_groth16::{r1cs_to_qap::LibsnarkReduction, Groth16};
use ark_relations::gr1cs::ConstraintSynthesizer;
use ark_serialize::{CanonicalSerialize, Compress};
use rand::{CryptoRng, RngCore};
use rayon::prelude::*;

pub use crate::compiled::shape::{KeyShape, Qap};
use crate::curve::{Curve, Fr, ProvingKey, VerifyingKey};
use crate::digest::FileDigest;
pub use decode::{decode_with, EncodedPoint, KeyReader, PointStream};
pub use subgroup::{OnBackend, OnHost, SubgroupCheck};

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
    #[error("checking the key's points failed: {0}")]
    Check(g16_backend::BackendError),
    #[error("key is inconsistent: {0}")]
    Inconsistent(String),
    #[error("setup failed: {0}")]
    Setup(String),
}

/// Which checks a key's points get when it is read.
#[derive(Clone, Copy)]
pub enum PointChecks<'a> {
    /// On the curve and in the prime-order subgroup, the subgroup checks on the host's cores:
    /// for any key from outside.
    Full,
    /// Every check, the subgroup checks of the key's vectors on `checker` (a backend's device,
    /// where the bases go anyway; a few points on the host).
    FullOn(&'a dyn SubgroupCheck),
    /// On the curve only, for bytes known to equal a key that passed every check before, where
    /// another machine may have written the record: a service's shared store holds only
    /// packages its servers checked when they were registered. The subgroup checks are most of
    /// a key's checking time.
    CurveOnly,
    /// No check of any point, for bytes this machine proved equal, by their digest, to a file
    /// whose every point passed every check here: the key store's digests (`key_store.rs`) and
    /// the checked-files record (`crate::trust`). Equal bytes decode to the same points, so the
    /// curve equations would only repeat what was checked (they were about a fifth of a trusted
    /// key's load on the 2-core machine). The identity rules and the sizes still hold.
    Trusted,
}

impl std::fmt::Debug for PointChecks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PointChecks::Full => "Full",
            PointChecks::FullOn(_) => "FullOn",
            PointChecks::CurveOnly => "CurveOnly",
            PointChecks::Trusted => "Trusted",
        })
    }
}

/// A proving key whose every point was checked — on the curve, in the prime-order subgroup, and
/// α, β, γ, δ not the identity — and whose sizes agree with each other. It is the only key a
/// [`crate::prover::Prover`] prepares, so a key that was never checked cannot reach a device.
#[derive(Clone, Debug)]
pub struct CheckedKey {
    pk: ProvingKey,
    shape: KeyShape,
    /// The digest of the key's uncompressed encoding, where it was read from one (what the
    /// key store records and a compiled circuit is bound to), so nobody encodes it again to
    /// learn it.
    encoded_digest: Option<FileDigest>,
}

/// Keys are equal when their points are: how they were read does not matter.
impl PartialEq for CheckedKey {
    fn eq(&self, other: &CheckedKey) -> bool {
        self.pk == other.pk && self.shape == other.shape
    }
}

/// A key decoded from a file, its points not yet checked, and the file's digest: whoever
/// knows the digest was checked before chooses [`PointChecks::Trusted`].
pub struct DecodedKey {
    decoded: decode::Decoded,
}

impl DecodedKey {
    /// Decodes a key from bytes, compressed or not (told apart by the compression flag of its
    /// first point). A truncated or padded encoding or a malformed point is a typed error
    /// that says where.
    pub fn from_bytes(bytes: &[u8]) -> Result<DecodedKey, KeyError> {
        Ok(DecodedKey { decoded: decode::decode(bytes, Some(bytes.len() as u64))? })
    }

    /// [`DecodedKey::from_bytes`] from a file, streamed: the file is never whole in memory.
    /// The curve equations are checked as the points decode, while they are in cache.
    pub fn read(path: &Path) -> Result<DecodedKey, KeyError> {
        Self::read_file(path, true)
    }

    /// [`DecodedKey::read`] for a file whose digest is likely to be trusted
    /// ([`PointChecks::Trusted`]): the curve equations are left to [`DecodedKey::check`], which
    /// runs them as a pass of their own unless the checks are `Trusted`.
    pub fn read_expecting_trust(path: &Path) -> Result<DecodedKey, KeyError> {
        Self::read_file(path, false)
    }

    fn read_file(path: &Path, check_curve: bool) -> Result<DecodedKey, KeyError> {
        let io = |source| KeyError::Io { path: path.to_path_buf(), source };
        let file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map(|m| m.len()).ok();
        match decode::decode_checking_curve(file, len, check_curve) {
            Err(KeyError::Io { source, .. }) => Err(io(source)),
            other => Ok(DecodedKey { decoded: other? }),
        }
    }

    /// The digest of the bytes decoded ([`crate::digest`]).
    pub fn digest(&self) -> FileDigest {
        self.decoded.digest
    }

    /// Checks the points (`checks`) and the sizes.
    pub fn check(self, checks: PointChecks<'_>) -> Result<CheckedKey, KeyError> {
        let decode::Decoded { pk, digest, compressed, on_curve } = self.decoded;
        let shape = validate(&pk, checks, Qap::Libsnark, on_curve)?;
        Ok(CheckedKey { pk, shape, encoded_digest: (!compressed).then_some(digest) })
    }
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
        let shape = validate(&pk, checks, qap, false)?;
        Ok(CheckedKey { pk, shape, encoded_digest: None })
    }

    /// Reads a key from bytes, compressed or not, and checks every point on the host
    /// ([`DecodedKey::from_bytes`] says what else is refused).
    pub fn read(bytes: &[u8]) -> Result<CheckedKey, KeyError> {
        Self::read_with(bytes, PointChecks::Full)
    }

    /// [`CheckedKey::read`] from a file, streamed.
    pub fn load(path: &Path) -> Result<CheckedKey, KeyError> {
        Self::load_with(path, PointChecks::Full)
    }

    /// [`CheckedKey::read`] with a choice of point checks: [`PointChecks::CurveOnly`] only for
    /// bytes proven equal to a key that passed every check before.
    pub fn read_with(bytes: &[u8], checks: PointChecks<'_>) -> Result<CheckedKey, KeyError> {
        DecodedKey::from_bytes(bytes)?.check(checks)
    }

    /// [`CheckedKey::load`] with a choice of point checks.
    pub fn load_with(path: &Path, checks: PointChecks<'_>) -> Result<CheckedKey, KeyError> {
        DecodedKey::read(path)?.check(checks)
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
        Ok(CheckedKey { pk, shape, encoded_digest: None })
    }

    /// A key made by [`crate::prover::setup`]: valid by construction like arkworks' (its
    /// backends check their points on the curve), its shape already checked.
    pub(crate) fn from_setup(pk: ProvingKey, shape: KeyShape) -> CheckedKey {
        CheckedKey { pk, shape, encoded_digest: None }
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

    /// The digest of the key's uncompressed encoding ([`crate::digest`]): what the key store
    /// records beside it and a compiled circuit is bound to. Known without work for a key read
    /// from such an encoding; encoded and digested otherwise.
    pub fn encoded_digest(&self) -> Result<FileDigest, KeyError> {
        match self.encoded_digest {
            Some(d) => Ok(d),
            None => Ok(crate::digest::digest_bytes(&self.to_bytes(false)?)),
        }
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

/// The first point of `points` off the curve, named.
fn check_curve<C: SWCurveConfig>(query: &'static str, points: &[Affine<C>]) -> Result<(), KeyError> {
    match points.par_iter().position_first(|p| !p.is_on_curve()) {
        Some(index) => Err(KeyError::InvalidPoint { query, index, problem: PointProblem::NotOnCurve }),
        None => Ok(()),
    }
}

/// Vectors this short are checked on the host whatever the checker: a device round trip
/// costs more than their checks.
const ON_HOST_BELOW: usize = 1 << 12;

/// The first bad point of `queries`, named by its query and index.
fn named(
    queries: &[&'static str],
    found: Result<Option<(usize, usize)>, g16_backend::BackendError>,
) -> Result<(), KeyError> {
    match found.map_err(KeyError::Check)? {
        Some((k, index)) => {
            Err(KeyError::InvalidPoint { query: queries[k], index, problem: PointProblem::NotInSubgroup })
        }
        None => Ok(()),
    }
}

/// Every point on the curve and in the subgroup (unless `checks` says the subgroup checks
/// were done before), α, β, γ, δ not the identity, no public input's point the identity, and
/// the lengths consistent with each other. A bad point is named by its query and index; the
/// queries are checked in the encoding's order.
fn validate(pk: &ProvingKey, checks: PointChecks<'_>, qap: Qap, on_curve: bool) -> Result<KeyShape, KeyError> {
    let vk = &pk.vk;
    let g1: [(&'static str, &[crate::curve::G1Affine]); 8] = [
        ("alpha_g1", std::slice::from_ref(&vk.alpha_g1)),
        ("gamma_abc_g1", &vk.gamma_abc_g1),
        ("beta_g1", std::slice::from_ref(&pk.beta_g1)),
        ("delta_g1", std::slice::from_ref(&pk.delta_g1)),
        ("a_query", &pk.a_query),
        ("b_g1_query", &pk.b_g1_query),
        ("h_query", &pk.h_query),
        ("l_query", &pk.l_query),
    ];
    let g2: [(&'static str, &[crate::curve::G2Affine]); 4] = [
        ("beta_g2", std::slice::from_ref(&vk.beta_g2)),
        ("gamma_g2", std::slice::from_ref(&vk.gamma_g2)),
        ("delta_g2", std::slice::from_ref(&vk.delta_g2)),
        ("b_g2_query", &pk.b_g2_query),
    ];
    // Known where the decoder checked each point as it went (`on_curve`); otherwise, and
    // where it found one off, this pass names the first. Trusted bytes skip it.
    if !on_curve && !matches!(checks, PointChecks::Trusted) {
        for (query, points) in g1 {
            check_curve(query, points)?;
        }
        for (query, points) in g2 {
            check_curve(query, points)?;
        }
    }
    let checker: Option<&dyn SubgroupCheck> = match checks {
        PointChecks::Full => Some(&OnHost),
        PointChecks::FullOn(checker) => Some(checker),
        PointChecks::CurveOnly | PointChecks::Trusted => None,
    };
    if let Some(checker) = checker {
        let (names, vectors): (Vec<_>, Vec<_>) = g1.into_iter().unzip();
        named(&names, checker.first_outside_g1_among(&vectors, ON_HOST_BELOW))?;
        let (names, vectors): (Vec<_>, Vec<_>) = g2.into_iter().unzip();
        named(&names, checker.first_outside_g2_among(&vectors, ON_HOST_BELOW))?;
    }
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
