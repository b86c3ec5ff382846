//! MSM on G1 and G2: Pippenger with signed window digits (kernels: `kernels/msm/`, whose
//! headers document the phases).
//!
//! The window and layout come from `g16_backend`'s [`Planner`]: the windowed layout's width from
//! the scalars' count (at most 16 bits), and for base vectors of 2^18 to 2^25 points (G2: below
//! 2^24) shifted bases (`kernels/msm/table.cu`, queued at upload on the background stream:
//! table.rs), whose shared layout an MSM takes where it counts less work once they are made;
//! past that range, where `CudaOptions::table_shifts` asks, a table of a few shifts for the
//! grouped layout (sets of k windows).
//! An MSM runs four phases on the compute stream, each a device span under the MSM's own:
//! digits, sort, accumulate, reduce; the host waits only for the sets' sums, which it combines.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use ark_bls12_381::{g1, g2, Fr};
use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ff::{AdditiveGroup, Zero};
use cudarc::driver::sys::CUevent_flags;
use g16_backend::limbs::{self, FQ_WORDS, FR_WORDS, G1_WORDS, G1_XYZZ_WORDS, G2_WORDS, G2_XYZZ_WORDS};
use g16_backend::msm_plan::{Layout, MsmTuning, Planner, WindowRule};
use g16_backend::subgroup;
use g16_backend::timeline::SpanId;

use crate::buffers::{BaseTable, Bases, FrBuffer, TableSlot, Workspace};
use crate::compile::{self, Kernels};
use crate::device::{CudaDevice, Spare};
use crate::error::{during, CudaError};
use crate::options::{CudaOptions, FusedY, MsmAccumulation, MsmScatter, TableBuild};
use crate::staging::Staging;
use crate::timing::Timing;
use phases::Phases;

/// The windowed layout's widest window: at 2^24 points c = 16 beat every width from 13 to 20
/// (docs/perf/cuda.md: windowed layout's width).
const MAX_WINDOW: u32 = 16;
/// A bucket's weight in mixed additions, for choosing the shifted bases' width and the layout
/// of an MSM: about three for the reduction (two XYZZ additions, each ~1.4 mixed ones). The
/// reduction measured more, but the choices this weight makes at 2^20–2^22 are the measured
/// best (docs/perf/cuda.md: a bucket's weight in the planner).
const PER_BUCKET: u64 = 3;
/// Points summed per block by the big-bucket path.
const BIG_PIECE: usize = 4096;
/// Blocks of the ones' batch addition.
const ONES_BLOCKS: u32 = 512;

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
    /// Scalars the digit kernels read.
    n: usize,
    /// Those of them that reach the buckets (neither 0 nor, under the 0/1 split, 1): what the
    /// layout, the buckets' expected size and the sorted list are planned for.
    dense: usize,
    layout: Layout,
    /// Over a table (shared or grouped): the table's points a shift (entry = j·stride + i for
    /// shift j); 0 when windowed.
    stride: u32,
    /// Buckets with more points than this take the big-bucket path.
    big: u32,
    /// Segments per set of the bucket reduction.
    segments: u32,
}

impl MsmPlan {
    fn new((n, dense): (usize, usize), layout: Layout, stride: u32) -> MsmPlan {
        let (half, sets) = (layout.half(), layout.sets);
        let per_bucket = (dense as u64 * u64::from(layout.windows) / (u64::from(half) * u64::from(sets))).max(1) as u32;
        let big = (4 * per_bucket).max(256);
        // Segments of at least 8 buckets (16 additions and a scalar multiplication by j·len per
        // thread), about 2^17 threads over all sets; powers of two, so the folds divide evenly.
        let per_set = ((1u32 << 17) / sets).max(1);
        let segments = (half / 8).clamp(1, 1 << (31 - per_set.leading_zeros()));
        MsmPlan { n, dense, layout, stride, big, segments }
    }

    /// The plan of least work for `dense` of `n` scalars: the windowed layout for `dense`, or
    /// the shared one over a table of shifted bases (its layout, and its points a window).
    fn least_work(planner: &Planner, (n, dense): (usize, usize), table: Option<(Layout, u32)>) -> MsmPlan {
        let windowed = MsmPlan::new((n, dense), planner.windowed(dense), 0);
        let cost = |p: &MsmPlan| p.layout.cost(dense, planner.table_per_bucket);
        match table.map(|(layout, stride)| MsmPlan::new((n, dense), layout, stride)) {
            Some(shared) if cost(&shared) < cost(&windowed) => shared,
            _ => windowed,
        }
    }

    fn buckets(&self) -> usize {
        self.layout.buckets() as usize
    }
    /// Bucket entries at most: one a dense scalar and window.
    fn entries(&self) -> usize {
        self.layout.entries(self.dense) as usize
    }
}

