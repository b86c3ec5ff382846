//! Bucket sums on the device, shared by the MSM and the batched subgroup check: the
//! temporaries of one sum, the counting sort of its keys by bucket (offsets, scatter, each
//! level's task offsets) and the levels of accumulation (shaders/msm/sort.wgsl, tasks.wgsl,
//! bucket.wgsl). What writes the keys (the MSM's digits, the check's deal) and what reads the
//! sums (the MSM's reduction, the check's read-back) are the callers'.

use std::sync::Arc;

use super::{Msm, Plan, MODE_BASES, MODE_PARTIALS, SCAN_BLOCK};
use crate::buffers::{Chunked, Curve, Scratch};
use crate::compile::{Kernel, Module, ParamBlock, Res};
use crate::device::WgpuDevice;
use crate::error::WgpuError;
use crate::timing::Op;

impl Msm {
    /// The temporaries of one bucket sum, from the device's pool.
    pub(super) fn buckets(&self, curve: Curve, plan: &Plan) -> Result<Buckets<'_>, WgpuError> {
        let mem = &*self.mem;
        let nb = u64::from(plan.nb);
        let levels = plan.levels();
        let mut tasks = Vec::new();
        for _ in &levels {
            tasks.push(mem.scratch("msm tasks", (nb + 1) * 4)?);
        }
        let xyzz = curve.xyzz();
        Ok(Buckets {
            keys: mem.scratch("msm keys", plan.entries() * 4)?,
            sorted: mem.scratch("msm sorted", plan.entries() * 4)?,
            counts: mem.scratch("msm counts", nb * 4)?,
            cursor: mem.scratch("msm cursor", nb * 4)?,
            offsets: mem.scratch("msm offsets", (nb + 1) * 4)?,
            tasks,
            ping: mem.scratch("msm partials (ping)", plan.tasks0() * xyzz.bytes())?,
            pong: mem.scratch("msm partials (pong)", plan.tasks0() * xyzz.bytes())?,
            scan: Scan {
                blocks: self.pipelines.kernel(Module::Scan, "scan_blocks")?,
                tops: self.pipelines.kernel(Module::Scan, "scan_tops")?,
                add: self.pipelines.kernel(Module::Scan, "scan_add")?,
                totals: mem.scratch("msm scan blocks", (u64::from(plan.nb.div_ceil(SCAN_BLOCK)) + 1) * 4)?,
            },
            levels,
        })
    }

    /// Phases 2 and 3 of a bucket sum, on the keys that phase 1 wrote into `b.keys` and
    /// counted into `b.counts`: the keys sorted by bucket, then the buckets summed level by
    /// level. `(bases, base_offset, scalars)`: what the accumulation adds, and the scalars the
    /// sort module binds. Returns the buffer of the last level's partials (bucket k's at
    /// `b.last_tasks()[k]`, where it has one).
    #[allow(clippy::too_many_arguments)] // reason: the phases' inputs and the op they are encoded into
    pub(super) fn sort_and_accumulate<'b>(
        &self,
        curve: Curve,
        plan: &Plan,
        b: &'b Buckets<'_>,
        (bases, base_offset, scalars): (&Chunked, usize, &Chunked),
        sort_params: &dyn Fn(u64) -> Vec<u32>,
        op: &mut Op<'_>,
        block: &mut ParamBlock<'_>,
        op_name: &str,
    ) -> Result<&'b wgpu::Buffer, WgpuError> {
        let dev = self.dev();
        let nb = u64::from(plan.nb);
        let levels = &b.levels;
        let scatter = self.pipelines.kernel(Module::MsmSort, "scatter")?;
        // Two kernels per curve, each in two modes (bucket.wgsl says why).
        let accumulate = self.pipelines.kernel(Module::MsmBucket(curve), "accumulate")?;
        let unused_bases = self.mem.placeholder(curve.affine())?;
        let prog = self.program(curve);
        // Phase 2: offsets, scatter into bucket order, level-0 task offsets.
        {
            let off_steps = scan_steps(dev, block, &b.scan, &b.counts, &b.offsets, plan.nb, 0, 1)?;
            let g_scatter = scatter.bind_in(
                dev,
                block,
                &sort_params(plan.entries()),
                &[
                    Res::Split(scalars),
                    Res::Plain(&b.keys),
                    Res::Plain(&b.cursor),
                    Res::Plain(&b.offsets),
                    Res::Plain(&b.sorted),
                ],
            )?;
            let task_steps = scan_steps(dev, block, &b.scan, &b.offsets, &b.tasks[0], plan.nb, 1, levels[0])?;
            let mut pass = op.pass(&format!("{op_name}.sort"));
            for (k, g, threads) in &off_steps {
                k.dispatch(dev, &mut pass, g, *threads)?;
            }
            scatter.dispatch(dev, &mut pass, &g_scatter, plan.entries())?;
            for (k, g, threads) in &task_steps {
                k.dispatch(dev, &mut pass, g, *threads)?;
            }
        }
        // Phase 3: bucket sums, level by level.
        let mut bound = plan.tasks0();
        let (mut pin, mut pout) = (&b.ping, &b.pong);
        let g0 = accumulate.bind_in(
            dev,
            block,
            &bucket_params(plan, base_offset, levels[0], 0, 0, MODE_BASES),
            &[
                Res::Split(bases),
                Res::Plain(&b.sorted),
                Res::Plain(&b.offsets),
                Res::Plain(&b.tasks[0]),
                Res::Plain(&b.pong),
                Res::Plain(&b.ping),
                Res::Plain(&prog),
            ],
        )?;
        let mut groups = vec![(accumulate.clone(), g0, bound)];
        for (level, &t) in levels.iter().enumerate().skip(1) {
            groups.extend(scan_steps(dev, block, &b.scan, &b.tasks[level - 1], &b.tasks[level], plan.nb, 1, t)?);
            bound = bound.div_ceil(u64::from(t)) + nb;
            let g = accumulate.bind_in(
                dev,
                block,
                &bucket_params(plan, base_offset, t, 0, 0, MODE_PARTIALS),
                &[
                    Res::Split(&unused_bases),
                    Res::Plain(&b.sorted),
                    Res::Plain(&b.tasks[level - 1]),
                    Res::Plain(&b.tasks[level]),
                    Res::Plain(pin),
                    Res::Plain(pout),
                    Res::Plain(&prog),
                ],
            )?;
            groups.push((accumulate.clone(), g, bound));
            std::mem::swap(&mut pin, &mut pout);
        }
        let mut pass = op.pass(&format!("{op_name}.accumulate"));
        for (k, g, threads) in &groups {
            k.dispatch(dev, &mut pass, g, *threads)?;
        }
        Ok(pin)
    }
}

