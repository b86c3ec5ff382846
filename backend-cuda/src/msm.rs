//! MSM on G1 and G2 (kernels: `kernels/msm.cu`, which documents the algorithm and phases).

use std::ops::Range;

use ark_bls12_381::{Fr, G1Projective, G2Projective};
use ark_ff::AdditiveGroup;
use ark_ff::Zero;
use cudarc::driver::CudaSlice;

use crate::device::{Arg, CudaDevice, FrBuffer, G1Buffer, G2Buffer};
use crate::error::CudaError;
use g16_core::backend::limbs::{self, FQ_WORDS, FR_WORDS, G1_WORDS, G1_XYZZ_WORDS, G2_WORDS, G2_XYZZ_WORDS};

/// The scalars of an MSM: host values, or a range of a device buffer.
#[derive(Clone, Copy)]
pub enum ScalarsRef<'a> {
    Host(&'a [Fr]),
    Device(&'a FrBuffer, &'a Range<usize>),
}

/// Window and bucket layout for one MSM of n points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmPlan {
    pub n: usize,
    /// Window width in bits.
    pub c: u32,
    pub windows: u32,
    /// Buckets per set, 2^(c−1).
    pub half: u32,
    /// Bucket sets: one per window (windowed layout), or one in all (shared layout, over
    /// precomputed shifted bases).
    pub sets: u32,
    /// Shared layout: the table's points per window (entry = w·stride + i); 0 when windowed.
    pub stride: u32,
    /// Buckets with more points than this take the big-bucket path.
    pub big: u32,
    /// Segments per set of the bucket reduction.
    pub segments: u32,
    /// Whether Σ_j (jL)·r_j over the segments is left to bit sums and the host (the split
    /// reduction, `G16_CUDA_MSM_REDUCE=split`; off by default: on the H200 it helped G1 only,
    /// NOTES.md) rather than a scalar multiplication in each segment's thread.
    pub split_reduce: bool,
}

/// The widest window a tuning run may force: 2^19 buckets a window.
const MAX_WINDOW: u32 = 20;
/// The widest default window.
const DEFAULT_MAX_WINDOW: u32 = 16;
/// Window widths the shared layout chooses from (2^19 buckets at most). Wider windows lost
/// wherever they were measured on the H200: at 2^24 random scalars (c = 22, the reduction of
/// 2^21 buckets alone 27 ms), and in the 2^22 proof, whose witness queries (5.2 M points, 60 %
/// of the scalars 0 or 1) were planned at c = 22 from their length: 85–98 ms a G1 MSM, against
/// 38 ms for a 2^22 witness-mix MSM at c = 20 (`g16 bench --ops msm-g1-witness`).
const SHARED_WINDOWS: std::ops::RangeInclusive<u32> = 8..=20;
/// Points summed per block by the big-bucket path.
const BIG_PIECE: usize = 4096;
/// Blocks of the ones' batch addition.
const ONES_BLOCKS: u32 = 512;
/// Precomputed shifted bases are made for base vectors of at least 2^this points (default;
/// `G16_CUDA_MSM_PRECOMPUTE` = 0 turns them off, another number sets this log2).
const DEFAULT_PRECOMPUTE_MIN_LOG: u32 = 18;
/// … and of fewer than 2^this (default; `G16_CUDA_MSM_PRECOMPUTE_MAX` sets it). Measured on
/// the H200 (NOTES.md): at 2^20 and 2^22 the shared layout wins (G1 −22 % and −15 %), at
/// 2^24 its 19 GB table makes each addition slower and the windowed layout is ahead.
const DEFAULT_PRECOMPUTE_MAX_LOG: u32 = 23;
/// Points per launch of the shifted-bases kernel (its scratch holds W−1 multiples of each).
const SHIFT_CHUNK: usize = 1 << 18;