/// What differs between G1 and G2: the kernels' curve, the sizes of points, and their
/// conversions.
pub(crate) struct Curve<C: SWCurveConfig> {
    span: &'static str,
    bases: &'static str,
    kernels: compile::Curve,
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
    kernels: compile::Curve::G1,
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
    kernels: compile::Curve::G2,
    threads: 64,
    field_words: 2 * FQ_WORDS,
    affine_words: G2_WORDS,
    xyzz_words: G2_XYZZ_WORDS,
    to_words: limbs::g2_to_words,
    from_xyzz: limbs::g2_xyzz_to_projective,
};

/// The planner of the CUDA MSM's layouts, with `tuning`'s overrides.
fn planner(tuning: MsmTuning) -> Planner {
    Planner { windowed: WindowRule::FromLength { max: MAX_WINDOW }, table_per_bucket: PER_BUCKET, tuning }
}

/// Where a vector's table ends and what lies beyond: G2's own bound on the shared layout, and
/// the grouped layout's shifts past it.
#[derive(Clone, Copy, Debug)]
struct TableBounds {
    /// G2 vectors of this many points or more get no shared layout.
    g2_below: usize,
    /// Shifts of the grouped layout's tables past the shared range (below 2: none).
    shifts: u32,
}

/// The layout of shifted bases for a vector of `len` points of `group`, or None: the shared
/// layout where the planner's range gives it one (for G2, below `bounds.g2_below` points),
/// grouped over `bounds.shifts` shifts past it.
fn table_layout(planner: &Planner, group: compile::Curve, len: usize, bounds: TableBounds) -> Option<Layout> {
    if group == compile::Curve::G2 && len >= bounds.g2_below {
        // G2's shared range ends at its own bound, where its grouped one starts.
        let top = bounds.g2_below.max(1).ilog2();
        let tuning =
            MsmTuning { tables: planner.tuning.tables.map(|(min, max)| (min, max.min(top))), ..planner.tuning };
        return Planner { tuning, ..*planner }.grouped(len, bounds.shifts);
    }
    planner.table(len).or_else(|| planner.grouped(len, bounds.shifts))
}

/// `layout` (from `table_layout`) where its table fits (`fits`); where it does not and it is
/// the shared layout, the grouped one over `shifts` shifts where that fits (a card without
/// room for W copies of the points may hold k); None where neither does.
fn fitting_layout(
    planner: &Planner,
    len: usize,
    (layout, shifts): (Layout, u32),
    fits: impl Fn(Layout) -> bool,
) -> Option<Layout> {
    if fits(layout) {
        return Some(layout);
    }
    if !layout.is_shared() {
        return None;
    }
    planner.grouped_at_any_length(len, shifts).filter(|g| g.shifts < layout.shifts && fits(*g))
}

/// The MSM layer of one device: its planner, workspace and 0/1 split, kept between MSMs.
pub(crate) struct Msm {
    dev: Arc<CudaDevice>,
    kernels: Arc<Kernels>,
    timing: Arc<Timing>,
    staging: Arc<Staging>,
    planner: Planner,
    table_build: TableBuild,
    /// G2's bound on the shared layout and the grouped layout's shifts
    /// (`CudaOptions::g2_tables_max`, `CudaOptions::table_shifts`).
    table_bounds: TableBounds,
    /// The most bucket entries one pass of the phases sorts (`CudaOptions::max_msm_entries`).
    max_entries: u64,
    accumulation: MsmAccumulation,
    scatter: MsmScatter,
    /// Where the sliced accumulation reduces Y₃'s products together (`CudaOptions::madd_fused_y`).
    fused_y: FusedY,
    workspace: Workspace,
    ones_split: AtomicBool,
}

impl Msm {
    /// The MSM layer over the device's parts, with its settings from `options`.
    pub fn new(
        (dev, kernels, timing, staging): (Arc<CudaDevice>, Arc<Kernels>, Arc<Timing>, Arc<Staging>),
        options: &CudaOptions,
    ) -> Msm {
        Msm {
            dev,
            kernels,
            timing,
            staging,
            planner: planner(options.msm),
            table_build: options.table_build,
            table_bounds: TableBounds {
                g2_below: 1usize << options.g2_tables_max.min(40),
                shifts: options.table_shifts,
            },
            max_entries: options.max_msm_entries.clamp(1, crate::options::MAX_MSM_ENTRIES),
            accumulation: options.msm_accumulation,
            scatter: options.msm_scatter,
            fused_y: options.madd_fused_y,
            workspace: Workspace::new(),
            ones_split: AtomicBool::new(options.ones_split),
        }
    }

