//! bellperson's `.params` and `.vk` files, read into g16's keys.
//!
//! ```text
//! vk:  α₁, β₁ (G1), β₂, γ₂ (G2), δ₁ (G1), δ₂ (G2), ic (u32 length, G1 points)
//! h, l, a, b₁ (u32 length, G1 points each), b₂ (u32 length, G2 points)
//! ```
//!
//! Lengths are big-endian; points are uncompressed zcash encodings (ark-bls12-381's). bellperson
//! leaves the identity points out of a, b₁ and b₂: a holds every input, then the aux variables
//! with a nonzero coefficient in A; b₁ and b₂ the inputs, then the aux variables, with a nonzero
//! coefficient in B. The circuit says which those are, so a file is read against its circuit:
//! the lengths must be the circuit's (a file for another circuit is refused as its first length
//! is read), and the queries are spread back to one point per variable, in place, as arkworks'
//! key holds them. The file streams through g16's key decoding (digested as it goes, points
//! decoded on every core); the points are then checked as any key's are.

use std::io::Write;
use std::path::Path;

use ark_ec::AffineRepr;
use ark_ff::Zero;
use ark_serialize::{CanonicalSerialize, Compress};
use g16::compiled::{CompiledCircuit, Qap};
use g16::digest::FileDigest;
use g16::prover::key::{decode_with, EncodedPoint, KeyReader, PointStream};
use g16::prover::{CheckedKey, KeyError, PointChecks, PointProblem};
use g16::{G1Affine, G2Affine, ProvingKey, VerifyingKey};
use rayon::prelude::*;

use crate::BellpersonError;

/// A parameter file decoded against its circuit, its points not yet checked, and the digest of
/// its bytes (whoever knows the digest was checked before may choose [`PointChecks::CurveOnly`]).
pub struct DecodedParams {
    pk: ProvingKey,
    digest: FileDigest,
}

impl DecodedParams {
    /// Decodes a `.params` file held in memory.
    pub fn from_bytes(bytes: &[u8], circuit: &CompiledCircuit) -> Result<DecodedParams, BellpersonError> {
        decode(bytes, Some(bytes.len() as u64), circuit)
    }

    /// Decodes a `.params` file as it streams in: the file is never whole in memory.
    pub fn read(path: &Path, circuit: &CompiledCircuit) -> Result<DecodedParams, BellpersonError> {
        let io = |source| BellpersonError::Io { path: path.to_path_buf(), source };
        let file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map(|m| m.len()).ok();
        match decode(file, len, circuit) {
            Err(BellpersonError::Key(KeyError::Io { source, .. })) => Err(io(source)),
            other => other,
        }
    }

    /// The digest of the file's bytes ([`g16::digest`]).
    pub fn digest(&self) -> FileDigest {
        self.digest
    }

    /// The key, its points checked (`checks`) and its shape held against the circuit's.
    pub fn check(self, checks: PointChecks<'_>, circuit: &CompiledCircuit) -> Result<CheckedKey, BellpersonError> {
        let key = CheckedKey::with_checks(self.pk, Qap::Libsnark, checks)?;
        circuit.check_key(&key.shape())?;
        Ok(key)
    }
}

/// Which variables have a point in the file's a and b queries.
struct Presence {
    a: Vec<bool>,
    b: Vec<bool>,
}

impl Presence {
    fn of(circuit: &CompiledCircuit) -> Presence {
        let (a, b, _) = circuit.matrices();
        let present = |m: &g16::backend::SparseMatrix| {
            let mut seen = vec![false; circuit.num_variables()];
            let (_, cols, coeffs) = m.parts();
            for (&col, coeff) in cols.iter().zip(coeffs) {
                if !coeff.is_zero() {
                    seen[col as usize] = true;
                }
            }
            seen
        };
        // A holds the input rows, so every input is present in a, as bellperson has it.
        Presence { a: present(a), b: present(b) }
    }
}

fn count(present: &[bool]) -> usize {
    present.iter().filter(|&&p| p).count()
}

/// The verifying key's part of a file, as bellperson lays it out.
struct VkPart {
    alpha_g1: G1Affine,
    beta_g1: G1Affine,
    beta_g2: G2Affine,
    gamma_g2: G2Affine,
    delta_g1: G1Affine,
    delta_g2: G2Affine,
    ic: Vec<G1Affine>,
}

fn vk_part(s: &mut PointStream, expected_ic: Option<usize>, mismatch: &mut Option<BellpersonError>) -> Result<VkPart, KeyError> {
    let no = Compress::No;
    let alpha_g1 = s.point(no, "alpha_g1")?;
    let beta_g1 = s.point(no, "beta_g1")?;
    let beta_g2 = s.point(no, "beta_g2")?;
    let gamma_g2 = s.point(no, "gamma_g2")?;
    let delta_g1 = s.point(no, "delta_g1")?;
    let delta_g2 = s.point(no, "delta_g2")?;
    let ic = vector(s, "ic", expected_ic, mismatch)?;
    Ok(VkPart { alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2, ic })
}

