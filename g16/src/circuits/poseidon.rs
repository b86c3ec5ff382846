//! A chain of Poseidon hashes: h₀ = start, hᵢ₊₁ = Poseidon(hᵢ, mᵢ).
//!
//! Each link is one fresh `ark-crypto-primitives` Poseidon sponge that absorbs two field
//! elements (the previous hash and a seed-derived witness element mᵢ) and squeezes one:
//! exactly one permutation per link, and each link needs the previous one's output, so the
//! chain is strictly sequential. Nearly every witness value is a full-width field element
//! (S-box intermediates), which makes this circuit the field-heavy benchmark.
//!
//! Parameters: the standard Poseidon instance for a ~255-bit prime field with width 3
//! (rate 2, capacity 1), S-box x⁵, 8 full and 57 partial rounds (the Poseidon paper's
//! instance for x⁵ over a 255-bit field at width 3). Round constants and the MDS matrix are
//! generated deterministically by the crate's Grain-LFSR `find_poseidon_ark_and_mds`, taking
//! the first matrix it produces (`skip_matrices = 0`; the reference script's extra
//! matrix-security check is not re-run). For benchmarking the exact constants do not
//! matter; the round structure, and so the constraint shape and cost, is the standard one.
//!
//! Public inputs: the start value h₀ and the final hash hₙ.

use std::sync::OnceLock;

use ark_bls12_381::Fr;
use ark_crypto_primitives::sponge::{
    constraints::CryptographicSpongeVar,
    poseidon::{constraints::PoseidonSpongeVar, find_poseidon_ark_and_mds, PoseidonConfig, PoseidonSponge},
    CryptographicSponge, FieldBasedCryptographicSponge,
};
use ark_ff::PrimeField;
use ark_r1cs_std::{fields::fp::FpVar, prelude::*};
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use ark_std::UniformRand;

/// Sponge rate (field elements absorbed per permutation).
const RATE: usize = 2;
/// Sponge capacity.
const CAPACITY: usize = 1;
/// S-box exponent; 5 is valid for BLS12-381's Fr because gcd(5, r − 1) = 1.
const ALPHA: u64 = 5;
/// Full rounds (half before, half after the partial rounds).
const FULL_ROUNDS: usize = 8;
/// Partial rounds (S-box on one state element only).
const PARTIAL_ROUNDS: usize = 57;

/// Constraints per link: 3 per S-box (x², x⁴, x⁵), 3 S-boxes in each of the 8 full rounds
/// and 1 in each of the 57 partial rounds, minus the first round's S-box on the capacity
/// element, which is still a constant there (a fresh sponge starts from zeros) and so is
/// folded by the gadget: 3·(24 + 57) − 3 = 240. Checked by `unit_costs_match_the_gadget`.
pub(super) const CONSTRAINTS_PER_HASH: usize = 240;

/// Constraints outside the links: the equality binding the last hash to its public input.
pub(super) const FIXED_CONSTRAINTS: usize = 1;

/// Seed domain, so the same seed gives unrelated witnesses in different circuits.
const DOMAIN: [u8; 16] = *b"g16.poseidon.w.1";

/// Constraints of a chain of `hashes` links.
pub(super) const fn constraints_for_hashes(hashes: usize) -> usize {
    FIXED_CONSTRAINTS + hashes * CONSTRAINTS_PER_HASH
}

/// The longest chain whose constraints plus instance variables fit in `rows`.
pub(super) const fn hashes_for(rows: usize) -> usize {
    rows.saturating_sub(super::NUM_INSTANCE_VARIABLES + FIXED_CONSTRAINTS) / CONSTRAINTS_PER_HASH
}

/// The smallest size that holds one hash.
pub(super) const MIN_SIZE: u32 = {
    let mut size = 0;
    while hashes_for(1usize << size) == 0 {
        size += 1;
    }
    size
};

/// The Poseidon parameters, generated once per process (the Grain LFSR takes a few ms).
pub(super) fn config() -> &'static PoseidonConfig<Fr> {
    static CONFIG: OnceLock<PoseidonConfig<Fr>> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let (ark, mds) = find_poseidon_ark_and_mds::<Fr>(
            u64::from(Fr::MODULUS_BIT_SIZE),
            RATE,
            FULL_ROUNDS as u64,
            PARTIAL_ROUNDS as u64,
            0,
        );
        PoseidonConfig::new(FULL_ROUNDS, PARTIAL_ROUNDS, ALPHA, mds, ark, RATE, CAPACITY)
    })
}

/// The seed-derived values: the start h₀, then one absorbed element mᵢ per link, drawn in
/// this order by both the native computation and synthesis.
struct Witness(rand_chacha::ChaCha20Rng);

impl Witness {
    fn new(seed: u64) -> Self {
        Self(super::witness_rng(&DOMAIN, seed))
    }

    fn next(&mut self) -> Fr {
        Fr::rand(&mut self.0)
    }
}

/// One link, natively: the same sponge calls as the gadget.
fn hash_native(params: &PoseidonConfig<Fr>, previous: Fr, message: Fr) -> Fr {
    let mut sponge = PoseidonSponge::new(params);
    sponge.absorb(&vec![previous, message]);
    // Asking for one element always returns exactly one.
    sponge.squeeze_native_field_elements(1)[0]
}

