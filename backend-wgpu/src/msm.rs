//! MSM over resident bases, in the family of the CUDA backend (shaders/msm/): signed window
//! digits, bucket keys sorted on the device by a counting sort, oversized buckets split into
//! tasks over several levels, per-window running-sum reduction on the device, the 0/1 split.
//! The host only combines the window sums (nwin points, c doublings between them) and checks
//! that the result is on the curve.
//!
//! Planning is `g16_backend::msm_plan`'s, with this backend's measured weights
//! ([`WINDOW_PER_BUCKET`], [`TABLE_PER_BUCKET`]). Base vectors in the planner's range get
//! shifted bases at upload (shaders/msm/table.wgsl): every window's digit then goes into one
//! shared set of buckets, one set to fill, scan and reduce instead of one a window.
//!
//! An MSM too large for one set of temporaries (each temporary array must fit one binding)
//! is cut into sub-MSMs over consecutive stretches of bases, whose window sums add up. The
//! temporaries come from the device's pool (buffers.rs), so a run of MSMs allocates them once.
//!
//! The sort and the accumulation are `buckets`, which the batched subgroup check's sums
//! (`dealt`) share.

use std::ops::Range;
use std::sync::Arc;

use ark_ec::short_weierstrass::{Affine, Projective};
use ark_ec::AdditiveGroup;
use ark_ff::Zero;

use g16_backend::limbs::on_curve;
use g16_backend::msm_plan::{Layout, MsmTuning, Planner, WindowRule};
use g16_backend::{check_range, BackendError};

use crate::buffers::{Bases, Chunked, Curve, FrBuffer, Group, Memory, Shifted};
use crate::compile::{CurvePrograms, Module, ParamBlock, Pipelines, Res};
use crate::device::WgpuDevice;
use crate::error::WgpuError;
use crate::staging;
use crate::timing::{Op, Tag, Timing};

mod buckets;
mod dealt;

use buckets::{bucket_params, sort_params};

pub(crate) use dealt::{dealt_bytes, DealShape};

/// What a bucket costs the windowed layout, in mixed additions: about 3 a bucket to merge
/// partials and reduce the windows (two full additions, each ~1.2 mixed ones). For 2^20
/// scalars it picks c = 16 (16 windows, like c = 17, but half the buckets).
pub(crate) const WINDOW_PER_BUCKET: u64 = 3;
/// What a bucket costs the shared layout, in mixed additions: fitted to the H200's times over
/// c = 16..20 (docs/perf/wgpu.md, "Shifted bases"), where counting the additions alone (~3)
/// picked windows 17–22 % slower. It picks c = 16 at 2^20 and c = 20 at 2^22.
pub(crate) const TABLE_PER_BUCKET: u64 = 13;

/// Bases per task at level 0, and partials per task at later levels.
///
/// Why 16: the threads of a workgroup run in lockstep, so a warp takes as long as its longest
/// task; with buckets of 32 entries on average, tasks of up to 32 left ~31 % of the lanes
/// idle, tasks of 16 ~19 %, at the price of twice the partials to merge at level 1
/// (docs/perf/wgpu.md, "Task size").
const T0: u32 = 16;
const T: u32 = 16;
/// Buckets per reduction segment (one thread each), and inputs per `reduce` group output.
///
/// The reduction is bound by its longest chain of dependent additions, not by its work: a
/// segment thread does 2·SEGMENT additions plus ~20 for its offset, then each group level
/// GROUP − 1 more. Groups of 2 make the segment sums a binary tree (log2(segments) levels of
/// one addition); segments of 16 measured best of 8..64 (docs/perf/wgpu.md, "Reduction shape").
const SEGMENT: u32 = 16;
const GROUP: u32 = 2;
/// The modes of bucket.wgsl's two kernels: `accumulate` over bases or over partials,
/// `reduce` over windows or over groups.
const MODE_BASES: u32 = 0;
const MODE_PARTIALS: u32 = 1;
const MODE_WINDOWS: u32 = 0;
const MODE_GROUPS: u32 = 1;
/// Parameter slots of one sub-MSM's dispatches: 9 for digits, sorting and the first
/// accumulate, 4 a level (at most 9 levels: 2^32 entries), 1 + 20 for the reduction and its
/// tree (segments of at least 2 buckets: at most 2^19 per window).
const PARAM_SLOTS: u64 = 128;
/// Points per launch of the shifted-bases kernel (fewer where their multiples would not fit
/// one binding).
const SHIFT_CHUNK: u64 = 1 << 16;
/// Counts per block of `scan_blocks` (shaders/util/scan.wgsl's BLOCK).
const SCAN_BLOCK: u32 = 512;

