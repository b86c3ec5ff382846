//! circom's `.r1cs`: a circuit's constraints over one prime field (version 1).
//!
//! ```text
//! section 1, header       u32 field size n8, the prime (n8 bytes), u32 wires, u32 public
//!                         outputs, u32 public inputs, u32 private inputs, u64 labels,
//!                         u32 constraints
//! section 2, constraints  per constraint three linear combinations A, B, C, each
//!                         u32 terms, then per term u32 wire and an n8-byte canonical value
//! section 3, wire map     u64 label per wire (optional)
//! sections 4 and 5        custom gates (PLONK only: refused)
//! ```
//!
//! Wires are ordered z = [1, public outputs, public inputs, private inputs, internal…], so a
//! circuit's instance is its first 1 + outputs + public inputs wires.

use std::path::Path;

use super::binfile::{BinFile, Cursor, FileKind};
use super::{field, CircomError};
use g16_backend::SparseMatrix;
use crate::compiled::CompiledCircuit;
use crate::prover::Qap;
use crate::curve::Fr;

const KIND: FileKind = FileKind::R1cs;
const VERSION: u32 = 1;
const HEADER: u32 = 1;
const CONSTRAINTS: u32 = 2;
const WIRE_MAP: u32 = 3;
const CUSTOM_GATES: [u32; 2] = [4, 5];

/// The constraints of a circom circuit, over BLS12-381's scalar field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct R1cs {
    /// Wires, the constant 1 included: the length of an assignment.
    pub num_wires: usize,
    pub num_outputs: usize,
    pub num_public_inputs: usize,
    pub num_private_inputs: usize,
    /// Signals before the compiler's optimisation (the symbol file's count).
    pub num_labels: u64,
    /// One row per constraint, each.
    pub a: SparseMatrix,
    pub b: SparseMatrix,
    pub c: SparseMatrix,
}

impl R1cs {
    pub fn read(path: &Path) -> Result<R1cs, CircomError> {
        Self::from_bytes(&super::read_file(path)?)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<R1cs, CircomError> {
        let file = BinFile::parse(bytes, KIND, VERSION)?;
        for id in CUSTOM_GATES {
            if file.optional(id, "custom gates")?.is_some() {
                return Err(CircomError::CustomGates);
            }
        }
        let mut h = file.unique(HEADER, "header")?.cursor(KIND);
        field::expect_fr(&mut h, "the circuit's prime")?;
        let num_wires = h.count("the wire count")?;
        let num_outputs = h.count("the output count")?;
        let num_public_inputs = h.count("the public input count")?;
        let num_private_inputs = h.count("the private input count")?;
        let num_labels = h.u64("the label count")?;
        let num_constraints = h.count("the constraint count")?;
        h.finish("the header")?;
        let signals = [num_outputs, num_public_inputs, num_private_inputs].iter().map(|&n| n as u64).sum::<u64>();
        if num_wires == 0 || signals + 1 > num_wires as u64 {
            return Err(h.malformed(format!(
                "{num_wires} wires cannot hold the constant, {num_outputs} outputs, {num_public_inputs} public \
                 and {num_private_inputs} private inputs"
            )));
        }

        let mut c = file.unique(CONSTRAINTS, "constraints")?.cursor(KIND);
        let ([a, b, cm], used) = read_constraints(&mut c, num_constraints, num_wires)?;
        let (a, b, c) = (a.finish(num_wires, "A")?, b.finish(num_wires, "B")?, cm.finish(num_wires, "C")?);

        // The header's wire count sizes every assignment, and with it the prover's buffers: it
        // must be backed by bytes of the file (the wire map's), or by the wires the constraints use.
        match file.optional(WIRE_MAP, "wire map")? {
            Some(map) => {
                let mut m = map.cursor(KIND);
                m.items(num_wires as u64, 8, "the wire map")?;
                m.finish("the wire map")?;
            }
            None if num_wires > used => {
                return Err(CircomError::Malformed {
                    at: super::At { kind: KIND, section: Some(HEADER), offset: 0 },
                    detail: format!("{num_wires} wires claimed, the constraints use {used}, and there is no wire map"),
                });
            }
            None => {}
        }
        Ok(R1cs { num_wires, num_outputs, num_public_inputs, num_private_inputs, num_labels, a, b, c })
    }

    /// Instance variables: the constant 1, the public outputs and the public inputs.
    pub fn num_instance(&self) -> usize {
        1 + self.num_outputs + self.num_public_inputs
    }

    pub fn num_constraints(&self) -> usize {
        self.a.rows()
    }

    /// The compiled circuit of these constraints, proved with `qap`'s reduction. C is kept
    /// with either QAP, so that the device's check names an unsatisfied row. Rows are in
    /// constraint order, g16's own layout: a key that snarkjs made places them elsewhere in
    /// the domain, so prove a `.zkey` with the circuit read from it ([`super::Zkey`]).
    pub fn into_circuit(self, qap: Qap) -> Result<CompiledCircuit, CircomError> {
        let num_instance = self.num_instance();
        Ok(CompiledCircuit::from_r1cs(num_instance, self.a, self.b, Some(self.c), qap)?)
    }
}

/// A matrix's compressed rows as they are read, one constraint at a time.
struct Rows {
    starts: Vec<u32>,
    cols: Vec<u32>,
    coeffs: Vec<Fr>,
}

impl Rows {
    fn with_rows(rows: usize) -> Rows {
        let mut starts = Vec::with_capacity(rows + 1);
        starts.push(0);
        Rows { starts, cols: Vec::new(), coeffs: Vec::new() }
    }