/// The public inputs `[h₀, hₙ]`, computed natively.
pub(super) fn public_inputs(hashes: usize, seed: u64) -> [Fr; 2] {
    let params = config();
    let mut witness = Witness::new(seed);
    let start = witness.next();
    let mut h = start;
    for _ in 0..hashes {
        h = hash_native(params, h, witness.next());
    }
    [start, h]
}

/// Synthesizes the chain of `hashes` links and binds its ends to the public inputs.
pub(super) fn synthesize(cs: ConstraintSystemRef<Fr>, hashes: usize, seed: u64) -> Result<(), SynthesisError> {
    let params = config();
    let mut witness = Witness::new(seed);
    let start = witness.next();
    let mut h = FpVar::new_input(cs.clone(), || Ok(start))?;
    for _ in 0..hashes {
        let message = witness.next();
        let message = FpVar::new_witness(cs.clone(), || Ok(message))?;
        let mut sponge = PoseidonSpongeVar::new(cs.clone(), params);
        sponge.absorb(&vec![h, message])?;
        h = sponge
            .squeeze_field_elements(1)?
            .pop()
            // Unreachable: the sponge returns exactly the number of elements asked for.
            .ok_or(SynthesisError::Unsatisfiable)?;
    }
    // The input's value is the in-circuit result (only asked for when proving); the tests
    // check it equals the natively computed `public_inputs`.
    let end = FpVar::new_input(cs.clone(), || h.value())?;
    h.enforce_equal(&end)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{
        check_groth16_round_trip, check_instance, check_shape_independence, synthesize as synth,
    };
    use super::super::{BuiltinCircuit, CircuitKind};
    use super::*;
    use ark_ff::BigInteger;
    use ark_relations::gr1cs::{ConstraintSystem, OptimizationGoal, SynthesisMode};

    /// Constraints of a chain of `hashes` links, counted in setup mode.
    fn measure(hashes: usize) -> usize {
        let cs = ConstraintSystem::<Fr>::new_ref();
        cs.set_optimization_goal(OptimizationGoal::Constraints);
        cs.set_mode(SynthesisMode::Setup);
        synthesize(cs.clone(), hashes, 0).unwrap();
        cs.num_constraints()
    }

    #[test]
    fn unit_costs_match_the_gadget() {
        let (one, two) = (measure(1), measure(2));
        println!("poseidon: 1 hash {one}, 2 hashes {two} constraints; per hash {}, fixed {}", two - one, 2 * one - two);
        assert_eq!(two - one, CONSTRAINTS_PER_HASH, "constraints per hash");
        assert_eq!(one - CONSTRAINTS_PER_HASH, FIXED_CONSTRAINTS, "fixed constraints");
    }

    #[test]
    fn alpha_is_a_permutation() {
        // x ↦ x^α is a bijection on Fr iff gcd(α, r − 1) = 1; α = 5 is prime, so it
        // suffices that 5 does not divide r − 1.
        let r_mod_alpha =
            Fr::MODULUS.to_bytes_le().iter().rev().fold(0u64, |acc, &b| (acc * 256 + u64::from(b)) % ALPHA);
        assert_ne!(r_mod_alpha, 1, "alpha divides r - 1");
    }

    #[test]
    fn min_size_is_satisfied_and_fits() {
        let min = CircuitKind::Poseidon.min_size();
        check_instance(CircuitKind::Poseidon, min, 3, CONSTRAINTS_PER_HASH);
        assert_eq!(BuiltinCircuit::new(CircuitKind::Poseidon, min, 3).unwrap().units(), 1);
        assert_eq!(hashes_for(1 << (min - 1)), 0);
    }

    #[test]
    fn larger_size_is_satisfied_and_fits() {
        check_instance(CircuitKind::Poseidon, 12, 4, CONSTRAINTS_PER_HASH);
    }

    #[test]
    fn shape_does_not_depend_on_seed() {
        check_shape_independence(CircuitKind::Poseidon, 10);
    }

    #[test]
    fn chain_is_sequential() {
        // The witness stream is h₀, m₀, m₁, m₂, …; the chain's end is hash(…hash(h₀, m₀)…, mₙ₋₁).
        let mut stream = Witness::new(9);
        let [h0, m0, m1, m2] = [(); 4].map(|_| stream.next());
        let params = config();
        let h2 = hash_native(params, hash_native(params, h0, m0), m1);
        assert_eq!(public_inputs(2, 9), [h0, h2]);
        assert_eq!(public_inputs(3, 9), [h0, hash_native(params, h2, m2)]);
        // Order matters: the two absorbed elements are not interchangeable.
        assert_ne!(hash_native(params, h0, m0), hash_native(params, m0, h0));
    }

    #[test]
    fn witness_is_mostly_field_elements() {
        let cs = synth(BuiltinCircuit::new(CircuitKind::Poseidon, 10, 5).unwrap());
        let witness = cs.witness_assignment().unwrap();
        let bits = witness.iter().filter(|w| **w == Fr::from(0u64) || **w == Fr::from(1u64)).count();
        assert!(bits * 100 < witness.len(), "{bits} of {} witness values are bits", witness.len());
    }

    #[test]
    fn groth16_round_trip_rejects_a_wrong_input() {
        check_groth16_round_trip(CircuitKind::Poseidon, CircuitKind::Poseidon.min_size() + 1);
    }
}
