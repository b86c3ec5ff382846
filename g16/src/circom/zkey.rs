//! A Groth16 proving key as `snarkjs groth16 setup` (and `zkey contribute`, `zkey beacon`)
//! writes it, `.zkey` version 1, for BLS12-381.
//!
//! ```text
//! section 1   u32 protocol: 1 Groth16 (2 PLONK, 10 FFLONK: refused)
//! section 2   u32 n8q, q; u32 n8r, r; u32 variables, u32 public signals (without the
//!             constant), u32 domain size; α₁, β₁, β₂, γ₂, δ₁, δ₂
//! section 3   IC: public signals + 1 G1 points (the verifier's γ_abc)
//! section 4   u32 count, then (u32 matrix 0 = A, 1 = B; u32 constraint; u32 signal; the
//!             coefficient as k·R² mod r): A and B, A with one row per instance variable
//!             appended after the constraints (a = z_i: the libsnark reduction's input rows)
//! section 5-7 A (G1), B (G1), B (G2): one point per variable
//! section 8   C (G1): one point per witness variable (arkworks' l_query)
//! section 9   H (G1): domain size points, on snarkjs's QAP (odd 2n-th roots of unity)
//! section 10  the ceremony's contributions (not needed to prove)
//! ```
//!
//! Points are affine, Montgomery, little-endian, the identity as zeros (`field`). The key
//! read becomes an `ark_groth16::ProvingKey` checked like any other ([`CheckedKey`]); the
//! coefficients become A and B of a [`CompiledCircuit`] on [`Qap::Snarkjs`], whose c = a∘b.
//! snarkjs's roots of unity are other powers of g16's, so the rows and the H points are
//! re-indexed as they are read (`roots`): constraint i is not row i.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::binfile::{BinFile, FileKind, Section};
use super::roots::Reindex;
use super::{field, At, CircomError};
use g16_backend::SparseMatrix;
use crate::compiled::CompiledCircuit;
use crate::prover::{CheckedKey, PointChecks, Qap};
use crate::curve::{Fr, G1Affine, G2Affine, ProvingKey, VerifyingKey};

const KIND: FileKind = FileKind::Zkey;
const VERSION: u32 = 1;
const G1_BYTES: usize = 96;
const G2_BYTES: usize = 192;
/// matrix, constraint, signal, then the coefficient.
const COEFFICIENT_BYTES: usize = 12 + 32;

/// The sizes a zkey's header gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZkeyHeader {
    /// Variables, the constant 1 included: the length of a witness.
    pub num_variables: usize,
    /// Public signals (outputs and public inputs), without the constant.
    pub num_public: usize,
    pub domain_size: usize,
}

/// A zkey as read: the key (its points not yet checked) and the circuit.
#[derive(Clone, Debug)]
pub struct UncheckedZkey {
    pub header: ZkeyHeader,
    pub key: ProvingKey,
    pub circuit: CompiledCircuit,
}

/// A zkey: its key, every point checked, and the A and B matrices it carries.
#[derive(Clone, Debug)]
pub struct Zkey {
    pub key: CheckedKey,
    pub circuit: CompiledCircuit,
}

impl Zkey {
    pub fn read(path: &Path) -> Result<Zkey, CircomError> {
        Self::from_bytes(&super::read_file(path)?)
    }

    /// Reads and checks a zkey (every point on the curve and in the subgroup).
    pub fn from_bytes(bytes: &[u8]) -> Result<Zkey, CircomError> {
        Self::from_bytes_with(bytes, PointChecks::Full)
    }

    /// [`Zkey::from_bytes`] with a choice of point checks ([`PointChecks::CurveOnly`] only for
    /// bytes that passed every check before).
    pub fn from_bytes_with(bytes: &[u8], checks: PointChecks) -> Result<Zkey, CircomError> {
        // The checks run beside the coefficients' decoding, as the points' decoding does.
        let (_, key, circuit) = read_then(bytes, |key| Ok(CheckedKey::with_checks(key, Qap::Snarkjs, checks)?))?;
        Ok(Zkey { key, circuit })
    }
}

/// Reads the header alone.
pub fn read_header(bytes: &[u8]) -> Result<ZkeyHeader, CircomError> {
    let file = BinFile::parse(bytes, KIND, VERSION)?;
    Ok(Header::read(&file)?.sizes)
}

/// Reads every section a proof needs; the points are decoded but not checked.
pub fn read_unchecked(bytes: &[u8]) -> Result<UncheckedZkey, CircomError> {
    let (header, key, circuit) = read_then(bytes, Ok)?;
    Ok(UncheckedZkey { header, key, circuit })
}

