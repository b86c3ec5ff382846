//! What a circuit's shape fixes, and what must agree with it: the QAP reduction a key was made
//! for, the sizes a key fixes, the size of the compiled matrices, and the mismatches between a
//! circuit and a key or an assignment. These describe a circuit, so they live beside the compiled
//! circuit; the prover reads keys into them (`prover::key`) and plans memory from them.

/// The sizes a key fixes, checked against each other; the prover checks them against the circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyShape {
    /// Instance variables, the constant 1 included.
    pub num_instance: usize,
    pub num_variables: usize,
    pub domain_size: usize,
    /// How the key's H points expect the quotient.
    pub qap: Qap,
}

/// How a key's setup reduced R1CS to a QAP, which fixes where the prover evaluates H and
/// what its H points take. Both give standard Groth16 proofs that one verifier checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Qap {
    /// arkworks' (and libsnark's): H evaluated on the coset g·H of the multiplicative
    /// generator, divided by Z there, and brought back to its n − 1 coefficients; c = C·z.
    #[default]
    Libsnark,
    /// snarkjs's: H evaluated on the odd 2n-th roots of unity ω₂ₙ·H and taken as those n
    /// evaluations (the key's n H points absorb Z); c = a∘b, so a key needs no C matrix.
    Snarkjs,
}

impl Qap {
    /// The H points a key of domain size n has.
    pub fn h_points(self, domain_size: usize) -> usize {
        match self {
            Qap::Libsnark => domain_size - 1,
            Qap::Snarkjs => domain_size,
        }
    }
}

/// Where a key or an assignment disagrees with the circuit it is used with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeMismatch {
    #[error("the proving key does not match the circuit: {what}: key has {key}, circuit has {circuit}")]
    Key { what: &'static str, key: usize, circuit: usize },
    #[error("the key was made for {key:?}'s QAP, the circuit for {circuit:?}'s")]
    Qap { key: Qap, circuit: Qap },
    #[error("the witness has {got} values, the circuit {expected} variables")]
    WitnessLength { expected: usize, got: usize },
    #[error("the witness does not start with the constant 1")]
    WitnessConstant,
}

/// The size of a compiled circuit's matrices (`CompiledCircuit::matrix_size`): what their
/// device copy takes (a column index and a coefficient an entry, a start a row and one more a
/// matrix).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixSize {
    pub entries: u64,
    pub rows: u64,
    pub matrices: u64,
}

