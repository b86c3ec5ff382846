//! MSM on G1 and G2: Pippenger with signed window digits (kernels: `kernels/msm/`, whose
//! headers document the phases).
//!
//! The window and layout come from `g16_core`'s [`Planner`]: the windowed layout's width from
//! the scalars' count (at most 16 bits), and for base vectors of 2^18 to 2^23 points shifted
//! bases (`kernels/msm/table.cu`) made at upload, whose shared layout an MSM takes where it
//! counts less work. An MSM runs four phases on the compute stream, each a device span under
//! the MSM's own: digits, sort, accumulate, reduce; the host waits only for the sets' sums,
//! which it combines.

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use ark_bls12_381::{g1, g2, Fr};
use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ff::{AdditiveGroup, Zero};
use g16_core::backend::limbs::{self, FQ_WORDS, FR_WORDS, G1_WORDS, G1_XYZZ_WORDS, G2_WORDS, G2_XYZZ_WORDS};
use g16_core::backend::msm_plan::{Layout, MsmTuning, Planner, WindowRule};
use g16_core::timeline::SpanId;

use crate::buffers::{BaseTable, Bases, FrBuffer, Workspace};
use crate::device::{Arg, CudaDevice};
use crate::error::CudaError;
use crate::staging::Staging;

/// The windowed layout's widest window: at 2^24 points c = 16 beat every width from 13 to 20
/// (docs/perf/cuda.md, "Window").
const MAX_WINDOW: u32 = 16;
/// A bucket's weight in mixed additions, for choosing the shifted bases' width and the layout
/// of an MSM: about three for the reduction (two XYZZ additions, each ~1.4 mixed ones). The
/// reduction measured more, but the choices this weight makes at 2^20–2^22 are the measured
/// best (docs/perf/cuda.md, "Shifted bases").
const PER_BUCKET: u64 = 3;
/// Points summed per block by the big-bucket path.
const BIG_PIECE: usize = 4096;
/// Blocks of the ones' batch addition.
const ONES_BLOCKS: u32 = 512;
/// Points per launch of the shifted-bases kernel (its scratch holds W−1 multiples of each).
const SHIFT_CHUNK: usize = 1 << 18;

/// The scalars of an MSM: host values, or a range of a device buffer (inside it: checked by the
/// caller).
#[derive(Clone, Copy)]
pub(crate) enum ScalarsRef<'a> {
    Host(&'a [Fr]),
    Device(&'a FrBuffer, &'a Range<usize>),
}

impl ScalarsRef<'_> {
    fn len(&self) -> usize {
        match self {
            ScalarsRef::Host(s) => s.len(),
            ScalarsRef::Device(_, range) => range.len(),
        }
    }
}

/// One MSM's layout and the launch geometry that follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MsmPlan {
    n: usize,
    layout: Layout,
    /// Shared layout: the table's points per window (entry = w·stride + i); 0 when windowed.
    stride: u32,
    /// Buckets with more points than this take the big-bucket path.
    big: u32,
    /// Segments per set of the bucket reduction.
    segments: u32,
}

impl MsmPlan {
    fn new(n: usize, layout: Layout, stride: u32) -> MsmPlan {
        let (half, sets) = (layout.half(), layout.sets);
        let per_bucket = (n as u64 * u64::from(layout.windows) / (u64::from(half) * u64::from(sets))).max(1) as u32;
        let big = (4 * per_bucket).max(256);
        // Segments of at least 8 buckets (16 additions and a scalar multiplication by j·len per
        // thread), about 2^17 threads over all sets; powers of two, so the folds divide evenly.
        let per_set = ((1u32 << 17) / sets).max(1);
        let segments = (half / 8).clamp(1, 1 << (31 - per_set.leading_zeros()));
        MsmPlan { n, layout, stride, big, segments }
    }

    fn buckets(&self) -> usize {
        self.layout.buckets() as usize
    }
    fn entries(&self) -> usize {
        self.layout.entries(self.n) as usize
    }
}

