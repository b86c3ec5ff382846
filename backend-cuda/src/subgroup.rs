//! Subgroup checks of curve points on the device (kernels: `kernels/curve/subgroup.cu`, whose
//! header gives the tests): a proving key's points, checked where its bases go anyway, instead
//! of on the host's cores.
//!
//! The points go up through the staging layer in chunks of at most [`CHUNK_WORDS`] (2^22 G1 or
//! 2^21 G2 points), so a key of any size takes bounded device memory: each chunk's buffer is
//! freed on the compute stream once its launch has run. Each chunk is one launch, the device
//! span `subgroup_g1` (`_g2`), which writes the first failing index within the chunk to the
//! chunk's own answer word; the answers are read back once, after the last launch, and the
//! first chunk's answer that names a point gives the global index.

use std::sync::Arc;

use ark_bls12_381::{g1, g2};
use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use g16_backend::limbs::{self, FQ_WORDS};
use g16_backend::subgroup::{G1_BETA, G2_PSI_X, G2_PSI_Y};
use g16_backend::timeline::SpanId;

use crate::compile::{self, Arg, Kernel, Kernels};
use crate::device::CudaDevice;
use crate::error::CudaError;
use crate::staging::Staging;
use crate::timing::Timing;

/// Words of one chunk's points (384 MiB): 2^22 G1 points, 2^21 G2 points.
const CHUNK_WORDS: usize = (1 << 22) * limbs::G1_WORDS;

/// Threads a block (`SUBGROUP_THREADS` in the kernel).
const THREADS: u32 = 256;

/// A chunk's answer when every point of it is in the subgroup.
const NONE_OUTSIDE: u32 = u32::MAX;

/// What differs between G1 and G2: the kernel, the points' words, and the endomorphism's
/// constants the kernel takes.
pub(crate) struct SubgroupCurve<C: SWCurveConfig> {
    span: &'static str,
    points: &'static str,
    kernel: Kernel,
    affine_words: usize,
    to_words: fn(&Affine<C>, &mut [u32]),
    /// The constants of `endo`, in the kernel's words: β for G1; c_x then c_y for G2.
    endo_words: fn() -> Vec<u32>,
}

pub(crate) const G1: SubgroupCurve<g1::Config> = SubgroupCurve {
    span: "subgroup_g1",
    points: "G1 points to check",
    kernel: Kernel::SubgroupCheck(compile::Curve::G1),
    affine_words: limbs::G1_WORDS,
    to_words: limbs::g1_to_words,
    endo_words: || {
        let mut words = vec![0; FQ_WORDS];
        limbs::fq_to_words(&G1_BETA, &mut words);
        words
    },
};

pub(crate) const G2: SubgroupCurve<g2::Config> = SubgroupCurve {
    span: "subgroup_g2",
    points: "G2 points to check",
    kernel: Kernel::SubgroupCheck(compile::Curve::G2),
    affine_words: limbs::G2_WORDS,
    to_words: limbs::g2_to_words,
    endo_words: || {
        let mut words = vec![0; 4 * FQ_WORDS];
        let (x, y) = words.split_at_mut(2 * FQ_WORDS);
        limbs::fq2_to_words(&G2_PSI_X, x);
        limbs::fq2_to_words(&G2_PSI_Y, y);
        words
    },
};

/// The subgroup layer of one device.
pub(crate) struct Subgroup {
    dev: Arc<CudaDevice>,
    kernels: Arc<Kernels>,
    timing: Arc<Timing>,
    staging: Arc<Staging>,
}

impl Subgroup {
    pub fn new(
        (dev, kernels, timing, staging): (Arc<CudaDevice>, Arc<Kernels>, Arc<Timing>, Arc<Staging>),
    ) -> Subgroup {
        Subgroup { dev, kernels, timing, staging }
    }

    /// The index of the first of `points` (each on the curve) outside the prime-order
    /// subgroup, or None.
    pub fn first_outside<C: SWCurveConfig>(
        &self,
        curve: &SubgroupCurve<C>,
        points: &[Affine<C>],
        parent: Option<SpanId>,
    ) -> Result<Option<usize>, CudaError> {
        if points.is_empty() {
            return Ok(None);
        }
        let dev = &*self.dev;
        let chunk = CHUNK_WORDS / curve.affine_words;
        let chunks = points.len().div_ceil(chunk);
        let endo = dev.upload_words("subgroup constants", &(curve.endo_words)())?;
        let answers = dev.upload_words("subgroup answers", &vec![NONE_OUTSIDE; chunks])?;
        for (k, part) in points.chunks(chunk).enumerate() {
            let staged = ("upload_bases", parent);
            let data = self.staging.upload_items(curve.points, part, curve.affine_words, curve.to_words, staged)?;
            let args = [
                Arg::Ptr(dev.ptr(&data)),
                Arg::U32(part.len() as u32),
                Arg::Ptr(dev.ptr(&endo)),
                Arg::Ptr(dev.ptr(&answers) + 4 * k as u64),
            ];
            let grid = (part.len() as u32).div_ceil(THREADS);
            // The lock keeps other operations' launches out of this span.
            let _op = dev.op();
            self.timing.span(curve.span, parent, || self.kernels.launch(curve.kernel, grid, THREADS, &args))?;
        }
        let found = self.staging.download_words(dev.ptr(&answers), chunks)?;
        let first = found.iter().enumerate().find(|(_, &i)| i != NONE_OUTSIDE);
        Ok(first.map(|(k, &i)| k * chunk + i as usize))
    }
}

#[cfg(test)]
mod tests;
