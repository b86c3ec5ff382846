//! Fixed-base scalar multiplication (key generation) over a host-built table
//! (g16_backend::fixed_base; kernel: shaders/msm/fixed_base.wgsl).
//!
//! One call: the table of the base's multiples for the call's total count, uploaded once as a
//! split array; then launches of at most [`LAUNCH`] points (fewer where a launch's scalars,
//! points or sums would not fit one binding), each: its scalars written in canonical form, one
//! dispatch, its affine points read back and checked on the curve. Flat positions across the
//! batches are 64-bit on the host; only a launch's own indices are 32-bit on the device.

use std::sync::Arc;

use ark_ec::short_weierstrass::{Affine, Projective};
use ark_ec::AffineRepr;
use rayon::prelude::*;

use g16_backend::fixed_base::{self, FixedBasePlan};
use g16_backend::limbs::FR_WORDS;
use g16_backend::Fr;

use crate::buffers::{Curve, Group, Memory};
use crate::compile::{CurvePrograms, Module, ParamBlock, Pipelines, Res};
use crate::device::WgpuDevice;
use crate::error::WgpuError;
use crate::staging;
use crate::timing::{Op, Tag, Timing};

/// Most points a launch: enough threads for a large GPU, a bounded readback.
const LAUNCH: u64 = 1 << 20;
/// Points a thread: they share one field inversion (~570 products, against ~11 a window for
/// each point's additions), so 16 bring it to a few products a point while keeping 2^16
/// threads in a full launch.
const PER_THREAD: u64 = 16;
/// Additions a thread on a software adapter. llvmpipe (lavapipe) stops a loop after 65535
/// iterations counted over the whole invocation, and every addition's program runs in one
/// interpreter loop (~440 iterations a G2 mixed addition, ~100 in G1): a thread of 16 points
/// of 17 windows stopped before its last point. So there a thread takes 64 windows' worth
/// of points (one point at the narrowest windows, `MIN_WINDOW`), at most.
const SOFTWARE_ADDITIONS: u32 = 64;

pub(crate) struct FixedBase {
    mem: Arc<Memory>,
    pipelines: Arc<Pipelines>,
    timing: Arc<Timing>,
    programs: Arc<CurvePrograms>,
}

impl FixedBase {
    pub(crate) fn new(
        mem: Arc<Memory>,
        pipelines: Arc<Pipelines>,
        timing: Arc<Timing>,
        programs: Arc<CurvePrograms>,
    ) -> FixedBase {
        FixedBase { mem, pipelines, timing, programs }
    }

    fn dev(&self) -> &WgpuDevice {
        self.mem.device()
    }

    /// `s·base` for every scalar of every batch, affine, one vector a batch.
    pub(crate) fn run<G: Group>(
        &self,
        base: Projective<G>,
        batches: &[&[Fr]],
        tag: Tag,
    ) -> Result<Vec<Vec<Affine<G>>>, WgpuError> {
        if let Some(identities) = fixed_base::trivial(&base, batches) {
            return Ok(identities);
        }
        let total = fixed_base::total_len(batches);
        let mut out = fixed_base::batch_outputs(batches);
        let curve = G::CURVE;
        let dev = self.dev();
        let plan = FixedBasePlan::for_count(total);
        let host_table = fixed_base::table(base, plan);
        let table = staging::upload_points::<G>(&self.mem, &host_table)?;
        drop(host_table);
        let (affine, xyzz) = (curve.affine(), curve.xyzz());
        let launch = (dev.binding_bytes() / xyzz.bytes()).min(LAUNCH) as usize;
        let kernel = self.pipelines.kernel(Module::FixedBase(curve), "fixed_base")?;
        let prog = self.programs.get(dev, curve);
        let span = op_name(curve);
        let per_thread = if dev.adapter().device_type == "Cpu" {
            u64::from((SOFTWARE_ADDITIONS / plan.windows).max(1))
        } else {
            PER_THREAD
        };
        for first in (0..total).step_by(launch.max(1)) {
            let count = launch.min(total - first);
            let words = fixed_base::flat_words(batches, first, count);
            let scalars = self.mem.scratch("fixed-base scalars", (count * FR_WORDS * 4) as u64)?;
            let points = self.mem.scratch("fixed-base points", count as u64 * affine.bytes())?;
            let sums = self.mem.scratch("fixed-base sums", count as u64 * xyzz.bytes())?;
            dev.queue().write_buffer(&scalars, 0, bytemuck::cast_slice(&words));
            let threads = (count as u64).div_ceil(per_thread);
            let params = [count as u32, threads as u32, plan.c, plan.windows, plan.per_window() as u32, 0, 0, 0];
            let mut block = ParamBlock::new(&self.mem, 1)?;
            let group = kernel.bind_in(
                dev,
                &mut block,
                &params,
                &[Res::Plain(&scalars), Res::Split(&table), Res::Plain(&points), Res::Plain(&sums), Res::Plain(&prog)],
            )?;
            let mut op = Op::new(&self.timing, tag, Some(span));
            {
                let mut pass = op.pass(span);
                kernel.dispatch(dev, &mut pass, &group, threads)?;
            }
            block.write(dev);
            op.submit()?;
            let got = staging::read_back(&self.mem, &[(&points, 0, count as u64 * affine.bytes())])?;
            let converted: Vec<Affine<G>> = got.par_chunks_exact(affine.words()).map(G::affine_from_words).collect();
            if converted.par_iter().any(|p| !p.is_zero() && !p.is_on_curve()) {
                return Err(WgpuError::OffCurve { op: span });
            }
            fixed_base::fill_batches(&mut out, batches, converted);
        }
        dev.check_errors("fixed-base multiplication")?;
        Ok(out)
    }
}

fn op_name(curve: Curve) -> &'static str {
    match curve {
        Curve::G1 => "fixed_base_g1",
        Curve::G2 => "fixed_base_g2",
    }
}
