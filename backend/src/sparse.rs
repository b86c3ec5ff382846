//! Sparse matrices: the R1CS of a compiled circuit, A, B and C, resident on a device like a
//! key's bases, so that a proof needs only its assignment z and computes a = A·z, b = B·z,
//! c = C·z where they are used.
//!
//! Compressed sparse rows: row r's entries are `cols[starts[r]..starts[r + 1]]` with
//! `coeffs[…]` beside them. Indices are 32-bit: a matrix holds fewer than 2^32 entries and
//! multiplies vectors of fewer than 2^32 elements, which every device's indices can address.
//! The GPU backends hold a matrix in one array of words ([`packed`]).

pub mod packed;

use rayon::prelude::*;

use crate::buffer::{DeviceBuffer, Element};
use crate::error::{BackendError, BackendResult};
use crate::curve::Fr;

/// Why a matrix cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MatrixError {
    #[error("row {row} refers to column {col}, but the vector has {columns} columns")]
    ColumnOutOfRange { row: usize, col: usize, columns: usize },
    #[error("{what} ({got}) does not fit 32-bit indices")]
    TooLarge { what: &'static str, got: usize },
}

/// A sparse matrix over Fr in compressed rows, with the width of the vectors it multiplies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseMatrix {
    columns: usize,
    starts: Vec<u32>,
    cols: Vec<u32>,
    coeffs: Vec<Fr>,
}

impl SparseMatrix {
    /// A matrix of `columns` columns from its rows, each a list of (coefficient, column) as
    /// arkworks writes them. Repeated columns in a row are kept (their products add up).
    pub fn from_rows<'a>(
        columns: usize,
        rows: impl IntoIterator<Item = &'a [(Fr, usize)]>,
    ) -> Result<SparseMatrix, MatrixError> {
        let mut m = SparseMatrix { columns, starts: vec![0], cols: Vec::new(), coeffs: Vec::new() };
        for (row, entries) in rows.into_iter().enumerate() {
            for &(coeff, col) in entries {
                if col >= columns {
                    return Err(MatrixError::ColumnOutOfRange { row, col, columns });
                }
                m.cols.push(col as u32);
                m.coeffs.push(coeff);
            }
            let end = u32::try_from(m.cols.len())
                .map_err(|_| MatrixError::TooLarge { what: "entries", got: m.cols.len() })?;
            m.starts.push(end);
        }
        if u32::try_from(columns).is_err() {
            return Err(MatrixError::TooLarge { what: "columns", got: columns });
        }
        Ok(m)
    }

    /// A matrix from its parts, checked: `starts` begins at 0, never decreases and ends at the
    /// number of entries, and every column is below `columns`.
    pub fn from_parts(
        columns: usize,
        starts: Vec<u32>,
        cols: Vec<u32>,
        coeffs: Vec<Fr>,
    ) -> Result<SparseMatrix, MatrixError> {
        let bad = |what| MatrixError::TooLarge { what, got: 0 };
        if starts.first() != Some(&0)
            || starts.windows(2).any(|w| w[0] > w[1])
            || starts.last().map(|&e| e as usize) != Some(cols.len())
            || cols.len() != coeffs.len()
        {
            return Err(bad("row starts that do not delimit the entries"));
        }
        let m = SparseMatrix { columns, starts, cols, coeffs };
        for row in 0..m.rows() {
            if let Some(&col) = m.row(row).0.iter().find(|&&c| c as usize >= columns) {
                return Err(MatrixError::ColumnOutOfRange { row, col: col as usize, columns });
            }
        }
        Ok(m)
    }

    pub fn rows(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Stored entries (nonzeros, repeats included).
    pub fn entries(&self) -> usize {
        self.cols.len()
    }

    /// Row `r`'s columns and coefficients.
    pub fn row(&self, r: usize) -> (&[u32], &[Fr]) {
        let (lo, hi) = (self.starts[r] as usize, self.starts[r + 1] as usize);
        (&self.cols[lo..hi], &self.coeffs[lo..hi])
    }

    /// The compressed rows as they are stored: row starts, columns, coefficients.
    pub fn parts(&self) -> (&[u32], &[u32], &[Fr]) {
        (&self.starts, &self.cols, &self.coeffs)
    }

    /// `out[r] = Σ coeff·z[col]` over row r, for r < `out.len()` (rows past the matrix are 0);
    /// on the host, in parallel: the reference every device's product is checked against.
    pub fn mul_vector_into(&self, z: &[Fr], out: &mut [Fr]) {
        out.par_iter_mut().enumerate().for_each(|(r, o)| {
            *o = if r < self.rows() {
                let (cols, coeffs) = self.row(r);
                cols.iter().zip(coeffs).map(|(&c, k)| z[c as usize] * k).sum()
            } else {
                Fr::from(0u64)
            }
        });
    }
}