/// A u32-length vector; a length other than `expected` stops the read with `mismatch` set.
fn vector<P: EncodedPoint>(
    s: &mut PointStream,
    what: &'static str,
    expected: Option<usize>,
    mismatch: &mut Option<BellpersonError>,
) -> Result<Vec<P>, KeyError> {
    let len = s.u32_be()? as usize;
    if let Some(circuit) = expected.filter(|&e| e != len) {
        *mismatch = Some(BellpersonError::Counts { what, file: len, circuit });
        return Err(KeyError::Inconsistent(format!("{what}: {len} points, the circuit needs {circuit}")));
    }
    s.points(len as u64, Compress::No, what)
}

fn decode<R: KeyReader>(src: R, len: Option<u64>, circuit: &CompiledCircuit) -> Result<DecodedParams, BellpersonError> {
    let presence = Presence::of(circuit);
    let (inputs, variables) = (circuit.num_instance(), circuit.num_variables());
    let mut mismatch = None;
    let read = |s: &mut PointStream| -> Result<ProvingKey, KeyError> {
        s.set_format("bellperson params");
        let m = &mut mismatch;
        let vk = vk_part(s, Some(inputs), m)?;
        let h = vector(s, "h", Some(circuit.domain_size() - 1), m)?;
        let l = vector(s, "l", Some(variables - inputs), m)?;
        let a = vector(s, "a", Some(count(&presence.a)), m)?;
        let b_g1 = vector(s, "b_g1", Some(count(&presence.b)), m)?;
        let b_g2 = vector(s, "b_g2", Some(count(&presence.b)), m)?;
        Ok(ProvingKey {
            vk: VerifyingKey {
                alpha_g1: vk.alpha_g1,
                beta_g2: vk.beta_g2,
                gamma_g2: vk.gamma_g2,
                delta_g2: vk.delta_g2,
                gamma_abc_g1: vk.ic,
            },
            beta_g1: vk.beta_g1,
            delta_g1: vk.delta_g1,
            a_query: spread(a, &presence.a),
            b_g1_query: spread(b_g1, &presence.b),
            b_g2_query: spread(b_g2, &presence.b),
            h_query: h,
            l_query: l,
        })
    };
    match decode_with(src, len, read) {
        Ok((pk, digest)) => Ok(DecodedParams { pk, digest }),
        Err(e) => Err(mismatch.unwrap_or(BellpersonError::Key(e))),
    }
}

/// The points of the present variables, in order, spread to one per variable with the identity
/// for the others: in place, from the end, so the host never holds the query twice.
fn spread<P: AffineRepr>(mut points: Vec<P>, present: &[bool]) -> Vec<P> {
    let mut next = points.len();
    points.resize(present.len(), P::zero());
    for (j, &here) in present.iter().enumerate().rev() {
        // `next` counts the present variables before j, so it never passes j: what it reads
        // was not yet overwritten.
        points[j] = if here {
            next -= 1;
            points[next]
        } else {
            P::zero()
        };
    }
    points
}

/// Writes `key`, made for `circuit`, as bellperson's `.params` file: what
/// `bellperson::groth16::Parameters::read` (and [`DecodedParams`]) read, with the identity
/// points of the variables absent from A (resp. B) left out of a (b₁, b₂), as bellperson's
/// setup leaves them. A key whose shape is not the circuit's, or with a point where the circuit
/// has no coefficient, is refused: its file could not be read against the circuit.
pub fn write_params(key: &CheckedKey, circuit: &CompiledCircuit, w: &mut impl Write) -> Result<(), BellpersonError> {
    circuit.check_key(&key.shape())?;
    let presence = Presence::of(circuit);
    let pk = key.proving_key();
    write_vk(pk, w)?;
    write_vector(w, "h", &pk.h_query, None)?;
    write_vector(w, "l", &pk.l_query, None)?;
    write_vector(w, "a", &pk.a_query, Some(&presence.a))?;
    write_vector(w, "b_g1", &pk.b_g1_query, Some(&presence.b))?;
    write_vector(w, "b_g2", &pk.b_g2_query, Some(&presence.b))
}

/// Writes the verifying key's part of `pk` as bellperson's `.vk` file (a `.params` file's head).
pub fn write_vk(pk: &ProvingKey, w: &mut impl Write) -> Result<(), BellpersonError> {
    let vk = &pk.vk;
    let mut head = Vec::new();
    let into_memory = "a point serializes into memory";
    for p in [vk.alpha_g1, pk.beta_g1] {
        p.serialize_uncompressed(&mut head).expect(into_memory);
    }
    for p in [vk.beta_g2, vk.gamma_g2] {
        p.serialize_uncompressed(&mut head).expect(into_memory);
    }
    pk.delta_g1.serialize_uncompressed(&mut head).expect(into_memory);
    vk.delta_g2.serialize_uncompressed(&mut head).expect(into_memory);
    w.write_all(&head).map_err(BellpersonError::Write)?;
    write_vector(w, "ic", &vk.gamma_abc_g1, None)
}

