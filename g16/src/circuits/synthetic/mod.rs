//! A synthetic circuit that fills the Groth16 domain exactly and synthesizes fast.
//!
//! Constraints are written directly with `new_witness_variable` and
//! `enforce_r1cs_constraint` (no gadgets, no intermediate linear-combination variables),
//! so synthesis costs little more than the constraint system's own bookkeeping.
//!
//! Layout: `groups` repetitions of 4 constraints, then one final constraint:
//!
//! - 3 booleanity constraints on fresh bits b₀, b₁, b₂, in two forms so the rows differ:
//!   b₀·b₀ = b₀ and bₖ·(1 − bₖ) = 0;
//! - 1 multiplication step of the accumulator with a fresh random field element y:
//!   (x + b₀)·(y + b₁) = x′ − b₂, so x′ = (x + b₀)(y + b₁) + b₂ and the A, B and C rows
//!   each have two terms;
//! - finally out = x·y + b (b the last bit), with `out` a public input.
//!
//! Each group allocates 3 bits and 2 field elements (y and x′): 60 % of the witness values
//! are bits, the rest random-looking full-width elements, roughly the mix of real circuits
//! that hash and do arithmetic. Public inputs: the start x₀ and `out`. With the constant
//! one that is 3 instance variables, and the constraints number 4·groups + 1 = 2^size − 3,
//! so constraints + instance variables = 2^size exactly.

use ark_bls12_381::Fr;
use ark_ff::{AdditiveGroup, Field};
use ark_relations::{
    gr1cs::{ConstraintSystemRef, SynthesisError, Variable},
    lc,
};
use ark_std::UniformRand;
use rand::Rng;
use rand_chacha::ChaCha20Rng;

mod matrices;
mod witness;

pub(super) use matrices::{compile, planned_size};
pub(super) use witness::{assignment, assignment_mostly_bits};

/// The smallest size: 2^4 rows hold 3 groups.
pub(super) const MIN_SIZE: u32 = 4;

/// Constraints per group: 3 booleanity constraints and 1 multiplication step.
const GROUP_CONSTRAINTS: usize = 4;

/// Seed domain, so the same seed gives unrelated witnesses in different circuits.
const DOMAIN: [u8; 16] = *b"g16.synthetic.w1";

/// Constraints of a circuit of `groups` groups (plus the final output step).
pub(super) const fn constraints_for_groups(groups: usize) -> usize {
    groups * GROUP_CONSTRAINTS + 1
}

/// The number of groups that fills `rows` exactly (for `rows` a power of two ≥ 4):
/// 4·groups + 1 constraints + 3 instance variables = rows.
pub(super) const fn groups_for(rows: usize) -> usize {
    rows.saturating_sub(super::NUM_INSTANCE_VARIABLES + 1) / GROUP_CONSTRAINTS
}

/// The seed-derived values of one group: its three bits and its multiplier y.
struct Group {
    bits: [bool; 3],
    y: Fr,
}

/// The witness stream: x₀, then one `Group` per group, then the final multiplier. Both the
/// native computation and synthesis draw from it in this order.
struct Witness(ChaCha20Rng);

impl Witness {
    fn new(seed: u64) -> Self {
        Self(super::witness_rng(&DOMAIN, seed))
    }

    fn field(&mut self) -> Fr {
        Fr::rand(&mut self.0)
    }

    fn group(&mut self) -> Group {
        let word: u32 = self.0.gen();
        Group::new(word, self.field())
    }
}

impl Group {
    /// One random word gives all three bits: cheaper than three draws.
    fn new(word: u32, y: Fr) -> Group {
        Group { bits: [word & 1 != 0, word & 2 != 0, word & 4 != 0], y }
    }

    /// The step as an affine map x ↦ m·x + c: (x + b₀)(y + b₁) + b₂ with m = y + b₁ and
    /// c = b₀·m + b₂ (b₀ a bit, so no multiplication).
    fn affine(&self) -> (Fr, Fr) {
        let m = self.y + bit(self.bits[1]);
        let c = if self.bits[0] { m } else { Fr::ZERO } + bit(self.bits[2]);
        (m, c)
    }
}

fn bit(b: bool) -> Fr {
    if b {
        Fr::ONE
    } else {
        Fr::ZERO
    }
}

/// One multiplication step: x′ = (x + b₀)(y + b₁) + b₂.
fn step(x: Fr, g: &Group) -> Fr {
    (x + bit(g.bits[0])) * (g.y + bit(g.bits[1])) + bit(g.bits[2])
}