/// The work of an MSM in mixed-addition equivalents: one per (point, window), and about three
/// per bucket for the reduction (two XYZZ additions, each ~1.4 mixed ones). The reduction
/// measured more (9.5–27 ms for 2^19–2^21 buckets, ≈ 14 additions' time a bucket, NOTES.md),
/// but the choices this weight makes at 2^20–2^22 (c = 20) are the measured ones; a weight of
/// 14 would pick c = 16 at 2^20, not yet measured.
fn cost(n: usize, windows: u32, buckets: u64) -> u64 {
    n as u64 * u64::from(windows) + REDUCE_COST_PER_BUCKET * buckets
}
const REDUCE_COST_PER_BUCKET: u64 = 3;

impl MsmPlan {
    /// The windowed layout: W bucket sets of 2^(c−1), c from n.
    pub fn new(n: usize) -> MsmPlan {
        let log = usize::BITS - n.max(1).leading_zeros(); // ⌈log2⌉ or one more
                                                          // Measured on the H200 at 2^24 (NOTES.md): 16 beats every width from 13 to 20, so the
                                                          // default stops there. `G16_CUDA_MSM_WINDOW` overrides it (4..=20) for tuning runs.
        let forced = std::env::var("G16_CUDA_MSM_WINDOW").ok().and_then(|v| v.parse::<u32>().ok());
        let c = match forced {
            Some(c) => c.clamp(4, MAX_WINDOW),
            None => log.saturating_sub(6).clamp(4, DEFAULT_MAX_WINDOW),
        };
        let windows = 256u32.div_ceil(c);
        MsmPlan::layout(n, c, windows, windows, 0)
    }

    /// The shared layout over a table of shifted bases made for `table` (its c and W).
    pub fn shared(n: usize, table: &ShiftedBases) -> MsmPlan {
        MsmPlan::layout(n, table.c, table.windows, 1, table.len as u32)
    }

    fn layout(n: usize, c: u32, windows: u32, sets: u32, stride: u32) -> MsmPlan {
        let half = 1u32 << (c - 1);
        let per_bucket = (n as u64 * u64::from(windows) / (u64::from(half) * u64::from(sets))).max(1) as u32;
        let big = (4 * per_bucket).max(256);
        // Segments of at least 8 buckets (16 additions and a scalar multiplication by j·len per
        // thread), about 2^17 threads over all sets; powers of two, so the folds divide evenly.
        let per_set = ((1u32 << 17) / sets).max(1);
        let segments = (half / 8).clamp(1, 1 << (31 - per_set.leading_zeros()));
        let split_reduce = std::env::var("G16_CUDA_MSM_REDUCE").is_ok_and(|v| v == "split");
        MsmPlan { n, c, windows, half, sets, stride, big, segments, split_reduce }
    }

    /// Bit sums per set of the split reduction: log2(segments), or 0.
    fn bits(&self) -> u32 {
        if self.split_reduce {
            self.segments.trailing_zeros()
        } else {
            0
        }
    }

    fn buckets(&self) -> usize {
        self.sets as usize * self.half as usize
    }
    fn entries(&self) -> usize {
        self.n * self.windows as usize
    }
    fn cost(&self) -> u64 {
        cost(self.n, self.windows, self.buckets() as u64)
    }
}

/// The window width and count of the shifted bases for `len` points: the cheapest by `cost`.
fn shared_window(len: usize) -> (u32, u32) {
    SHARED_WINDOWS
        .map(|c| (c, 256u32.div_ceil(c)))
        .min_by_key(|&(c, w)| cost(len, w, 1u64 << (c - 1)))
        .unwrap_or((16, 16))
}

/// Precomputed shifted bases: `data[w·len + i]` = 2^(c·w)·P_i, affine, w < windows.
pub struct ShiftedBases {
    pub(crate) data: CudaSlice<u32>,
    pub(crate) len: usize,
    pub(crate) c: u32,
    pub(crate) windows: u32,
}

/// What differs between G1 and G2: kernel names and the sizes of points.
pub(crate) struct Curve {
    span: &'static str,
    accumulate: &'static str,
    big_pieces: &'static str,
    big_combine: &'static str,
    bucket_reduce: &'static str,
    bit_sums: &'static str,
    window_fold: &'static str,
    ones_sum: &'static str,
    shift_bases: &'static str,
    /// Threads of the block-reducing kernels (shared memory holds one sum per thread).
    threads: u32,
    field_words: usize,
    affine_words: usize,
    xyzz_words: usize,
}