    fn finish(self, columns: usize, matrix: &'static str) -> Result<SparseMatrix, CircomError> {
        SparseMatrix::from_parts(columns, self.starts, self.cols, self.coeffs)
            .map_err(|source| CircomError::Circuit(crate::compiled::CompileError::Matrix { matrix, source }))
    }
}

/// Reads the constraints into A, B and C, and returns with them the number of wires used
/// (the highest wire referenced, plus one).
fn read_constraints(
    c: &mut Cursor<'_>,
    num_constraints: usize,
    num_wires: usize,
) -> Result<([Rows; 3], usize), CircomError> {
    // Each constraint holds at least its three term counts: checked before the row starts
    // are allocated for what the header claims.
    if (num_constraints as u64) * 12 > c.left() as u64 {
        let (at, left) = (c.here(), c.left());
        return Err(CircomError::Truncated { at, what: "the constraints", needed: num_constraints as u64 * 12, left });
    }
    let mut m = [Rows::with_rows(num_constraints), Rows::with_rows(num_constraints), Rows::with_rows(num_constraints)];
    let mut used = 0usize;
    for _ in 0..num_constraints {
        for rows in m.iter_mut() {
            let terms = c.u32("a linear combination's term count")?;
            let at = c.here();
            let bytes = c.items(terms as u64, 4 + 32, "a linear combination's terms")?;
            for (i, term) in bytes.chunks_exact(36).enumerate() {
                let wire = u32::from_le_bytes([term[0], term[1], term[2], term[3]]);
                let term_at = field::element_at(at, i, 36);
                if wire as usize >= num_wires {
                    return Err(CircomError::Malformed { at: term_at, detail: format!("wire {wire} of {num_wires}") });
                }
                let value =
                    field::fr(&term[4..]).ok_or(CircomError::NotCanonical { at: term_at, what: "a coefficient" })?;
                used = used.max(wire as usize + 1);
                rows.cols.push(wire);
                rows.coeffs.push(value);
            }
            let end = u32::try_from(rows.cols.len()).map_err(|_| c.malformed("more than 2^32 terms in one matrix"))?;
            rows.starts.push(end);
        }
    }
    c.finish("the last constraint")?;
    Ok((m, used))
}
