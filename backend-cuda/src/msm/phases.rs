//! One MSM's four phases (digits, sort, accumulate, reduce), each a device span under the
//! MSM's own, with their buffers from the MSM's workspace. The first three also sum the buckets
//! of the batched subgroup check (`subgroup.rs`), whose entries come from a random deal.

use ark_ec::short_weierstrass::SWCurveConfig;
use g16_backend::timeline::SpanId;

use super::{Curve, Msm, MsmPlan, BIG_PIECE, ONES_BLOCKS};
use crate::compile::{Arg, Kernel};
use crate::error::CudaError;
use crate::options::MsmAccumulation;

/// The shortest slice of the sorted entries a thread of the balanced accumulation takes: few
/// buckets are cut where the list is short.
const CHUNK_MIN: u32 = 64;

/// One MSM's phases on the compute stream, with buffers from the workspace; the host waits
/// only for the final download.
pub(super) struct Phases<'a, C: SWCurveConfig> {
    pub msm: &'a Msm,
    /// The span the phases' spans are named after (`msm_g1.digits`, …).
    pub span: &'static str,
    pub curve: &'a Curve<C>,
    pub plan: MsmPlan,
    /// The points the entries index: the bases (windowed) or their table (shared, grouped).
    pub points: u64,
    /// The bases themselves, for the ones of the 0/1 split.
    pub bases: u64,
    pub parent: Option<SpanId>,
}

/// Where the buckets' entries come from.
#[derive(Clone, Copy)]
pub(super) enum Entries {
    /// The scalars' signed digits, scalars equal to 1 split off where `split` is 1.
    Digits { scalars: u64, split: u32 },
    /// A random deal: each point in one bucket a window (a pass), as the keystream `deal` says
    /// (`words` 64-bit words a point; the layout's c − 1 bits a pass).
    Dealt { deal: u64, words: u32 },
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
    pub fn run(&self, scalars: u64) -> Result<Vec<u32>, CudaError> {
        let entries = Entries::Digits { scalars, split: u32::from(self.msm.ones_split()) };
        let digits = self.digits(entries)?;
        let (offsets, sorted) = self.sort(entries, &digits)?;
        let sums = self.accumulate(&digits, offsets, sorted)?;
        self.reduce(&digits, sums)
    }

    /// The buckets' sums of a deal (windows·half XYZZ points, window-major), in the workspace.
    pub fn dealt_sums(&self, deal: u64, words: u32) -> Result<u64, CudaError> {
        let entries = Entries::Dealt { deal, words };
        let digits = self.digits(entries)?;
        let (offsets, sorted) = self.sort(entries, &digits)?;
        self.accumulate(&digits, offsets, sorted)
    }

    fn ws(&self, name: &'static str, words: usize) -> Result<u64, CudaError> {
        self.msm.workspace.get(&self.msm.dev, name, words)
    }

    fn span<R>(&self, phase: &str, work: impl FnOnce() -> Result<R, CudaError>) -> Result<R, CudaError> {
        self.msm.timing.span(&format!("{}.{phase}", self.span), self.parent, work)
    }

    fn launch(&self, kernel: Kernel, grid: u32, block: u32, args: &[Arg]) -> Result<(), CudaError> {
        self.msm.kernels.launch(kernel, grid, block, args)
    }

    /// Blocks of 256 threads over the scalars.
    fn scalar_grid(&self) -> u32 {
        (self.plan.n as u32).div_ceil(256).min(16 * 1024)
    }

    /// The arguments of the kernels that compute the scalars' digits (`kernels/msm/sort.cu`):
    /// the scalars and the layout, then `rest`.
    fn digit_args(&self, scalars: u64, rest: &[Arg]) -> Vec<Arg> {
        let plan = &self.plan;
        let layout = [
            Arg::Ptr(scalars),
            Arg::U32(plan.n as u32),
            Arg::U32(plan.layout.c),
            Arg::U32(plan.layout.windows),
            Arg::U32(plan.stride),
            Arg::U32(plan.layout.shifts),
        ];
        layout.iter().chain(rest).copied().collect()
    }

    /// The deal kernels' arguments: the deal and its shape, then `rest`.
    fn deal_args(&self, deal: u64, words: u32, rest: &[Arg]) -> Vec<Arg> {
        let layout = &self.plan.layout;
        let shape = [
            Arg::Ptr(deal),
            Arg::U32(self.plan.n as u32),
            Arg::U32(layout.c - 1),
            Arg::U32(layout.windows),
            Arg::U32(words),
        ];
        shape.iter().chain(rest).copied().collect()
    }