pub(crate) const G1: Curve = Curve {
    span: "msm_g1",
    accumulate: "g1_accumulate",
    big_pieces: "g1_big_pieces",
    big_combine: "g1_big_combine",
    bucket_reduce: "g1_bucket_reduce",
    bit_sums: "g1_bit_sums",
    window_fold: "g1_window_fold",
    ones_sum: "g1_ones_sum",
    shift_bases: "g1_shift_bases",
    threads: 128,
    field_words: FQ_WORDS,
    affine_words: G1_WORDS,
    xyzz_words: G1_XYZZ_WORDS,
};

pub(crate) const G2: Curve = Curve {
    span: "msm_g2",
    accumulate: "g2_accumulate",
    big_pieces: "g2_big_pieces",
    big_combine: "g2_big_combine",
    bucket_reduce: "g2_bucket_reduce",
    bit_sums: "g2_bit_sums",
    window_fold: "g2_window_fold",
    ones_sum: "g2_ones_sum",
    shift_bases: "g2_shift_bases",
    threads: 64,
    field_words: 2 * FQ_WORDS,
    affine_words: G2_WORDS,
    xyzz_words: G2_XYZZ_WORDS,
};

/// The log2 range of base counts [min, max) that get shifted bases, or None when they are
/// turned off.
fn precompute_logs() -> Option<(u32, u32)> {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u32>().ok());
    let max = var("G16_CUDA_MSM_PRECOMPUTE_MAX").unwrap_or(DEFAULT_PRECOMPUTE_MAX_LOG).min(40);
    match var("G16_CUDA_MSM_PRECOMPUTE") {
        Some(0) => None,
        Some(log) => Some((log.min(40), max)),
        None => Some((DEFAULT_PRECOMPUTE_MIN_LOG, max)),
    }
}

impl CudaDevice {
    pub fn msm_g1(
        &self,
        bases: &G1Buffer,
        scalars: ScalarsRef<'_>,
        tag: Option<u64>,
    ) -> Result<G1Projective, CudaError> {
        let table = bases.shifted.as_ref();
        let Some((plan, words)) = self.msm(&G1, "msm_g1", self.ptr(&bases.data), bases.len, table, scalars, tag)?
        else {
            return Ok(G1Projective::zero());
        };
        let sums: Vec<G1Projective> = words.chunks(G1_XYZZ_WORDS).map(limbs::g1_xyzz_to_projective).collect();
        combine(&plan, &sums)
    }

    pub fn msm_g2(
        &self,
        bases: &G2Buffer,
        scalars: ScalarsRef<'_>,
        tag: Option<u64>,
    ) -> Result<G2Projective, CudaError> {
        let table = bases.shifted.as_ref();
        let Some((plan, words)) = self.msm(&G2, "msm_g2", self.ptr(&bases.data), bases.len, table, scalars, tag)?
        else {
            return Ok(G2Projective::zero());
        };
        let sums: Vec<G2Projective> = words.chunks(G2_XYZZ_WORDS).map(limbs::g2_xyzz_to_projective).collect();
        combine(&plan, &sums)
    }

