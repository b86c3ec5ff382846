//! Built-in benchmark circuits.
//!
//! Three circuits with deliberately different witness profiles, so the backends are
//! measured on the kinds of work real provers see:
//!
//! - [`CircuitKind::Sha256`]: SHA-256 over a long seed-derived preimage, a chain of
//!   compressions with the `ark-crypto-primitives` gadget. Almost every witness value is a
//!   bit, like Filecoin's SDR/PoRep circuits; the MSM fast path for 0/1 scalars matters.
//! - [`CircuitKind::Poseidon`]: a chain of Poseidon hashes with the `ark-crypto-primitives`
//!   sponge. Almost every witness value is a full-width field element.
//! - [`CircuitKind::Synthetic`]: hand-written constraints, cheap to synthesize, with a
//!   60 % bit / 40 % field mix; it fills the domain exactly, so it is the circuit to use
//!   when the size must be exact or synthesis time must not dominate.
//!
//! A circuit is identified by `(kind, size, seed)`. `size` is log2 of the Groth16 domain:
//! `num_constraints + num_instance_variables` (arkworks' counts, where the instance
//! variables include the constant one, exactly what `ark-groth16` sizes its domain with)
//! stays ≤ 2^size and as close to it as the circuit's granularity allows, so the domain is
//! exactly 2^size. The constraint *shape* depends only on `(kind, size)`; the seed only
//! changes the witness, so one proving key serves every seed.

mod poseidon;
mod sha256;
mod synthetic;

use g16_backend::named_choice;
use crate::compiled::{KeyShape, MatrixSize, ShapeMismatch};
use crate::prover::ProveError;
use ark_bls12_381::Fr;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// Largest `size` any built-in circuit accepts. BLS12-381's Fr has 2-adicity 32, so the
/// field would allow domains up to 2^32; the cap keeps arkworks synthesis, whose memory
/// grows linearly with the constraint count, within reach of a large host.
pub const MAX_SIZE: u32 = 28;

/// The kinds of built-in circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CircuitKind {
    /// A chain of SHA-256 compressions (bit-heavy witness).
    Sha256,
    /// A chain of Poseidon hashes (field-heavy witness).
    Poseidon,
    /// Hand-written constraints that fill the domain exactly (mixed witness).
    Synthetic,
}

impl CircuitKind {
    /// Every kind, in a stable order (the order listed in error messages and help texts).
    pub const ALL: [CircuitKind; 3] = [CircuitKind::Sha256, CircuitKind::Poseidon, CircuitKind::Synthetic];

    /// The name used on the command line and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            CircuitKind::Sha256 => "sha256",
            CircuitKind::Poseidon => "poseidon",
            CircuitKind::Synthetic => "synthetic",
        }
    }

    /// The smallest `size` at which one unit of the circuit (one SHA-256 block, one
    /// Poseidon hash, a few synthetic constraints) fits in the domain.
    pub fn min_size(&self) -> u32 {
        match self {
            CircuitKind::Sha256 => sha256::MIN_SIZE,
            CircuitKind::Poseidon => poseidon::MIN_SIZE,
            CircuitKind::Synthetic => synthetic::MIN_SIZE,
        }
    }

    /// The largest accepted `size` ([`MAX_SIZE`] for every kind).
    pub fn max_size(&self) -> u32 {
        MAX_SIZE
    }

    /// `Ok(())` if `size` is within `min_size()..=max_size()`, the typed error otherwise.
    pub fn check_size(&self, size: u32) -> Result<(), CircuitError> {
        let (min, max) = (self.min_size(), self.max_size());
        if (min..=max).contains(&size) {
            Ok(())
        } else {
            Err(CircuitError::SizeOutOfRange { kind: self.name(), size, min, max })
        }
    }

    /// The valid names, comma separated (for error and help messages).
    pub fn valid_names() -> String {
        Self::ALL.map(|k| k.name()).join(", ")
    }
}

named_choice!(CircuitKind, name, CircuitError, |s: &str| CircuitError::UnknownCircuit { name: s.to_string() });

/// Errors from choosing a built-in circuit.
#[derive(Debug, thiserror::Error)]
pub enum CircuitError {
    /// The name is not one of [`CircuitKind::ALL`].
    #[error("unknown circuit `{name}` (valid circuits: {})", CircuitKind::valid_names())]
    UnknownCircuit {
        /// The name as given.
        name: String,
    },
    /// The size is outside `min..=max` for this kind.
    #[error(
        "size {size} is out of range for circuit `{kind}`: must be in {min}..={max} (log2 of the constraint count)"
    )]
    SizeOutOfRange {
        /// The circuit's name.
        kind: &'static str,
        /// The size as given.
        size: u32,
        /// The smallest accepted size for this kind.
        min: u32,
        /// The largest accepted size for this kind.
        max: u32,
    },
}