/// One sub-MSM's result: its window bits, and its window sums then the ones sum, as XYZZ words.
type WindowSums = (u32, Vec<Vec<u32>>);

/// The shape of one (sub-)MSM.
#[derive(Clone, Copy, Debug)]
struct Plan {
    n: u32,
    c: u32,
    nwin: u32,
    half: u32,
    /// Buckets, the ones bucket included (it is the last).
    nb: u32,
    segments: u32,
    /// Segment results per `reduce` group output.
    group: u32,
    /// Bases per task at level 0.
    t0: u32,
    /// Bucket sets: one a window, or one in all over shifted bases (the shared layout).
    sets: u32,
    /// The shared layout's table stride (its points a window); 0 in the windowed layout.
    stride: u32,
}

impl Plan {
    fn new(n: usize, layout: Layout, stride: u32) -> Plan {
        let half = layout.half();
        Plan {
            n: n as u32,
            c: layout.c,
            nwin: layout.windows,
            half,
            nb: layout.sets * half + 1,
            segments: (half / SEGMENT).max(1),
            group: GROUP,
            t0: T0,
            sets: layout.sets,
            stride,
        }
    }

    fn entries(&self) -> u64 {
        u64::from(self.n) * u64::from(self.nwin)
    }

    /// An upper bound on level 0's tasks: Σ⌈count/t0⌉ ≤ entries/t0 + buckets.
    fn tasks0(&self) -> u64 {
        self.entries().div_ceil(u64::from(self.t0)) + u64::from(self.nb)
    }

    /// Task sizes level by level until every bucket has at most one partial (a bucket holds
    /// at most n entries: one per scalar).
    fn levels(&self) -> Vec<u32> {
        let mut sizes = vec![self.t0];
        let mut most = u64::from(self.n).div_ceil(u64::from(self.t0));
        while most > 1 {
            sizes.push(T);
            most = most.div_ceil(u64::from(T));
        }
        sizes
    }
}

fn op_name(curve: Curve) -> &'static str {
    match curve {
        Curve::G1 => "msm_g1",
        Curve::G2 => "msm_g2",
    }
}

/// The MSM layer of one device: its planner, and each curve's programs on the device.
pub(crate) struct Msm {
    mem: Arc<Memory>,
    pipelines: Arc<Pipelines>,
    timing: Arc<Timing>,
    planner: Planner,
    programs: Arc<CurvePrograms>,
}

impl Msm {
    pub(crate) fn new(
        mem: Arc<Memory>,
        pipelines: Arc<Pipelines>,
        timing: Arc<Timing>,
        programs: Arc<CurvePrograms>,
        tuning: MsmTuning,
    ) -> Msm {
        let planner = Planner {
            windowed: WindowRule::LeastCost { per_bucket: WINDOW_PER_BUCKET },
            table_per_bucket: TABLE_PER_BUCKET,
            tuning,
        };
        Msm { mem, pipelines, timing, planner, programs }
    }

    fn dev(&self) -> &WgpuDevice {
        self.mem.device()
    }

    /// The plan of n scalars over `table`'s shared layout, or the windowed one without.
    fn plan(&self, n: usize, table: Option<&Shifted>) -> Plan {
        match table {
            Some(t) => Plan::new(n, t.layout, t.stride() as u32),
            None => Plan::new(n, self.planner.windowed(n), 0),
        }
    }

    /// Bases to the device, and their shifted bases where the planner gives their length some
    /// (built before this returns).
    pub(crate) fn upload<G: Group>(&self, host: &[Affine<G>], tag: Tag) -> Result<Bases<G>, WgpuError> {
        let group = self.mem.max_elements(G::CURVE.affine()).max(1) as usize;
        let points = if host.len() <= group {
            vec![staging::upload_points::<G>(&self.mem, host)?]
        } else {
            host.chunks(group).map(|part| staging::upload_points::<G>(&self.mem, part)).collect::<Result<_, _>>()?
        };
        // Shifted bases index one group's bindings: a longer vector goes without.
        let shifted = match points.as_slice() {
            [one] => self.shifted(G::CURVE, one, tag)?,
            _ => None,
        };
        Ok(Bases::new(points, shifted))
    }

