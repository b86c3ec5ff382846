//! A proof's randomness (r, s): what makes a Groth16 proof zero-knowledge.
//!
//! A proof hides its witness only while its (r, s) is secret and never used again: two proofs
//! of one statement with the same pair are equal, and a known pair lets anyone strip the blinding
//! from A and C. So the prover draws a fresh pair from the caller's cryptographic RNG for every
//! proof; a fixed pair is there for tests and bit-exact comparisons with other provers, under a
//! name that says so.

use ark_ff::UniformRand;
use rand::{CryptoRng, RngCore};

use crate::curve::Fr;

/// The (r, s) of one proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Randomness {
    r: Fr,
    s: Fr,
}

impl Randomness {
    /// A fresh pair from a cryptographic RNG: the only pair a real proof should use.
    pub fn draw<R: RngCore + CryptoRng + ?Sized>(rng: &mut R) -> Randomness {
        Randomness { r: Fr::rand(rng), s: Fr::rand(rng) }
    }

    /// A fresh pair from the operating system's RNG.
    pub fn from_os() -> Randomness {
        Randomness::draw(&mut rand::rngs::OsRng)
    }

    /// A pair chosen by the caller, for tests and for checking a proof bit for bit against
    /// another prover's for the same (r, s). A proof made with a pair that is known, or used
    /// twice, is not zero-knowledge: its witness can be recovered from it.
    pub fn fixed_for_tests(r: Fr, s: Fr) -> Randomness {
        Randomness { r, s }
    }

    pub fn r(&self) -> Fr {
        self.r
    }

    pub fn s(&self) -> Fr {
        self.s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_differ() {
        let (a, b) = (Randomness::from_os(), Randomness::from_os());
        assert_ne!(a, b, "two draws from the OS gave the same (r, s)");
        assert_ne!(a.r(), a.s());
    }
}