/// What differs between G1 and G2: kernel names, the sizes of points, and their conversions.
pub(crate) struct Curve<C: SWCurveConfig> {
    span: &'static str,
    bases: &'static str,
    accumulate: &'static str,
    big_pieces: &'static str,
    big_combine: &'static str,
    bucket_reduce: &'static str,
    window_fold: &'static str,
    ones_sum: &'static str,
    shift_bases: &'static str,
    /// Threads of the block-reducing kernels (shared memory holds one sum per thread).
    threads: u32,
    field_words: usize,
    affine_words: usize,
    xyzz_words: usize,
    to_words: fn(&Affine<C>, &mut [u32]),
    from_xyzz: fn(&[u32]) -> Projective<C>,
}

pub(crate) const G1: Curve<g1::Config> = Curve {
    span: "msm_g1",
    bases: "G1 bases",
    accumulate: "g1_accumulate",
    big_pieces: "g1_big_pieces",
    big_combine: "g1_big_combine",
    bucket_reduce: "g1_bucket_reduce",
    window_fold: "g1_window_fold",
    ones_sum: "g1_ones_sum",
    shift_bases: "g1_shift_bases",
    threads: 128,
    field_words: FQ_WORDS,
    affine_words: G1_WORDS,
    xyzz_words: G1_XYZZ_WORDS,
    to_words: limbs::g1_to_words,
    from_xyzz: limbs::g1_xyzz_to_projective,
};

pub(crate) const G2: Curve<g2::Config> = Curve {
    span: "msm_g2",
    bases: "G2 bases",
    accumulate: "g2_accumulate",
    big_pieces: "g2_big_pieces",
    big_combine: "g2_big_combine",
    bucket_reduce: "g2_bucket_reduce",
    window_fold: "g2_window_fold",
    ones_sum: "g2_ones_sum",
    shift_bases: "g2_shift_bases",
    threads: 64,
    field_words: 2 * FQ_WORDS,
    affine_words: G2_WORDS,
    xyzz_words: G2_XYZZ_WORDS,
    to_words: limbs::g2_to_words,
    from_xyzz: limbs::g2_xyzz_to_projective,
};

/// The MSM's planner, workspace and 0/1 split, kept between MSMs.
pub(crate) struct Msm {
    planner: Planner,
    workspace: Workspace,
    ones_split: AtomicBool,
}

impl Msm {
    pub fn new(tuning: MsmTuning, ones_split: bool) -> Msm {
        Msm {
            planner: Planner {
                windowed: WindowRule::FromLength { max: MAX_WINDOW },
                table_per_bucket: PER_BUCKET,
                tuning,
            },
            workspace: Workspace::new(),
            ones_split: AtomicBool::new(ones_split),
        }
    }

    /// Whether MSMs send scalars equal to 1 to a batch addition instead of Pippenger.
    pub fn set_ones_split(&self, on: bool) {
        self.ones_split.store(on, Ordering::Relaxed);
    }
    pub fn ones_split(&self) -> bool {
        self.ones_split.load(Ordering::Relaxed)
    }

    /// Uploads bases, and makes their shifted multiples where the MSM gains from them.
    pub fn upload<C: SWCurveConfig>(
        &self,
        dev: &CudaDevice,
        staging: &Staging,
        curve: &Curve<C>,
        host: &[Affine<C>],
    ) -> Result<Bases<C>, CudaError> {
        let _op = dev.op();
        let data =
            staging.upload_items(dev, curve.bases, host, curve.affine_words, curve.to_words, ("upload_bases", None))?;
        let table = self.shifted_bases(dev, curve, dev.ptr(&data), host.len())?;
        Ok(Bases { data, len: host.len(), table, _curve: PhantomData })
    }

