//! Compiled circuits: the R1CS of one circuit shape, made once, kept resident on a device
//! like a proving key, so that each proof needs only its assignment z.
//!
//! Every partition of a job has the same constraints and a different witness; synthesizing
//! the constraint system for each (millions of linear combinations) only to evaluate
//! a = A·z, b = B·z and c = C·z made synthesis most of a proof's time. A compiled circuit holds
//! A, B, C as sparse matrices; [`witness`] runs an arkworks circuit without building them;
//! the device computes a, b, c and checks a∘b = c row by row.
//!
//! The libsnark reduction (arkworks') appends one row per instance variable to the
//! constraints: a = z_i, b = c = 0, which makes the inputs independent in the QAP. A compiled
//! circuit keeps those rows in A (so A has `num_constraints + num_instance` rows, B and C
//! `num_constraints`); snarkjs appends the same rows. The domain is the next power of two of
//! `num_constraints + num_instance`, as both provers size it.

mod arkworks;
pub mod file;
pub mod shape;

use g16_backend::sparse::MatrixError;
use g16_backend::SparseMatrix;
use crate::curve::Fr;

pub use arkworks::{compile, witness};
pub use shape::{KeyShape, MatrixSize, Qap, ShapeMismatch};

/// Why a circuit cannot be compiled, or a compiled circuit read.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("synthesis failed: {0}")]
    Synthesis(ark_relations::gr1cs::SynthesisError),
    #[error("the circuit uses the non-R1CS predicate '{predicate}'; Groth16 proves R1CS only")]
    NotR1cs { predicate: String },
    #[error("matrix {matrix}: {source}")]
    Matrix { matrix: &'static str, source: MatrixError },
    #[error("the circuit is inconsistent: {0}")]
    Inconsistent(String),
    #[error("{rows} constraint rows need a domain larger than Fr supports (2^{max_log2})")]
    DomainTooLarge { rows: usize, max_log2: u32 },
    #[error(transparent)]
    File(#[from] file::FileError),
}

/// A compiled circuit's counts: what a key and an assignment must agree with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CircuitShape {
    /// Instance variables, the constant 1 included.
    pub num_instance: usize,
    pub num_variables: usize,
    pub num_constraints: usize,
    pub qap: Qap,
}

impl CircuitShape {
    /// The QAP domain: the next power of two of constraints + instance variables.
    pub fn domain_size(&self) -> usize {
        (self.num_constraints + self.num_instance).next_power_of_two()
    }

    /// Checks that a key was made for this shape: the same instance and variable counts,
    /// domain and QAP. (A key of another circuit of the same shape passes here; the proof it
    /// makes does not verify.)
    pub fn check_key(&self, key: &KeyShape) -> Result<(), ShapeMismatch> {
        let checks = [
            ("instance variables", key.num_instance, self.num_instance),
            ("variables", key.num_variables, self.num_variables),
            ("domain size", key.domain_size, self.domain_size()),
        ];
        for (what, key, circuit) in checks {
            if key != circuit {
                return Err(ShapeMismatch::Key { what, key, circuit });
            }
        }
        if key.qap != self.qap {
            return Err(ShapeMismatch::Qap { key: key.qap, circuit: self.qap });
        }
        Ok(())
    }

    /// Checks an assignment's length and its leading 1.
    pub fn check_assignment(&self, z: &[Fr]) -> Result<(), ShapeMismatch> {
        if z.len() != self.num_variables {
            return Err(ShapeMismatch::WitnessLength { expected: self.num_variables, got: z.len() });
        }
        if z[0] != Fr::from(1u64) {
            return Err(ShapeMismatch::WitnessConstant);
        }
        Ok(())
    }
}

/// The R1CS of one circuit shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledCircuit {
    num_instance: usize,
    num_variables: usize,
    num_constraints: usize,
    /// The constraints' A rows, then one row per instance variable (a = z_i).
    a: SparseMatrix,
    b: SparseMatrix,
    /// `None` where c = a∘b stands for C (a snarkjs key carries A and B alone).
    c: Option<SparseMatrix>,
    qap: Qap,
}

impl CompiledCircuit {
    /// Its matrices' entries, rows and count: what a device plan counts them by.
    pub fn matrix_size(&self) -> MatrixSize {
        let mut size = MatrixSize { entries: 0, rows: 0, matrices: 0 };
        for m in [Some(&self.a), Some(&self.b), self.c.as_ref()].into_iter().flatten() {
            size.entries += m.entries() as u64;
            size.rows += m.rows() as u64;
            size.matrices += 1;
        }
        size
    }

    /// A compiled circuit from its R1CS: `num_instance` instance variables (the constant 1
    /// included) of `a.columns()` variables, A, B and C of one row per constraint. The input
    /// rows of the libsnark reduction are appended to A here.
    pub fn from_r1cs(
        num_instance: usize,
        a: SparseMatrix,
        b: SparseMatrix,
        c: Option<SparseMatrix>,
        qap: Qap,
    ) -> Result<CompiledCircuit, CompileError> {
        let num_constraints = a.rows();
        let num_variables = a.columns();
        let input_rows: Vec<Vec<(Fr, usize)>> = (0..num_instance).map(|i| vec![(Fr::from(1u64), i)]).collect();
        let a_rows: Vec<Vec<(Fr, usize)>> = (0..num_constraints)
            .map(|r| {
                let (cols, coeffs) = a.row(r);
                cols.iter().zip(coeffs).map(|(&c, &k)| (k, c as usize)).collect()
            })
            .chain(input_rows)
            .collect();
        let a = SparseMatrix::from_rows(num_variables, a_rows.iter().map(Vec::as_slice))
            .map_err(|source| CompileError::Matrix { matrix: "A", source })?;
        Self::with_input_rows(num_instance, num_constraints, a, b, c, qap)
    }

