//! Subgroup checks of curve points on the device (kernels: `kernels/curve/subgroup.cu`, whose
//! header gives the tests): a proving key's points, checked where its bases go anyway, instead
//! of on the host's cores.
//!
//! The points go up through the staging layer in chunks of at most [`CHUNK_WORDS`] (2^22 G1 or
//! 2^21 G2 points), so a key of any size takes bounded device memory: each chunk's buffer is
//! freed on the compute stream once its launches have run. Each chunk is the device span
//! `subgroup_g1` (`_g2`), which writes a word to the chunk's own answer word; the answers are
//! read back once, after the last chunk.
//!
//! A chunk is checked as the host's batched check does it (g16_backend::subgroup::batched, which
//! says why it is sound) where its plan says that pays: the host draws the deal from the
//! operating system and uploads its keystream, the MSM's sort and accumulation sum the buckets
//! (`Msm::dealt_sums`), and a launch checks the sums; the answer is the first failing bucket. A
//! small chunk is checked point by point, its answer the first failing point. The first chunk
//! with a failing bucket is checked again point by point, which names the first bad point.

use std::sync::Arc;

use ark_bls12_381::{g1, g2};
use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use g16_backend::limbs::{self, FQ_WORDS};
use g16_backend::subgroup::batched::{Deal, Plan};
use g16_backend::subgroup::{G1_BETA, G1_CHECK_IN_ADDITIONS, G2_CHECK_IN_ADDITIONS, G2_PSI_X, G2_PSI_Y};
use g16_backend::timeline::SpanId;

use crate::compile::{self, Arg, Kernel, Kernels};
use crate::device::CudaDevice;
use crate::error::CudaError;
use crate::msm::{self, Msm};
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
    /// The check of bucket sums, and the MSM's curve whose kernels sum the buckets.
    sums_kernel: Kernel,
    msm: &'static msm::Curve<C>,
    /// One point's check in additions, for the batched check's plan.
    check_cost: u32,
    affine_words: usize,
    to_words: fn(&Affine<C>, &mut [u32]),
    /// The constants of `endo`, in the kernel's words: β for G1; c_x then c_y for G2.
    endo_words: fn() -> Vec<u32>,
}

pub(crate) const G1: SubgroupCurve<g1::Config> = SubgroupCurve {
    span: "subgroup_g1",
    points: "G1 points to check",
    kernel: Kernel::SubgroupCheck(compile::Curve::G1),
    sums_kernel: Kernel::SubgroupCheckSums(compile::Curve::G1),
    msm: &msm::G1,
    check_cost: G1_CHECK_IN_ADDITIONS,
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
    sums_kernel: Kernel::SubgroupCheckSums(compile::Curve::G2),
    msm: &msm::G2,
    check_cost: G2_CHECK_IN_ADDITIONS,
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
    /// subgroup, or None; `msm` sums the batched check's buckets.
    pub fn first_outside<C: SWCurveConfig>(
        &self,
        msm: &Msm,
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
        let mut batched = vec![false; chunks];
        for (k, part) in points.chunks(chunk).enumerate() {
            let staged = ("upload_bases", parent);
            let data = self.staging.upload_items(curve.points, part, curve.affine_words, curve.to_words, staged)?;
            let check = Check { curve, points: (dev.ptr(&data), part.len()), endo: dev.ptr(&endo), parent };
            let answer = dev.ptr(&answers) + 4 * k as u64;
            match Plan::for_points(part.len(), curve.check_cost) {
                Some(plan) => {
                    batched[k] = true;
                    self.check_sums(msm, &check, Deal::new(plan), answer)?;
                }
                None => self.check_each(&check, answer)?,
            }
        }
        let found = self.staging.download_words(dev.ptr(&answers), chunks)?;
        let Some((k, &answer)) = found.iter().enumerate().find(|(_, &a)| a != NONE_OUTSIDE) else {
            return Ok(None);
        };
        if !batched[k] {
            return Ok(Some(k * chunk + answer as usize));
        }
        // A bucket's sum left the subgroup, so a point of this chunk is outside: the chunk again,
        // point by point, names the first.
        let part = &points[k * chunk..points.len().min((k + 1) * chunk)];
        let data = self.staging.upload_items(
            curve.points,
            part,
            curve.affine_words,
            curve.to_words,
            ("upload_bases", parent),
        )?;
        let again = dev.upload_words("subgroup answer", &[NONE_OUTSIDE])?;
        let check = Check { curve, points: (dev.ptr(&data), part.len()), endo: dev.ptr(&endo), parent };
        self.check_each(&check, dev.ptr(&again))?;
        match self.staging.download_words(dev.ptr(&again), 1)?[0] {
            NONE_OUTSIDE => Err(CudaError::Driver {
                context: curve.span.to_string(),
                message: format!(
                    "bucket {answer} of a batched check left the subgroup but none of its points did (kernel fault)"
                ),
            }),
            i => Ok(Some(k * chunk + i as usize)),
        }
    }

    /// One launch, each point a thread: the first failing point's index to `answer`.
    fn check_each<C: SWCurveConfig>(&self, check: &Check<'_, C>, answer: u64) -> Result<(), CudaError> {
        let (points, n) = check.points;
        let args = [Arg::Ptr(points), Arg::U32(n as u32), Arg::Ptr(check.endo), Arg::Ptr(answer)];
        // The lock keeps other operations' launches out of this span.
        let _op = self.dev.op();
        self.timing.span(check.curve.span, check.parent, || {
            self.kernels.launch(check.curve.kernel, (n as u32).div_ceil(THREADS), THREADS, &args)
        })
    }

    /// The batched check: the deal's keystream uploaded, the buckets summed, the sums checked;
    /// the first failing bucket's index to `answer`.
    fn check_sums<C: SWCurveConfig>(
        &self,
        msm: &Msm,
        check: &Check<'_, C>,
        deal: Deal,
        answer: u64,
    ) -> Result<(), CudaError> {
        let (plan, words) = (deal.plan(), deal.words_per_point());
        let mut stream = vec![0u32; check.points.1 * words as usize * 2];
        deal.keystream(0, &mut stream);
        let stream = self.dev.upload_words("subgroup deal", &stream)?;
        let curve = check.curve;
        let sums = (plan.passes as usize * plan.buckets()) as u32;
        // The lock keeps other operations' launches out of this span, and their MSMs out of
        // the workspace that holds the sums until the check has read them.
        let _op = self.dev.op();
        self.timing.span(curve.span, check.parent, || {
            let deal = (self.dev.ptr(&stream), words);
            let at = msm.dealt_sums(curve.msm, curve.span, check.points, deal, plan, check.parent)?;
            let args = [Arg::Ptr(at), Arg::U32(sums), Arg::Ptr(check.endo), Arg::Ptr(answer)];
            self.kernels.launch(curve.sums_kernel, sums.div_ceil(THREADS), THREADS, &args)
        })
    }
}

/// One chunk's check: its points on the device (address, count), the constants, the span's
/// parent.
struct Check<'a, C: SWCurveConfig> {
    curve: &'a SubgroupCurve<C>,
    points: (u64, usize),
    endo: u64,
    parent: Option<SpanId>,
}

#[cfg(test)]
mod tests;