/// Runs the chain natively: draws x₀, every group and the final multiplier in synthesis's
/// order, hands each group and the x′ it makes to `visit`, and returns `(x₀, y, out)`.
fn run_chain(groups: usize, seed: u64, mut visit: impl FnMut(&Group, Fr)) -> (Fr, Fr, Fr) {
    let mut witness = Witness::new(seed);
    let start = witness.field();
    let mut x = start;
    let mut last_bit = false;
    for _ in 0..groups {
        let g = witness.group();
        x = step(x, &g);
        visit(&g, x);
        last_bit = g.bits[2];
    }
    let y = witness.field();
    (start, y, x * y + bit(last_bit))
}

/// The public inputs `[x₀, out]`, computed natively.
pub(super) fn public_inputs(groups: usize, seed: u64) -> [Fr; 2] {
    let (start, _, out) = run_chain(groups, seed, |_, _| {});
    [start, out]
}

/// Synthesizes `groups` groups and the final output step.
pub(super) fn synthesize(cs: ConstraintSystemRef<Fr>, groups: usize, seed: u64) -> Result<(), SynthesisError> {
    let one = Variable::One;
    let mut witness = Witness::new(seed);
    let start = witness.field();
    let mut x = start;
    let mut x_var = cs.new_input_variable(|| Ok(start))?;
    // Before any group there is no bit; the zero variable adds nothing (only reachable if
    // `groups` is 0, which no valid size gives).
    let mut last_bit = (Variable::Zero, false);

    for _ in 0..groups {
        let g = witness.group();
        let [b0, b1, b2] = [
            cs.new_witness_variable(|| Ok(bit(g.bits[0])))?,
            cs.new_witness_variable(|| Ok(bit(g.bits[1])))?,
            cs.new_witness_variable(|| Ok(bit(g.bits[2])))?,
        ];
        cs.enforce_r1cs_constraint(|| lc!(b0), || lc!(b0), || lc!(b0))?;
        for b in [b1, b2] {
            cs.enforce_r1cs_constraint(|| lc!(b), || lc!((Fr::ONE, one), (-Fr::ONE, b)), || lc!())?;
        }

        let y_var = cs.new_witness_variable(|| Ok(g.y))?;
        let next = step(x, &g);
        let next_var = cs.new_witness_variable(|| Ok(next))?;
        cs.enforce_r1cs_constraint(|| lc!(x_var, b0), || lc!(y_var, b1), || lc!((Fr::ONE, next_var), (-Fr::ONE, b2)))?;
        x = next;
        x_var = next_var;
        last_bit = (b2, g.bits[2]);
    }

    let y = witness.field();
    let y_var = cs.new_witness_variable(|| Ok(y))?;
    let out = x * y + bit(last_bit.1);
    let out_var = cs.new_input_variable(|| Ok(out))?;
    cs.enforce_r1cs_constraint(|| lc!(x_var), || lc!(y_var), || lc!((Fr::ONE, out_var), (-Fr::ONE, last_bit.0)))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{
        check_groth16_round_trip, check_instance, check_shape_independence, synthesize as synth,
    };
    use super::super::{BuiltinCircuit, CircuitKind};
    use super::*;
    use ark_relations::gr1cs::R1CS_PREDICATE_LABEL;

    #[test]
    fn min_size_is_satisfied_and_exact() {
        check_instance(CircuitKind::Synthetic, MIN_SIZE, 3, 1);
    }

    #[test]
    fn larger_size_is_satisfied_and_exact() {
        check_instance(CircuitKind::Synthetic, 12, 4, 1);
    }

    #[test]
    fn exact_at_every_size_without_synthesis() {
        for size in MIN_SIZE..=CircuitKind::Synthetic.max_size() {
            let c = BuiltinCircuit::new(CircuitKind::Synthetic, size, 0).unwrap();
            assert_eq!(c.num_constraints() + c.num_instance_variables(), 1usize << size, "size {size}");
        }
    }

    #[test]
    fn shape_does_not_depend_on_seed() {
        check_shape_independence(CircuitKind::Synthetic, 10);
    }

    #[test]
    fn witness_mix_and_row_weights() {
        let cs = synth(BuiltinCircuit::new(CircuitKind::Synthetic, 12, 5).unwrap());
        let witness = cs.witness_assignment().unwrap();
        let bits = witness.iter().filter(|w| **w == Fr::ZERO || **w == Fr::ONE).count();
        let share = bits as f64 / witness.len() as f64;
        assert!((0.58..=0.62).contains(&share), "bit share {share}");
        // Random bits: both values occur about equally often.
        let ones = witness.iter().filter(|w| **w == Fr::ONE).count();
        assert!(ones * 3 > bits && ones * 3 < 2 * bits, "{ones} ones among {bits} bits");

        cs.finalize();
        let matrices = &cs.to_matrices().unwrap()[R1CS_PREDICATE_LABEL];
        let [a, b, c] = [&matrices[0], &matrices[1], &matrices[2]];
        let nonzeros = |m: &ark_relations::gr1cs::Matrix<Fr>| m.iter().map(Vec::len).sum::<usize>();
        // Per group: A has 1+1+1+2, B 1+2+2+2, C 1+0+0+2 terms.
        let groups = BuiltinCircuit::new(CircuitKind::Synthetic, 12, 5).unwrap().units();
        assert_eq!(nonzeros(a), 5 * groups + 1);
        assert_eq!(nonzeros(b), 7 * groups + 1);
        assert_eq!(nonzeros(c), 3 * groups + 2);
    }

    #[test]
    fn the_native_assignment_is_the_synthesized_one() {
        for (size, seed) in [(MIN_SIZE, 0), (5, 1), (11, 2), (17, 3)] {
            let circuit = BuiltinCircuit::new(CircuitKind::Synthetic, size, seed).unwrap();
            let native = assignment(circuit.units(), seed);
            let synthesized = crate::compiled::witness(circuit.clone()).unwrap();
            assert_eq!(native.len(), 3 + 5 * circuit.units() + 1, "2^{size}: instance, 5 a group, the last y");
            assert!(native == synthesized, "2^{size} seed {seed}: native and synthesized assignments differ");
        }
    }

    /// The mostly-bits assignment satisfies every constraint of the circuit (checked row by
    /// row against the written matrices, C included) and splits like a PoRep witness.
    #[test]
    fn the_mostly_bits_assignment_satisfies_the_circuit_and_is_mostly_bits() {
        for (size, seed) in [(MIN_SIZE, 0), (9, 4), (15, 5)] {
            let circuit = BuiltinCircuit::new(CircuitKind::Synthetic, size, seed).unwrap();
            let z = circuit.assignment_mostly_bits().expect("the synthetic circuit has one");
            let compiled = compile(circuit.units()).unwrap();
            compiled.check_assignment(&z).unwrap();
            let (a, b, c) = compiled.matrices();
            let c = c.expect("the synthetic circuit writes C");
            let rows = compiled.num_constraints();
            let (mut za, mut zb, mut zc) = (vec![Fr::ZERO; rows], vec![Fr::ZERO; rows], vec![Fr::ZERO; rows]);
            a.mul_vector_into(&z, &mut za);
            b.mul_vector_into(&z, &mut zb);
            c.mul_vector_into(&z, &mut zc);
            if let Some(row) = (0..rows).find(|&r| za[r] * zb[r] != zc[r]) {
                panic!("2^{size}: constraint {row} fails");
            }
            if size == 15 {
                let share = |keep: fn(&Fr) -> bool| z.iter().filter(|v| keep(v)).count() as f64 / z.len() as f64;
                let (zeros, ones) = (share(|v| *v == Fr::ZERO), share(|v| *v == Fr::ONE));
                let other = 1.0 - zeros - ones;
                assert!((0.66..=0.74).contains(&zeros), "zeros {zeros}");
                assert!((0.25..=0.31).contains(&ones), "ones {ones}");
                assert!(other < 0.02, "other {other}");
            }
        }
        let sha = BuiltinCircuit::new(CircuitKind::Sha256, 16, 0).unwrap();
        assert!(sha.assignment_mostly_bits().is_none());
    }

    fn circuit_units(size: u32) -> usize {
        BuiltinCircuit::new(CircuitKind::Synthetic, size, 0).unwrap().units()
    }

    #[test]
    fn the_written_matrices_are_the_synthesized_ones() {
        for size in [MIN_SIZE, 5, 9, 13] {
            let circuit = BuiltinCircuit::new(CircuitKind::Synthetic, size, 0).unwrap();
            let written = compile(circuit.units()).unwrap();
            let synthesized = crate::compiled::compile(circuit).unwrap();
            let (w, s) = (written.matrices(), synthesized.matrices());
            for (name, w, s) in [("A", w.0, s.0), ("B", w.1, s.1)] {
                assert_eq!(w.parts(), s.parts(), "2^{size}: {name}");
            }
            assert_eq!(w.2.map(|m| m.parts()), s.2.map(|m| m.parts()), "2^{size}: C");
            assert!(written == synthesized, "2^{size}: written and synthesized matrices differ");
            let (variables, counted) = planned_size(circuit_units(size));
            assert_eq!(variables, written.num_variables(), "2^{size}: variables");
            assert_eq!(counted, written.matrix_size(), "2^{size}: matrix sizes");
        }
    }

    #[test]
    fn groth16_round_trip_rejects_a_wrong_input() {
        check_groth16_round_trip(CircuitKind::Synthetic, 8);
    }
}
