//! The synthetic circuit's R1CS written down directly: the matrices synthesis in setup mode
//! gives (the tests hold them equal), without a constraint system.
//!
//! Why: arkworks' constraint system keeps every linear combination of every constraint until
//! it is finalized, which at 2^26 rows is tens of GiB and a minute of one core, for a circuit
//! whose rows are four fixed patterns. Written directly, 2^26 rows take a second and only the
//! matrices' own memory, which is what key generation and proofs at Filecoin's partition
//! sizes need.
//!
//! Variables, in arkworks' numbering (instance variables first, then witnesses in allocation
//! order): 0 is the constant one, 1 the start x₀, 2 the output; group g's witnesses are
//! b₀, b₁, b₂, y, x′ at 3 + 5g … 3 + 5g + 4, and the final multiplier y is the last variable.

use ark_ff::Field;
use rayon::prelude::*;

use g16_backend::SparseMatrix;
use crate::compiled::{CompileError, CompiledCircuit, MatrixSize, Qap};
use crate::curve::Fr;

/// Instance variables: the constant one, x₀ and the output.
const NUM_INSTANCE: usize = 3;
/// Witness variables a group allocates.
const GROUP_VARIABLES: usize = 5;
/// Rows a group writes.
const GROUP_ROWS: usize = super::GROUP_CONSTRAINTS;
/// Entries a group writes into A, B and C: (1+1+1+2, 1+2+2+2, 1+0+0+2).
const GROUP_ENTRIES: [usize; 3] = [5, 7, 3];

/// A term of a row: (coefficient, column), as arkworks' matrices write it.
type Term = (Fr, u32);

/// Appends group `g`'s rows to A, B and C (`out[m]` is (cols, coeffs) of matrix m), each
/// row's terms by ascending column, as arkworks' finalized matrices order them.
fn write_group(g: usize, out: &mut [(Vec<u32>, Vec<Fr>); 3]) {
    let one = Fr::ONE;
    let minus = -Fr::ONE;
    let base = (NUM_INSTANCE + GROUP_VARIABLES * g) as u32;
    let [b0, b1, b2, y, next] = [base, base + 1, base + 2, base + 3, base + 4];
    // The accumulator entering the group: x₀, or the previous group's x′.
    let x = if g == 0 { 1 } else { base - 1 };
    let rows: [[&[Term]; GROUP_ROWS]; 3] = [
        // A: b₀ | b₁ | b₂ | x + b₀
        [&[(one, b0)], &[(one, b1)], &[(one, b2)], &[(one, x), (one, b0)]],
        // B: b₀ | 1 − b₁ | 1 − b₂ | y + b₁
        [&[(one, b0)], &[(one, 0), (minus, b1)], &[(one, 0), (minus, b2)], &[(one, b1), (one, y)]],
        // C: b₀ | – | – | x′ − b₂
        [&[(one, b0)], &[], &[], &[(minus, b2), (one, next)]],
    ];
    for (m, rows) in rows.iter().enumerate() {
        for row in rows {
            for &(k, col) in row.iter() {
                out[m].0.push(col);
                out[m].1.push(k);
            }
        }
    }
}

/// The variables and matrix sizes of the circuit of `groups` groups, counted: what
/// [`compile`] would build.
pub(crate) fn planned_size(groups: usize) -> (usize, MatrixSize) {
    let g = groups as u64;
    // The groups', the last row's (1 + 1 + 2) and A's input rows' (one each).
    let entries = GROUP_ENTRIES.iter().map(|&e| e as u64 * g).sum::<u64>() + 4 + NUM_INSTANCE as u64;
    let constraints = g * GROUP_ROWS as u64 + 1;
    let rows = 3 * constraints + NUM_INSTANCE as u64;
    (NUM_INSTANCE + GROUP_VARIABLES * groups + 1, MatrixSize { entries, rows, matrices: 3 })
}