    /// The shifted bases of `bases` (table.wgsl), when the planner gives their length a
    /// table and it fits the split bindings and device memory; None otherwise.
    fn shifted(&self, curve: Curve, bases: &Chunked, tag: Tag) -> Result<Option<Shifted>, WgpuError> {
        let len = bases.len;
        let Some(layout) = self.planner.table(len) else { return Ok(None) };
        let (c, windows) = (layout.c, layout.windows);
        let entries = len as u64 * u64::from(windows);
        if entries > self.mem.max_elements(curve.affine()) {
            return Ok(None);
        }
        let dev = self.dev();
        // The multiples of one launch's points must fit one binding.
        let per_point = u64::from(windows - 1).max(1) * curve.xyzz().bytes();
        let chunk = (dev.binding_bytes() / per_point).min(SHIFT_CHUNK).min(len as u64) as usize;
        if chunk == 0 {
            return Ok(None);
        }
        // Tables are an optimisation: memory that runs short skips them, never the upload.
        fn or_skip<T>(r: Result<T, WgpuError>) -> Result<Option<T>, WgpuError> {
            match r {
                Ok(b) => Ok(Some(b)),
                Err(WgpuError::OutOfMemory { .. } | WgpuError::TooLarge { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        }
        let Some(table) = or_skip(self.mem.chunked("MSM shifted bases", curve.affine(), entries as usize))? else {
            return Ok(None);
        };
        let Some(multiples) = or_skip(self.mem.plain("MSM shifted-bases multiples", chunk as u64 * per_point))? else {
            return Ok(None);
        };
        let kernel = self.pipelines.kernel(Module::MsmTable(curve), "shift_bases")?;
        let prog = self.program(curve);
        let span = format!("{}.shift_bases", op_name(curve));
        for first in (0..len).step_by(chunk) {
            let count = chunk.min(len - first);
            let mut block = ParamBlock::new(&self.mem, 1)?;
            let params = [len as u32, c, windows, first as u32, count as u32, 0, 0, 0];
            let group = kernel.bind_in(
                dev,
                &mut block,
                &params,
                &[Res::Split(bases), Res::Split(&table), Res::Plain(&multiples), Res::Plain(&prog)],
            )?;
            let mut op = Op::new(&self.timing, tag, Some(&span));
            {
                let mut pass = op.pass(&span);
                kernel.dispatch(dev, &mut pass, &group, count as u64)?;
            }
            block.write(dev);
            op.submit()?;
        }
        dev.wait()?;
        dev.check_errors("building MSM shifted bases")?;
        Ok(Some(Shifted { table, layout }))
    }

    /// `Σ scalars[range][i]·bases[i]`.
    pub(crate) fn msm<G: Group>(
        &self,
        bases: &Bases<G>,
        scalars: &FrBuffer,
        range: Range<usize>,
        tag: Tag,
    ) -> Result<Projective<G>, WgpuError> {
        let curve = G::CURVE;
        let op = op_name(curve);
        check_range(op, &range, scalars.len())?;
        let n = range.len();
        if bases.len() < n {
            return Err(BackendError::LengthMismatch { op, expected: n, got: bases.len() }.into());
        }
        let table = bases.shifted.as_ref();
        let group_len = bases.group_len();
        let mut subs = Vec::new();
        let mut at = 0;
        while at < n {
            // A sub-MSM stays within one group of bases, and is sized for what remains there
            // (a shorter MSM may pick a narrower window, and so more partials, than a longer).
            let (group, offset) = (at / group_len, at % group_len);
            let len = self.sub_msm_len(curve, (n - at).min(group_len - offset), table);
            let points = &bases.points[group];
            subs.push(self.sub_msm(curve, points, table, offset, scalars, range.start + at, len, tag)?);
            at += len;
        }
        combine::<G>(op, &subs)
    }

    /// The curve's formula programs (formulas/), uploaded once.
    fn program(&self, curve: Curve) -> Arc<wgpu::Buffer> {
        self.programs.get(self.dev(), curve)
    }

    /// The largest sub-MSM whose temporaries each fit one binding.
    fn sub_msm_len(&self, curve: Curve, n: usize, table: Option<&Shifted>) -> usize {
        let binding = self.dev().binding_bytes();
        let mut len = n.max(1);
        loop {
            let plan = self.plan(len, table);
            let keys = plan.entries() * 4;
            let partials = plan.tasks0() * curve.xyzz().bytes();
            if (keys <= binding && partials <= binding) || len == 1 {
                return len;
            }
            len = len.div_ceil(2);
        }
    }

    #[allow(clippy::too_many_arguments)] // reason: one sub-MSM's whole description; a struct would only rename it
    fn sub_msm(
        &self,
        curve: Curve,
        bases: &Chunked,
        table: Option<&Shifted>,
        base_offset: usize,
        scalars: &FrBuffer,
        scalar_offset: usize,
        n: usize,
        tag: Tag,
    ) -> Result<WindowSums, WgpuError> {
        let dev = self.dev();
        let mem = &*self.mem;
        let op_name = op_name(curve);
        let plan = self.plan(n, table);
        // The accumulation reads the table's entry w·stride + i in the shared layout.
        let bases = table.map_or(bases, |t| &t.table);
        let xyzz = curve.xyzz();
        let b = self.buckets(curve, &plan)?;
        let win_len = u64::from(plan.sets * plan.segments + 1);
        let wa = mem.scratch("msm windows (a)", win_len * xyzz.bytes())?;
        let wb = mem.scratch("msm windows (b)", win_len * xyzz.bytes())?;
        let unused_bases = mem.placeholder(curve.affine())?;
        let prog = self.program(curve);
        let digits = self.pipelines.kernel(Module::MsmSort, "digits")?;
        let reduce = self.pipelines.kernel(Module::MsmBucket(curve), "reduce")?;
        let sort_params = sort_params(&plan, scalar_offset);

        // Parameters of every dispatch below: digits, scatter, two scans, each level's
        // accumulate and scan, the reduction and its tree levels (PARAM_SLOTS cover them).
        let mut block = ParamBlock::new(mem, PARAM_SLOTS)?;
        let mut op = Op::new(&self.timing, tag, Some(op_name));
        op.encoder.clear_buffer(&b.counts, 0, None);
        op.encoder.clear_buffer(&b.cursor, 0, None);
        // Phase 1: digits and the histogram.
        {
            let g = digits.bind_in(
                dev,
                &mut block,
                &sort_params(u64::from(plan.n)),
                &[
                    Res::Split(&scalars.0),
                    Res::Plain(&b.keys),
                    Res::Plain(&b.counts),
                    Res::Plain(&b.offsets),
                    Res::Plain(&b.sorted),
                ],
            )?;
            let mut pass = op.pass(&format!("{op_name}.digits"));
            digits.dispatch(dev, &mut pass, &g, u64::from(plan.n))?;
        }
        // Phases 2 and 3: sorted by bucket, summed level by level.
        let sums = (bases, base_offset, &scalars.0);
        let pin = self.sort_and_accumulate(curve, &plan, &b, sums, &sort_params, &mut op, &mut block, op_name)?;
        // Phase 4: per-window reduction. `pin` holds the last level's partials.
        let last_tasks = b.last_tasks();
        let mut per_window = plan.segments;
        let (mut win_in, mut win_out) = (&wa, &wb);
        {
            let g = reduce.bind_in(
                dev,
                &mut block,
                &bucket_params(&plan, base_offset, 0, 0, 0, MODE_WINDOWS),
                &[
                    Res::Split(&unused_bases),
                    Res::Plain(&b.sorted),
                    Res::Plain(&b.offsets),
                    Res::Plain(last_tasks),
                    Res::Plain(pin),
                    Res::Plain(&wa),
                    Res::Plain(&prog),
                ],
            )?;
            let mut groups = vec![(reduce.clone(), g, win_len)];
            while per_window > 1 {
                let group = per_window.min(plan.group);
                per_window /= group;
                let outputs = plan.sets * per_window;
                let g = reduce.bind_in(
                    dev,
                    &mut block,
                    &bucket_params(&plan, base_offset, 0, outputs, group, MODE_GROUPS),
                    &[
                        Res::Split(&unused_bases),
                        Res::Plain(&b.sorted),
                        Res::Plain(&b.offsets),
                        Res::Plain(last_tasks),
                        Res::Plain(win_in),
                        Res::Plain(win_out),
                        Res::Plain(&prog),
                    ],
                )?;
                groups.push((reduce.clone(), g, u64::from(outputs)));
                std::mem::swap(&mut win_in, &mut win_out);
            }
            let mut pass = op.pass(&format!("{op_name}.reduce"));
            for (k, g, threads) in &groups {
                k.dispatch(dev, &mut pass, g, *threads)?;
            }
        }
        block.write(dev);
        op.submit()?;
        // win_in: the sets' sums (a window's each, or the one shared sum); wa's last entry: the
        // ones bucket.
        let pb = xyzz.bytes();
        let words = staging::read_back(mem, &[(win_in, 0, u64::from(plan.sets) * pb), (&wa, (win_len - 1) * pb, pb)])?;
        let points = words.chunks_exact(xyzz.words()).map(<[u32]>::to_vec).collect();
        Ok((plan.c, points))
    }
}

/// Σ over sub-MSMs of Σ_w 2^(c·w)·W_w + ones, refused unless it is a point of the curve.
fn combine<G: Group>(op: &'static str, subs: &[WindowSums]) -> Result<Projective<G>, WgpuError> {
    let mut total = Projective::<G>::zero();
    for (c, words) in subs {
        let points: Vec<Projective<G>> = words.iter().map(|w| G::xyzz_to_projective(w)).collect();
        let (ones, windows) = points.split_last().map(|(o, w)| (*o, w)).unwrap_or((Projective::zero(), &[]));
        let mut acc = Projective::<G>::zero();
        for w in windows.iter().rev() {
            for _ in 0..*c {
                acc.double_in_place();
            }
            acc += w;
        }
        total += acc + ones;
    }
    if on_curve(&total) {
        Ok(total)
    } else {
        Err(WgpuError::OffCurve { op })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::{g1, Fq, G1Projective};
    use ark_ec::{CurveGroup, PrimeGroup};
    use ark_ff::Field;
    use g16_backend::limbs::{fq_to_words, G1_XYZZ_WORDS};

    fn planner(tuning: MsmTuning) -> Planner {
        Planner {
            windowed: WindowRule::LeastCost { per_bucket: WINDOW_PER_BUCKET },
            table_per_bucket: TABLE_PER_BUCKET,
            tuning,
        }
    }

    #[test]
    fn the_weights_pick_the_measured_windows() {
        let p = planner(MsmTuning::default());
        assert_eq!(p.windowed(1 << 20).c, 16);
        // Shifted bases: the H200's best of c = 16..20 at 2^20 (G1 and G2) and 2^22 (G1).
        assert_eq!(p.table(1 << 20), Some(Layout::shared(16)));
        assert_eq!(p.table(1 << 22), Some(Layout::shared(20)));
    }

    #[test]
    fn plans_cover_every_bucket_and_level() {
        let p = planner(MsmTuning { tables: Some((0, 40)), ..MsmTuning::default() });
        for n in [1usize, 3, 100, 1 << 10, (1 << 20) + 5] {
            let plan = Plan::new(n, p.windowed(n), 0);
            assert_eq!(plan.nb, plan.sets * plan.half + 1, "the ones bucket last");
            assert_eq!(plan.sets, plan.nwin, "one set a window");
            // The last level leaves every bucket one partial: t0 · T^(levels − 1) ≥ n.
            let reach = plan.levels().iter().map(|&t| u64::from(t)).product::<u64>();
            assert!(reach >= n as u64, "n = {n}: levels {:?}", plan.levels());
            let shared = Plan::new(n, p.table(n).unwrap(), n as u32);
            assert_eq!((shared.sets, shared.nb), (1, shared.half + 1), "n = {n}: one shared set");
        }
    }

    /// Window sums (as XYZZ words: x, y, zz = 1, zzz = 1) combined on the host.
    fn sums(c: u32, points: &[G1Projective]) -> WindowSums {
        let words = points
            .iter()
            .map(|p| {
                let a = p.into_affine();
                let mut w = vec![0u32; G1_XYZZ_WORDS];
                fq_to_words(&a.x, &mut w[..12]);
                fq_to_words(&a.y, &mut w[12..24]);
                fq_to_words(&Fq::ONE, &mut w[24..36]);
                fq_to_words(&Fq::ONE, &mut w[36..48]);
                w
            })
            .collect();
        (c, words)
    }

    #[test]
    fn combine_weights_the_windows_and_refuses_points_off_the_curve() {
        let g = G1Projective::generator();
        // Windows W0 = g, W1 = 2g of 4 bits, ones = 3g: g + 16·2g + 3g = 36g.
        let got = combine::<g1::Config>("msm_g1", &[sums(4, &[g, g + g, g + g + g])]).unwrap();
        assert_eq!(got, g * ark_bls12_381::Fr::from(36u64));
        let mut bad = sums(4, &[g]);
        bad.1[0][0] ^= 1; // x no longer matches y
        assert!(matches!(combine::<g1::Config>("msm_g1", &[bad]), Err(WgpuError::OffCurve { .. })));
    }
}
