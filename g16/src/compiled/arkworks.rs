//! Compiling an arkworks circuit, and computing its witness without its constraints.
//!
//! Both use the settings of arkworks' Groth16 prover (`OptimizationGoal::Constraints`, so
//! finalizing inlines linear combinations and adds no variable), so the matrices and the
//! assignment are the ones `create_proof_with_reduction` sees, and the proofs are bit-exact.

use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystem, ConstraintSystemRef, OptimizationGoal, SynthesisError, SynthesisMode,
    R1CS_PREDICATE_LABEL,
};
use ark_relations::utils::matrix::Matrix;

use super::{CompileError, CompiledCircuit};
use g16_backend::SparseMatrix;
use super::shape::Qap;
use crate::curve::Fr;

/// The R1CS of `circuit`'s shape, by synthesis in setup mode (no witness is computed; a
/// circuit's witness closures are not called).
pub fn compile<C: ConstraintSynthesizer<Fr>>(circuit: C) -> Result<CompiledCircuit, CompileError> {
    let cs = ConstraintSystem::<Fr>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(SynthesisMode::Setup);
    circuit.generate_constraints(cs.clone()).map_err(CompileError::Synthesis)?;
    cs.finalize();
    only_r1cs(&cs).map_err(|predicate| CompileError::NotR1cs { predicate })?;
    let num_instance = cs.num_instance_variables();
    let num_variables = num_instance + cs.num_witness_variables();
    let mut matrices = cs.to_matrices().map_err(CompileError::Synthesis)?;
    let [a, b, c]: [Matrix<Fr>; 3] = match matrices.remove(R1CS_PREDICATE_LABEL) {
        Some(m) => m
            .try_into()
            .map_err(|m: Vec<_>| CompileError::Inconsistent(format!("expected 3 R1CS matrices, found {}", m.len())))?,
        None => [Vec::new(), Vec::new(), Vec::new()],
    };
    let sparse = |name: &'static str, m: &Matrix<Fr>| {
        SparseMatrix::from_rows(num_variables, m.iter().map(Vec::as_slice))
            .map_err(|source| CompileError::Matrix { matrix: name, source })
    };
    CompiledCircuit::from_r1cs(num_instance, sparse("A", &a)?, sparse("B", &b)?, Some(sparse("C", &c)?), Qap::Libsnark)
}

/// The assignment z = [1, public inputs…, witness…] of `circuit`, by synthesis in prove mode
/// without constraints: linear combinations are neither built nor kept, only the variables'
/// values. Whether z satisfies the circuit is checked where a, b, c are computed.
pub fn witness<C: ConstraintSynthesizer<Fr>>(circuit: C) -> Result<Vec<Fr>, CompileError> {
    let cs = ConstraintSystem::<Fr>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(SynthesisMode::Prove { construct_matrices: false, generate_lc_assignments: false });
    circuit.generate_constraints(cs.clone()).map_err(CompileError::Synthesis)?;
    only_r1cs(&cs).map_err(|predicate| CompileError::NotR1cs { predicate })?;
    let cs = cs.borrow().ok_or(CompileError::Synthesis(SynthesisError::MissingCS))?;
    let instance = cs.instance_assignment().map_err(CompileError::Synthesis)?;
    let witness = cs.witness_assignment().map_err(CompileError::Synthesis)?;
    Ok([instance, witness].concat())
}

/// Err(the label) of a non-R1CS predicate with constraints, if the circuit uses one.
fn only_r1cs(cs: &ConstraintSystemRef<Fr>) -> Result<(), String> {
    for (label, count) in cs.get_all_predicates_num_constraints() {
        if label != R1CS_PREDICATE_LABEL && count > 0 {
            return Err(label.to_string());
        }
    }
    Ok(())
}
