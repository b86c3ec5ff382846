//! MSM over resident bases, in the family of the CUDA backend (shaders/msm_sort.wgsl,
//! shaders/msm_bucket.wgsl): signed window digits, bucket keys sorted on the device by a
//! counting sort, oversized buckets split into tasks over several levels, per-window
//! running-sum reduction on the device, the 0/1 split. The host only combines the window
//! sums (nwin points, c doublings between them).
//!
//! An MSM too large for one set of temporaries (each temporary array must fit one binding)
//! is cut into sub-MSMs over consecutive stretches of bases, whose window sums add up. The
//! temporaries come from the device's pool (scratch.rs), so a run of MSMs allocates them once.

use std::ops::Range;
use std::sync::Arc;

use ark_bls12_381::{G1Affine, G1Projective, G2Affine, G2Projective};
use ark_ec::PrimeGroup;

use crate::device::{Chunked, Kernel, ParamBlock, Res, WgpuDevice};
use crate::ntt::FrBuffer;
use crate::scratch::Scratch;
use crate::shader::{Curve, Elem, Module};
use crate::timing::Op;
use crate::WgpuError;
use g16_core::backend::limbs::{g1_to_words, g1_xyzz_to_projective, g2_to_words, g2_xyzz_to_projective, to_words};

/// G1 bases on the device (affine, resident), with their shifted bases where made.
pub struct G1Buffer {
    pub(crate) bases: Chunked,
    pub(crate) shifted: Option<ShiftedBases>,
}
/// G2 bases on the device (affine, resident), with their shifted bases where made.
pub struct G2Buffer {
    pub(crate) bases: Chunked,
    pub(crate) shifted: Option<ShiftedBases>,
}

impl G1Buffer {
    pub fn len(&self) -> usize {
        self.bases.len
    }
    pub fn is_empty(&self) -> bool {
        self.bases.len == 0
    }
    /// The window width of the shifted bases made at upload, if any (see [`ShiftedBases`]).
    pub fn shifted_window(&self) -> Option<u32> {
        self.shifted.as_ref().map(|t| t.c)
    }
}

impl G2Buffer {
    pub fn len(&self) -> usize {
        self.bases.len
    }
    pub fn is_empty(&self) -> bool {
        self.bases.len == 0
    }
    /// The window width of the shifted bases made at upload, if any (see [`ShiftedBases`]).
    pub fn shifted_window(&self) -> Option<u32> {
        self.shifted.as_ref().map(|t| t.c)
    }
}

/// Precomputed shifted bases (shaders/msm_table.wgsl): `data[w·len + i]` = 2^(c·w)·P_i,
/// affine, for every window w. An MSM over them sums all windows into one set of 2^(c−1)
/// buckets (the shared layout): one set of buckets to fill, scan and reduce instead of one a
/// window, which can also buy fewer windows (2^22 points: c = 20, 13 windows against 15 of
/// 18 bits). They cost `windows` times the bases' memory and, once per upload, c·(windows − 1)
/// doublings and one inversion a point.
pub(crate) struct ShiftedBases {
    data: Chunked,
    c: u32,
    windows: u32,
}

impl ShiftedBases {
    /// Points a window: the base vector's length.
    fn stride(&self) -> usize {
        self.data.len / self.windows as usize
    }
}

/// One sub-MSM's result: its window bits, and its window sums then the ones sum, as XYZZ words.
type WindowSums = (u32, Vec<Vec<u32>>);

