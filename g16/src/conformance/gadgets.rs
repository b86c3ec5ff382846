//! A circuit built from arkworks' own gadgets rather than g16's: emulated (non-native) field
//! arithmetic, Blake2s and boolean logic. Each shapes its constraints differently from the
//! built-ins (long packing rows, many small-coefficient rows, limb carries with large
//! coefficients, constants folded into the `1` column), so the compiled path is checked on
//! matrices g16 did not write.

use crate::curve::Fr;
use ark_bls12_381::Fq;
use ark_crypto_primitives::prf::blake2s::constraints::evaluate_blake2s;
use ark_ff::UniformRand;
use ark_r1cs_std::fields::emulated_fp::EmulatedFpVar;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::prelude::*;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystem, ConstraintSystemRef, SynthesisError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Witness values of [`GadgetCircuit`], drawn from a seed.
#[derive(Clone, Debug)]
pub struct GadgetCircuit {
    /// Message hashed by Blake2s (one 64-byte block).
    message: [u8; 64],
    /// Operands of the emulated arithmetic, in BLS12-381's base field.
    x: Fq,
    y: Fq,
    /// Bits mixed by the boolean logic.
    flags: [bool; 16],
}

impl GadgetCircuit {
    pub fn new(seed: u64) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut message = [0u8; 64];
        rng.fill(&mut message[..]);
        let mut flags = [false; 16];
        flags.iter_mut().for_each(|f| *f = rng.gen());
        Self { message, x: Fq::rand(&mut rng), y: Fq::rand(&mut rng), flags }
    }

    /// The circuit's public inputs (without the leading 1), read from a prove-mode synthesis.
    pub fn public_inputs(&self) -> Vec<Fr> {
        let cs = ConstraintSystem::<Fr>::new_ref();
        self.clone().generate_constraints(cs.clone()).expect("synthesis");
        assert!(cs.is_satisfied().expect("satisfiable"), "the gadget circuit's witness satisfies it");
        let inputs = cs.borrow().expect("cs").instance_assignment().expect("assignment").to_vec();
        inputs[1..].to_vec()
    }
}

impl ConstraintSynthesizer<Fr> for GadgetCircuit {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        // Blake2s of a witness message; 248 bits of the digest become one public input.
        let bytes = UInt8::new_witness_vec(cs.clone(), &self.message)?;
        let bits: Vec<Boolean<Fr>> = bytes.iter().flat_map(|b| b.to_bits_le().expect("bits")).collect();
        let digest = evaluate_blake2s(&bits)?;
        let digest_bits: Vec<Boolean<Fr>> = digest.iter().flat_map(|w| w.to_bits_le().expect("bits")).collect();
        let packed = Boolean::le_bits_to_fp(&digest_bits[..248])?;
        let digest_input = FpVar::new_input(cs.clone(), || packed.value())?;
        digest_input.enforce_equal(&packed)?;

        // Emulated arithmetic: x·y + x² − y over Fq, its limbs public inputs.
        let x = EmulatedFpVar::<Fq, Fr>::new_witness(cs.clone(), || Ok(self.x))?;
        let y = EmulatedFpVar::<Fq, Fr>::new_witness(cs.clone(), || Ok(self.y))?;
        let z = &x * &y + x.square()? - &y;
        let z_input = EmulatedFpVar::<Fq, Fr>::new_input(cs.clone(), || z.value())?;
        z_input.enforce_equal(&z)?;

        // Boolean logic: xor and and of flag pairs, an and of all, a select between field values.
        let flags = Vec::<Boolean<Fr>>::new_witness(cs.clone(), || Ok(self.flags.to_vec()))?;
        let mut mixed = Vec::new();
        for pair in flags.chunks(2) {
            mixed.push((&pair[0] ^ &pair[1]) | (&pair[0] & !&pair[1]));
        }
        let all = Boolean::kary_and(&mixed)?;
        let either = Boolean::kary_or(&flags)?;
        let chosen = all.select(&digest_input, &FpVar::constant(Fr::from(7u64)))?;
        let picked = FpVar::new_input(cs.clone(), || chosen.value())?;
        picked.enforce_equal(&chosen)?;
        let count = Boolean::le_bits_to_fp(&[either, all])?;
        let count_input = FpVar::new_input(cs, || count.value())?;
        count_input.enforce_equal(&count)
    }
}