/// One instance of a built-in circuit.
///
/// `size` is log2 of the target number of rows: the circuit's
/// `num_constraints + num_instance_variables` (arkworks' counts; the instance variables
/// include the constant one, as in `ark-groth16`'s domain size) stays ≤ 2^size, so the
/// Groth16 domain is exactly 2^size, and is as close to 2^size as the circuit's granularity
/// allows (exactly 2^size for the synthetic circuit).
///
/// The `seed` picks the witness (the hashed preimage, the synthetic values); the constraint
/// *shape* depends only on `(kind, size)`, never on the seed, so one proving key serves
/// every seed.
#[derive(Clone, Debug)]
pub struct BuiltinCircuit {
    kind: CircuitKind,
    size: u32,
    seed: u64,
    /// How many repeated units the size allows: SHA-256 message blocks, Poseidon hashes,
    /// or synthetic 4-constraint groups. Derived from `(kind, size)` only.
    units: usize,
}

impl BuiltinCircuit {
    /// A circuit of `kind` for a domain of 2^`size` rows, with the witness picked by `seed`.
    pub fn new(kind: CircuitKind, size: u32, seed: u64) -> Result<Self, CircuitError> {
        kind.check_size(size)?;
        let rows = 1usize << size;
        let units = match kind {
            CircuitKind::Sha256 => sha256::blocks_for(rows),
            CircuitKind::Poseidon => poseidon::hashes_for(rows),
            CircuitKind::Synthetic => synthetic::groups_for(rows),
        };
        Ok(Self { kind, size, seed, units })
    }

    /// The circuit's kind.
    pub fn kind(&self) -> CircuitKind {
        self.kind
    }

    /// log2 of the Groth16 domain size.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The seed that picks the witness.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// How many repeated units the circuit holds: SHA-256 message blocks (plus one padding
    /// block), Poseidon hashes, or synthetic groups of 4 constraints.
    pub fn units(&self) -> usize {
        self.units
    }

    /// The number of constraints synthesis produces (predicted from the measured cost of
    /// each unit, and checked against real synthesis by the tests).
    pub fn num_constraints(&self) -> usize {
        match self.kind {
            CircuitKind::Sha256 => sha256::constraints_for_blocks(self.units),
            CircuitKind::Poseidon => poseidon::constraints_for_hashes(self.units),
            CircuitKind::Synthetic => synthetic::constraints_for_groups(self.units),
        }
    }

    /// The number of instance variables synthesis produces, *including* the constant one
    /// (arkworks' `num_instance_variables`): `public_inputs().len() + 1`.
    pub fn num_instance_variables(&self) -> usize {
        NUM_INSTANCE_VARIABLES
    }

    /// Refuses a key that cannot be this circuit's, from the counts the circuit knows without
    /// synthesis (its domain and instance variables), so a key of another circuit or size
    /// fails before any synthesis or witness work.
    pub fn check_key(&self, key: &KeyShape) -> Result<(), ProveError> {
        let domain = 1usize << self.size;
        if key.domain_size != domain {
            return Err(ShapeMismatch::Key { what: "domain size", key: key.domain_size, circuit: domain }.into());
        }
        if key.num_instance != self.num_instance_variables() {
            return Err(ShapeMismatch::Key {
                what: "instance variables",
                key: key.num_instance,
                circuit: self.num_instance_variables(),
            }
            .into());
        }
        Ok(())
    }

    /// The public inputs, computed natively (outside the constraint system), in allocation
    /// order, without the leading constant 1: what a verifier passes to `ark-groth16`'s
    /// verify.
    ///
    /// Cost: one native run of the chain (a SHA-256 of the preimage, the Poseidon chain, or
    /// the synthetic accumulator), far below synthesis.
    pub fn public_inputs(&self) -> Vec<Fr> {
        match self.kind {
            CircuitKind::Sha256 => sha256::public_inputs(self.units, self.seed).to_vec(),
            CircuitKind::Poseidon => poseidon::public_inputs(self.units, self.seed).to_vec(),
            CircuitKind::Synthetic => synthetic::public_inputs(self.units, self.seed).to_vec(),
        }
    }
}

