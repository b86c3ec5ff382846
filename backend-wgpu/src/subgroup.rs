//! Subgroup checks of curve points on the device: a proving key's points, checked where its
//! bases go anyway, instead of on the host's cores (where a 2^20 key's checks took 8.3 s of
//! the H200 host's 16 threads).
//!
//! As the host's batched check does it (g16_backend::subgroup::batched, which says why it is
//! sound): the host draws the deal from the operating system and uploads its keystream, the
//! deal kernel (shaders/msm/deal.wgsl) writes each point's bucket in every pass as the MSM's
//! keys, and the MSM's sort and accumulation sum the buckets (`Msm::dealt_sums`). The sums, a
//! few thousand points, come back and are checked on the host, themselves batched: each of the
//! two stages misses a bad point with probability at most 2^-128, so a chunk with a point
//! outside the subgroup passes with at most 2^-127. A chunk whose sums fail is checked again on
//! the host, which names its first bad point; a chunk too small for batching to pay is checked
//! on the host point by point.
//!
//! Points go up in chunks sized so that every temporary fits one binding (and at most
//! [`MAX_CHUNK_WORDS`] of points), checked in order, so the first failing chunk holds the first
//! bad point.

use ark_ec::short_weierstrass::{Affine, Projective};
use ark_ec::{AffineRepr, CurveGroup};
use g16_backend::subgroup::batched::{self, Deal, Plan};

use crate::buffers::{Group, Memory};
use crate::error::WgpuError;
use crate::msm::{dealt_bytes, DealShape, Msm};
use crate::staging;
use crate::timing::Tag;

/// Words of one chunk's points at most (384 MiB, as the CUDA backend's): 2^22 G1 points,
/// 2^21 G2 points. Bounds the host's words and keystream for one chunk.
const MAX_CHUNK_WORDS: usize = (1 << 22) * 24;

/// The index of the first of `points` (each on the curve) outside the prime-order subgroup,
/// or None. `check_cost`: one point's check in additions (the batched plan's weight).
pub(crate) fn first_outside<G: Group>(
    mem: &Memory,
    msm: &Msm,
    points: &[Affine<G>],
    check_cost: u32,
    tag: Tag,
) -> Result<Option<usize>, WgpuError> {
    if points.is_empty() {
        return Ok(None);
    }
    let chunk = chunk_len::<G>(mem, points.len(), check_cost);
    for (k, part) in points.chunks(chunk).enumerate() {
        let first = match Plan::for_points(part.len(), check_cost) {
            Some(plan) => check_chunk(mem, msm, part, plan, check_cost, tag)?,
            None => batched::each_first_outside(part),
        };
        if let Some(i) = first {
            return Ok(Some(k * chunk + i));
        }
    }
    Ok(None)
}

/// The points a chunk holds: at most [`MAX_CHUNK_WORDS`] of them, halved until the deal's
/// keystream, the keys and the partials of the chunk's plan each fit one binding.
fn chunk_len<G: Group>(mem: &Memory, n: usize, check_cost: u32) -> usize {
    let binding = mem.device().binding_bytes();
    let most = (MAX_CHUNK_WORDS / G::CURVE.affine().words()).min(mem.max_elements(G::CURVE.affine()) as usize);
    let mut len = n.min(most).max(1);
    loop {
        let Some(plan) = Plan::for_points(len, check_cost) else { return len };
        let shape = deal_shape(plan);
        let (keys, partials) = dealt_bytes(G::CURVE, len, shape);
        let stream = len as u64 * u64::from(shape.words) * 8;
        if (keys <= binding && stream <= binding && partials <= binding) || len == 1 {
            return len;
        }
        len = len.div_ceil(2);
    }
}

