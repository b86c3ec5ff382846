//! Shared helpers for the integration tests.
#![allow(dead_code)] // each test binary uses its own subset

use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use ark_relations::lc;
use g16::{CheckedKey, Fr};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// A fresh, unpredictable RNG: every run of the suite checks new inputs. The seed is printed
/// so that a failure can be replayed.
pub fn fresh_rng(test: &str) -> ChaCha20Rng {
    let seed: u64 = std::env::var("G16_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    eprintln!("{test}: G16_TEST_SEED={seed}");
    ChaCha20Rng::seed_from_u64(seed)
}

/// arkworks' setup (libsnark reduction) for `circuit`: a key valid by construction.
pub fn setup<C: ConstraintSynthesizer<Fr>>(circuit: C, rng: &mut ChaCha20Rng) -> CheckedKey {
    CheckedKey::generate(circuit, rng).expect("setup")
}

/// A user circuit with several public inputs: knows x, w such that x³ + x + 5 = y and
/// x·w = v, with y and v public. `cheat` breaks the witness.
#[derive(Clone)]
pub struct CubicCircuit {
    pub x: Fr,
    pub w: Fr,
    pub cheat: bool,
}

impl CubicCircuit {
    pub fn public_inputs(&self) -> Vec<Fr> {
        let x = self.x;
        vec![x * x * x + x + Fr::from(5u64), x * self.w]
    }
}

impl ConstraintSynthesizer<Fr> for CubicCircuit {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let publics = self.public_inputs();
        let y = cs.new_input_variable(|| Ok(publics[0]))?;
        let v = cs.new_input_variable(|| Ok(publics[1]))?;
        let x_val = if self.cheat { self.x + Fr::from(1u64) } else { self.x };
        let x = cs.new_witness_variable(|| Ok(x_val))?;
        let w = cs.new_witness_variable(|| Ok(self.w))?;
        let x2 = cs.new_witness_variable(|| Ok(x_val * x_val))?;
        let x3 = cs.new_witness_variable(|| Ok(x_val * x_val * x_val))?;
        cs.enforce_r1cs_constraint(|| lc!() + x, || lc!() + x, || lc!() + x2)?;
        cs.enforce_r1cs_constraint(|| lc!() + x2, || lc!() + x, || lc!() + x3)?;
        cs.enforce_r1cs_constraint(
            || lc!() + x3 + x + (Fr::from(5u64), ark_relations::gr1cs::Variable::One),
            || lc!() + ark_relations::gr1cs::Variable::One,
            || lc!() + y,
        )?;
        cs.enforce_r1cs_constraint(|| lc!() + x, || lc!() + w, || lc!() + v)?;
        Ok(())
    }
}
