//! MSM on G1 and G2 (kernels: `kernels/msm.cu`, which documents the algorithm and phases).

use std::ops::Range;

use ark_bls12_381::{Fr, G1Projective, G2Projective};
use ark_ec::CurveGroup;
use ark_ff::Zero;

use crate::convert::OnCurve;

use crate::convert::{self, FR_WORDS, G1_XYZZ_WORDS, G2_XYZZ_WORDS};
use crate::device::{Arg, CudaDevice, FrBuffer, G1Buffer, G2Buffer};
use crate::error::CudaError;

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
    /// Buckets per window, 2^(c−1).
    pub half: u32,
    /// Buckets with more points than this take the big-bucket path.
    pub big: u32,
    /// Segments per window of the bucket reduction.
    pub segments: u32,
}

/// The widest window a tuning run may force: 2^19 buckets a window.
const MAX_WINDOW: u32 = 20;
/// The widest default window.
const DEFAULT_MAX_WINDOW: u32 = 16;
/// Points summed per block by the big-bucket path.
const BIG_PIECE: usize = 4096;
/// Blocks of the ones' batch addition.
const ONES_BLOCKS: u32 = 64;

impl MsmPlan {
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
        let half = 1u32 << (c - 1);
        let average = (n as u64 / u64::from(half)).max(1) as u32;
        let big = (4 * average).max(256);
        // Segments of at least 8 buckets (16 additions and a scalar multiplication by j·len per
        // thread), at most 4096 per window (the window fold's serial share stays small).
        let segments = (half / (half / 4096).max(8)).max(1);
        MsmPlan { n, c, windows, half, big, segments }
    }
    fn buckets(&self) -> usize {
        self.windows as usize * self.half as usize
    }
}

/// What differs between G1 and G2: kernel names and the size of a sum.
struct Curve {
    span: &'static str,
    accumulate: &'static str,
    big_pieces: &'static str,
    big_combine: &'static str,
    bucket_reduce: &'static str,
    window_fold: &'static str,
    ones_sum: &'static str,
    /// Threads of the block-reducing kernels (shared memory holds one sum per thread).
    threads: u32,
    xyzz_words: usize,
}

const G1: Curve = Curve {
    span: "msm_g1",
    accumulate: "g1_accumulate",
    big_pieces: "g1_big_pieces",
    big_combine: "g1_big_combine",
    bucket_reduce: "g1_bucket_reduce",
    window_fold: "g1_window_fold",
    ones_sum: "g1_ones_sum",
    threads: 128,
    xyzz_words: G1_XYZZ_WORDS,
};

const G2: Curve = Curve {
    span: "msm_g2",
    accumulate: "g2_accumulate",
    big_pieces: "g2_big_pieces",
    big_combine: "g2_big_combine",
    bucket_reduce: "g2_bucket_reduce",
    window_fold: "g2_window_fold",
    ones_sum: "g2_ones_sum",
    threads: 64,
    xyzz_words: G2_XYZZ_WORDS,
};

impl CudaDevice {
    pub fn msm_g1(
        &self,
        bases: &G1Buffer,
        scalars: ScalarsRef<'_>,
        tag: Option<u64>,
    ) -> Result<G1Projective, CudaError> {
        let Some((plan, words)) = self.msm(&G1, "msm_g1", self.ptr(&bases.data), bases.len, scalars, tag)? else {
            return Ok(G1Projective::zero());
        };
        let sums: Vec<G1Projective> = words.chunks(G1_XYZZ_WORDS).map(convert::g1_xyzz_to_projective).collect();
        combine(&plan, &sums)
    }

    pub fn msm_g2(
        &self,
        bases: &G2Buffer,
        scalars: ScalarsRef<'_>,
        tag: Option<u64>,
    ) -> Result<G2Projective, CudaError> {
        let Some((plan, words)) = self.msm(&G2, "msm_g2", self.ptr(&bases.data), bases.len, scalars, tag)? else {
            return Ok(G2Projective::zero());
        };
        let sums: Vec<G2Projective> = words.chunks(G2_XYZZ_WORDS).map(convert::g2_xyzz_to_projective).collect();
        combine(&plan, &sums)
    }