/// Reads every section a proof needs and hands the key to `then` (the point checks, or
/// nothing) while the coefficients are decoded beside it: the coefficients are a serial pass
/// over their section (0.55 s of a 2^20 zkey's 1.33 s on a 2-core machine), the points'
/// decoding and checks run on every core. A file with both a bad point and a bad coefficient
/// is refused for the point, as when the points were read first.
fn read_then<K: Send>(
    bytes: &[u8],
    then: impl FnOnce(ProvingKey) -> Result<K, CircomError> + Send,
) -> Result<(ZkeyHeader, K, CompiledCircuit), CircomError> {
    let file = BinFile::parse(bytes, KIND, VERSION)?;
    let h = Header::read(&file)?;
    let ZkeyHeader { num_variables: n, num_public, domain_size } = h.sizes;
    let header_at = At { kind: KIND, section: Some(2), offset: file.unique(2, "Groth16 header")?.offset };
    let reindex = Reindex::new(domain_size).ok_or_else(|| CircomError::Malformed {
        at: header_at,
        detail: format!("domain size {domain_size} is larger than Fr's roots of unity allow"),
    })?;
    // The H section's size backs the domain size the coefficients are bounded by: checked
    // before they are read (their decoding sizes its rows by it).
    let h_section = file.unique(9, "H")?;
    let mut c = h_section.cursor(KIND);
    c.items(domain_size as u64, G1_BYTES, "the points")?;
    c.finish("the points")?;
    let coefficients = file.unique(4, "coefficients")?;
    let (key, circuit) = rayon::join(
        || -> Result<K, CircomError> {
            let g1 = |id, name, count| points(file.unique(id, name)?, count, G1_BYTES, field::g1_montgomery);
            let ic = g1(3, "IC", num_public + 1)?;
            let a_query = g1(5, "A", n)?;
            let b_g1_query = g1(6, "B1", n)?;
            let b_g2_query = points(file.unique(7, "B2")?, n, G2_BYTES, field::g2_montgomery)?;
            let l_query = g1(8, "C", n - num_public - 1)?;
            // Decoded straight into g16's order, each point from its place in the file.
            let h_query = points_from(h_section, domain_size, G1_BYTES, field::g1_montgomery, |j| reindex.h_source(j))?;
            let vk = VerifyingKey {
                alpha_g1: h.alpha_g1,
                beta_g2: h.beta_g2,
                gamma_g2: h.gamma_g2,
                delta_g2: h.delta_g2,
                gamma_abc_g1: ic,
            };
            then(ProvingKey {
                vk,
                beta_g1: h.beta_g1,
                delta_g1: h.delta_g1,
                a_query,
                b_g1_query,
                b_g2_query,
                h_query,
                l_query,
            })
        },
        || read_matrices(coefficients, h.sizes, reindex),
    );
    let key = key?;
    Ok((h.sizes, key, circuit?))
}

/// Sections 1 and 2.
struct Header {
    sizes: ZkeyHeader,
    alpha_g1: G1Affine,
    beta_g1: G1Affine,
    beta_g2: G2Affine,
    gamma_g2: G2Affine,
    delta_g1: G1Affine,
    delta_g2: G2Affine,
}

impl Header {
    fn read(file: &BinFile<'_>) -> Result<Header, CircomError> {
        let mut p = file.unique(1, "protocol")?.cursor(KIND);
        let protocol = p.u32("the protocol")?;
        p.finish("the protocol")?;
        match protocol {
            1 => {}
            2 => return Err(CircomError::Protocol { id: 2, name: "PLONK" }),
            10 => return Err(CircomError::Protocol { id: 10, name: "FFLONK" }),
            id => return Err(CircomError::Protocol { id, name: "an unknown protocol" }),
        }
        let mut c = file.unique(2, "Groth16 header")?.cursor(KIND);
        field::expect_fq(&mut c, "the base field's prime")?;
        field::expect_fr(&mut c, "the scalar field's prime")?;
        let at = c.here();
        let num_variables = c.count("the variable count")?;
        let num_public = c.count("the public signal count")?;
        let domain_size = c.count("the domain size")?;
        if num_public >= num_variables {
            return Err(CircomError::Malformed {
                at,
                detail: format!("{num_public} public signals and the constant in {num_variables} variables"),
            });
        }
        if !domain_size.is_power_of_two() {
            return Err(CircomError::Malformed {
                at,
                detail: format!("domain size {domain_size} is not a power of two"),
            });
        }
        let mut g1 = |what| point(&mut c, G1_BYTES, field::g1_montgomery, what);
        let alpha_g1 = g1("α₁")?;
        let beta_g1 = g1("β₁")?;
        let mut g2 = |what| point(&mut c, G2_BYTES, field::g2_montgomery, what);
        let beta_g2 = g2("β₂")?;
        let gamma_g2 = g2("γ₂")?;
        let delta_g1 = point(&mut c, G1_BYTES, field::g1_montgomery, "δ₁")?;
        let delta_g2 = point(&mut c, G2_BYTES, field::g2_montgomery, "δ₂")?;
        c.finish("δ₂")?;
        Ok(Header {
            sizes: ZkeyHeader { num_variables, num_public, domain_size },
            alpha_g1,
            beta_g1,
            beta_g2,
            gamma_g2,
            delta_g1,
            delta_g2,
        })
    }
}