/// The compiled synthetic circuit of `groups` groups: the matrices `compile` gives for it.
pub(crate) fn compile(groups: usize) -> Result<CompiledCircuit, CompileError> {
    let num_variables = NUM_INSTANCE + GROUP_VARIABLES * groups + 1;
    let last_y = (num_variables - 1) as u32;
    let last_b2 = (NUM_INSTANCE + GROUP_VARIABLES * (groups - 1) + 2) as u32;
    let last_x = (NUM_INSTANCE + GROUP_VARIABLES * (groups - 1) + 4) as u32;
    // Groups in parallel, in stretches whose entries are concatenated in order.
    const STRETCH: usize = 1 << 14;
    let stretches: Vec<[(Vec<u32>, Vec<Fr>); 3]> = (0..groups.div_ceil(STRETCH))
        .into_par_iter()
        .map(|s| {
            let range = s * STRETCH..((s + 1) * STRETCH).min(groups);
            let mut out: [(Vec<u32>, Vec<Fr>); 3] =
                GROUP_ENTRIES.map(|e| (Vec::with_capacity(e * range.len()), Vec::with_capacity(e * range.len())));
            range.for_each(|g| write_group(g, &mut out));
            out
        })
        .collect();
    // The last row: x · y = out − b₂ of the last group.
    let last: [&[Term]; 3] = [&[(Fr::ONE, last_x)], &[(Fr::ONE, last_y)], &[(Fr::ONE, 2), (-Fr::ONE, last_b2)]];
    let constraints = groups * GROUP_ROWS + 1;
    let mut matrices = Vec::with_capacity(3);
    for m in 0..3 {
        // A ends with the libsnark reduction's input rows: a = z_i for each instance variable.
        let inputs = if m == 0 { NUM_INSTANCE } else { 0 };
        let total = GROUP_ENTRIES[m] * groups + last[m].len() + inputs;
        let (mut cols, mut coeffs) = (Vec::with_capacity(total), Vec::with_capacity(total));
        for s in &stretches {
            cols.extend_from_slice(&s[m].0);
            coeffs.extend_from_slice(&s[m].1);
        }
        cols.extend(last[m].iter().map(|t| t.1));
        coeffs.extend(last[m].iter().map(|t| t.0));
        cols.extend(0..inputs as u32);
        coeffs.extend(std::iter::repeat_n(Fr::ONE, inputs));
        let starts = row_starts(m, groups, inputs)?;
        let name = ["A", "B", "C"][m];
        matrices.push(
            SparseMatrix::from_parts(num_variables, starts, cols, coeffs)
                .map_err(|source| CompileError::Matrix { matrix: name, source })?,
        );
    }
    let c = matrices.pop();
    let b = matrices.pop().unwrap_or_default();
    let a = matrices.pop().unwrap_or_default();
    CompiledCircuit::with_input_rows(NUM_INSTANCE, constraints, a, b, c, Qap::Libsnark)
}

/// Matrix m's row starts: each group's four rows, the last row, then `inputs` rows of one entry.
fn row_starts(m: usize, groups: usize, inputs: usize) -> Result<Vec<u32>, CompileError> {
    // Entries of each of a group's rows, per matrix, and of the last row.
    const ROW_ENTRIES: [[u32; GROUP_ROWS]; 3] = [[1, 1, 1, 2], [1, 2, 2, 2], [1, 0, 0, 2]];
    const LAST_ENTRIES: [u32; 3] = [1, 1, 2];
    let too_large = |what| CompileError::Matrix {
        matrix: ["A", "B", "C"][m],
        source: g16_backend::sparse::MatrixError::TooLarge { what, got: groups },
    };
    let per_group = GROUP_ENTRIES[m] as u64;
    if per_group * groups as u64 + 8 > u32::MAX as u64 {
        return Err(too_large("entries"));
    }
    let rows = groups * GROUP_ROWS + 1 + inputs;
    let mut starts = Vec::with_capacity(rows + 1);
    starts.push(0u32);
    let mut end = 0u32;
    for _ in 0..groups {
        for e in ROW_ENTRIES[m] {
            end += e;
            starts.push(end);
        }
    }
    end += LAST_ENTRIES[m];
    starts.push(end);
    for _ in 0..inputs {
        end += 1;
        starts.push(end);
    }
    Ok(starts)
}
