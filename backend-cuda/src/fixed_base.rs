//! Fixed-base scalar multiplication (key generation) over a host-built table
//! (g16_backend::fixed_base; kernels: `kernels/msm/fixed_base.cu`).
//!
//! One call: the table of the base's multiples for the call's total count, uploaded once; then
//! launches of at most [`LAUNCH`] points, each: its scalars staged in canonical form, one
//! launch, its affine points downloaded and checked on the curve. A call's flat positions are
//! 64-bit on the host (2^27 G2 points are 25 GiB); a launch's own indices fit 32 bits.

use std::sync::Arc;

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::AffineRepr;
use rayon::prelude::*;

use g16_backend::fixed_base::{self, FixedBasePlan};
use g16_backend::limbs::{self, FR_WORDS};
use g16_backend::timeline::SpanId;
use g16_backend::Fr;

use crate::compile::{self, Arg, Kernel, Kernels};
use crate::device::CudaDevice;
use crate::error::CudaError;
use crate::staging::Staging;
use crate::timing::Timing;

/// Most points a launch: 2^14 threads of [`PER_THREAD`] points, with the launch's sums
/// (384 bytes a G2 point), prefixes and points ~0.7 GiB at most.
const LAUNCH: usize = 1 << 20;
/// Points a thread: they share one field inversion (~570 products, against ~11 a window for
/// each point's additions).
const PER_THREAD: usize = 16;
/// Threads a block (`FIXED_BASE_THREADS` in the kernel).
const THREADS: u32 = 128;

/// What differs between G1 and G2.
pub(crate) struct FixedBaseCurve<C: SWCurveConfig> {
    span: &'static str,
    kernel: Kernel,
    field_words: usize,
    affine_words: usize,
    xyzz_words: usize,
    to_words: fn(&Affine<C>, &mut [u32]),
    from_words: fn(&[u32]) -> Affine<C>,
}

pub(crate) const G1: FixedBaseCurve<ark_bls12_381::g1::Config> = FixedBaseCurve {
    span: "fixed_base_g1",
    kernel: Kernel::FixedBase(compile::Curve::G1),
    field_words: limbs::FQ_WORDS,
    affine_words: limbs::G1_WORDS,
    xyzz_words: limbs::G1_XYZZ_WORDS,
    to_words: limbs::g1_to_words,
    from_words: limbs::g1_from_words,
};

pub(crate) const G2: FixedBaseCurve<ark_bls12_381::g2::Config> = FixedBaseCurve {
    span: "fixed_base_g2",
    kernel: Kernel::FixedBase(compile::Curve::G2),
    field_words: 2 * limbs::FQ_WORDS,
    affine_words: limbs::G2_WORDS,
    xyzz_words: limbs::G2_XYZZ_WORDS,
    to_words: limbs::g2_to_words,
    from_words: limbs::g2_from_words,
};

/// The fixed-base layer of one device.
pub(crate) struct FixedBase {
    dev: Arc<CudaDevice>,
    kernels: Arc<Kernels>,
    timing: Arc<Timing>,
    staging: Arc<Staging>,
}

impl FixedBase {
    pub fn new(
        (dev, kernels, timing, staging): (Arc<CudaDevice>, Arc<Kernels>, Arc<Timing>, Arc<Staging>),
    ) -> FixedBase {
        FixedBase { dev, kernels, timing, staging }
    }

    /// `s·base` for every scalar of every batch, affine, one vector a batch.
    pub fn run<C: SWCurveConfig>(
        &self,
        curve: &FixedBaseCurve<C>,
        base: Projective<C>,
        batches: &[&[Fr]],
        parent: Option<SpanId>,
    ) -> Result<Vec<Vec<Affine<C>>>, CudaError> {
        let (dev, staging) = (&*self.dev, &*self.staging);
        if let Some(identities) = fixed_base::trivial(&base, batches) {
            return Ok(identities);
        }
        let total = fixed_base::total_len(batches);
        let mut out = fixed_base::batch_outputs(batches);
        let plan = FixedBasePlan::for_count(total);
        let host_table = fixed_base::table(base, plan);
        let table = staging.upload_items(
            "fixed-base table",
            &host_table,
            curve.affine_words,
            curve.to_words,
            ("upload_bases", parent),
        )?;
        drop(host_table);
        let launch = LAUNCH.min(total);
        let _op = dev.op();
        let sums = dev.alloc("fixed-base sums", launch * curve.xyzz_words)?;
        let prefixes = dev.alloc("fixed-base prefixes", launch * curve.field_words)?;
        let points = dev.alloc("fixed-base points", launch * curve.affine_words)?;
        for first in (0..total).step_by(launch) {
            let count = launch.min(total - first);
            let words = fixed_base::flat_words(batches, first, count);
            let items: Vec<&[u32]> = words.chunks_exact(FR_WORDS).collect();
            let copy = |w: &&[u32], o: &mut [u32]| o.copy_from_slice(w);
            let scalars =
                staging.upload_items("fixed-base scalars", &items, FR_WORDS, copy, ("upload_scalars", parent))?;
            let threads = count.div_ceil(PER_THREAD) as u32;
            self.timing.span(curve.span, parent, || {
                self.kernels.launch(
                    curve.kernel,
                    threads.div_ceil(THREADS),
                    THREADS,
                    &[
                        Arg::Ptr(dev.ptr(&scalars)),
                        Arg::Ptr(dev.ptr(&table)),
                        Arg::U32(plan.c),
                        Arg::U32(plan.windows),
                        Arg::U32(plan.per_window() as u32),
                        Arg::U32(count as u32),
                        Arg::U32(threads),
                        Arg::Ptr(dev.ptr(&sums)),
                        Arg::Ptr(dev.ptr(&prefixes)),
                        Arg::Ptr(dev.ptr(&points)),
                    ],
                )
            })?;
            let got = staging.download_items(dev.ptr(&points), count, curve.affine_words, curve.from_words)?;
            if got.par_iter().any(|p| !p.is_zero() && !p.is_on_curve()) {
                return Err(CudaError::Driver {
                    context: curve.span.to_string(),
                    message: "a point from the device is not on the curve (kernel fault); refusing to return it".into(),
                });
            }
            fixed_base::fill_batches(&mut out, batches, got);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