/// Bases per task at level 0, and partials per task at later levels.
///
/// Why 16 bases: the 64 threads of a workgroup run in lockstep (NVIDIA's warps of 32), so a
/// warp takes as long as its longest task. With a window size whose buckets hold 32 entries
/// on average (c = 16 at 2^20, 18 at 2^22), tasks of up to 32 left the lanes ~31 % idle (a
/// bucket of 40 entries is tasks of 32 and 8; a simulation of such counts: 1.45 lane-slots
/// per addition); tasks of up to 16 cost 1.23, at the price of twice the partials to merge
/// at level 1 (~0.09 of the work, against 0.04): about 12 % fewer lane-slots in all.
const T0: u32 = 16;
const T: u32 = 16;
/// Buckets per reduction segment (one thread each), and inputs per `sum_groups` output.
///
/// The reduction is bound by its longest chain of dependent additions, not by its work
/// (nwin·2^c additions, a few thousand threads): a segment thread does 2·SEGMENT additions
/// plus ~20 for its offset, then each `sum_groups` level GROUP − 1 more. Groups of 2 make
/// the segment sums a binary tree (log2(segments) levels of one addition) where groups of
/// 32 took two levels of 31 serial additions each. On the H200 (session 4, 2^20): groups
/// of 2 against 32, reduce 3.12 against 4.62 ms (G1); segments of 16 against 32, 2.92
/// against 3.12 ms (G1) and 10.19 against 11.31 ms (G2); 64: 4.91 ms (G1).
const SEGMENT: u32 = 16;
const GROUP: u32 = 2;
/// The modes of msm_bucket.wgsl's two kernels: `accumulate` over bases or over partials,
/// `reduce` over windows or over groups.
const MODE_BASES: u32 = 0;
const MODE_PARTIALS: u32 = 1;
const MODE_WINDOWS: u32 = 0;
const MODE_GROUPS: u32 = 1;
/// Parameter slots of one sub-MSM's dispatches (device.rs's ParamBlock): 9 for digits, sorting
/// and the first accumulate, 4 a level (at most 9 levels: 2^32 entries), 1 + 20 for the
/// reduction and its tree (segments of at least 2 buckets: at most 2^19 per window).
const PARAM_SLOTS: u64 = 128;
/// Fr scalars have 255 bits.
const SCALAR_BITS: u32 = 255;

/// Windows of c bits for a 255-bit scalar with signed digits: they carry into one more
/// window only when the top window is full.
fn windows(c: u32) -> u32 {
    SCALAR_BITS.div_ceil(c) + u32::from(SCALAR_BITS.is_multiple_of(c))
}

/// The window size with the fewest point additions for n scalars: n·nwin mixed additions into
/// buckets, and about 3 per bucket (nwin·2^(c−1) of them) to merge partials and reduce the
/// windows (two full additions, each ~1.2 mixed ones). Ties go to the smaller window. For
/// 2^20 scalars: c = 16 (16 windows, like c = 17, but half the buckets).
fn best_window(n: u64) -> u32 {
    let cost = |c: u32| u64::from(windows(c)) * (n + 3 * (1u64 << (c - 1)));
    (4..=20).min_by_key(|&c| (cost(c), c)).unwrap_or(16)
}

/// Window widths of shifted bases (at most 2^19 buckets, as the windowed layout).
const SHARED_WINDOWS: std::ops::RangeInclusive<u32> = 8..=20;
/// Points per launch of the shifted-bases kernel (fewer where their multiples would not fit
/// one binding).
const SHIFT_CHUNK: u64 = 1 << 16;

/// What a bucket costs the shared layout, in mixed additions: fitted to the H200's times
/// over c = 16..20 (session 6, NOTES.md): each bucket is ~13 additions' time (the task levels'
/// scans and searches run over every bucket, the reduction adds ~2 and a share of its chains),
/// where counting the additions alone (~3) picked c = 20 at 2^20, 17 % slower than c = 16 for
/// G2 and 22 % for G1.
const SHARED_COST_PER_BUCKET: u64 = 13;

/// The window width and count of shifted bases for `len` points: the least work by the
/// measured weights (len·windows additions, SHARED_COST_PER_BUCKET a bucket of the one set
/// of 2^(c−1)). 2^20 points: c = 16 (16 windows, the windowed layout's count, but one set of
/// buckets instead of 16); 2^22: c = 20 (13 windows).
fn shared_window(len: u64) -> (u32, u32) {
    let cost = |c: u32| len * u64::from(windows(c)) + SHARED_COST_PER_BUCKET * (1u64 << (c - 1));
    let c = SHARED_WINDOWS.min_by_key(|&c| (cost(c), c)).unwrap_or(16);
    (c, windows(c))
}

/// `G16_WGPU_MSM_TABLE_WINDOW=c` (8..=20) forces the shifted bases' window size, read when
/// bases are uploaded (for tuning runs).
fn table_window_override() -> Option<u32> {
    std::env::var("G16_WGPU_MSM_TABLE_WINDOW").ok()?.parse().ok().filter(|c| SHARED_WINDOWS.contains(c))
}

/// `G16_WGPU_MSM_WINDOW=c` (4..=20) forces the window size (for tuning runs).
fn window_override() -> Option<u32> {
    std::env::var("G16_WGPU_MSM_WINDOW").ok()?.parse().ok().filter(|c| (4..=20).contains(c))
}