    /// A compiled circuit whose A already ends with the input rows (as a snarkjs key stores it).
    pub fn with_input_rows(
        num_instance: usize,
        num_constraints: usize,
        a: SparseMatrix,
        b: SparseMatrix,
        c: Option<SparseMatrix>,
        qap: Qap,
    ) -> Result<CompiledCircuit, CompileError> {
        // Saturating: the counts may come from a file, and a sum past usize is refused below.
        let a_rows = num_constraints.saturating_add(num_instance);
        Self::checked(num_instance, num_constraints, a, a_rows, b, c, num_constraints, qap)
    }

    /// A compiled circuit whose A and B hold one row per point of the domain, in the domain's
    /// order (the input rows among them), with c = a∘b. A snarkjs key puts constraint i at
    /// snarkjs's ωⁱ, which is another point of g16's domain: its reader re-indexes the rows
    /// (`circom::zkey`), and the layout is then no longer constraints-then-inputs (nor one
    /// that a compiled-circuit file holds: its reader expects constraints, then inputs).
    pub fn in_domain_order(
        num_instance: usize,
        num_constraints: usize,
        a: SparseMatrix,
        b: SparseMatrix,
        qap: Qap,
    ) -> Result<CompiledCircuit, CompileError> {
        let n = num_constraints.saturating_add(num_instance).checked_next_power_of_two().unwrap_or(0);
        Self::checked(num_instance, num_constraints, a, n, b, None, n, qap)
    }

    /// The counts checked against each other and the matrices: A of exactly `a_rows` rows,
    /// B and C of at most `bc_rows`, every matrix as wide as A.
    #[allow(clippy::too_many_arguments)] // reason: the two constructors' shared checks, private
    fn checked(
        num_instance: usize,
        num_constraints: usize,
        a: SparseMatrix,
        a_rows: usize,
        b: SparseMatrix,
        c: Option<SparseMatrix>,
        bc_rows: usize,
        qap: Qap,
    ) -> Result<CompiledCircuit, CompileError> {
        let num_variables = a.columns();
        let bad = |what: String| Err(CompileError::Inconsistent(what));
        if num_instance == 0 || num_instance > num_variables {
            return bad(format!("{num_instance} instance variables of {num_variables}"));
        }
        if a.rows() != a_rows {
            return bad(format!("A has {} rows, expected {a_rows} ({num_constraints} + {num_instance})", a.rows()));
        }
        for (name, m) in [("B", Some(&b)), ("C", c.as_ref())] {
            let Some(m) = m else { continue };
            if m.rows() > bc_rows || m.columns() != num_variables {
                return bad(format!(
                    "{name} is {}×{}, expected at most {bc_rows} rows of {num_variables} columns",
                    m.rows(),
                    m.columns()
                ));
            }
        }
        let rows = num_constraints.saturating_add(num_instance);
        let max_log2 = g16_backend::domain::MAX_NTT_LOG2;
        if rows.checked_next_power_of_two().is_none_or(|n| n.trailing_zeros() > max_log2) {
            return Err(CompileError::DomainTooLarge { rows, max_log2 });
        }
        Ok(CompiledCircuit { num_instance, num_variables, num_constraints, a, b, c, qap })
    }

    /// Instance variables, the constant 1 included.
    pub fn num_instance(&self) -> usize {
        self.num_instance
    }

    /// The length of an assignment z = [1, public inputs…, witness…].
    pub fn num_variables(&self) -> usize {
        self.num_variables
    }

    pub fn num_constraints(&self) -> usize {
        self.num_constraints
    }

    /// The QAP domain: the next power of two of constraints + instance variables.
    pub fn domain_size(&self) -> usize {
        self.shape().domain_size()
    }

    pub fn qap(&self) -> Qap {
        self.qap
    }

    /// A (with the input rows), B and C (`None` where c = a∘b).
    pub fn matrices(&self) -> (&SparseMatrix, &SparseMatrix, Option<&SparseMatrix>) {
        (&self.a, &self.b, self.c.as_ref())
    }

    /// The counts a key and an assignment are checked against.
    pub fn shape(&self) -> CircuitShape {
        CircuitShape {
            num_instance: self.num_instance,
            num_variables: self.num_variables,
            num_constraints: self.num_constraints,
            qap: self.qap,
        }
    }

    /// See [`CircuitShape::check_key`].
    pub fn check_key(&self, key: &KeyShape) -> Result<(), ShapeMismatch> {
        self.shape().check_key(key)
    }

    /// See [`CircuitShape::check_assignment`].
    pub fn check_assignment(&self, z: &[Fr]) -> Result<(), ShapeMismatch> {
        self.shape().check_assignment(z)
    }

    /// a, b, c of `z` on the host, padded to the domain (c = a∘b where the circuit has no C):
    /// the reference the devices' products are checked against.
    pub fn evaluate(&self, z: &[Fr]) -> [Vec<Fr>; 3] {
        let n = self.domain_size();
        let mut a = vec![Fr::from(0u64); n];
        let mut b = vec![Fr::from(0u64); n];
        let mut c = vec![Fr::from(0u64); n];
        self.a.mul_vector_into(z, &mut a);
        self.b.mul_vector_into(z, &mut b);
        match &self.c {
            Some(m) => m.mul_vector_into(z, &mut c),
            None => c.iter_mut().zip(a.iter().zip(&b)).for_each(|(c, (a, b))| *c = *a * b),
        }
        [a, b, c]
    }
}

#[cfg(test)]
mod tests;
