//! Step 1 of a proof, on the CPU: run the circuit, and reduce it the way arkworks' libsnark
//! reduction does — the row evaluations `a = A·z`, `b = B·z`, `c = C·z` over a radix-2
//! domain of size `next_pow2(constraints + instance variables)`, with one extra row per
//! instance variable (`a = z_i`, `b = c = 0`) that makes the inputs independent in the QAP.

use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use g16_backend::domain::{radix2, MAX_NTT_LOG2};
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystem, OptimizationGoal, SynthesisError, SynthesisMode, R1CS_PREDICATE_LABEL,
};
use ark_relations::utils::matrix::Matrix;
use rayon::prelude::*;

use super::ProveError;
use crate::curve::Fr;

/// A synthesized instance, ready for the device: everything the prover needs and nothing of
/// the constraint system (which is single-threaded and not `Send`).
#[derive(Clone, Debug)]
pub struct Synthesized {
    /// Instance variables, the constant 1 included.
    pub num_instance: usize,
    pub num_constraints: usize,
    /// `z = [1, public inputs…, witness…]`.
    pub assignment: Vec<Fr>,
    /// Row evaluations, padded with zeros to the domain size.
    pub a: Vec<Fr>,
    pub b: Vec<Fr>,
    pub c: Vec<Fr>,
}

impl Synthesized {
    pub fn domain_size(&self) -> usize {
        self.a.len()
    }
    pub fn num_variables(&self) -> usize {
        self.assignment.len()
    }
    pub fn num_witness(&self) -> usize {
        self.assignment.len() - self.num_instance
    }
    /// The public inputs, as a verifier takes them (without the constant 1).
    pub fn public_inputs(&self) -> &[Fr] {
        &self.assignment[1..self.num_instance]
    }
}

/// The domain for `constraints + inputs` rows, or the typed error when Fr has none that large.
pub fn domain_for(rows: usize) -> Result<Radix2EvaluationDomain<Fr>, ProveError> {
    radix2(rows).ok_or(ProveError::DomainTooLarge { rows, max_log2: MAX_NTT_LOG2 })
}

/// Synthesizes `circuit` and reduces it to row evaluations. A witness that does not satisfy
/// the circuit is an error here, before any expensive work.
pub fn synthesize<C: ConstraintSynthesizer<Fr>>(circuit: C) -> Result<Synthesized, ProveError> {
    let cs = ConstraintSystem::<Fr>::new_ref();
    // The same settings as ark-groth16's prover, so the matrices (and so the proof) match.
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(SynthesisMode::Prove { construct_matrices: true, generate_lc_assignments: false });
    circuit.generate_constraints(cs.clone()).map_err(ProveError::Synthesis)?;
    cs.finalize();

    for (label, count) in cs.get_all_predicates_num_constraints() {
        if label != R1CS_PREDICATE_LABEL && count > 0 {
            return Err(ProveError::NotR1cs { predicate: label.to_string() });
        }
    }
    let num_instance = cs.num_instance_variables();
    let num_constraints = cs.num_constraints();
    let domain = domain_for(num_constraints + num_instance)?;

    let mut matrices = cs.to_matrices().map_err(ProveError::Synthesis)?;
    let [ma, mb, mc]: [Matrix<Fr>; 3] = match matrices.remove(R1CS_PREDICATE_LABEL) {
        Some(m) => m
            .try_into()
            .map_err(|m: Vec<_>| ProveError::Internal(format!("expected 3 R1CS matrices, found {}", m.len())))?,
        None => [Vec::new(), Vec::new(), Vec::new()],
    };
    let assignment = {
        let cs = cs.borrow().ok_or(ProveError::Synthesis(SynthesisError::MissingCS))?;
        let instance = cs.instance_assignment().map_err(ProveError::Synthesis)?;
        let witness = cs.witness_assignment().map_err(ProveError::Synthesis)?;
        [instance, witness].concat()
    };

    let n = domain.size();
    let mut a = vec![Fr::from(0u64); n];
    let mut b = vec![Fr::from(0u64); n];
    let mut c = vec![Fr::from(0u64); n];
    let z = &assignment;
    a[..num_constraints].par_iter_mut().zip(&ma).for_each(|(out, row)| *out = evaluate_row(row, z));
    b[..num_constraints].par_iter_mut().zip(&mb).for_each(|(out, row)| *out = evaluate_row(row, z));
    c[..num_constraints].par_iter_mut().zip(&mc).for_each(|(out, row)| *out = evaluate_row(row, z));

    // The rows are the constraints: check them now, so that an unsatisfied witness fails fast
    // and never reaches the device (where it would make a proof that does not verify).
    // (arkworks' `which_is_unsatisfied` would only repeat the row, and prints a warning to
    // stderr where no tracing layer is installed: a library must not.)
    if let Some(row) = (0..num_constraints).into_par_iter().find_first(|&i| a[i] * b[i] != c[i]) {
        return Err(ProveError::Unsatisfied { row });
    }
    a[num_constraints..num_constraints + num_instance].copy_from_slice(&assignment[..num_instance]);

    Ok(Synthesized { num_instance, num_constraints, assignment, a, b, c })
}

/// `Σ coeff·z[index]` over one sparse matrix row.
fn evaluate_row(row: &[(Fr, usize)], z: &[Fr]) -> Fr {
    row.iter().map(|(coeff, index)| z[*index] * coeff).sum()
}