    /// The MSM's XYZZ results as words (the sets' sums, then the ones' sum), or None for an
    /// empty MSM.
    #[allow(clippy::too_many_arguments)] // reason: one private entry point for both curves
    fn msm(
        &self,
        curve: &Curve,
        op: &'static str,
        bases: u64,
        bases_len: usize,
        table: Option<&ShiftedBases>,
        scalars: ScalarsRef<'_>,
        tag: Option<u64>,
    ) -> Result<Option<(MsmPlan, Vec<u32>)>, CudaError> {
        let n = match scalars {
            ScalarsRef::Host(s) => s.len(),
            ScalarsRef::Device(buf, range) => {
                if range.start > range.end || range.end > buf.len {
                    return Err(CudaError::OutOfRange { op, start: range.start, end: range.end, len: buf.len });
                }
                range.len()
            }
        };
        if bases_len < n {
            return Err(CudaError::LengthMismatch { op, expected: n, got: bases_len });
        }
        if n == 0 {
            return Ok(None);
        }
        let uploaded;
        let scalars_ptr = match scalars {
            ScalarsRef::Host(s) => {
                uploaded = self.upload_fr(s, tag)?;
                self.ptr(&uploaded.data)
            }
            ScalarsRef::Device(buf, range) => self.ptr(&buf.data) + (range.start * FR_WORDS * 4) as u64,
        };
        let windowed = MsmPlan::new(n);
        let (plan, points) = match table.map(|t| (MsmPlan::shared(n, t), t)) {
            Some((shared, t)) if shared.cost() < windowed.cost() => (shared, self.ptr(&t.data)),
            _ => (windowed, bases),
        };
        if (n as u64) * u64::from(plan.windows) >= 1 << 31 {
            return Err(CudaError::OutOfMemory {
                what: format!("{op} of {n} points (more than 2^31 bucket entries)"),
                requested: (n as u64) * u64::from(plan.windows) * 4,
                available: 1 << 33,
            });
        }
        let _op = self.op();
        let words = self.span(curve.span, tag, || {
            match self.msm_phases(curve, &plan, points, bases, scalars_ptr, tag) {
                // The workspace of earlier MSMs may hold what this one needs: free it, once.
                Err(CudaError::OutOfMemory { .. }) => {
                    self.clear_workspace()?;
                    self.msm_phases(curve, &plan, points, bases, scalars_ptr, tag)
                }
                other => other,
            }
        })?;
        Ok(Some((plan, words)))
    }