    /// The MSM's XYZZ result as words, or None for an empty MSM.
    fn msm(
        &self,
        curve: &Curve,
        op: &'static str,
        bases: u64,
        bases_len: usize,
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
                uploaded = self.upload_fr(s)?;
                self.ptr(&uploaded.data)
            }
            ScalarsRef::Device(buf, range) => self.ptr(&buf.data) + (range.start * FR_WORDS * 4) as u64,
        };
        let plan = MsmPlan::new(n);
        if (n as u64) * u64::from(plan.windows) >= 1 << 31 {
            return Err(CudaError::OutOfMemory {
                what: format!("{op} of {n} points (more than 2^31 bucket entries)"),
                requested: (n as u64) * u64::from(plan.windows) * 4,
                available: 1 << 33,
            });
        }
        let _op = self.op();
        let words = self.span(curve.span, tag, || self.msm_phases(curve, &plan, bases, scalars_ptr, tag))?;
        Ok(Some((plan, words)))
    }

    fn msm_phases(
        &self,
        curve: &Curve,
        plan: &MsmPlan,
        bases: u64,
        scalars: u64,
        tag: Option<u64>,
    ) -> Result<Vec<u32>, CudaError> {
        let n = plan.n as u32;
        let buckets = plan.buckets();
        let xw = curve.xyzz_words;
        let split = u32::from(self.ones_split());
        let grid = n.div_ceil(256).min(16 * 1024);

        // digits: bucket sizes, and the list of ones.
        let counts = self.alloc_zeros("MSM bucket counts", buckets)?;
        let ones = self.alloc("MSM ones list", plan.n)?;
        let flags = self.alloc_zeros("MSM counters", 2)?; // [ones_count, big_count]
        let (counts_p, ones_p, flags_p) = (self.ptr(&counts), self.ptr(&ones), self.ptr(&flags));
        let (ones_count_p, big_count_p) = (flags_p, flags_p + 4);
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
                    Arg::Ptr(counts_p),
                    Arg::Ptr(ones_p),
                    Arg::Ptr(ones_count_p),
                    Arg::U32(split),
                ],
            )
        })?;

        // sort: offsets by a scan of the counts, then the counting sort's scatter.
        let offsets = self.alloc("MSM bucket offsets", buckets)?;
        let cursor = self.alloc("MSM bucket cursors", buckets)?;
        let sorted = self.alloc("MSM sorted indices", plan.n * plan.windows as usize)?;
        let (offsets_p, cursor_p, sorted_p) = (self.ptr(&offsets), self.ptr(&cursor), self.ptr(&sorted));
        self.span(&format!("{}.sort", curve.span), tag, || {
            self.copy_words(offsets_p, counts_p, buckets)?;
            self.exclusive_scan(offsets_p, buckets)?;
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
                    Arg::Ptr(cursor_p),
                    Arg::Ptr(sorted_p),
                    Arg::U32(split),
                ],
            )
        })?;
        drop(cursor);

        // accumulate: one thread per bucket, whole blocks for big buckets.
        let sums = self.alloc("MSM bucket sums", buckets * xw)?;
        let big_list = self.alloc("MSM big-bucket list", buckets * 3)?;
        let (sums_p, big_list_p) = (self.ptr(&sums), self.ptr(&big_list));
        self.span(&format!("{}.accumulate", curve.span), tag, || {
            self.launch(
                curve.accumulate,
                (buckets as u32).div_ceil(128),
                128,
                &[
                    Arg::Ptr(bases),
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
            self.big_buckets(curve, bases, sorted_p, sums_p, &flags, &big_list)
        })?;
        drop((sorted, offsets, counts, big_list));

        // reduce: per-window running sums over segments, then each window's segments folded;
        // the window sums and the ones' partial sums go to the host, which combines them.
        let segs = self.alloc("MSM segment sums", plan.windows as usize * plan.segments as usize * xw)?;
        let out = self.alloc("MSM window sums", (plan.windows + ONES_BLOCKS) as usize * xw)?;
        let (segs_p, out_p) = (self.ptr(&segs), self.ptr(&out));
        let ones_out_p = out_p + u64::from(plan.windows) * xw as u64 * 4;
        self.span(&format!("{}.reduce", curve.span), tag, || {
            let threads = plan.windows * plan.segments;
            self.launch(
                curve.bucket_reduce,
                threads.div_ceil(64),
                64,
                &[
                    Arg::Ptr(sums_p),
                    Arg::U32(plan.windows),
                    Arg::U32(plan.half),
                    Arg::U32(plan.segments),
                    Arg::Ptr(segs_p),
                ],
            )?;
            self.launch(
                curve.window_fold,
                plan.windows,
                curve.threads,
                &[Arg::Ptr(segs_p), Arg::U32(plan.segments), Arg::Ptr(out_p)],
            )?;
            self.launch(
                curve.ones_sum,
                ONES_BLOCKS,
                curve.threads,
                &[Arg::Ptr(bases), Arg::Ptr(ones_p), Arg::Ptr(ones_count_p), Arg::Ptr(ones_out_p)],
            )?;
            self.download_words(&out, (plan.windows + ONES_BLOCKS) as usize * xw)
        })
    }

    /// Buckets over `plan.big` points: pieces of BIG_PIECE points summed by whole blocks, then
    /// each bucket's pieces combined. The host reads the (small) list of big buckets.
    fn big_buckets(
        &self,
        curve: &Curve,
        bases: u64,
        sorted: u64,
        sums: u64,
        flags: &cudarc::driver::CudaSlice<u32>,
        big_list: &cudarc::driver::CudaSlice<u32>,
    ) -> Result<(), CudaError> {
        let nbig = self.download_words(flags, 2)?[1] as usize;
        if nbig == 0 {
            return Ok(());
        }
        let list = self.download_words(big_list, nbig * 3)?;
        let mut pieces = Vec::new();
        let mut table = Vec::with_capacity(nbig * 3);
        for b in list.chunks(3) {
            let (key, start, count) = (b[0], b[1], b[2] as usize);
            table.extend([key, (pieces.len() / 2) as u32, count.div_ceil(BIG_PIECE) as u32]);
            for p in (0..count).step_by(BIG_PIECE) {
                pieces.extend([start + p as u32, BIG_PIECE.min(count - p) as u32]);
            }
        }
        let npieces = pieces.len() / 2;
        let pieces_d = self.upload_words("MSM big-bucket pieces", &pieces)?;
        let table_d = self.upload_words("MSM big-bucket table", &table)?;
        let partials = self.alloc("MSM big-bucket partial sums", npieces * curve.xyzz_words)?;
        let (pieces_p, table_p, partials_p) = (self.ptr(&pieces_d), self.ptr(&table_d), self.ptr(&partials));
        self.launch(
            curve.big_pieces,
            npieces as u32,
            curve.threads,
            &[Arg::Ptr(bases), Arg::Ptr(sorted), Arg::Ptr(pieces_p), Arg::Ptr(partials_p)],
        )?;
        self.launch(
            curve.big_combine,
            (nbig as u32).div_ceil(64),
            64,
            &[Arg::Ptr(table_p), Arg::U32(nbig as u32), Arg::Ptr(partials_p), Arg::Ptr(sums)],
        )?;
        // The tables are freed on return; the free is ordered after the kernels on the stream.
        Ok(())
    }

    pub(crate) fn copy_words(&self, dst: u64, src: u64, words: usize) -> Result<(), CudaError> {
        // SAFETY: both ranges lie inside live allocations of at least `words` words (callers).
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, words * 4, self.stream.cu_stream()) }
            .map_err(|e| CudaError::driver("copying on the device", e))
    }

    /// Exclusive prefix sum of `len` words in place: blocks of 1024, their totals scanned
    /// recursively and added back.
    fn exclusive_scan(&self, data: u64, len: usize) -> Result<(), CudaError> {
        let blocks = len.div_ceil(1024);
        let sums = self.alloc("scan block sums", blocks.max(1))?;
        let sums_p = self.ptr(&sums);
        self.launch("scan_blocks", blocks as u32, 1024, &[Arg::Ptr(data), Arg::U32(len as u32), Arg::Ptr(sums_p)])?;
        if blocks > 1 {
            self.exclusive_scan(sums_p, blocks)?;
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

/// Σ_w 2^(c·w)·window_w + Σ ones partials (Horner, top window first), checked on the curve.
fn combine<P: CurveGroup>(plan: &MsmPlan, sums: &[P]) -> Result<P, CudaError>
where
    P::Affine: OnCurve,
{
    let (windows, ones) = sums.split_at(plan.windows as usize);
    let mut acc = P::zero();
    for w in windows.iter().rev() {
        for _ in 0..plan.c {
            acc.double_in_place();
        }
        acc += w;
    }
    acc += ones.iter().sum::<P>();
    if acc.into_affine().is_on_curve_or_zero() {
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
            assert!(p.c * p.windows >= 256, "{p:?}");
            assert_eq!(p.half, 1 << (p.c - 1));
            assert!(p.segments <= p.half && p.half / p.segments * p.segments == p.half, "{p:?}");
            assert!((p.n as u64) * u64::from(p.windows) < 1 << 31, "{p:?}");
            assert!(p.c <= DEFAULT_MAX_WINDOW, "{p:?}");
        }
    }
}