/// `G16_WGPU_MSM_SEGMENT=s` and `G16_WGPU_MSM_GROUP=g` (powers of two, 2..=1024) override
/// SEGMENT and GROUP (for tuning runs).
fn reduce_shape() -> (u32, u32) {
    let var = |name: &str, default: u32| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|v: &u32| v.is_power_of_two() && (2..=1024).contains(v))
            .unwrap_or(default)
    };
    (var("G16_WGPU_MSM_SEGMENT", SEGMENT), var("G16_WGPU_MSM_GROUP", GROUP))
}

/// `G16_WGPU_MSM_TASK=t` (2..=256) overrides T0 (for tuning runs).
fn task_override() -> Option<u32> {
    std::env::var("G16_WGPU_MSM_TASK").ok()?.parse().ok().filter(|t| (2..=256).contains(t))
}

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
    /// Segment results per `sum_groups` output.
    group: u32,
    /// Bases per task at level 0.
    t0: u32,
    /// Bucket sets: one a window, or one in all over shifted bases (the shared layout).
    sets: u32,
    /// The shared layout's table stride (its points a window); 0 in the windowed layout.
    stride: u32,
}

impl Plan {
    /// The windowed layout: a set of buckets per window, c by counted additions.
    fn new(n: usize) -> Plan {
        let c = window_override().unwrap_or_else(|| best_window(n as u64));
        Plan::layout(n, c, windows(c), windows(c), 0)
    }

    /// The shared layout over `table`: its c and windows, one set of buckets.
    fn shared(n: usize, table: &ShiftedBases) -> Plan {
        Plan::layout(n, table.c, table.windows, 1, table.stride() as u32)
    }

    /// The layout for n scalars over `bases`: shared where they have shifted bases.
    fn for_bases(n: usize, table: Option<&ShiftedBases>) -> Plan {
        match table {
            Some(t) => Plan::shared(n, t),
            None => Plan::new(n),
        }
    }

