//! A bellpepper circuit run for its values alone: the allocations' closures are called, the
//! constraints are not kept (the device checks a∘b = c row by row before any MSM, and names the
//! first failing row), so a witness costs what computing its values costs.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use ff::Field;
use g16::Fr;
use rayon::prelude::*;

use crate::scalar::to_fr;
use crate::{BellpersonError, Scalar};

/// A witness generator ([`ConstraintSystem::is_witness_generator`]): circuits that fill many
/// values at once (`allocate_empty_aux`, `extend_aux`) do so here, and it is extensible, so a
/// circuit that synthesizes its parts on several threads does so.
pub struct WitnessCs {
    inputs: Vec<Scalar>,
    aux: Vec<Scalar>,
}

impl WitnessCs {
    /// The root system of a circuit, its input 0 the constant ONE.
    pub fn root() -> WitnessCs {
        WitnessCs { inputs: vec![Scalar::ONE], aux: Vec::new() }
    }

    /// g16's assignment z = [inputs…, aux…] (ONE first), converted on every core.
    pub fn into_assignment(self) -> Vec<Fr> {
        let mut z = Vec::with_capacity(self.inputs.len() + self.aux.len());
        self.inputs.par_iter().chain(self.aux.par_iter()).map(to_fr).collect_into_vec(&mut z);
        z
    }

    /// The public inputs, ONE excluded: what a verifier is given.
    pub fn public_inputs(&self) -> &[Scalar] {
        &self.inputs[1..]
    }
}

/// Runs `circuit` for its assignment z = [1, inputs…, aux…].
pub fn witness<C: bellpepper_core::Circuit<Scalar>>(circuit: C) -> Result<Vec<Fr>, BellpersonError> {
    let (inputs, aux) = witness_parts(circuit)?;
    Ok(WitnessCs { inputs, aux }.into_assignment())
}

/// Runs `circuit` for its values, as [`witness`] does, and returns its inputs (ONE first) and its
/// aux apart, in bellperson's scalars: for a caller that assembles one witness from parts of a
/// circuit synthesized on several threads ([`assignment`] then makes g16's z of them).
pub fn witness_parts<C: bellpepper_core::Circuit<Scalar>>(
    circuit: C,
) -> Result<(Vec<Scalar>, Vec<Scalar>), BellpersonError> {
    let mut cs = WitnessCs::root();
    circuit.synthesize(&mut cs)?;
    if cs.inputs.first() != Some(&Scalar::ONE) {
        return Err(BellpersonError::Malformed("the circuit overwrote input 0 (ONE)".into()));
    }
    Ok((cs.inputs, cs.aux))
}

/// g16's assignment z = [inputs…, aux…] of values in bellperson's scalars (ONE the first
/// input), converted on every core.
pub fn assignment(inputs: Vec<Scalar>, aux: Vec<Scalar>) -> Vec<Fr> {
    WitnessCs { inputs, aux }.into_assignment()
}

impl ConstraintSystem<Scalar> for WitnessCs {
    type Root = Self;

    /// An empty system, without ONE, for a part synthesized apart (bellperson's convention).
    fn new() -> Self {
        WitnessCs { inputs: Vec::new(), aux: Vec::new() }
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
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

    fn is_extensible() -> bool {
        true
    }

    /// Appends a part synthesized apart, dropping its temporary ONE (its input 0).
    fn extend(&mut self, other: &Self) {
        self.inputs.extend(other.inputs.iter().skip(1));
        self.aux.extend_from_slice(&other.aux);
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.inputs.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.aux.extend_from_slice(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        let (aux_start, inputs_start) = (self.aux.len(), self.inputs.len());
        self.aux.resize(aux_start + aux_n, Scalar::ZERO);
        self.inputs.resize(inputs_start + inputs_n, Scalar::ZERO);
        (&mut self.aux[aux_start..], &mut self.inputs[inputs_start..])
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        let start = self.inputs.len();
        self.inputs.resize(start + n, Scalar::ZERO);
        &mut self.inputs[start..]
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        let start = self.aux.len();
        self.aux.resize(start + n, Scalar::ZERO);
        &mut self.aux[start..]
    }

    fn inputs_slice(&self) -> &[Scalar] {
        &self.inputs
    }

    fn aux_slice(&self) -> &[Scalar] {
        &self.aux
    }
}