    /// The phases on one stream, with buffers from the workspace; the host waits only for the
    /// final download.
    fn msm_phases(
        &self,
        curve: &Curve,
        plan: &MsmPlan,
        points: u64,
        bases: u64,
        scalars: u64,
        tag: Option<u64>,
    ) -> Result<Vec<u32>, CudaError> {
        let n = plan.n as u32;
        let buckets = plan.buckets();
        let entries = plan.entries();
        let xw = curve.xyzz_words;
        let split = u32::from(self.ones_split());
        let grid = n.div_ceil(256).min(16 * 1024);
        let persistent = 4 * self.info().multiprocessors.max(1);

        // digits: bucket sizes, and the list of ones.
        let counts_p = self.workspace("MSM bucket counts", buckets)?;
        let ones_p = self.workspace("MSM ones list", plan.n)?;
        let flags_p = self.workspace("MSM counters", 4)?; // [ones_count, big_count, pieces]
        self.zero_words(counts_p, buckets)?;
        self.zero_words(flags_p, 4)?;
        let (ones_count_p, big_count_p, pieces_count_p) = (flags_p, flags_p + 4, flags_p + 8);
        self.span(&format!("{}.digits", curve.span), tag, || {
            self.launch(
                "msm_count",
                grid,
                256,
                &[
                    Arg::Ptr(scalars),
                    Arg::U32(n),
                    Arg::U32(plan.c),
                    Arg::U32(plan.windows),
                    Arg::U32(plan.stride),
                    Arg::Ptr(counts_p),
                    Arg::Ptr(ones_p),
                    Arg::Ptr(ones_count_p),
                    Arg::U32(split),
                ],
            )
        })?;

        // sort: offsets by a scan of the counts, then the counting sort's scatter.
        let offsets_p = self.workspace("MSM bucket offsets", buckets)?;
        let cursor_p = self.workspace("MSM bucket cursors", buckets)?;
        let sorted_p = self.workspace("MSM sorted entries", entries)?;
        self.span(&format!("{}.sort", curve.span), tag, || {
            self.copy_words(offsets_p, counts_p, buckets)?;
            self.exclusive_scan(offsets_p, buckets, 0)?;
            self.copy_words(cursor_p, offsets_p, buckets)?;
            self.launch(
                "msm_scatter",
                grid,
                256,
                &[
                    Arg::Ptr(scalars),
                    Arg::U32(n),
                    Arg::U32(plan.c),
                    Arg::U32(plan.windows),
                    Arg::U32(plan.stride),
                    Arg::Ptr(cursor_p),
                    Arg::Ptr(sorted_p),
                    Arg::U32(split),
                ],
            )
        })?;

        // accumulate: one thread per bucket; the big buckets by whole blocks, planned on the
        // device. A big bucket has more than `big` entries, which bounds their number.
        let max_big = buckets.min(entries / (plan.big as usize + 1) + 1);
        let max_pieces = entries / BIG_PIECE + max_big;
        let sums_p = self.workspace("MSM bucket sums", buckets * xw)?;
        let big_list_p = self.workspace("MSM big-bucket list", max_big * 3)?;
        let table_p = self.workspace("MSM big-bucket table", max_big * 3)?;
        let pieces_p = self.workspace("MSM big-bucket pieces", max_pieces * 2)?;
        let partials_p = self.workspace("MSM big-bucket partial sums", max_pieces * xw)?;
        self.span(&format!("{}.accumulate", curve.span), tag, || {
            self.launch(
                curve.accumulate,
                (buckets as u32).div_ceil(128),
                128,
                &[
                    Arg::Ptr(points),
                    Arg::Ptr(sorted_p),
                    Arg::Ptr(offsets_p),
                    Arg::Ptr(counts_p),
                    Arg::U32(buckets as u32),
                    Arg::U32(plan.big),
                    Arg::Ptr(sums_p),
                    Arg::Ptr(big_list_p),
                    Arg::Ptr(big_count_p),
                ],
            )?;
            self.launch(
                "msm_big_plan",
                1,
                1024,
                &[
                    Arg::Ptr(big_list_p),
                    Arg::Ptr(big_count_p),
                    Arg::U32(BIG_PIECE as u32),
                    Arg::Ptr(table_p),
                    Arg::Ptr(pieces_p),
                    Arg::Ptr(pieces_count_p),
                ],
            )?;
            self.launch(
                curve.big_pieces,
                (max_pieces as u32).min(persistent),
                curve.threads,
                &[
                    Arg::Ptr(points),
                    Arg::Ptr(sorted_p),
                    Arg::Ptr(pieces_p),
                    Arg::Ptr(pieces_count_p),
                    Arg::Ptr(partials_p),
                ],
            )?;
            self.launch(
                curve.big_combine,
                (max_big as u32).div_ceil(64).min(persistent),
                64,
                &[Arg::Ptr(table_p), Arg::Ptr(big_count_p), Arg::Ptr(partials_p), Arg::Ptr(sums_p)],
            )
        })?;

        // reduce: per-set running sums over segments (t_j, and r_j for the split reduction);
        // the t_j folded in two rounds (a few blocks per set, then one); the r_j's bit sums,
        // folded likewise; the ones summed by many blocks and folded into one sum. The sets'
        // sums, the ones' sum and the bit sums go to the host, which combines them.
        let groups = (plan.segments / (4 * curve.threads)).max(1);
        let bits = plan.bits();
        let sets = plan.sets as usize;
        let segs_p = self.workspace("MSM segment sums", sets * plan.segments as usize * xw)?;
        let rs_p = match plan.split_reduce {
            true => self.workspace("MSM segment running sums", sets * plan.segments as usize * xw)?,
            false => 0, // the kernel's null: it multiplies by jL itself
        };
        let fold_p = self.workspace("MSM fold sums", sets * groups as usize * xw)?;
        let bit_partials_p =
            self.workspace("MSM bit-sum partials", (sets * bits as usize * groups as usize).max(1) * xw)?;
        let ones_partials_p = self.workspace("MSM ones partial sums", ONES_BLOCKS as usize * xw)?;
        let out_words = (sets + 1 + sets * bits as usize) * xw;
        let out_p = self.workspace("MSM results", out_words)?;
        let ones_out_p = out_p + (sets * xw * 4) as u64;
        let bits_out_p = out_p + ((sets + 1) * xw * 4) as u64;
        self.span(&format!("{}.reduce", curve.span), tag, || {
            let threads = plan.sets * plan.segments;
            self.launch(
                curve.bucket_reduce,
                threads.div_ceil(64),
                64,
                &[
                    Arg::Ptr(sums_p),
                    Arg::U32(plan.sets),
                    Arg::U32(plan.half),
                    Arg::U32(plan.segments),
                    Arg::Ptr(segs_p),
                    Arg::Ptr(rs_p),
                ],
            )?;
            let fold = |src: u64, groups: u32, per: u32, dst: u64| {
                self.launch(curve.window_fold, groups, curve.threads, &[Arg::Ptr(src), Arg::U32(per), Arg::Ptr(dst)])
            };
            if groups > 1 {
                fold(segs_p, plan.sets * groups, plan.segments / groups, fold_p)?;
                fold(fold_p, plan.sets, groups, out_p)?;
            } else {
                fold(segs_p, plan.sets, plan.segments, out_p)?;
            }
            if bits > 0 {
                self.launch(
                    curve.bit_sums,
                    plan.sets * bits * groups,
                    curve.threads,
                    &[
                        Arg::Ptr(rs_p),
                        Arg::U32(plan.segments),
                        Arg::U32(bits),
                        Arg::U32(groups),
                        Arg::Ptr(bit_partials_p),
                    ],
                )?;
                fold(bit_partials_p, plan.sets * bits, groups, bits_out_p)?;
            }
            self.launch(
                curve.ones_sum,
                ONES_BLOCKS,
                curve.threads,
                &[Arg::Ptr(bases), Arg::Ptr(ones_p), Arg::Ptr(ones_count_p), Arg::Ptr(ones_partials_p)],
            )?;
            fold(ones_partials_p, 1, ONES_BLOCKS, ones_out_p)?;
            self.download_from(out_p, out_words)
        })
    }