fn point<P>(
    c: &mut super::binfile::Cursor<'_>,
    size: usize,
    decode: fn(&[u8]) -> Option<P>,
    what: &'static str,
) -> Result<P, CircomError> {
    let at = c.here();
    decode(c.take(size, what)?).ok_or(CircomError::NotCanonical { at, what })
}

/// A section of exactly `count` points of `size` bytes.
fn points<P: Send + Default>(
    s: Section<'_>,
    count: usize,
    size: usize,
    decode: fn(&[u8]) -> Option<P>,
) -> Result<Vec<P>, CircomError> {
    points_from(s, count, size, decode, |i| i)
}

/// [`points`], the point at index `i` of the result decoded from the section's point
/// `source(i)` (a permutation of the indices). The points decode on every core straight into
/// the result; a malformed one is named by its place in the file, the first there if several are.
fn points_from<P: Send + Default>(
    s: Section<'_>,
    count: usize,
    size: usize,
    decode: fn(&[u8]) -> Option<P>,
    source: impl Fn(usize) -> usize + Sync,
) -> Result<Vec<P>, CircomError> {
    let mut c = s.cursor(KIND);
    let at = c.here();
    let bytes = c.items(count as u64, size, "the points")?;
    c.finish("the points")?;
    let first_bad = AtomicUsize::new(usize::MAX);
    let mut out = crate::huge_pages::vec_with_capacity(count);
    (0..count)
        .into_par_iter()
        .map(|i| {
            let k = source(i);
            decode(&bytes[k * size..(k + 1) * size]).unwrap_or_else(|| {
                first_bad.fetch_min(k, Ordering::Relaxed);
                P::default()
            })
        })
        .collect_into_vec(&mut out);
    match first_bad.into_inner() {
        usize::MAX => Ok(out),
        k => Err(CircomError::NotCanonical { at: field::element_at(at, k, size), what: "a point's coordinate" }),
    }
}

/// One coefficient of section 4.
#[derive(Clone, Copy)]
struct Entry {
    row: u32,
    col: u32,
    value: Fr,
}

