//! Proving keys: reading them (compressed or uncompressed `ark_groth16::ProvingKey`), checking
//! every point, and preparing them once for a backend so their bases stay resident.

use std::io::Read;
use std::path::{Path, PathBuf};

use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_groth16::PreparedVerifyingKey;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, SerializationError, Validate};
use rayon::prelude::*;

use super::ProveError;
use crate::backend::{Backend, BackendId, G1Bases, G2Bases};
use crate::{G1Affine, ProvingKey, VerifyingKey};

/// Why a point of a key was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointProblem {
    NotOnCurve,
    NotInSubgroup,
}

impl std::fmt::Display for PointProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PointProblem::NotOnCurve => "is not on the curve",
            PointProblem::NotInSubgroup => "is not in the prime-order subgroup",
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
    /// On the curve only, for bytes known to equal a key that passed `Full` before (the CLI's
    /// key cache proves that with a digest). The subgroup checks are most of the reading time
    /// (about 85 s for a 2^22 key on 32 threads), the curve equation a small part of it.
    CurveOnly,
}

/// Reads a proving key from bytes, compressed or not (told apart by the compression flag of
/// its first point), and checks every point: on the curve and in the subgroup.
pub fn read_proving_key(bytes: &[u8]) -> Result<ProvingKey, KeyError> {
    read_proving_key_with(bytes, PointChecks::Full)
}

/// [`read_proving_key`] with a choice of point checks.
pub fn read_proving_key_with(bytes: &[u8], checks: PointChecks) -> Result<ProvingKey, KeyError> {
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
    validate_proving_key_with(&pk, checks)?;
    Ok(pk)
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

pub fn load_proving_key(path: &Path) -> Result<ProvingKey, KeyError> {
    let bytes = std::fs::read(path).map_err(|source| KeyError::Io { path: path.to_path_buf(), source })?;
    read_proving_key(&bytes)
}

/// Writes the key to `path` (atomically) and returns the bytes written, for callers that
/// also digest or keep them.
pub fn write_proving_key(pk: &ProvingKey, path: &Path, compress: bool) -> Result<Vec<u8>, KeyError> {
    let mode = if compress { Compress::Yes } else { Compress::No };
    let mut bytes = Vec::with_capacity(pk.serialized_size(mode));
    pk.serialize_with_mode(&mut bytes, mode)
        .map_err(|e| KeyError::Malformed { format: "serializer", detail: e.to_string() })?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| KeyError::Write { path: path.to_path_buf(), source })?;
    }
    // Write then rename, so a reader never sees half a key.
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, &bytes).map_err(|source| KeyError::Write { path: tmp.clone(), source })?;
    std::fs::rename(&tmp, path).map_err(|source| KeyError::Write { path: path.to_path_buf(), source })?;
    Ok(bytes)
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

/// Every point on the curve and in the subgroup, and the lengths consistent with each other.
pub fn validate_proving_key(pk: &ProvingKey) -> Result<(), KeyError> {
    validate_proving_key_with(pk, PointChecks::Full)
}

/// [`validate_proving_key`] with a choice of point checks.
pub fn validate_proving_key_with(pk: &ProvingKey, checks: PointChecks) -> Result<(), KeyError> {
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
    KeyShape::of(pk).map(|_| ())
}

/// The sizes a key fixes, checked against each other; the prover checks them against the circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyShape {
    /// Instance variables, the constant 1 included.
    pub num_instance: usize,
    pub num_variables: usize,
    pub domain_size: usize,
}

impl KeyShape {
    pub fn of(pk: &ProvingKey) -> Result<KeyShape, KeyError> {
        let num_variables = pk.a_query.len();
        let num_instance = pk.vk.gamma_abc_g1.len();
        let domain_size = pk.h_query.len() + 1;
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
            return Err(KeyError::Inconsistent(format!(
                "h_query has {} points; a radix-2 domain needs a power of two minus one",
                pk.h_query.len()
            )));
        }
        Ok(KeyShape { num_instance, num_variables, domain_size })
    }
}

/// A proving key prepared for one backend: its bases uploaded once and resident, reused by
/// every proof made with that backend.
pub struct PreparedKey {
    pub vk: VerifyingKey,
    pub pvk: PreparedVerifyingKey<crate::Curve>,
    pub shape: KeyShape,
    pub beta_g1: G1Affine,
    pub delta_g1: G1Affine,
    /// All of a_query (the constant's point included: its scalar is z₀ = 1).
    pub a: G1Bases,
    pub b_g1: G1Bases,
    pub b_g2: G2Bases,
    pub l: G1Bases,
    pub h: G1Bases,
    pub backend: BackendId,
}

impl PreparedKey {
    /// Uploads the bases of `pk` to `backend`. The key is assumed validated (as
    /// [`read_proving_key`] does); its shape is checked again here.
    ///
    /// Returns once the device has finished with them: a GPU backend queues work on the bases
    /// (the CUDA backend's shifted multiples, seconds at 2^22), and a first proof must not
    /// count it as its own (the H200 runs of the fourth session did, 2.6 s in one
    /// `ntt_inverse_a`, once draining spans stopped synchronising).
    pub fn new<B: Backend + ?Sized>(backend: &B, pk: &ProvingKey) -> Result<PreparedKey, ProveError> {
        let shape = KeyShape::of(pk)?;
        let key = PreparedKey {
            vk: pk.vk.clone(),
            pvk: ark_groth16::prepare_verifying_key(&pk.vk),
            shape,
            beta_g1: pk.beta_g1,
            delta_g1: pk.delta_g1,
            a: backend.upload_g1_bases(&pk.a_query)?,
            b_g1: backend.upload_g1_bases(&pk.b_g1_query)?,
            b_g2: backend.upload_g2_bases(&pk.b_g2_query)?,
            l: backend.upload_g1_bases(&pk.l_query)?,
            h: backend.upload_g1_bases(&pk.h_query)?,
            backend: backend.id(),
        };
        backend.synchronize()?;
        Ok(key)
    }
}