    /// Σ scalars[i]·bases[i] (at least as many bases as scalars: checked by the caller).
    pub fn run<C: SWCurveConfig>(
        &self,
        (dev, staging): (&CudaDevice, &Staging),
        curve: &Curve<C>,
        bases: &Bases<C>,
        scalars: ScalarsRef<'_>,
        parent: Option<SpanId>,
    ) -> Result<Projective<C>, CudaError> {
        let n = scalars.len();
        if n == 0 {
            return Ok(Projective::zero());
        }
        let uploaded;
        let scalars_ptr = match scalars {
            ScalarsRef::Host(s) => {
                uploaded = staging.upload_fr(dev, s, parent)?;
                dev.ptr(&uploaded.data)
            }
            ScalarsRef::Device(buf, range) => dev.ptr(&buf.data) + (range.start * FR_WORDS * 4) as u64,
        };
        let windowed = MsmPlan::new(n, self.planner.windowed(n), 0);
        let cost = |p: &MsmPlan| p.layout.cost(n, self.planner.table_per_bucket);
        let (plan, points) = match bases.table.as_ref().map(|t| (MsmPlan::new(n, t.layout, t.len as u32), t)) {
            Some((shared, t)) if cost(&shared) < cost(&windowed) => (shared, dev.ptr(&t.data)),
            _ => (windowed, dev.ptr(&bases.data)),
        };
        if plan.entries() as u64 >= 1 << 31 {
            return Err(CudaError::OutOfMemory {
                what: format!("{} of {n} points (more than 2^31 bucket entries)", curve.span),
                requested: plan.entries() as u64 * 4,
                available: 1 << 33,
            });
        }
        let phases = Phases { dev, staging, msm: self, curve, plan, points, bases: dev.ptr(&bases.data), parent };
        let words = {
            let _op = dev.op();
            dev.span(curve.span, parent, || match phases.run(scalars_ptr) {
                // The workspace of earlier MSMs may hold what this one needs: free it, once.
                Err(CudaError::OutOfMemory { .. }) => {
                    self.workspace.clear(dev)?;
                    phases.run(scalars_ptr)
                }
                other => other,
            })?
        };
        let sums: Vec<Projective<C>> = words.chunks(curve.xyzz_words).map(curve.from_xyzz).collect();
        combine(&plan, &sums)
    }

    /// The shifted bases of `len` points at `bases` (see `kernels/msm/table.cu`), when the
    /// planner gives the vector a table and device memory holds it with room to spare; None
    /// otherwise. The caller holds the operation lock.
    fn shifted_bases<C: SWCurveConfig>(
        &self,
        dev: &CudaDevice,
        curve: &Curve<C>,
        bases: u64,
        len: usize,
    ) -> Result<Option<BaseTable>, CudaError> {
        let Some(layout) = self.planner.table(len) else { return Ok(None) };
        let (c, windows) = (layout.c, layout.windows);
        let chunk = len.min(SHIFT_CHUNK);
        let table_words = windows as usize * len * curve.affine_words;
        let scratch_words = (windows as usize - 1) * chunk * (curve.xyzz_words + curve.field_words);
        // Half of the free memory at most: the MSMs and the prover's vectors need the rest.
        let bytes = ((table_words + scratch_words) * 4) as u64;
        if bytes > dev.available_bytes()? / 2 {
            return Ok(None);
        }
        // The tables are an optimisation: memory that runs short skips them, never the upload.
        let alloc = |what, words| match dev.alloc(what, words) {
            Ok(buf) => Ok(Some(buf)),
            Err(CudaError::OutOfMemory { .. }) => Ok(None),
            Err(e) => Err(e),
        };
        let Some(data) = alloc("MSM shifted bases", table_words)? else { return Ok(None) };
        let Some(multiples) = alloc("MSM shifted-bases scratch", (windows as usize - 1) * chunk * curve.xyzz_words)?
        else {
            return Ok(None);
        };
        let Some(products) = alloc("MSM shifted-bases products", (windows as usize - 1) * chunk * curve.field_words)?
        else {
            return Ok(None);
        };
        let (table_p, multiples_p, products_p) = (dev.ptr(&data), dev.ptr(&multiples), dev.ptr(&products));
        dev.span(&format!("{}.shift_bases", curve.span), None, || {
            for first in (0..len).step_by(chunk) {
                let count = chunk.min(len - first) as u32;
                dev.launch(
                    curve.shift_bases,
                    count.div_ceil(128),
                    128,
                    &[
                        Arg::Ptr(bases),
                        Arg::U32(len as u32),
                        Arg::U32(c),
                        Arg::U32(windows),
                        Arg::U32(first as u32),
                        Arg::U32(count),
                        Arg::Ptr(multiples_p),
                        Arg::Ptr(products_p),
                        Arg::Ptr(table_p),
                    ],
                )?;
            }
            Ok(())
        })?;
        // The scratch is freed on return, ordered after the kernels on the stream.
        Ok(Some(BaseTable { data, len, layout }))
    }
}