/// Section 4 into A (with the input rows) and B, re-indexed to g16's domain ([`Reindex`]).
/// The number of constraints is not stored: the last A rows are the input rows, one per
/// instance variable, so it is the highest A row less the public signals.
fn read_matrices(s: Section<'_>, sizes: ZkeyHeader, reindex: Reindex) -> Result<CompiledCircuit, CircomError> {
    let ZkeyHeader { num_variables, num_public, domain_size } = sizes;
    let mut c = s.cursor(KIND);
    let count = c.u32("the coefficient count")?;
    let at = c.here();
    let bytes = c.items(count as u64, COEFFICIENT_BYTES, "the coefficients")?;
    c.finish("the coefficients")?;
    // Each coefficient on its own is parsed and checked on every core (millions of them at
    // 2^20); the first bad one, by position, is then parsed again alone for its error.
    let parse = |i: usize, e: &[u8]| -> Result<(u32, Entry), CircomError> {
        let word = |k: usize| u32::from_le_bytes([e[4 * k], e[4 * k + 1], e[4 * k + 2], e[4 * k + 3]]);
        let (matrix, row, col) = (word(0), word(1), word(2));
        let here = field::element_at(at, i, COEFFICIENT_BYTES);
        let bad = |detail: String| CircomError::Malformed { at: here, detail };
        if matrix > 1 {
            return Err(bad(format!("matrix {matrix} (A is 0, B is 1)")));
        }
        if row as usize >= domain_size {
            return Err(bad(format!("constraint {row} outside the domain of {domain_size}")));
        }
        if col as usize >= num_variables {
            return Err(bad(format!("signal {col} of {num_variables}")));
        }
        let value =
            field::zkey_coefficient(&e[12..]).ok_or(CircomError::NotCanonical { at: here, what: "a coefficient" })?;
        Ok((matrix, Entry { row, col, value }))
    };
    let mut parsed: Vec<Option<(u32, Entry)>> = crate::huge_pages::vec_with_capacity(count as usize);
    bytes.par_chunks_exact(COEFFICIENT_BYTES).enumerate().map(|(i, e)| parse(i, e).ok()).collect_into_vec(&mut parsed);
    if let Some(i) = parsed.par_iter().position_first(Option::is_none) {
        let e = &bytes[i * COEFFICIENT_BYTES..(i + 1) * COEFFICIENT_BYTES];
        return Err(parse(i, e).err().unwrap_or_else(|| CircomError::Malformed { at, detail: "a coefficient".into() }));
    }
    // filter_map, not flatten: flatten makes each Option a parallel iterator of its own.
    let matrix = |m: u32| -> Vec<Entry> {
        parsed.par_iter().filter_map(|p| p.filter(|(k, _)| *k == m).map(|(_, e)| e)).collect()
    };
    let (mut a, mut b) = rayon::join(|| matrix(0), || matrix(1));
    drop(parsed);
    let num_instance = num_public + 1;
    let at = At { kind: KIND, section: Some(4), offset: s.offset };
    let bad = |detail: String| CircomError::Malformed { at, detail };
    let a_rows = a.iter().map(|e| e.row as usize + 1).max().unwrap_or(0);
    let num_constraints = a_rows
        .checked_sub(num_instance)
        .ok_or_else(|| bad(format!("A has {a_rows} rows, fewer than the {num_instance} input rows")))?;
    // Input row i: a = z_i, one entry of 1 in column i.
    let mut input_entries = vec![0usize; num_instance];
    for e in a.iter().filter(|e| e.row as usize >= num_constraints) {
        let i = e.row as usize - num_constraints;
        input_entries[i] += 1;
        if e.col as usize != i || e.value != Fr::from(1u64) {
            return Err(bad(format!("A's row {} is not the input row of signal {i}", e.row)));
        }
    }
    if let Some(i) = input_entries.iter().position(|&n| n != 1) {
        return Err(bad(format!("A's row {} is not the input row of signal {i}", num_constraints + i)));
    }
    if let Some(e) = b.par_iter().find_first(|e| e.row as usize >= num_constraints) {
        return Err(bad(format!("B has row {}, past the {num_constraints} constraints", e.row)));
    }
    let needed = (num_constraints + num_instance).next_power_of_two();
    if needed != domain_size {
        return Err(bad(format!(
            "{num_constraints} constraints and {num_instance} input rows need a domain of {needed}, the header says \
             {domain_size}"
        )));
    }
    a.par_iter_mut().chain(b.par_iter_mut()).for_each(|e| e.row = reindex.row(e.row as usize) as u32);
    let (a, b) = rayon::join(
        || compressed(a, domain_size, num_variables, "A"),
        || compressed(b, domain_size, num_variables, "B"),
    );
    let (a, b) = (a?, b?);
    Ok(CompiledCircuit::in_domain_order(num_instance, num_constraints, a, b, Qap::Snarkjs)?)
}

/// Entries in any order into compressed rows (file order within a row); every row is in
/// range already, and there are fewer than 2^32 entries (their count is a u32).
fn compressed(
    entries: Vec<Entry>,
    rows: usize,
    columns: usize,
    name: &'static str,
) -> Result<SparseMatrix, CircomError> {
    let mut starts = vec![0u32; rows + 1];
    for e in &entries {
        starts[e.row as usize + 1] += 1;
    }
    for r in 0..rows {
        starts[r + 1] += starts[r];
    }
    let mut next = starts.clone();
    let mut cols = vec![0u32; entries.len()];
    let mut coeffs = vec![Fr::from(0u64); entries.len()];
    for e in entries {
        let slot = &mut next[e.row as usize];
        cols[*slot as usize] = e.col;
        coeffs[*slot as usize] = e.value;
        *slot += 1;
    }
    SparseMatrix::from_parts(columns, starts, cols, coeffs)
        .map_err(|source| CircomError::Circuit(crate::compiled::CompileError::Matrix { matrix: name, source }))
}