    /// Bucket sizes, and the list of ones.
    fn digits(&self, entries: Entries) -> Result<Digits, CudaError> {
        let (plan, buckets) = (&self.plan, self.plan.buckets());
        let counts = self.ws("MSM bucket counts", buckets)?;
        let ones = self.ws("MSM ones list", plan.n)?;
        let flags = self.ws("MSM counters", 4)?; // [ones_count, big_count, pieces]
        self.msm.dev.zero_words(counts, buckets)?;
        self.msm.dev.zero_words(flags, 4)?;
        self.span("digits", || match entries {
            Entries::Digits { scalars, split } => {
                let args = [Arg::Ptr(counts), Arg::Ptr(ones), Arg::Ptr(flags), Arg::U32(split)];
                self.launch(Kernel::MsmCount, self.scalar_grid(), 256, &self.digit_args(scalars, &args))
            }
            Entries::Dealt { deal, words } => {
                let args = self.deal_args(deal, words, &[Arg::Ptr(counts)]);
                self.launch(Kernel::SubgroupDealCount, self.scalar_grid(), 256, &args)
            }
        })?;
        Ok(Digits { counts, ones, ones_count: flags, big_count: flags + 4, pieces_count: flags + 8 })
    }

    /// Offsets by a scan of the counts, then the counting sort's scatter: (offsets, sorted).
    fn sort(&self, entries: Entries, digits: &Digits) -> Result<(u64, u64), CudaError> {
        let (plan, buckets) = (&self.plan, self.plan.buckets());
        let offsets = self.ws("MSM bucket offsets", buckets)?;
        let cursor = self.ws("MSM bucket cursors", buckets)?;
        let sorted = self.ws("MSM sorted entries", plan.entries().max(1))?;
        self.span("sort", || {
            self.msm.dev.copy_words(offsets, digits.counts, buckets)?;
            self.exclusive_scan(offsets, buckets, 0)?;
            self.msm.dev.copy_words(cursor, offsets, buckets)?;
            match entries {
                Entries::Digits { scalars, split } => match self.msm.scatter.by_window(&plan.layout) {
                    false => {
                        let args = [Arg::Ptr(cursor), Arg::Ptr(sorted), Arg::U32(split)];
                        self.launch(Kernel::MsmScatter, self.scalar_grid(), 256, &self.digit_args(scalars, &args))
                    }
                    true => {
                        // A window's blocks cover the scalars as `scalar_grid` does, within the
                        // grid's bound (2^31 − 1 blocks).
                        let per_window = self.scalar_grid().min(i32::MAX as u32 / plan.layout.windows.max(1));
                        let args = [Arg::Ptr(cursor), Arg::Ptr(sorted), Arg::U32(split), Arg::U32(per_window)];
                        let grid = per_window * plan.layout.windows;
                        self.launch(Kernel::MsmScatterByWindow, grid, 256, &self.digit_args(scalars, &args))
                    }
                },
                Entries::Dealt { deal, words } => {
                    let args = self.deal_args(deal, words, &[Arg::Ptr(cursor), Arg::Ptr(sorted)]);
                    self.launch(Kernel::SubgroupDealScatter, self.scalar_grid(), 256, &args)
                }
            }
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
        self.launch(Kernel::ScanBlocks, blocks as u32, 1024, &[Arg::Ptr(data), Arg::U32(len as u32), Arg::Ptr(sums)])?;
        if blocks > 1 {
            self.exclusive_scan(sums, blocks, depth + 1)?;
            self.launch(
                Kernel::ScanAdd,
                (len as u32).div_ceil(256),
                256,
                &[Arg::Ptr(data), Arg::U32(len as u32), Arg::Ptr(sums)],
            )?;
        }
        Ok(())
    }

    /// One thread per bucket, or equal slices of the sorted entries (`MsmAccumulation`); the
    /// big buckets by whole blocks, planned on the device. A big bucket has more than `big`
    /// entries, which bounds their number. Returns the bucket sums.
    fn accumulate(&self, digits: &Digits, offsets: u64, sorted: u64) -> Result<u64, CudaError> {
        let (plan, curve, dev) = (&self.plan, self.curve, &self.msm.dev);
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
            let (points, big) = (Arg::Ptr(self.points), Arg::U32(plan.big));
            let (counts, big_count) = (Arg::Ptr(digits.counts), Arg::Ptr(digits.big_count));
            match self.msm.accumulation {
                MsmAccumulation::Buckets => self.launch(
                    Kernel::Accumulate(curve.kernels),
                    (buckets as u32).div_ceil(128),
                    128,
                    &[
                        points,
                        Arg::Ptr(sorted),
                        Arg::Ptr(offsets),
                        counts,
                        Arg::U32(buckets as u32),
                        big,
                        Arg::Ptr(sums),
                        Arg::Ptr(big_list),
                        big_count,
                    ],
                )?,
                MsmAccumulation::Chunks => {
                    // The empty buckets' identities first, one thread a bucket; then the
                    // slices, whose kernels read the list's length and cut at most `buckets`
                    // (kernels/msm/balanced.cu).
                    let empty_grid = (buckets as u32).div_ceil(256).min(16 * 1024);
                    let args = [counts, Arg::U32(buckets as u32), Arg::Ptr(sums)];
                    self.launch(Kernel::EmptyBuckets(curve.kernels), empty_grid, 256, &args)?;
                    let slices = buckets + 1;
                    let carries = self.ws("MSM slice carries", slices * xw)?;
                    let tails = self.ws("MSM slice tails", slices)?;
                    let (grid, buckets, chunk_min) =
                        ((slices as u32).div_ceil(128), Arg::U32(buckets as u32), Arg::U32(CHUNK_MIN));
                    let kernel = match self.msm.fused_y.on(curve.kernels) {
                        true => Kernel::AccumulateChunksFused(curve.kernels),
                        false => Kernel::AccumulateChunks(curve.kernels),
                    };
                    self.launch(
                        kernel,
                        grid,
                        128,
                        &[
                            points,
                            Arg::Ptr(sorted),
                            Arg::Ptr(offsets),
                            counts,
                            buckets,
                            chunk_min,
                            big,
                            Arg::Ptr(sums),
                            Arg::Ptr(carries),
                            Arg::Ptr(tails),
                            Arg::Ptr(big_list),
                            big_count,
                        ],
                    )?;
                    let (tails, carries) = (Arg::Ptr(tails), Arg::Ptr(carries));
                    let args = [Arg::Ptr(offsets), counts, buckets, chunk_min, tails, carries, Arg::Ptr(sums)];
                    self.launch(Kernel::ChunkCarries(curve.kernels), grid, 128, &args)?;
                }
            }
            self.launch(
                Kernel::MsmBigPlan,
                1,
                1024,
                &[
                    Arg::Ptr(big_list),
                    big_count,
                    Arg::U32(BIG_PIECE as u32),
                    Arg::Ptr(table),
                    Arg::Ptr(pieces),
                    Arg::Ptr(digits.pieces_count),
                ],
            )?;
            self.launch(
                Kernel::BigPieces(curve.kernels),
                (max_pieces as u32).min(persistent),
                curve.threads,
                &[points, Arg::Ptr(sorted), Arg::Ptr(pieces), Arg::Ptr(digits.pieces_count), Arg::Ptr(partials)],
            )?;
            self.launch(
                Kernel::BigCombine(curve.kernels),
                (max_big as u32).div_ceil(64).min(persistent),
                64,
                &[Arg::Ptr(table), big_count, Arg::Ptr(partials), Arg::Ptr(sums)],
            )
        })?;
        Ok(sums)
    }

