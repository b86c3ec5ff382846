//! The curve every part of g16 works over, named once.

/// The pairing-friendly curve.
pub type Curve = ark_bls12_381::Bls12_381;
/// The scalar field of BLS12-381 (the field of the constraint system and of MSM scalars).
pub type Fr = ark_bls12_381::Fr;
pub type G1Affine = ark_bls12_381::G1Affine;
pub type G2Affine = ark_bls12_381::G2Affine;
pub type G1Projective = ark_bls12_381::G1Projective;
pub type G2Projective = ark_bls12_381::G2Projective;