/// One MSM's phases on the compute stream, with buffers from the workspace; the host waits
/// only for the final download.
struct Phases<'a, C: SWCurveConfig> {
    dev: &'a CudaDevice,
    staging: &'a Staging,
    msm: &'a Msm,
    curve: &'a Curve<C>,
    plan: MsmPlan,
    /// The points the entries index: the bases (windowed) or their table (shared).
    points: u64,
    /// The bases themselves, for the ones of the 0/1 split.
    bases: u64,
    parent: Option<SpanId>,
}

/// The digits' outputs that later phases read.
struct Digits {
    counts: u64,
    ones: u64,
    ones_count: u64,
    big_count: u64,
    pieces_count: u64,
}

impl<C: SWCurveConfig> Phases<'_, C> {
    /// The sets' sums and the ones' sum, as XYZZ words.
    fn run(&self, scalars: u64) -> Result<Vec<u32>, CudaError> {
        let split = u32::from(self.msm.ones_split());
        let digits = self.digits(scalars, split)?;
        let (offsets, sorted) = self.sort(scalars, split, &digits)?;
        let sums = self.accumulate(&digits, offsets, sorted)?;
        self.reduce(&digits, sums)
    }

    fn ws(&self, name: &'static str, words: usize) -> Result<u64, CudaError> {
        self.msm.workspace.get(self.dev, name, words)
    }

    fn span<R>(&self, phase: &str, work: impl FnOnce() -> Result<R, CudaError>) -> Result<R, CudaError> {
        self.dev.span(&format!("{}.{phase}", self.curve.span), self.parent, work)
    }

    /// Blocks of 256 threads over the scalars.
    fn scalar_grid(&self) -> u32 {
        (self.plan.n as u32).div_ceil(256).min(16 * 1024)
    }

    /// Bucket sizes, and the list of ones.
    fn digits(&self, scalars: u64, split: u32) -> Result<Digits, CudaError> {
        let (plan, buckets) = (&self.plan, self.plan.buckets());
        let counts = self.ws("MSM bucket counts", buckets)?;
        let ones = self.ws("MSM ones list", plan.n)?;
        let flags = self.ws("MSM counters", 4)?; // [ones_count, big_count, pieces]
        self.dev.zero_words(counts, buckets)?;
        self.dev.zero_words(flags, 4)?;
        self.span("digits", || {
            self.dev.launch(
                "msm_count",
                self.scalar_grid(),
                256,
                &[
                    Arg::Ptr(scalars),
                    Arg::U32(plan.n as u32),
                    Arg::U32(plan.layout.c),
                    Arg::U32(plan.layout.windows),
                    Arg::U32(plan.stride),
                    Arg::Ptr(counts),
                    Arg::Ptr(ones),
                    Arg::Ptr(flags),
                    Arg::U32(split),
                ],
            )
        })?;
        Ok(Digits { counts, ones, ones_count: flags, big_count: flags + 4, pieces_count: flags + 8 })
    }

    /// Offsets by a scan of the counts, then the counting sort's scatter: (offsets, sorted).
    fn sort(&self, scalars: u64, split: u32, digits: &Digits) -> Result<(u64, u64), CudaError> {
        let (plan, buckets) = (&self.plan, self.plan.buckets());
        let offsets = self.ws("MSM bucket offsets", buckets)?;
        let cursor = self.ws("MSM bucket cursors", buckets)?;
        let sorted = self.ws("MSM sorted entries", plan.entries())?;
        self.span("sort", || {
            self.dev.copy_words(offsets, digits.counts, buckets)?;
            self.exclusive_scan(offsets, buckets, 0)?;
            self.dev.copy_words(cursor, offsets, buckets)?;
            self.dev.launch(
                "msm_scatter",
                self.scalar_grid(),
                256,
                &[
                    Arg::Ptr(scalars),
                    Arg::U32(plan.n as u32),
                    Arg::U32(plan.layout.c),
                    Arg::U32(plan.layout.windows),
                    Arg::U32(plan.stride),
                    Arg::Ptr(cursor),
                    Arg::Ptr(sorted),
                    Arg::U32(split),
                ],
            )
        })?;
        Ok((offsets, sorted))
    }

    /// Exclusive prefix sum of `len` words in place (`kernels/util/scan.cu`): blocks of 1024,
    /// their totals scanned recursively (`depth` names each level's workspace buffer) and added
    /// back.
    fn exclusive_scan(&self, data: u64, len: usize, depth: usize) -> Result<(), CudaError> {
        const LEVELS: [&str; 4] = ["scan sums 0", "scan sums 1", "scan sums 2", "scan sums 3"];
        let blocks = len.div_ceil(1024);
        let sums = self.ws(LEVELS[depth.min(3)], blocks.max(1))?;
        self.dev.launch("scan_blocks", blocks as u32, 1024, &[Arg::Ptr(data), Arg::U32(len as u32), Arg::Ptr(sums)])?;
        if blocks > 1 {
            self.exclusive_scan(sums, blocks, depth + 1)?;
            self.dev.launch(
                "scan_add",
                (len as u32).div_ceil(256),
                256,
                &[Arg::Ptr(data), Arg::U32(len as u32), Arg::Ptr(sums)],
            )?;
        }
        Ok(())
    }

    /// One thread per bucket; the big buckets by whole blocks, planned on the device. A big
    /// bucket has more than `big` entries, which bounds their number. Returns the bucket sums.
    fn accumulate(&self, digits: &Digits, offsets: u64, sorted: u64) -> Result<u64, CudaError> {
        let (plan, curve, dev) = (&self.plan, self.curve, self.dev);
        let (buckets, entries, xw) = (plan.buckets(), plan.entries(), curve.xyzz_words);
        let persistent = 4 * dev.info().multiprocessors.max(1);
        let max_big = buckets.min(entries / (plan.big as usize + 1) + 1);
        let max_pieces = entries / BIG_PIECE + max_big;
        let sums = self.ws("MSM bucket sums", buckets * xw)?;
        let big_list = self.ws("MSM big-bucket list", max_big * 3)?;
        let table = self.ws("MSM big-bucket table", max_big * 3)?;
        let pieces = self.ws("MSM big-bucket pieces", max_pieces * 2)?;
        let partials = self.ws("MSM big-bucket partial sums", max_pieces * xw)?;
        self.span("accumulate", || {
            dev.launch(
                curve.accumulate,
                (buckets as u32).div_ceil(128),
                128,
                &[
                    Arg::Ptr(self.points),
                    Arg::Ptr(sorted),
                    Arg::Ptr(offsets),
                    Arg::Ptr(digits.counts),
                    Arg::U32(buckets as u32),
                    Arg::U32(plan.big),
                    Arg::Ptr(sums),
                    Arg::Ptr(big_list),
                    Arg::Ptr(digits.big_count),
                ],
            )?;
            dev.launch(
                "msm_big_plan",
                1,
                1024,
                &[
                    Arg::Ptr(big_list),
                    Arg::Ptr(digits.big_count),
                    Arg::U32(BIG_PIECE as u32),
                    Arg::Ptr(table),
                    Arg::Ptr(pieces),
                    Arg::Ptr(digits.pieces_count),
                ],
            )?;
            dev.launch(
                curve.big_pieces,
                (max_pieces as u32).min(persistent),
                curve.threads,
                &[
                    Arg::Ptr(self.points),
                    Arg::Ptr(sorted),
                    Arg::Ptr(pieces),
                    Arg::Ptr(digits.pieces_count),
                    Arg::Ptr(partials),
                ],
            )?;
            dev.launch(
                curve.big_combine,
                (max_big as u32).div_ceil(64).min(persistent),
                64,
                &[Arg::Ptr(table), Arg::Ptr(digits.big_count), Arg::Ptr(partials), Arg::Ptr(sums)],
            )
        })?;
        Ok(sums)
    }

    /// Per-set running sums over segments, folded in two rounds (a few blocks per set, then
    /// one); the ones summed by many blocks and folded into one sum. The sets' sums and the
    /// ones' sum go to the host.
    fn reduce(&self, digits: &Digits, sums: u64) -> Result<Vec<u32>, CudaError> {
        let (plan, curve, dev) = (&self.plan, self.curve, self.dev);
        let (sets, xw) = (plan.layout.sets, curve.xyzz_words);
        let groups = (plan.segments / (4 * curve.threads)).max(1);
        let segs = self.ws("MSM segment sums", sets as usize * plan.segments as usize * xw)?;
        let fold_sums = self.ws("MSM fold sums", sets as usize * groups as usize * xw)?;
        let ones_partials = self.ws("MSM ones partial sums", ONES_BLOCKS as usize * xw)?;
        let out_words = (sets as usize + 1) * xw;
        let out = self.ws("MSM results", out_words)?;
        let ones_out = out + (sets as usize * xw * 4) as u64;
        self.span("reduce", || {
            dev.launch(
                curve.bucket_reduce,
                (sets * plan.segments).div_ceil(64),
                64,
                &[
                    Arg::Ptr(sums),
                    Arg::U32(sets),
                    Arg::U32(plan.layout.half()),
                    Arg::U32(plan.segments),
                    Arg::Ptr(segs),
                ],
            )?;
            let fold = |src: u64, groups: u32, per: u32, dst: u64| {
                dev.launch(curve.window_fold, groups, curve.threads, &[Arg::Ptr(src), Arg::U32(per), Arg::Ptr(dst)])
            };
            if groups > 1 {
                fold(segs, sets * groups, plan.segments / groups, fold_sums)?;
                fold(fold_sums, sets, groups, out)?;
            } else {
                fold(segs, sets, plan.segments, out)?;
            }
            dev.launch(
                curve.ones_sum,
                ONES_BLOCKS,
                curve.threads,
                &[Arg::Ptr(self.bases), Arg::Ptr(digits.ones), Arg::Ptr(digits.ones_count), Arg::Ptr(ones_partials)],
            )?;
            fold(ones_partials, 1, ONES_BLOCKS, ones_out)?;
            self.staging.download_words(dev, out, out_words)
        })
    }
}

/// Σ_s 2^(c·s)·set_s + the ones' sum (Horner, top set first; one set in the shared layout),
/// checked on the curve. `sums` holds the sets' sums, then the ones' sum.
fn combine<C: SWCurveConfig>(plan: &MsmPlan, sums: &[Projective<C>]) -> Result<Projective<C>, CudaError> {
    let (sets, ones) = sums.split_at(plan.layout.sets as usize);
    let mut acc = Projective::<C>::zero();
    for set in sets.iter().rev() {
        for _ in 0..plan.layout.c {
            acc.double_in_place();
        }
        acc += set;
    }
    acc += ones.iter().sum::<Projective<C>>();
    if limbs::on_curve(&acc) {
        Ok(acc)
    } else {
        Err(CudaError::Driver {
            context: "MSM".to_string(),
            message: "the device's result is not on the curve (kernel fault); refusing to return it".to_string(),
        })
    }
}

#[cfg(test)]
mod tests;