    /// Per-set running sums over segments, folded in two rounds (a few blocks per set, then
    /// one); the ones summed by many blocks and folded into one sum. The sets' sums and the
    /// ones' sum go to the host.
    fn reduce(&self, digits: &Digits, sums: u64) -> Result<Vec<u32>, CudaError> {
        let (plan, curve) = (&self.plan, self.curve);
        let (sets, xw) = (plan.layout.sets, curve.xyzz_words);
        let groups = (plan.segments / (4 * curve.threads)).max(1);
        let segs = self.ws("MSM segment sums", sets as usize * plan.segments as usize * xw)?;
        let fold_sums = self.ws("MSM fold sums", sets as usize * groups as usize * xw)?;
        let ones_partials = self.ws("MSM ones partial sums", ONES_BLOCKS as usize * xw)?;
        let out_words = (sets as usize + 1) * xw;
        let out = self.ws("MSM results", out_words)?;
        let ones_out = out + (sets as usize * xw * 4) as u64;
        self.span("reduce", || {
            self.launch(
                Kernel::BucketReduce(curve.kernels),
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
                let args = [Arg::Ptr(src), Arg::U32(per), Arg::Ptr(dst)];
                self.launch(Kernel::WindowFold(curve.kernels), groups, curve.threads, &args)
            };
            if groups > 1 {
                fold(segs, sets * groups, plan.segments / groups, fold_sums)?;
                fold(fold_sums, sets, groups, out)?;
            } else {
                fold(segs, sets, plan.segments, out)?;
            }
            self.launch(
                Kernel::OnesSum(curve.kernels),
                ONES_BLOCKS,
                curve.threads,
                &[Arg::Ptr(self.bases), Arg::Ptr(digits.ones), Arg::Ptr(digits.ones_count), Arg::Ptr(ones_partials)],
            )?;
            fold(ones_partials, 1, ONES_BLOCKS, ones_out)?;
            self.msm.staging.download_words(out, out_words)
        })
    }
}