/// One chunk, batched: the first bad point's index in `part`, or None.
fn check_chunk<G: Group>(
    mem: &Memory,
    msm: &Msm,
    part: &[Affine<G>],
    plan: Plan,
    check_cost: u32,
    tag: Tag,
) -> Result<Option<usize>, WgpuError> {
    let deal = Deal::new(plan);
    let shape = deal_shape(plan);
    let mut stream = vec![0u32; part.len() * shape.words as usize * 2];
    deal.keystream(0, &mut stream);
    let stream = staging::upload_words(mem, "subgroup deal", &stream)?;
    let points = staging::upload_points::<G>(mem, part)?;
    let sums = msm.dealt_sums(G::CURVE, &points, part.len(), &stream, shape, tag)?;
    if !sums_leave_subgroup::<G>(&sums, check_cost)? {
        return Ok(None);
    }
    // A bucket's sum left the subgroup, so a point of this chunk is outside: the chunk again,
    // on the host, names the first.
    match batched::first_outside(part, check_cost) {
        Some(i) => Ok(Some(i)),
        None => Err(WgpuError::Device(format!(
            "a bucket of a batched {} subgroup check left the subgroup but none of its points did (kernel fault)",
            G::CURVE.prefix().to_uppercase()
        ))),
    }
}

/// The deal kernel's view of a plan: its passes, bucket bits, and 64-bit stream words a point
/// (`Deal::words_per_point`).
fn deal_shape(plan: Plan) -> DealShape {
    DealShape {
        passes: plan.passes,
        bucket_bits: plan.bucket_bits,
        words: plan.passes.div_ceil(plan.passes_per_word()),
    }
}

/// Whether any of the device's bucket sums (XYZZ words; None: an empty bucket) leaves the
/// subgroup, checked on the host, batched. A sum off the curve is a kernel fault, refused as
/// the MSM refuses one: the subgroup test assumes its point is on the curve.
fn sums_leave_subgroup<G: Group>(sums: &[Option<Vec<u32>>], check_cost: u32) -> Result<bool, WgpuError> {
    let sums: Vec<Projective<G>> = sums.iter().flatten().map(|w| G::xyzz_to_projective(w)).collect();
    let sums = Projective::normalize_batch(&sums);
    if !sums.iter().all(|s| s.is_zero() || s.is_on_curve()) {
        return Err(WgpuError::OffCurve { op: "subgroup check" });
    }
    Ok(batched::first_outside(&sums, check_cost).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::{g1, Fq, G1Projective};
    use ark_ff::Field;
    use g16_backend::limbs::{fq_to_words, G1_XYZZ_WORDS};
    use g16_backend::sample::{g1_with_order_three_part, random_points, test_rng};
    use g16_backend::subgroup::{batched::Deal, G1_CHECK_IN_ADDITIONS};

    /// Sums as the device returns them: XYZZ words with zz = zzz = 1.
    fn words(points: &[ark_bls12_381::G1Affine]) -> Vec<Option<Vec<u32>>> {
        points
            .iter()
            .map(|a| {
                let mut w = vec![0u32; G1_XYZZ_WORDS];
                fq_to_words(&a.x, &mut w[..12]);
                fq_to_words(&a.y, &mut w[12..24]);
                fq_to_words(&Fq::ONE, &mut w[24..36]);
                fq_to_words(&Fq::ONE, &mut w[36..48]);
                Some(w)
            })
            .collect()
    }

    #[test]
    fn sums_are_checked_on_the_curve_and_in_the_subgroup() {
        let mut rng = test_rng("sums_are_checked_on_the_curve_and_in_the_subgroup");
        let mut points = random_points::<G1Projective, _>(300, &mut rng);
        let mut sums = words(&points);
        sums.push(None);
        let check = |s: &[Option<Vec<u32>>]| sums_leave_subgroup::<g1::Config>(s, G1_CHECK_IN_ADDITIONS);
        assert!(!check(&sums).unwrap(), "subgroup sums and an empty bucket");
        points[150] = g1_with_order_three_part(points[150], false);
        assert!(check(&words(&points)).unwrap(), "a sum with an order-3 part");
        let mut faulty = words(&points[..10]);
        faulty[3].as_mut().unwrap()[0] ^= 1;
        assert!(matches!(check(&faulty), Err(WgpuError::OffCurve { .. })), "a sum off the curve");
    }

    #[test]
    fn the_deal_shape_is_the_deals() {
        for n in [100usize, 5_000, 1 << 20] {
            if let Some(plan) = Plan::for_points(n, G1_CHECK_IN_ADDITIONS) {
                assert_eq!(deal_shape(plan).words, Deal::new(plan).words_per_point(), "n = {n}");
            }
        }
    }
}