    fn layout(n: usize, c: u32, nwin: u32, sets: u32, stride: u32) -> Plan {
        let half = 1u32 << (c - 1);
        let (segment, group) = reduce_shape();
        Plan {
            n: n as u32,
            c,
            nwin,
            half,
            nb: sets * half + 1,
            segments: (half / segment).max(1),
            group,
            t0: task_override().unwrap_or(T0),
            sets,
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

impl WgpuDevice {
    /// G1 bases to the device, and their shifted bases where the length gains from them
    /// (`Options::msm_tables`).
    pub fn upload_g1(&self, host: &[G1Affine]) -> Result<G1Buffer, WgpuError> {
        let bases = self.chunked("G1 bases", Elem::G1Affine, host.len())?;
        self.write_chunked(&bases, &to_words(host, Elem::G1Affine.words(), g1_to_words))?;
        self.check_errors("uploading G1 bases")?;
        let shifted = self.shifted_bases(Curve::G1, &bases)?;
        Ok(G1Buffer { bases, shifted })
    }

    /// G2 bases to the device, and their shifted bases where the length gains from them.
    pub fn upload_g2(&self, host: &[G2Affine]) -> Result<G2Buffer, WgpuError> {
        let bases = self.chunked("G2 bases", Elem::G2Affine, host.len())?;
        self.write_chunked(&bases, &to_words(host, Elem::G2Affine.words(), g2_to_words))?;
        self.check_errors("uploading G2 bases")?;
        let shifted = self.shifted_bases(Curve::G2, &bases)?;
        Ok(G2Buffer { bases, shifted })
    }

    /// The shifted bases of `bases` (msm_table.wgsl), when its length is in the range that
    /// gets them and the table fits the split bindings and device memory; None otherwise.
    /// Returns once the table is built.
    fn shifted_bases(&self, curve: Curve, bases: &Chunked) -> Result<Option<ShiftedBases>, WgpuError> {
        let len = bases.len;
        let Some((min_log, max_log)) = self.msm_tables else { return Ok(None) };
        if len < 1usize << min_log.min(40) || len >= 1usize << max_log.min(40) {
            return Ok(None);
        }
        let (c, windows) = match table_window_override() {
            Some(c) => (c, self::windows(c)),
            None => shared_window(len as u64),
        };
        let entries = len as u64 * u64::from(windows);
        if entries >= 1 << 31 || entries > self.max_elements(curve.affine()) {
            return Ok(None);
        }
        // The multiples of one launch's points must fit one binding.
        let per_point = u64::from(windows - 1).max(1) * curve.xyzz().bytes();
        let chunk = (self.binding_bytes / per_point).min(SHIFT_CHUNK).min(len as u64) as usize;
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
        let Some(data) = or_skip(self.chunked("MSM shifted bases", curve.affine(), entries as usize))? else {
            return Ok(None);
        };
        let Some(multiples) = or_skip(self.plain("MSM shifted-bases multiples", chunk as u64 * per_point))? else {
            return Ok(None);
        };
        let kernel = self.kernel(Module::MsmTable(curve), "shift_bases")?;
        let prog = self.program(curve);
        let span = format!("msm_{}.shift_bases", curve.prefix());
        for first in (0..len).step_by(chunk) {
            let count = chunk.min(len - first);
            let mut block = self.param_block(1)?;
            let params = [len as u32, c, windows, first as u32, count as u32, 0, 0, 0];
            let group = self.bind_in(
                &mut block,
                &kernel,
                &params,
                &[Res::Split(bases), Res::Split(&data), Res::Plain(&multiples), Res::Plain(&prog)],
            )?;
            let mut op = Op::new(self, None, Some(&span));
            {
                let mut pass = op.pass(&span);
                self.dispatch(&mut pass, &kernel, &group, count as u64)?;
            }
            self.write_params(&block);
            op.submit()?;
        }
        self.wait()?;
        self.check_errors("building MSM shifted bases")?;
        Ok(Some(ShiftedBases { data, c, windows }))
    }

    /// `Σ scalars[range][i]·bases[i]`.
    pub fn msm_g1(
        &self,
        bases: &G1Buffer,
        scalars: &FrBuffer,
        range: Range<usize>,
        tag: Option<u64>,
    ) -> Result<G1Projective, WgpuError> {
        let windows = self.msm(Curve::G1, &bases.bases, bases.shifted.as_ref(), scalars, range, tag)?;
        Ok(combine(windows.iter().map(|(c, w)| (*c, w.iter().map(|p| g1_xyzz_to_projective(p)).collect()))))
    }

    /// `Σ scalars[range][i]·bases[i]` in G2.
    pub fn msm_g2(
        &self,
        bases: &G2Buffer,
        scalars: &FrBuffer,
        range: Range<usize>,
        tag: Option<u64>,
    ) -> Result<G2Projective, WgpuError> {
        let windows = self.msm(Curve::G2, &bases.bases, bases.shifted.as_ref(), scalars, range, tag)?;
        Ok(combine(windows.iter().map(|(c, w)| (*c, w.iter().map(|p| g2_xyzz_to_projective(p)).collect()))))
    }

    /// The curve's formula programs (formulas.rs), uploaded once.
    fn program(&self, curve: Curve) -> std::sync::Arc<wgpu::Buffer> {
        let mut programs = crate::device::lock(&self.programs);
        programs
            .entry(curve)
            .or_insert_with(|| {
                let words = crate::formulas::programs(curve, self.formulas.fq2_lazy()).words;
                std::sync::Arc::new(wgpu::util::DeviceExt::create_buffer_init(
                    &self.device,
                    &wgpu::util::BufferInitDescriptor {
                        label: Some("curve programs"),
                        contents: bytemuck::cast_slice(&words),
                        usage: wgpu::BufferUsages::STORAGE,
                    },
                ))
            })
            .clone()
    }

    /// The largest sub-MSM whose temporaries each fit one binding.
    fn sub_msm_len(&self, curve: Curve, n: usize, table: Option<&ShiftedBases>) -> usize {
        let mut len = n.max(1);
        loop {
            let plan = Plan::for_bases(len, table);
            let keys = plan.entries() * 4;
            let partials = plan.tasks0() * curve.xyzz().bytes();
            if (keys <= self.binding_bytes && partials <= self.binding_bytes) || len == 1 {
                return len;
            }
            len = len.div_ceil(2);
        }
    }

    /// Per sub-MSM: (window bits, [window sums..., ones sum]) as XYZZ words.
    fn msm(
        &self,
        curve: Curve,
        bases: &Chunked,
        table: Option<&ShiftedBases>,
        scalars: &FrBuffer,
        range: Range<usize>,
        tag: Option<u64>,
    ) -> Result<Vec<WindowSums>, WgpuError> {
        let op = format!("msm_{}", curve.prefix());
        if range.start > range.end || range.end > scalars.len() {
            return Err(WgpuError::OutOfRange { op, start: range.start, end: range.end, len: scalars.len() });
        }
        let n = range.len();
        if bases.len < n {
            return Err(WgpuError::LengthMismatch { op, expected: n, got: bases.len });
        }
        let step = self.sub_msm_len(curve, n, table);
        let mut out = Vec::new();
        let mut at = 0;
        while at < n {
            let len = step.min(n - at);
            out.push(self.sub_msm(curve, &op, bases, table, at, scalars, range.start + at, len, tag)?);
            at += len;
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)] // one sub-MSM's whole description; a struct would only rename it
    fn sub_msm(
        &self,
        curve: Curve,
        op_name: &str,
        bases: &Chunked,
        table: Option<&ShiftedBases>,
        base_offset: usize,
        scalars: &FrBuffer,
        scalar_offset: usize,
        n: usize,
        tag: Option<u64>,
    ) -> Result<(u32, Vec<Vec<u32>>), WgpuError> {
        let plan = Plan::for_bases(n, table);
        // The accumulation reads the table's entry w·stride + i in the shared layout.
        let bases = table.map_or(bases, |t| &t.data);
        let xyzz = curve.xyzz();
        let nb = u64::from(plan.nb);
        let keys = self.scratch("msm keys", plan.entries() * 4)?;
        let sorted = self.scratch("msm sorted", plan.entries() * 4)?;
        let counts = self.scratch("msm counts", nb * 4)?;
        let cursor = self.scratch("msm cursor", nb * 4)?;
        let offsets = self.scratch("msm offsets", (nb + 1) * 4)?;
        let levels = plan.levels();
        let mut tasks = Vec::new();
        for _ in &levels {
            tasks.push(self.scratch("msm tasks", (nb + 1) * 4)?);
        }
        let ping = self.scratch("msm partials (ping)", plan.tasks0() * xyzz.bytes())?;
        let pong = self.scratch("msm partials (pong)", plan.tasks0() * xyzz.bytes())?;
        let win_len = u64::from(plan.sets * plan.segments + 1);
        let wa = self.scratch("msm windows (a)", win_len * xyzz.bytes())?;
        let wb = self.scratch("msm windows (b)", win_len * xyzz.bytes())?;
        let dummy_bases = self.dummy(curve.affine())?;
        let prog = self.program(curve);

        let digits = self.kernel(Module::MsmSort, "digits")?;
        let scatter = self.kernel(Module::MsmSort, "scatter")?;
        let scan = Scan {
            blocks: self.kernel(Module::Scan, "scan_blocks")?,
            tops: self.kernel(Module::Scan, "scan_tops")?,
            add: self.kernel(Module::Scan, "scan_add")?,
            totals: self.scratch("msm scan blocks", (u64::from(plan.nb.div_ceil(SCAN_BLOCK)) + 1) * 4)?,
        };
        let bucket = Module::MsmBucket(curve);
        // Two kernels per curve, each in two modes (msm_bucket.wgsl says why).
        let acc_bases = self.kernel(bucket, "accumulate")?;
        let acc_partials = acc_bases.clone();
        let reduce = self.kernel(bucket, "reduce")?;
        let sum_groups = reduce.clone();

        let sort_params = |count: u64| {
            vec![count as u32, scalar_offset as u32, plan.c, plan.nwin, plan.half, plan.nb - 1, plan.stride, 0]
        };
        let bucket_params = |t: u32, outputs: u32, group: u32, mode: u32| {
            vec![
                t,
                plan.nb,
                base_offset as u32,
                plan.sets,
                plan.half,
                plan.segments,
                plan.nb - 1,
                outputs,
                group,
                mode,
                0,
                0,
            ]
        };

        // Parameters of every dispatch below: digits, scatter, two scans, each level's
        // accumulate and scan, the reduction and its tree levels (128 slots cover them).
        let mut block = self.param_block(PARAM_SLOTS)?;
        let mut op = Op::new(self, tag, Some(op_name));
        op.encoder.clear_buffer(&counts, 0, None);
        op.encoder.clear_buffer(&cursor, 0, None);
        // Phase 1: digits and the histogram.
        {
            let g = self.bind_in(
                &mut block,
                &digits,
                &sort_params(u64::from(plan.n)),
                &[
                    Res::Split(&scalars.0),
                    Res::Plain(&keys),
                    Res::Plain(&counts),
                    Res::Plain(&offsets),
                    Res::Plain(&sorted),
                ],
            )?;
            let mut pass = op.pass(&format!("{op_name}.digits"));
            self.dispatch(&mut pass, &digits, &g, u64::from(plan.n))?;
        }
        // Phase 2: offsets, scatter into bucket order, level-0 task offsets.
        {
            let off_steps = self.scan_steps(&mut block, &scan, &counts, &offsets, plan.nb, 0, 1)?;
            let g_scatter = self.bind_in(
                &mut block,
                &scatter,
                &sort_params(plan.entries()),
                &[
                    Res::Split(&scalars.0),
                    Res::Plain(&keys),
                    Res::Plain(&cursor),
                    Res::Plain(&offsets),
                    Res::Plain(&sorted),
                ],
            )?;
            let task_steps = self.scan_steps(&mut block, &scan, &offsets, &tasks[0], plan.nb, 1, levels[0])?;
            let mut pass = op.pass(&format!("{op_name}.sort"));
            for (k, g, threads) in &off_steps {
                self.dispatch(&mut pass, k, g, *threads)?;
            }
            self.dispatch(&mut pass, &scatter, &g_scatter, plan.entries())?;
            for (k, g, threads) in &task_steps {
                self.dispatch(&mut pass, k, g, *threads)?;
            }
        }
        // Phase 3: bucket sums, level by level.
        let mut bound = plan.tasks0();
        let (mut pin, mut pout) = (&ping, &pong);
        {
            let g0 = self.bind_in(
                &mut block,
                &acc_bases,
                &bucket_params(levels[0], 0, 0, MODE_BASES),
                &[
                    Res::Split(bases),
                    Res::Plain(&sorted),
                    Res::Plain(&offsets),
                    Res::Plain(&tasks[0]),
                    Res::Plain(&pong),
                    Res::Plain(&ping),
                    Res::Plain(&prog),
                ],
            )?;
            let mut groups = vec![(acc_bases.clone(), g0, bound)];
            for level in 1..levels.len() {
                let t = levels[level];
                groups.extend(self.scan_steps(&mut block, &scan, &tasks[level - 1], &tasks[level], plan.nb, 1, t)?);
                bound = bound.div_ceil(u64::from(t)) + nb;
                let g = self.bind_in(
                    &mut block,
                    &acc_partials,
                    &bucket_params(t, 0, 0, MODE_PARTIALS),
                    &[
                        Res::Split(&dummy_bases),
                        Res::Plain(&sorted),
                        Res::Plain(&tasks[level - 1]),
                        Res::Plain(&tasks[level]),
                        Res::Plain(pin),
                        Res::Plain(pout),
                        Res::Plain(&prog),
                    ],
                )?;
                groups.push((acc_partials.clone(), g, bound));
                std::mem::swap(&mut pin, &mut pout);
            }
            let mut pass = op.pass(&format!("{op_name}.accumulate"));
            for (k, g, threads) in &groups {
                self.dispatch(&mut pass, k, g, *threads)?;
            }
        }
        // Phase 4: per-window reduction. `pin` holds the last level's partials.
        let last_tasks = &tasks[levels.len() - 1];
        let mut per_window = plan.segments;
        let (mut win_in, mut win_out) = (&wa, &wb);
        {
            let g = self.bind_in(
                &mut block,
                &reduce,
                &bucket_params(0, 0, 0, MODE_WINDOWS),
                &[
                    Res::Split(&dummy_bases),
                    Res::Plain(&sorted),
                    Res::Plain(&offsets),
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
                let g = self.bind_in(
                    &mut block,
                    &sum_groups,
                    &bucket_params(0, outputs, group, MODE_GROUPS),
                    &[
                        Res::Split(&dummy_bases),
                        Res::Plain(&sorted),
                        Res::Plain(&offsets),
                        Res::Plain(last_tasks),
                        Res::Plain(win_in),
                        Res::Plain(win_out),
                        Res::Plain(&prog),
                    ],
                )?;
                groups.push((sum_groups.clone(), g, u64::from(outputs)));
                std::mem::swap(&mut win_in, &mut win_out);
            }
            let mut pass = op.pass(&format!("{op_name}.reduce"));
            for (k, g, threads) in &groups {
                self.dispatch(&mut pass, k, g, *threads)?;
            }
        }
        self.write_params(&block);
        op.submit()?;
        // win_in: the sets' sums (a window's each, or the one shared sum); wa's last entry: the
        // ones bucket.
        let pb = xyzz.bytes();
        let words = self.read_back(&[(win_in, 0, u64::from(plan.sets) * pb), (&wa, (win_len - 1) * pb, pb)])?;
        let points = words.chunks_exact(xyzz.words()).map(<[u32]>::to_vec).collect();
        Ok((plan.c, points))
    }
}

/// Counts per block of `scan_blocks` (shaders/scan.wgsl's BLOCK).
const SCAN_BLOCK: u32 = 512;

/// The three kernels of a prefix sum over bucket counts (shaders/scan.wgsl), and the block
/// totals they pass between them.
struct Scan<'d> {
    blocks: Arc<Kernel>,
    tops: Arc<Kernel>,
    add: Arc<Kernel>,
    totals: Scratch<'d>,
}

impl WgpuDevice {
    /// The dispatches (kernel, bindings, threads) of dst = the exclusive prefix sum of
    /// ⌈count(b)/t⌉ over nb buckets (mode 0: counts in src; mode 1: differences of src).
    #[allow(clippy::too_many_arguments)] // the scan's description; a struct would only rename it
    fn scan_steps(
        &self,
        block: &mut ParamBlock<'_>,
        scan: &Scan<'_>,
        src: &wgpu::Buffer,
        dst: &wgpu::Buffer,
        nb: u32,
        mode: u32,
        t: u32,
    ) -> Result<Vec<(Arc<Kernel>, wgpu::BindGroup, u64)>, WgpuError> {
        let res = [Res::Plain(src), Res::Plain(dst), Res::Plain(&scan.totals)];
        let params = [nb, mode, t, 0];
        let blocks = u64::from(nb.div_ceil(SCAN_BLOCK));
        Ok(vec![
            (scan.blocks.clone(), self.bind_in(block, &scan.blocks, &params, &res)?, blocks * 64),
            (scan.tops.clone(), self.bind_in(block, &scan.tops, &params, &res)?, 64),
            (scan.add.clone(), self.bind_in(block, &scan.add, &params, &res)?, u64::from(nb)),
        ])
    }
}

/// Σ over sub-MSMs of Σ_w 2^(c·w)·W_w + ones.
fn combine<P: PrimeGroup>(subs: impl Iterator<Item = (u32, Vec<P>)>) -> P {
    let mut total = P::zero();
    for (c, points) in subs {
        let (ones, windows) = points.split_last().map(|(o, w)| (*o, w)).unwrap_or((P::zero(), &[]));
        let mut acc = P::zero();
        for w in windows.iter().rev() {
            for _ in 0..c {
                acc.double_in_place();
            }
            acc += w;
        }
        total += acc + ones;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cover_a_signed_255_bit_scalar() {
        // 16 windows of 16 bits hold 255 bits and the top carry; 17 × 15 = 255 needs one more.
        assert_eq!(windows(16), 16);
        assert_eq!(windows(17), 16);
        assert_eq!(windows(15), 18);
        for c in 4..=20 {
            assert!(windows(c) * c > SCALAR_BITS, "c = {c}");
        }
    }

    #[test]
    fn shifted_bases_take_the_measured_windows() {
        // The H200's best of c = 16..20 (session 6): 16 at 2^20 (G1 and G2), 20 at 2^22 (G1).
        assert_eq!(shared_window(1 << 20), (16, 16));
        assert_eq!(shared_window(1 << 22), (20, 13));
        for log in 4..=26 {
            let (c, w) = shared_window(1 << log);
            assert!(SHARED_WINDOWS.contains(&c) && w == windows(c), "2^{log}: c = {c}, {w} windows");
        }
    }

    #[test]
    fn the_window_minimises_the_counted_additions() {
        assert_eq!(best_window(1 << 20), 16);
        for log in [0u32, 4, 10, 16, 22, 26] {
            let n = 1u64 << log;
            let c = best_window(n);
            let cost = |c: u32| u64::from(windows(c)) * (n + 3 * (1u64 << (c - 1)));
            assert!((4..=20).all(|d| cost(c) <= cost(d)), "n = 2^{log}: c = {c}");
        }
    }
}
