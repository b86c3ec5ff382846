//! Prime-order subgroup checks of points already on the curve, on the host's cores: the
//! contract's default for [`Backend::first_outside_subgroup_g1`] and `_g2`, and what the library
//! calls where no backend is at hand. Also the constants of the endomorphisms those checks use
//! (Scott, eprint 2021/1130), for the devices that run the same tests.
//!
//! [`Backend::first_outside_subgroup_g1`]: crate::contract::Backend::first_outside_subgroup_g1

use ark_bls12_381::{Fq, Fq2};
use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_ff::MontFp;

use crate::curve::{G1Affine, G2Affine};

/// |x|, where x = −0xd201000000010000 is BLS12-381's parameter: a device multiplies by it with
/// 63 doublings and 5 additions (its Hamming weight is 6).
pub const X_ABS: u64 = 0xd201_0000_0001_0000;

/// β of G1's endomorphism φ(x, y) = (β·x, y): arkworks' non-trivial cube root of unity in Fq,
/// the one for which φ acts on G1 as multiplication by −x² (the other root gives x² − 1).
pub const G1_BETA: Fq = ark_bls12_381::g1::BETA;

/// G2's untwist-Frobenius-twist endomorphism ψ(x, y) = (conj(x)·c_x, conj(y)·c_y), on G2
/// multiplication by x, with c_x = 1/(u+1)^((p−1)/3) and c_y = 1/(u+1)^((p−1)/2): arkworks'
/// `P_POWER_ENDOMORPHISM_COEFF_0` and `_1`, private there, so held here (the tests check them
/// against arkworks' subgroup test).
pub const G2_PSI_X: Fq2 = Fq2::new(
    MontFp!("0"),
    MontFp!(
        "4002409555221667392624310435006688643935503118305586438271171395842971157480381377015405980053539358417135540939437"
    ),
);
pub const G2_PSI_Y: Fq2 = Fq2::new(
    MontFp!(
        "2973677408986561043442465346520108879172042883009249989176415018091420807192182638567116318576472649347015917690530"
    ),
    MontFp!(
        "1028732146235106349975324479215795277384839936929757896155643118032610843298655225875571310552543014690878354869257"
    ),
);

/// One G1 check (x² by Scott's test: about 128 doublings and a few additions) in the batched
/// checks' additions, as measured on x86-64 with arkworks' arithmetic (48 µs a check, 0.36 µs
/// an affine addition in a batch; G2 67 and 1.04 µs): what decides whether batching pays and
/// how ([`batched::Plan::for_points`]).
pub const G1_CHECK_IN_ADDITIONS: u32 = 130;
/// One G2 check (x by Scott's test: about 64 doublings over Fq²) in additions over Fq².
pub const G2_CHECK_IN_ADDITIONS: u32 = 65;

/// The index of the first point outside the prime-order subgroup, or None, point by point;
/// every point must be on the curve. On rayon's pool: a check costs two scalar multiplications
/// by a 64-bit x, tens of microseconds. The reference the batched checks and the devices'
/// are held to.
pub fn first_outside<C: SWCurveConfig>(points: &[Affine<C>]) -> Option<usize> {
    batched::each_first_outside(points)
}

/// The first G1 point outside the subgroup, or None: batched where that pays (a key's queries:
/// sound to 2^-128, [`batched`]), point by point otherwise.
pub fn first_outside_g1(points: &[G1Affine]) -> Option<usize> {
    batched::first_outside(points, G1_CHECK_IN_ADDITIONS)
}

/// [`first_outside_g1`] for G2.
pub fn first_outside_g2(points: &[G2Affine]) -> Option<usize> {
    batched::first_outside(points, G2_CHECK_IN_ADDITIONS)
}

/// [`first_outside_g1`] of several vectors as one batch: (vector, index) of the first bad point.
pub fn first_outside_g1_among(vectors: &[&[G1Affine]]) -> Option<(usize, usize)> {
    batched::first_outside_among(vectors, G1_CHECK_IN_ADDITIONS)
}

/// [`first_outside_g1_among`] for G2.
pub fn first_outside_g2_among(vectors: &[&[G2Affine]]) -> Option<(usize, usize)> {
    batched::first_outside_among(vectors, G2_CHECK_IN_ADDITIONS)
}

pub mod batched;
#[cfg(test)]
mod tests;