    /// Whether MSMs send scalars equal to 1 to a batch addition instead of Pippenger.
    pub fn set_ones_split(&self, on: bool) {
        self.ones_split.store(on, Ordering::Relaxed);
    }
    pub fn ones_split(&self) -> bool {
        self.ones_split.load(Ordering::Relaxed)
    }

    /// Uploads bases, and queues their shifted multiples where the MSM gains from them.
    pub fn upload<C: SWCurveConfig>(&self, curve: &Curve<C>, host: &[Affine<C>]) -> Result<Bases<C>, CudaError> {
        let dev = &*self.dev;
        let _op = dev.op();
        let data =
            self.staging.upload_items(curve.bases, host, curve.affine_words, curve.to_words, ("upload_bases", None))?;
        // After this upload's copies (and perhaps another's, queued meanwhile: only later).
        let uploaded = dev
            .copy_stream()
            .record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .map_err(during("recording the end of an upload"))?;
        let table = self.shifted_bases(curve, (dev.ptr(&data), host.len()), &uploaded)?.map(TableSlot::new);
        if let Some(slot) = &table {
            dev.add_spare(Arc::downgrade(slot) as Weak<dyn Spare>);
        }
        Ok(Bases::new(data, host.len(), table))
    }

    /// Waits on the host for every table queued so far to be made.
    pub fn wait_for_tables(&self) -> Result<(), CudaError> {
        self.dev.synchronize_background()
    }

    /// Whether a table is being made (queued on the background stream and not done).
    pub fn tables_building(&self) -> bool {
        !self.dev.background_idle()
    }

    /// `Σ scalars[i]·bases[i]` (at least as many bases as scalars: checked by the caller).
    pub fn run<C: SWCurveConfig>(
        &self,
        curve: &Curve<C>,
        bases: &Bases<C>,
        scalars: ScalarsRef<'_>,
        parent: Option<SpanId>,
    ) -> Result<Projective<C>, CudaError> {
        let dev = &*self.dev;
        let n = scalars.len();
        if n == 0 {
            return Ok(Projective::zero());
        }
        let uploaded;
        let scalars_ptr = match scalars {
            ScalarsRef::Host(s) => {
                uploaded = self.staging.upload_fr(s, parent)?;
                dev.ptr(&uploaded.data)
            }
            ScalarsRef::Device(buf, range) => dev.ptr(&buf.data) + (range.start * FR_WORDS * 4) as u64,
        };
        // Held to the end: no allocation takes the table back while this MSM reads it.
        let held = bases.table.as_ref().map(|slot| slot.hold());
        let table = match held.as_deref() {
            Some(Some(t)) if t.is_ready()? => Some(t),
            _ => None,
        };
        // Consecutive ranges whose MSMs each sort at most `max_entries`: one range but for the
        // largest vectors.
        let entries = |len: usize| {
            let windowed = self.planner.windowed(len).entries(len);
            table.map_or(windowed, |t| windowed.max(t.layout.entries(len)))
        };
        let mut sum = Projective::zero();
        for range in cut(n, self.max_entries, entries) {
            let scalars = scalars_ptr + (range.start * FR_WORDS * 4) as u64;
            sum += self.run_range(curve, bases, table, range, scalars, parent)?;
        }
        Ok(sum)
    }

    /// The MSM of scalars at device address `scalars` with bases `range` of `bases` (and of
    /// their table, where it is ready).
    fn run_range<C: SWCurveConfig>(
        &self,
        curve: &Curve<C>,
        bases: &Bases<C>,
        table: Option<&BaseTable>,
        range: Range<usize>,
        scalars_ptr: u64,
        parent: Option<SpanId>,
    ) -> Result<Projective<C>, CudaError> {
        let dev = &*self.dev;
        let n = range.len();
        // The range's first base, in the bases and in each window of the table (entry
        // w·stride + i of the table read from its start + range.start).
        let offset = (range.start * curve.affine_words * 4) as u64;
        let bases_ptr = dev.ptr(&bases.data) + offset;
        let (plan, words) = {
            let _op = dev.op();
            self.timing.span(curve.span, parent, || {
                let dense = self.dense_scalars(curve.span, (scalars_ptr, n), parent)?;
                let plan = MsmPlan::least_work(&self.planner, (n, dense), table.map(|t| (t.layout, t.len as u32)));
                let points = match table {
                    Some(t) if plan.stride != 0 => dev.ptr(&t.data) + offset,
                    _ => bases_ptr,
                };
                let phases = Phases { msm: self, span: curve.span, curve, plan, points, bases: bases_ptr, parent };
                let words = match phases.run(scalars_ptr) {
                    // The workspace of earlier MSMs, or the scratch of tables being made, may
                    // hold what this one needs: free the one and wait for the other, once.
                    Err(CudaError::OutOfMemory { .. }) => {
                        self.workspace.clear(dev)?;
                        dev.synchronize_background()?;
                        phases.run(scalars_ptr)
                    }
                    other => other,
                }?;
                Ok((plan, words))
            })?
        };
        let sums: Vec<Projective<C>> = words.chunks(curve.xyzz_words).map(curve.from_xyzz).collect();
        combine(&plan, &sums)
    }
}

