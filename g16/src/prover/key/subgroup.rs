//! Where the subgroup checks of a key's points run. Scott's endomorphism tests (what arkworks
//! implements: G1 `φ(P) = −x²·P`, G2 `ψ(P) = x·P`) cost about 130 doublings a G1 point and
//! 64 in Fq2 a G2 point: on the host, tens of microseconds a point a core, most of a key's
//! loading time; on a GPU, a few milliseconds a million points, beside bases it uploads anyway.
//!
//! No batched check is used: a random linear combination Σ cᵢ·Pᵢ hides a bad point whose
//! component outside G1 has small order with probability 1/ℓ for the smallest prime ℓ of the
//! cofactor, which for G1 is 3 — sound batching would need tens of rounds.

use g16_backend::{subgroup, BackendError};
use crate::curve::{G1Affine, G2Affine};

/// Finds the first point outside the prime-order subgroup. Every point given is on the curve
/// already; the identity is in the subgroup.
pub trait SubgroupCheck: Sync {
    fn first_outside_g1(&self, points: &[G1Affine]) -> Result<Option<usize>, BackendError>;
    fn first_outside_g2(&self, points: &[G2Affine]) -> Result<Option<usize>, BackendError>;
}

/// On the host's cores (arkworks' tests).
pub struct OnHost;

impl SubgroupCheck for OnHost {
    fn first_outside_g1(&self, points: &[G1Affine]) -> Result<Option<usize>, BackendError> {
        Ok(subgroup::first_outside_g1(points))
    }

    fn first_outside_g2(&self, points: &[G2Affine]) -> Result<Option<usize>, BackendError> {
        Ok(subgroup::first_outside_g2(points))
    }
}

/// On a backend: its device where it has one (the bases go there anyway), the host otherwise.
pub struct OnBackend<'a, B: ?Sized>(pub &'a B);

impl<B: g16_backend::Backend + ?Sized> SubgroupCheck for OnBackend<'_, B> {
    fn first_outside_g1(&self, points: &[G1Affine]) -> Result<Option<usize>, BackendError> {
        self.0.first_outside_subgroup_g1(points)
    }

    fn first_outside_g2(&self, points: &[G2Affine]) -> Result<Option<usize>, BackendError> {
        self.0.first_outside_subgroup_g2(points)
    }
}