/// The sort module's parameters for `count` threads.
pub(super) fn sort_params(plan: &Plan, scalar_offset: usize) -> impl Fn(u64) -> Vec<u32> + '_ {
    move |count| vec![count as u32, scalar_offset as u32, plan.c, plan.nwin, plan.half, plan.nb - 1, plan.stride, 0]
}

/// The bucket module's parameters: task size `t`, and the reduction's `outputs`, `group`.
pub(super) fn bucket_params(plan: &Plan, base_offset: usize, t: u32, outputs: u32, group: u32, mode: u32) -> Vec<u32> {
    vec![t, plan.nb, base_offset as u32, plan.sets, plan.half, plan.segments, plan.nb - 1, outputs, group, mode, 0, 0]
}

/// The temporaries of one bucket sum (`Msm::buckets`): keys and their bucket order, the
/// counting sort's counts, cursor and offsets, each level's task offsets, the partials, and
/// the scan's kernels.
pub(super) struct Buckets<'m> {
    pub(super) keys: Scratch<'m>,
    pub(super) sorted: Scratch<'m>,
    pub(super) counts: Scratch<'m>,
    pub(super) cursor: Scratch<'m>,
    pub(super) offsets: Scratch<'m>,
    tasks: Vec<Scratch<'m>>,
    ping: Scratch<'m>,
    pong: Scratch<'m>,
    scan: Scan<'m>,
    levels: Vec<u32>,
}

impl Buckets<'_> {
    /// The last level's task offsets: bucket k's partial is at entry k where it has one.
    pub(super) fn last_tasks(&self) -> &wgpu::Buffer {
        &self.tasks[self.levels.len() - 1]
    }
}

/// The three kernels of a prefix sum over bucket counts (shaders/util/scan.wgsl), and the
/// block totals they pass between them.
struct Scan<'m> {
    blocks: Arc<Kernel>,
    tops: Arc<Kernel>,
    add: Arc<Kernel>,
    totals: Scratch<'m>,
}

/// The dispatches (kernel, bindings, threads) of dst = the exclusive prefix sum of
/// ⌈count(b)/t⌉ over nb buckets (mode 0: counts in src; mode 1: differences of src).
#[allow(clippy::too_many_arguments)] // reason: the scan's description; a struct would only rename it
fn scan_steps(
    dev: &WgpuDevice,
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
        (scan.blocks.clone(), scan.blocks.bind_in(dev, block, &params, &res)?, blocks * 64),
        (scan.tops.clone(), scan.tops.bind_in(dev, block, &params, &res)?, 64),
        (scan.add.clone(), scan.add.bind_in(dev, block, &params, &res)?, u64::from(nb)),
    ])
}
