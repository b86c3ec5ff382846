//! Where the subgroup checks of a key's points run. Scott's endomorphism tests (what arkworks
//! implements: G1 `φ(P) = −x²·P`, G2 `ψ(P) = x·P`) cost about 130 doublings a G1 point and
//! 64 in Fq2 a G2 point: on the host, tens of microseconds a point a core, most of a key's
//! loading time; on a GPU, a few milliseconds a million points, beside bases it uploads anyway.
//!
//! On the host the checks are batched (`g16_backend::subgroup::batched`: random partitions
//! into buckets, each bucket's sum checked, sound to 2^-128 whatever the cofactor), a key's
//! queries of one group as one batch.

use crate::curve::{G1Affine, G2Affine};
use g16_backend::{subgroup, BackendError};

/// Finds the first point outside the prime-order subgroup. Every point given is on the curve
/// already; the identity is in the subgroup.
pub trait SubgroupCheck: Sync {
    fn first_outside_g1(&self, points: &[G1Affine]) -> Result<Option<usize>, BackendError>;
    fn first_outside_g2(&self, points: &[G2Affine]) -> Result<Option<usize>, BackendError>;

    /// The first bad point of several vectors, as (vector, index): each vector on its own
    /// unless the checker does better (vectors shorter than `on_host_below` on the host).
    fn first_outside_g1_among(
        &self,
        vectors: &[&[G1Affine]],
        on_host_below: usize,
    ) -> Result<Option<(usize, usize)>, BackendError> {
        first_among(vectors, on_host_below, |v| OnHost.first_outside_g1(v), |v| self.first_outside_g1(v))
    }

    fn first_outside_g2_among(
        &self,
        vectors: &[&[G2Affine]],
        on_host_below: usize,
    ) -> Result<Option<(usize, usize)>, BackendError> {
        first_among(vectors, on_host_below, |v| OnHost.first_outside_g2(v), |v| self.first_outside_g2(v))
    }
}

/// Each vector in turn, those shorter than `on_host_below` by `host`, the others by `checker`:
/// (vector, index) of the first bad point.
fn first_among<P>(
    vectors: &[&[P]],
    on_host_below: usize,
    host: impl Fn(&[P]) -> Result<Option<usize>, BackendError>,
    checker: impl Fn(&[P]) -> Result<Option<usize>, BackendError>,
) -> Result<Option<(usize, usize)>, BackendError> {
    for (k, v) in vectors.iter().enumerate() {
        let first = if v.len() < on_host_below { host(v)? } else { checker(v)? };
        if let Some(i) = first {
            return Ok(Some((k, i)));
        }
    }
    Ok(None)
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

    fn first_outside_g1_among(
        &self,
        vectors: &[&[G1Affine]],
        _: usize,
    ) -> Result<Option<(usize, usize)>, BackendError> {
        Ok(subgroup::first_outside_g1_among(vectors))
    }

    fn first_outside_g2_among(
        &self,
        vectors: &[&[G2Affine]],
        _: usize,
    ) -> Result<Option<(usize, usize)>, BackendError> {
        Ok(subgroup::first_outside_g2_among(vectors))
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