/// Points serialized a batch at a time, on every core: the host holds one batch's bytes.
const WRITE_BATCH: usize = 1 << 18;

/// A u32-length vector of `points`, only the `present` ones where given (the others must be
/// the identity).
fn write_vector<P: AffineRepr + CanonicalSerialize>(
    w: &mut impl Write,
    what: &'static str,
    points: &[P],
    present: Option<&[bool]>,
) -> Result<(), BellpersonError> {
    let here = |j: usize| present.is_none_or(|p| p[j]);
    if let Some(j) = (0..points.len()).find(|&j| !here(j) && !points[j].is_zero()) {
        return Err(BellpersonError::NotThisCircuit(format!(
            "{what} has a point for variable {j}, which the circuit's matrix never uses"
        )));
    }
    let len = present.map_or(points.len(), count);
    let len = u32::try_from(len).map_err(|_| BellpersonError::NotThisCircuit(format!("{what}: {len} points")))?;
    w.write_all(&len.to_be_bytes()).map_err(BellpersonError::Write)?;
    let size = P::zero().uncompressed_size();
    for (b, batch) in points.chunks(WRITE_BATCH).enumerate() {
        let first = b * WRITE_BATCH;
        let pieces: Vec<Vec<u8>> = batch
            .par_chunks(4096)
            .enumerate()
            .map(|(c, chunk)| {
                let mut bytes = Vec::with_capacity(chunk.len() * size);
                for (i, p) in chunk.iter().enumerate() {
                    if here(first + c * 4096 + i) {
                        p.serialize_uncompressed(&mut bytes).expect("a point serializes into memory");
                    }
                }
                bytes
            })
            .collect();
        for piece in pieces {
            w.write_all(&piece).map_err(BellpersonError::Write)?;
        }
    }
    Ok(())
}

/// Reads a bellperson `.vk` file (the verifying key part of a `.params` file, alone) and checks
/// its points: on the curve, in the subgroup, α, β, γ, δ and the inputs' points not the identity.
pub fn read_vk(bytes: &[u8]) -> Result<VerifyingKey, BellpersonError> {
    let mut unused = None;
    let (vk, _) = decode_with(bytes, Some(bytes.len() as u64), |s| {
        s.set_format("bellperson vk");
        vk_part(s, None, &mut unused)
    })?;
    let bad = |query: &'static str, index: usize, problem| KeyError::InvalidPoint { query, index, problem };
    let g1 = [("alpha_g1", &vk.alpha_g1), ("beta_g1", &vk.beta_g1), ("delta_g1", &vk.delta_g1)];
    let g2 = [("beta_g2", &vk.beta_g2), ("gamma_g2", &vk.gamma_g2), ("delta_g2", &vk.delta_g2)];
    let named = g1.iter().map(|&(q, p)| (q, 0, point_problem(p))).chain(g2.iter().map(|&(q, p)| (q, 0, point_problem(p))));
    let inputs = vk.ic.iter().enumerate().map(|(i, p)| ("ic", i, point_problem(p).or(p.is_zero().then_some(PointProblem::InputIdentity))));
    for (query, index, problem) in named.chain(inputs) {
        if let Some(problem) = problem {
            return Err(bad(query, index, problem).into());
        }
    }
    for (query, zero) in g1.iter().map(|(q, p)| (q, p.is_zero())).chain(g2.iter().map(|(q, p)| (q, p.is_zero()))) {
        if zero {
            return Err(bad(query, 0, PointProblem::Identity).into());
        }
    }
    if vk.ic.is_empty() {
        return Err(KeyError::Inconsistent("the verifying key has no input points".into()).into());
    }
    Ok(VerifyingKey { alpha_g1: vk.alpha_g1, beta_g2: vk.beta_g2, gamma_g2: vk.gamma_g2, delta_g2: vk.delta_g2, gamma_abc_g1: vk.ic })
}

/// What is wrong with a point, if anything: off the curve or outside the subgroup.
fn point_problem<C: ark_ec::short_weierstrass::SWCurveConfig>(
    p: &ark_ec::short_weierstrass::Affine<C>,
) -> Option<PointProblem> {
    if !p.is_on_curve() {
        Some(PointProblem::NotOnCurve)
    } else if !p.is_in_correct_subgroup_assuming_on_curve() {
        Some(PointProblem::NotInSubgroup)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_puts_each_point_at_its_variable() {
        let g = G1Affine::generator();
        let points: Vec<G1Affine> = (1..=3u64).map(|k| (g * g16::Fr::from(k)).into()).collect();
        let present = [false, true, false, false, true, true, false];
        let out = spread(points.clone(), &present);
        let zero = G1Affine::zero();
        assert_eq!(out, vec![zero, points[0], zero, zero, points[1], points[2], zero]);
        assert_eq!(spread(points.clone(), &[true, true, true]), points);
        assert_eq!(spread(Vec::<G1Affine>::new(), &[false, false]), vec![zero, zero]);
    }
}
