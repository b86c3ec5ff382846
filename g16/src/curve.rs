//! The curve and its Groth16 types, named once for the whole library.

pub use g16_backend::{Curve, Fr, G1Affine, G1Projective, G2Affine, G2Projective};

pub type Proof = ark_groth16::Proof<Curve>;
pub type ProvingKey = ark_groth16::ProvingKey<Curve>;
pub type VerifyingKey = ark_groth16::VerifyingKey<Curve>;
