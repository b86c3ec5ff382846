//! A bellpepper circuit's R1CS, recorded in setup mode into a g16 compiled circuit.
//!
//! The recorder never calls an allocation's closure, as bellperson's own setup does not: the
//! system it records is the one a parameter file was made from, and a blank circuit (no
//! witness, as `CompoundProof::blank_circuit` gives) records it. Coefficients that are zero are
//! dropped, as bellperson's density trackers drop them, so a variable is present in a matrix
//! exactly when bellperson's parameters hold a point for it.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use ff::Field;
use g16::backend::SparseMatrix;
use g16::compiled::{CompileError, CompiledCircuit, Qap};
use g16::Fr;
use rayon::prelude::*;

use crate::scalar::to_fr;
use crate::{BellpersonError, Scalar};

/// A recorded column is an input's index, or an aux variable's with this bit set: the two are
/// laid out as g16's z = [inputs…, aux…] once the circuit is done and the input count known.
const AUX: u32 = 1 << 31;

/// One matrix's rows as they are recorded (compressed sparse rows).
struct Rows {
    starts: Vec<u32>,
    cols: Vec<u32>,
    coeffs: Vec<Fr>,
}

impl Rows {
    fn new() -> Rows {
        Rows { starts: vec![0], cols: Vec::new(), coeffs: Vec::new() }
    }

    /// One row: the nonzero terms of `lc`, whose variables must have been allocated.
    fn push(&mut self, lc: &LinearCombination<Scalar>, inputs: usize, aux: usize) -> Result<(), String> {
        for (var, coeff) in lc.iter() {
            if coeff.is_zero_vartime() {
                continue;
            }
            let col = match var.get_unchecked() {
                Index::Input(i) if i < inputs => i as u32,
                Index::Aux(j) if j < aux => AUX | j as u32,
                index => return Err(format!("a constraint names {index:?}, which was never allocated")),
            };
            self.cols.push(col);
            self.coeffs.push(to_fr(coeff));
        }
        self.end_row()
    }

    fn end_row(&mut self) -> Result<(), String> {
        let end = u32::try_from(self.cols.len()).map_err(|_| "a matrix has 2^32 entries or more".to_string())?;
        self.starts.push(end);
        Ok(())
    }

    fn rows(&self) -> usize {
        self.starts.len() - 1
    }
}

/// A [`ConstraintSystem`] that records constraints and counts variables, never computing a
/// value. Like bellperson's setup it is not extensible: a circuit that can synthesize parts of
/// itself apart and `extend` one system with them does so sequentially here, which is the
/// system its parameters were made from (the witness generator may take the parallel way).
pub struct RecordingCs {
    inputs: usize,
    aux: usize,
    a: Rows,
    b: Rows,
    c: Rows,
    /// The first thing wrong with the circuit: `enforce` cannot return an error.
    error: Option<String>,
}

impl RecordingCs {
    /// The root system of a circuit, its input 0 the constant ONE (as bellperson allocates it).
    pub fn root() -> RecordingCs {
        let mut cs = RecordingCs::new();
        cs.inputs = 1;
        cs
    }

    /// Instance variables so far, ONE included.
    pub fn num_inputs(&self) -> usize {
        self.inputs
    }

    /// Aux (witness) variables so far.
    pub fn num_aux(&self) -> usize {
        self.aux
    }

    /// Constraints so far (without the input rows, which [`RecordingCs::finish`] appends).
    pub fn num_constraints(&self) -> usize {
        self.b.rows()
    }

    fn fail(&mut self, why: String) {
        self.error.get_or_insert(why);
    }

    /// The compiled circuit: columns laid out as z = [inputs…, aux…], the libsnark input rows
    /// (a = x_i) appended to A.
    pub fn finish(self) -> Result<CompiledCircuit, BellpersonError> {
        let RecordingCs { inputs, aux, mut a, mut b, mut c, error } = self;
        if let Some(why) = error {
            return Err(BellpersonError::Malformed(why));
        }
        let columns = inputs + aux;
        if columns > u32::MAX as usize {
            return Err(BellpersonError::Malformed(format!("{columns} variables: more than 2^32")));
        }
        let first_aux = inputs as u32;
        for rows in [&mut a, &mut b, &mut c] {
            rows.cols.par_iter_mut().for_each(|col| {
                if *col & AUX != 0 {
                    *col = first_aux + (*col & !AUX);
                }
            });
        }
        let num_constraints = b.rows();
        for i in 0..inputs {
            a.cols.push(i as u32);
            a.coeffs.push(Fr::from(1u64));
            a.end_row().map_err(BellpersonError::Malformed)?;
        }
        let matrix = |matrix: &'static str, rows: Rows| {
            SparseMatrix::from_parts(columns, rows.starts, rows.cols, rows.coeffs)
                .map_err(|source| CompileError::Matrix { matrix, source })
        };
        let (a, b, c) = (matrix("A", a)?, matrix("B", b)?, matrix("C", c)?);
        Ok(CompiledCircuit::with_input_rows(inputs, num_constraints, a, b, Some(c), Qap::Libsnark)?)
    }
}

/// Records `circuit`'s R1CS without a witness: its allocation closures are never called.
pub fn compile<C: bellpepper_core::Circuit<Scalar>>(circuit: C) -> Result<CompiledCircuit, BellpersonError> {
    let mut cs = RecordingCs::root();
    circuit.synthesize(&mut cs)?;
    cs.finish()
}

impl ConstraintSystem<Scalar> for RecordingCs {
    type Root = Self;

    /// An empty system, without ONE ([`RecordingCs::root`] is a circuit's).
    fn new() -> Self {
        RecordingCs { inputs: 0, aux: 0, a: Rows::new(), b: Rows::new(), c: Rows::new(), error: None }
    }

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if self.aux >= AUX as usize {
            self.fail("2^31 aux variables or more".into());
        }
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if self.inputs >= AUX as usize {
            self.fail("2^31 inputs or more".into());
        }
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let lcs = [a(LinearCombination::zero()), b(LinearCombination::zero()), c(LinearCombination::zero())];
        let (inputs, aux) = (self.inputs, self.aux);
        for (rows, lc) in [&mut self.a, &mut self.b, &mut self.c].into_iter().zip(&lcs) {
            if let Err(why) = rows.push(lc, inputs, aux) {
                self.error.get_or_insert(why);
            }
        }
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}