impl Msm {
    /// How many of the `n` scalars at device address `scalars` reach the buckets: neither 0 nor,
    /// under the 0/1 split, 1 (`msm_dense_count`, a device span `{span}.count`). The one wait on
    /// the device before an MSM's phases are queued, for a word.
    fn dense_scalars(
        &self,
        span: &str,
        (scalars, n): (u64, usize),
        parent: Option<SpanId>,
    ) -> Result<usize, CudaError> {
        let count = self.workspace.get(&self.dev, "MSM dense count", 1)?;
        self.dev.zero_words(count, 1)?;
        let split = u32::from(self.ones_split());
        self.timing.span(&format!("{span}.count"), parent, || {
            let grid = (n as u32).div_ceil(256).clamp(1, 4 * 1024);
            let args = [
                compile::Arg::Ptr(scalars),
                compile::Arg::U32(n as u32),
                compile::Arg::U32(split),
                compile::Arg::Ptr(count),
            ];
            self.kernels.launch(compile::Kernel::MsmDenseCount, grid, 256, &args)
        })?;
        let dense = self.staging.download_words(count, 1)?[0] as usize;
        // A count above n would be a kernel fault; the plan's buffers must hold every entry.
        Ok(dense.min(n))
    }

    /// The bucket sums of a random deal of `n` points at device address `points` (the batched
    /// subgroup check, subgroup.rs): `plan.passes` windows of 2^bits buckets, each point in one
    /// bucket a window as the keystream at `deal` says (`words` 64-bit words a point). Returns
    /// the address of the passes·2^bits XYZZ sums, pass-major, in the workspace: valid until
    /// the next MSM, so the caller holds the operation lock until the launches that read them
    /// are queued. The phases' spans are named after `span`.
    #[allow(clippy::too_many_arguments)]
    pub fn dealt_sums<C: SWCurveConfig>(
        &self,
        curve: &Curve<C>,
        span: &'static str,
        (points, n): (u64, usize),
        (deal, words): (u64, u32),
        plan: subgroup::batched::Plan,
        parent: Option<SpanId>,
    ) -> Result<u64, CudaError> {
        let layout = Layout { c: plan.bucket_bits + 1, windows: plan.passes, sets: plan.passes, shifts: 1 };
        let plan = MsmPlan::new((n, n), layout, 0);
        if plan.entries() as u64 >= 1 << 31 {
            return Err(CudaError::OutOfMemory {
                what: format!("{span} of {n} points (more than 2^31 bucket entries)"),
                requested: plan.entries() as u64 * 4,
                available: 1 << 33,
            });
        }
        let phases = Phases { msm: self, span, curve, plan, points, bases: points, parent };
        match phases.dealt_sums(deal, words) {
            // The workspace of earlier MSMs may hold what this needs: free it, once.
            Err(CudaError::OutOfMemory { .. }) => {
                self.workspace.clear(&self.dev)?;
                phases.dealt_sums(deal, words)
            }
            other => other,
        }
    }
}

/// Consecutive ranges covering `0..n`, each of whose MSMs sorts at most `max` bucket entries
/// (`entries(len)` for `len` scalars), by halving: `0..n` alone where it fits.
fn cut(n: usize, max: u64, entries: impl Fn(usize) -> u64 + Copy) -> Vec<Range<usize>> {
    fn halve(range: Range<usize>, max: u64, entries: impl Fn(usize) -> u64 + Copy, out: &mut Vec<Range<usize>>) {
        if range.len() <= 1 || entries(range.len()) <= max {
            out.push(range);
        } else {
            let mid = range.start + range.len() / 2;
            halve(range.start..mid, max, entries, out);
            halve(mid..range.end, max, entries, out);
        }
    }
    let mut out = Vec::new();
    halve(0..n, max, entries, &mut out);
    out
}

/// Σ_s 2^(c·k·s)·set_s + the ones' sum, k the windows a set (Horner, top set first; one set
/// in the shared layout), checked on the curve. `sums` holds the sets' sums, then the ones' sum.
fn combine<C: SWCurveConfig>(plan: &MsmPlan, sums: &[Projective<C>]) -> Result<Projective<C>, CudaError> {
    let (sets, ones) = sums.split_at(plan.layout.sets as usize);
    let mut acc = Projective::<C>::zero();
    for set in sets.iter().rev() {
        for _ in 0..plan.layout.c * plan.layout.shifts {
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

mod phases;
mod table;
#[cfg(test)]
mod tests;