impl BuiltinCircuit {
    /// Another satisfying assignment of the synthetic circuit (the same constraints, so the
    /// same key), whose values are mostly 0 and 1 as a Filecoin PoRep partition's are: about
    /// 69 % zeros, 30 % ones and 1.1 % field elements (see the synthetic witness generator).
    /// Its public inputs are `z[1..3]`, not [`BuiltinCircuit::public_inputs`]. For measuring
    /// proofs at the 0/1 density of PoRep's witness at sizes no sealed sector here reaches.
    /// `None` for the other kinds.
    pub fn assignment_mostly_bits(&self) -> Option<Vec<Fr>> {
        match self.kind {
            CircuitKind::Synthetic => Some(synthetic::assignment_mostly_bits(self.units, self.seed)),
            CircuitKind::Sha256 | CircuitKind::Poseidon => None,
        }
    }

    /// The assignment z = [1, public inputs…, witness…] in arkworks' allocation order, as the
    /// compiled circuit's witness path takes it: computed natively by the circuit's own
    /// witness generator where it has one (synthetic), else by witness-only synthesis
    /// ([`crate::compiled::witness`]). Both give the same values (tested).
    pub fn assignment(&self) -> Result<Vec<Fr>, ProveError> {
        match self.kind {
            CircuitKind::Synthetic => Ok(synthetic::assignment(self.units, self.seed)),
            CircuitKind::Sha256 | CircuitKind::Poseidon => Ok(crate::compiled::witness(self.clone())?),
        }
    }

    /// The shape of the circuit's key and the size of its compiled matrices, for planning
    /// device memory without the memory itself: counted for synthetic; for the others,
    /// compiled at the two smallest sizes and extended linearly in the units (each unit adds
    /// the same variables and entries), so planning 2^26 compiles two small circuits.
    pub fn planned_size(&self) -> Result<(KeyShape, MatrixSize), crate::compiled::CompileError> {
        let (num_variables, matrices) = match self.kind {
            CircuitKind::Synthetic => synthetic::planned_size(self.units),
            CircuitKind::Sha256 | CircuitKind::Poseidon => {
                let min = self.kind.min_size();
                let counted = |size: u32| -> Result<(usize, u64, MatrixSize), crate::compiled::CompileError> {
                    let c = BuiltinCircuit::new(self.kind, size, 0)
                        .map_err(|e| crate::compiled::CompileError::Inconsistent(e.to_string()))?;
                    let compiled = c.compile()?;
                    Ok((c.units, compiled.num_variables() as u64, compiled.matrix_size()))
                };
                let (u1, v1, m1) = counted(min)?;
                let (u2, v2, m2) = counted(min + 1)?;
                // Per unit, rounded up: a plan may overstate, never understate.
                let extend = |x1: u64, x2: u64| {
                    let per = (x2.saturating_sub(x1)).div_ceil((u2 - u1).max(1) as u64);
                    x1 + per * (self.units.saturating_sub(u1)) as u64
                };
                let m = MatrixSize {
                    entries: extend(m1.entries, m2.entries),
                    rows: extend(m1.rows, m2.rows),
                    matrices: m1.matrices,
                };
                (extend(v1, v2) as usize, m)
            }
        };
        let shape = KeyShape {
            num_instance: self.num_instance_variables(),
            num_variables,
            domain_size: 1 << self.size,
            qap: crate::compiled::Qap::Libsnark,
        };
        Ok((shape, matrices))
    }

    /// The circuit's R1CS, compiled: written directly where the circuit's rows are a fixed
    /// pattern (synthetic: no constraint system, so 2^26 rows fit in the matrices' own
    /// memory), else by synthesis in setup mode ([`crate::compiled::compile`]). Both give the
    /// same matrices (tested).
    pub fn compile(&self) -> Result<crate::compiled::CompiledCircuit, crate::compiled::CompileError> {
        match self.kind {
            CircuitKind::Synthetic => synthetic::compile(self.units),
            CircuitKind::Sha256 | CircuitKind::Poseidon => crate::compiled::compile(self.clone()),
        }
    }
}

impl ConstraintSynthesizer<Fr> for BuiltinCircuit {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        match self.kind {
            CircuitKind::Sha256 => sha256::synthesize(cs, self.units, self.seed),
            CircuitKind::Poseidon => poseidon::synthesize(cs, self.units, self.seed),
            CircuitKind::Synthetic => synthetic::synthesize(cs, self.units, self.seed),
        }
    }
}

/// Every built-in circuit has two public inputs (besides the constant one): a hash digest
/// packed into two field elements, or a start value and a final value. Keeping the count
/// equal keeps the verifying keys the same size across kinds.
const NUM_PUBLIC_INPUTS: usize = 2;