impl SparseMatrix {
    /// `out[col] = Σ_r u[r]·coeff` over the entries (r, col) of rows r < `u.len()`: the
    /// transposed product, which evaluates a QAP's column polynomials at a point from the
    /// Lagrange basis values u (key generation). `out` is as long as the matrix is wide.
    ///
    /// In parallel over ranges of columns: each range scans every entry's column and
    /// multiplies only its own, so the products are done once and no thread needs a
    /// full-width accumulator (2^24 columns of 32 bytes each, per thread, at 2^24 rows).
    pub fn mul_transpose_into(&self, u: &[Fr], out: &mut [Fr]) {
        let rows = self.rows().min(u.len());
        let per = out.len().div_ceil(rayon::current_num_threads().max(1)).max(1 << 12);
        out.par_chunks_mut(per).enumerate().for_each(|(k, part)| {
            part.fill(Fr::from(0u64));
            let (lo, hi) = (k * per, k * per + part.len());
            for (r, ur) in u.iter().enumerate().take(rows) {
                let (cols, coeffs) = self.row(r);
                for (&c, coeff) in cols.iter().zip(coeffs) {
                    let c = c as usize;
                    if (lo..hi).contains(&c) {
                        part[c - lo] += *ur * coeff;
                    }
                }
            }
        });
    }
}

/// The element a [`MatrixBuffer`] counts: one row of a sparse matrix (its entries live with it
/// in the backend's storage).
pub struct SparseRow;

impl Element for SparseRow {
    const NAME: &'static str = "sparse row";
    /// A row start; a row's entries (4 + 32 bytes each) come on top.
    const HOST_BYTES: usize = 4;
}

/// A sparse matrix on a device: `len()` is its number of rows.
pub type MatrixBuffer = DeviceBuffer<SparseRow>;

/// Checks a product's operands: z as long as the matrix is wide, out at least as long as it
/// is high.
pub fn check_spmv(columns: usize, rows: usize, z_len: usize, out_len: usize) -> BackendResult<()> {
    if z_len < columns {
        return Err(BackendError::LengthMismatch { op: "spmv (vector)", expected: columns, got: z_len });
    }
    if out_len < rows {
        return Err(BackendError::LengthMismatch { op: "spmv (output)", expected: rows, got: out_len });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_multiply_and_rows_past_the_matrix_are_zero() {
        let f = |x: u64| Fr::from(x);
        let rows: Vec<Vec<(Fr, usize)>> = vec![vec![(f(2), 0), (f(3), 2)], vec![], vec![(f(5), 1), (f(1), 1)]];
        let m = SparseMatrix::from_rows(3, rows.iter().map(Vec::as_slice)).unwrap();
        assert_eq!((m.rows(), m.columns(), m.entries()), (3, 3, 4));
        let z = [f(7), f(11), f(13)];
        let mut out = vec![f(99); 5];
        m.mul_vector_into(&z, &mut out);
        assert_eq!(out, vec![f(2 * 7 + 3 * 13), f(0), f(5 * 11 + 11), f(0), f(0)]);
    }

    #[test]
    fn the_transposed_product_is_the_columns_sums() {
        // Wide enough for several column ranges; rows past u's length do not count.
        let (columns, rows) = (10_000usize, 300usize);
        let f = |x: usize| Fr::from(x as u64);
        let entries: Vec<Vec<(Fr, usize)>> =
            (0..rows).map(|r| vec![(f(r + 1), (r * 37) % columns), (f(3), (r * 7919) % columns), (f(2), 5)]).collect();
        let m = SparseMatrix::from_rows(columns, entries.iter().map(Vec::as_slice)).unwrap();
        let u: Vec<Fr> = (0..rows - 1).map(|r| f(r * r + 1)).collect();
        let mut want = vec![Fr::from(0u64); columns];
        for (r, row) in entries.iter().enumerate().take(u.len()) {
            for &(k, c) in row {
                want[c] += u[r] * k;
            }
        }
        let mut out = vec![f(99); columns];
        m.mul_transpose_into(&u, &mut out);
        assert_eq!(out, want);
    }

    #[test]
    fn bad_matrices_are_refused() {
        let rows = [vec![(Fr::from(1u64), 3)]];
        assert_eq!(
            SparseMatrix::from_rows(3, rows.iter().map(Vec::as_slice)),
            Err(MatrixError::ColumnOutOfRange { row: 0, col: 3, columns: 3 })
        );
        assert!(SparseMatrix::from_parts(2, vec![0, 2, 1], vec![0, 1], vec![Fr::from(1u64); 2]).is_err());
        assert!(SparseMatrix::from_parts(2, vec![0, 1], vec![5], vec![Fr::from(1u64)]).is_err());
        assert!(SparseMatrix::from_parts(2, vec![1, 1], vec![1], vec![Fr::from(1u64)]).is_err());
        assert!(SparseMatrix::from_parts(2, vec![0, 1], vec![1], vec![Fr::from(1u64)]).is_ok());
        assert!(check_spmv(3, 4, 2, 4).is_err() && check_spmv(3, 4, 3, 3).is_err() && check_spmv(3, 4, 3, 4).is_ok());
    }
}