    /// The shifted bases of `len` points at `bases` (see `kernels/msm.cu`), when the vector is
    /// long enough to gain from them and device memory holds them with room to spare; None
    /// otherwise. The caller holds the operation lock.
    pub(crate) fn shifted_bases(
        &self,
        curve: &Curve,
        bases: u64,
        len: usize,
    ) -> Result<Option<ShiftedBases>, CudaError> {
        let Some((min_log, max_log)) = precompute_logs() else { return Ok(None) };
        if len < 1 << min_log || len >= 1 << max_log {
            return Ok(None);
        }
        let (c, windows) = shared_window(len);
        if (len as u64) * u64::from(windows) >= 1 << 31 {
            return Ok(None);
        }
        let chunk = len.min(SHIFT_CHUNK);
        let table_words = windows as usize * len * curve.affine_words;
        let scratch_words = (windows as usize - 1) * chunk * (curve.xyzz_words + curve.field_words);
        // Half of the free memory at most: the MSMs and the prover's vectors need the rest.
        let bytes = ((table_words + scratch_words) * 4) as u64;
        if bytes > self.available_bytes()? / 2 {
            return Ok(None);
        }
        // The tables are an optimisation: memory that runs short skips them, never the upload.
        let alloc = |what, words| match self.alloc(what, words) {
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
        let (table_p, multiples_p, products_p) = (self.ptr(&data), self.ptr(&multiples), self.ptr(&products));
        self.span(&format!("{}.shift_bases", curve.span), None, || {
            for first in (0..len).step_by(chunk) {
                let count = chunk.min(len - first) as u32;
                self.launch(
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
        Ok(Some(ShiftedBases { data, len, c, windows }))
    }

    pub(crate) fn copy_words(&self, dst: u64, src: u64, words: usize) -> Result<(), CudaError> {
        // SAFETY: both ranges lie inside live allocations of at least `words` words (callers).
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, words * 4, self.stream.cu_stream()) }
            .map_err(|e| CudaError::driver("copying on the device", e))
    }

    fn zero_words(&self, dst: u64, words: usize) -> Result<(), CudaError> {
        // SAFETY: the range lies inside a live workspace buffer of at least `words` words.
        unsafe { cudarc::driver::result::memset_d8_async(dst, 0, words * 4, self.stream.cu_stream()) }
            .map_err(|e| CudaError::driver("clearing memory", e))
    }

    /// Exclusive prefix sum of `len` words in place: blocks of 1024, their totals scanned
    /// recursively (`depth` names each level's workspace buffer) and added back.
    fn exclusive_scan(&self, data: u64, len: usize, depth: usize) -> Result<(), CudaError> {
        const LEVELS: [&str; 4] = ["scan sums 0", "scan sums 1", "scan sums 2", "scan sums 3"];
        let blocks = len.div_ceil(1024);
        let sums_p = self.workspace(LEVELS[depth.min(3)], blocks.max(1))?;
        self.launch("scan_blocks", blocks as u32, 1024, &[Arg::Ptr(data), Arg::U32(len as u32), Arg::Ptr(sums_p)])?;
        if blocks > 1 {
            self.exclusive_scan(sums_p, blocks, depth + 1)?;
            self.launch(
                "scan_add",
                (len as u32).div_ceil(256),
                256,
                &[Arg::Ptr(data), Arg::U32(len as u32), Arg::Ptr(sums_p)],
            )?;
        }
        Ok(())
    }
}

/// Σ_s 2^(c·s)·set_s + the ones' sum (Horner, top set first; one set in the shared layout),
/// checked on the curve. `sums` holds the sets' t sums, the ones' sum, then (split reduction)
/// each set's bit sums R_bit: set_s = t_s + L·Σ_bit 2^bit·R_{s,bit}, L buckets a segment.
fn combine<C: ark_ec::short_weierstrass::SWCurveConfig>(
    plan: &MsmPlan,
    sums: &[ark_ec::short_weierstrass::Projective<C>],
) -> Result<ark_ec::short_weierstrass::Projective<C>, CudaError> {
    type P<C> = ark_ec::short_weierstrass::Projective<C>;
    let (sets, bits) = (plan.sets as usize, plan.bits() as usize);
    let (t, rest) = sums.split_at(sets);
    let (ones, bit_sums) = rest.split_at(1);
    let log_len = (plan.half / plan.segments).trailing_zeros();
    let mut acc = P::<C>::zero();
    for (s, t_s) in t.iter().enumerate().rev() {
        for _ in 0..plan.c {
            acc.double_in_place();
        }
        let mut weighted = P::<C>::zero();
        for r in bit_sums[s * bits..(s + 1) * bits].iter().rev() {
            weighted.double_in_place();
            weighted += r;
        }
        for _ in 0..log_len {
            weighted.double_in_place();
        }
        acc += *t_s + weighted;
    }
    acc += ones.iter().sum::<P<C>>();
    if limbs::on_curve(&acc) {
        Ok(acc)
    } else {
        Err(off_curve())
    }
}

fn off_curve() -> CudaError {
    CudaError::Driver {
        context: "MSM".to_string(),
        message: "the device's result is not on the curve (kernel fault); refusing to return it".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_cover_the_scalar_and_fit_indices() {
        for log in 0..=26 {
            let p = MsmPlan::new(1 << log);
            check(&p);
            assert_eq!((p.sets, p.stride), (p.windows, 0), "{p:?}");
            assert!(p.c <= DEFAULT_MAX_WINDOW, "{p:?}");
        }
    }

    #[test]
    fn shared_plans_cover_the_scalar_and_pick_wide_windows_for_long_vectors() {
        for log in 10..=26 {
            let len = 1usize << log;
            let (c, windows) = shared_window(len);
            assert!(SHARED_WINDOWS.contains(&c) && c * windows >= 256, "2^{log}: c = {c}");
            // A plan for n ≤ len points uses the table's c, W and stride.
            let table_stub = |n: usize| MsmPlan::layout(n, c, windows, 1, len as u32);
            for n in [len, len / 2 + 3] {
                let p = table_stub(n);
                check(&p);
                assert_eq!((p.sets, p.stride), (1, len as u32));
            }
        }
        assert_eq!(shared_window(1 << 22), (20, 13), "2^22: c = 20 (measured)");
        assert_eq!(shared_window(1 << 20), (20, 13), "2^20: c = 20 (measured)");
        assert_eq!(shared_window(5_242_879), (20, 13), "the 2^22 proof's witness queries: c = 20 (measured)");
        // At 2^20 and up the shared layout does less work than the windowed one.
        for log in [20, 22, 24] {
            let (c, w) = shared_window(1 << log);
            let shared = MsmPlan::layout(1 << log, c, w, 1, 1 << log);
            assert!(shared.cost() < MsmPlan::new(1 << log).cost(), "2^{log}");
        }
    }

    /// The host's half of the reduction: from each set's t sums, the ones' sum and (split
    /// reduction) the bit sums R_b, `combine` must give Σ_s 2^(c·s)·Σ_b (b+1)·bucket_{s,b}
    /// plus the ones, for random buckets (the kernels' sums are computed here as they do).
    #[test]
    fn combine_recovers_the_weighted_bucket_sums_in_both_reductions() {
        use ark_ec::PrimeGroup;
        use ark_ff::UniformRand;
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        let (c, sets, half, segments) = (5u32, 3usize, 16usize, 4usize);
        let len = half / segments;
        let point = |rng: &mut rand_chacha::ChaCha20Rng| G1Projective::generator() * Fr::rand(rng);
        let buckets: Vec<Vec<G1Projective>> = (0..sets).map(|_| (0..half).map(|_| point(&mut rng)).collect()).collect();
        let ones = point(&mut rng);
        let mul = |p: G1Projective, k: usize| p * Fr::from(k as u64);
        let mut want = G1Projective::zero();
        for s in (0..sets).rev() {
            want = mul(want, 1 << c);
            want += (0..half).map(|b| mul(buckets[s][b], b + 1)).sum::<G1Projective>();
        }
        want += ones;
        for split_reduce in [false, true] {
            let plan = MsmPlan {
                n: 1,
                c,
                windows: sets as u32,
                half: half as u32,
                sets: sets as u32,
                stride: 0,
                big: 256,
                segments: segments as u32,
                split_reduce,
            };
            let bits = plan.bits() as usize;
            let (mut t, mut r_bits) = (Vec::new(), Vec::new());
            for bucket in &buckets {
                let seg = |j: usize| &bucket[j * len..(j + 1) * len];
                let t_j = |j: usize| seg(j).iter().enumerate().map(|(i, b)| mul(*b, i + 1)).sum::<G1Projective>();
                let r_j = |j: usize| seg(j).iter().sum::<G1Projective>();
                if split_reduce {
                    t.push((0..segments).map(t_j).sum::<G1Projective>());
                    for bit in 0..bits {
                        r_bits.push((0..segments).filter(|j| (j >> bit) & 1 == 1).map(r_j).sum::<G1Projective>());
                    }
                } else {
                    t.push((0..segments).map(|j| t_j(j) + mul(r_j(j), j * len)).sum::<G1Projective>());
                }
            }
            assert_eq!(bits, if split_reduce { 2 } else { 0 });
            let sums: Vec<G1Projective> = t.into_iter().chain([ones]).chain(r_bits).collect();
            assert_eq!(combine(&plan, &sums).unwrap(), want, "split_reduce = {split_reduce}");
        }
    }

    fn check(p: &MsmPlan) {
        assert!(p.c * p.windows >= 256, "{p:?}");
        assert_eq!(p.half, 1 << (p.c - 1));
        assert!(p.segments.is_power_of_two() && p.segments <= p.half.max(1), "{p:?}");
        assert_eq!(p.half % p.segments, 0, "{p:?}");
        assert!((p.n as u64) * u64::from(p.windows) < 1 << 31, "{p:?}");
        // Every fold divides: groups of segments per set are powers of two no larger.
        for threads in [64, 128] {
            let groups = (p.segments / (4 * threads)).max(1);
            assert_eq!(p.segments % groups, 0, "{p:?}");
        }
    }
}