/// Instance variables as arkworks counts them: the public inputs plus the constant one.
const NUM_INSTANCE_VARIABLES: usize = NUM_PUBLIC_INPUTS + 1;

/// The witness generator for one circuit kind and seed. The `domain` tag separates the
/// kinds, so the same seed gives unrelated values in different circuits.
fn witness_rng(domain: &[u8; 16], seed: u64) -> ChaCha20Rng {
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(domain);
    key[16..24].copy_from_slice(&seed.to_le_bytes());
    ChaCha20Rng::from_seed(key)
}

/// Helpers shared by the tests of every circuit.
#[cfg(test)]
pub(super) mod test_util {
    use super::{BuiltinCircuit, CircuitKind};
    use ark_bls12_381::{Bls12_381, Fr};
    use ark_groth16::Groth16;
    use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystem, ConstraintSystemRef, OptimizationGoal};
    use ark_snark::SNARK;
    use rand::SeedableRng;

    /// Synthesizes `circuit` in prove mode (witness and matrices), with the optimization
    /// goal `ark-groth16` uses, so the counts are the ones the prover sees.
    pub fn synthesize(circuit: BuiltinCircuit) -> ConstraintSystemRef<Fr> {
        let cs = ConstraintSystem::<Fr>::new_ref();
        cs.set_optimization_goal(OptimizationGoal::Constraints);
        circuit.generate_constraints(cs.clone()).expect("synthesis");
        cs
    }

    /// Synthesizes at `size`, and checks satisfaction, the size rule, the predicted counts
    /// and the natively computed public inputs. `granularity` is the number of constraints
    /// one more unit would add: the circuit must be too full to take another one.
    pub fn check_instance(kind: CircuitKind, size: u32, seed: u64, granularity: usize) {
        let circuit = BuiltinCircuit::new(kind, size, seed).expect("valid size");
        let expected_inputs = circuit.public_inputs();
        let predicted = circuit.num_constraints();
        let cs = synthesize(circuit.clone());

        assert!(cs.is_satisfied().unwrap(), "{kind} at 2^{size} is not satisfied: {:?}", cs.which_is_unsatisfied());
        let rows = cs.num_constraints() + cs.num_instance_variables();
        let domain = 1usize << size;
        assert!(rows <= domain, "{kind}: {rows} rows exceed 2^{size}");
        assert!(rows > domain / 2, "{kind}: {rows} rows leave the domain below 2^{size}");
        assert!(
            rows + granularity > domain,
            "{kind}: another unit of {granularity} would still fit in 2^{size} ({rows} rows)"
        );
        assert_eq!(cs.num_constraints(), predicted, "{kind}: predicted constraint count");
        assert_eq!(cs.num_instance_variables(), circuit.num_instance_variables());

        let instance = cs.instance_assignment().unwrap();
        assert_eq!(instance[0], Fr::from(1u64), "leading constant one");
        assert_eq!(&instance[1..], expected_inputs.as_slice(), "{kind}: public inputs");
    }

    /// Two seeds: identical counts and matrices, different witnesses and public inputs.
    pub fn check_shape_independence(kind: CircuitKind, size: u32) {
        let a = synthesize(BuiltinCircuit::new(kind, size, 1).unwrap());
        let b = synthesize(BuiltinCircuit::new(kind, size, 2).unwrap());
        assert_eq!(a.num_constraints(), b.num_constraints());
        assert_eq!(a.num_instance_variables(), b.num_instance_variables());
        assert_eq!(a.num_witness_variables(), b.num_witness_variables());
        assert_ne!(a.witness_assignment().unwrap(), b.witness_assignment().unwrap());
        assert_ne!(a.instance_assignment().unwrap(), b.instance_assignment().unwrap());
        a.finalize();
        b.finalize();
        assert!(a.to_matrices().unwrap() == b.to_matrices().unwrap(), "{kind}: matrices depend on the seed");
    }

    /// A full Groth16 round trip: the proof verifies with `public_inputs()` and fails with
    /// each input tampered in turn.
    pub fn check_groth16_round_trip(kind: CircuitKind, size: u32) {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        // The key comes from one seed and the proof from another: one key serves all seeds.
        let setup_circuit = BuiltinCircuit::new(kind, size, 11).unwrap();
        let (pk, vk) = Groth16::<Bls12_381>::circuit_specific_setup(setup_circuit, &mut rng).unwrap();
        let circuit = BuiltinCircuit::new(kind, size, 12).unwrap();
        let inputs = circuit.public_inputs();
        let proof = Groth16::<Bls12_381>::prove(&pk, circuit, &mut rng).unwrap();
        assert!(Groth16::<Bls12_381>::verify(&vk, &inputs, &proof).unwrap(), "{kind}: honest proof rejected");
        for i in 0..inputs.len() {
            let mut tampered = inputs.clone();
            tampered[i] += Fr::from(1u64);
            assert!(
                !Groth16::<Bls12_381>::verify(&vk, &tampered, &proof).unwrap(),
                "{kind}: tampered input {i} accepted"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    /// What `check_key` predicts is what synthesis gives: the key shape of the compiled
    /// circuit passes, the shapes of the neighbouring sizes do not.
    #[test]
    fn planned_sizes_match_or_just_exceed_the_compiled_circuits() {
        for kind in [CircuitKind::Sha256, CircuitKind::Poseidon, CircuitKind::Synthetic] {
            let size = kind.min_size() + 3;
            let circuit = BuiltinCircuit::new(kind, size, 0).unwrap();
            let (shape, planned) = circuit.planned_size().unwrap();
            let compiled = circuit.compile().unwrap();
            let actual = compiled.matrix_size();
            assert_eq!(shape.num_instance, compiled.num_instance(), "{kind}");
            assert_eq!(shape.domain_size, compiled.domain_size(), "{kind}");
            for (what, p, a) in [
                ("variables", shape.num_variables as u64, compiled.num_variables() as u64),
                ("entries", planned.entries, actual.entries),
                ("rows", planned.rows, actual.rows),
            ] {
                assert!(p >= a && p - a <= a / 100 + 8, "{kind} 2^{size} {what}: planned {p}, compiled {a}");
            }
        }
    }

    #[test]
    fn key_checks_agree_with_synthesis() {
        for kind in CircuitKind::ALL {
            let size = kind.min_size() + 1;
            let shape = |size| {
                let c = crate::compiled::compile(BuiltinCircuit::new(kind, size, 0).unwrap()).unwrap();
                KeyShape {
                    num_instance: c.num_instance(),
                    num_variables: c.num_variables(),
                    domain_size: c.domain_size(),
                    qap: crate::prover::Qap::Libsnark,
                }
            };
            let circuit = BuiltinCircuit::new(kind, size, 3).unwrap();
            circuit.check_key(&shape(size)).unwrap();
            for other in [size - 1, size + 1] {
                assert!(matches!(circuit.check_key(&shape(other)), Err(ProveError::Shape(ShapeMismatch::Key { .. }))), "{kind}");
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for kind in CircuitKind::ALL {
            assert_eq!(CircuitKind::from_str(kind.name()).unwrap(), kind);
            assert_eq!(kind.to_string().parse::<CircuitKind>().unwrap(), kind);
            assert_eq!(kind.to_string(), kind.name());
        }
        // Command-line friendliness: case and whitespace do not matter.
        assert_eq!(" SHA256 ".parse::<CircuitKind>().unwrap(), CircuitKind::Sha256);
    }

    #[test]
    fn unknown_name_is_a_typed_error() {
        let err = "blake2s".parse::<CircuitKind>().unwrap_err();
        assert!(matches!(&err, CircuitError::UnknownCircuit { name } if name == "blake2s"));
        let msg = err.to_string();
        for kind in CircuitKind::ALL {
            assert!(msg.contains(kind.name()), "message lists `{kind}`: {msg}");
        }
        assert!("".parse::<CircuitKind>().is_err());
    }

    #[test]
    fn size_out_of_range_is_a_typed_error() {
        for kind in CircuitKind::ALL {
            let (min, max) = (kind.min_size(), kind.max_size());
            assert!(min <= max);
            for size in [0, min - 1, max + 1, u32::MAX] {
                match BuiltinCircuit::new(kind, size, 0) {
                    Err(CircuitError::SizeOutOfRange { kind: k, size: s, min: lo, max: hi }) => {
                        assert_eq!((k, s, lo, hi), (kind.name(), size, min, max));
                    }
                    other => {
                        panic!("{kind} at size {size}: expected SizeOutOfRange, got {other:?}")
                    }
                }
            }
            // The bounds themselves are accepted, and cheap to construct (no synthesis).
            for size in [min, max] {
                let c = BuiltinCircuit::new(kind, size, 0).unwrap();
                assert_eq!((c.kind(), c.size(), c.seed()), (kind, size, 0));
                assert!(c.units() >= 1);
                assert!(c.num_constraints() + c.num_instance_variables() <= 1usize << size);
                assert!(c.num_constraints() + c.num_instance_variables() > (1usize << size) / 2);
            }
        }
    }
}
