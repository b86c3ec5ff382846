//! The batched subgroup check's bucket sums (backend-wgpu/src/subgroup.rs): the deal kernel
//! (shaders/msm/deal.wgsl) writes each point's bucket in every pass as the MSM's keys, the
//! MSM's sort and accumulation sum them, and the last level's partials come back, a bucket's
//! at its task offset.

use super::buckets::sort_params;
use super::{Msm, Plan, GROUP, PARAM_SLOTS, T0};
use crate::buffers::{Chunked, Curve, Elem};
use crate::compile::{Module, ParamBlock, Res};
use crate::error::WgpuError;
use crate::staging;
use crate::timing::{Op, Tag};

/// The span of a batched subgroup check's bucket sums (the CUDA backend's names).
fn subgroup_span(curve: Curve) -> &'static str {
    match curve {
        Curve::G1 => "subgroup_g1",
        Curve::G2 => "subgroup_g2",
    }
}

/// A batched subgroup check's deal, as the deal kernel reads it (`Deal`'s plan and stream).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DealShape {
    pub passes: u32,
    pub bucket_bits: u32,
    /// 64-bit words of the stream a point takes.
    pub words: u32,
}

/// The bytes of `dealt_sums`' largest temporaries over `n` points: its keys (and their sorted
/// copy), and level 0's partials; each must fit one binding.
pub(crate) fn dealt_bytes(curve: Curve, n: usize, deal: DealShape) -> (u64, u64) {
    let plan = Plan::dealt(n, deal);
    (plan.entries() * 4, plan.tasks0() * curve.xyzz().bytes())
}

impl Plan {
    /// A batched subgroup check's buckets over n points: a set of 2^bucket_bits buckets a
    /// pass, each point in one bucket of every pass, none signed; the last bucket (the MSM's
    /// ones bucket) stays empty.
    fn dealt(n: usize, deal: DealShape) -> Plan {
        let buckets = 1u32 << deal.bucket_bits;
        Plan {
            n: n as u32,
            c: deal.bucket_bits,
            nwin: deal.passes,
            half: buckets,
            nb: deal.passes * buckets + 1,
            segments: 1,
            group: GROUP,
            t0: T0,
            sets: deal.passes,
            stride: 0,
        }
    }
}

impl Msm {
    /// The sums of a batched subgroup check's buckets over `points` (the first `n` of them):
    /// `stream` is the deal's keystream for those points (`Deal::keystream`), and pass p's
    /// bucket k is entry p·2^bucket_bits + k of the result, as XYZZ words, or None where no
    /// point fell in it. The deal kernel writes the keys; the MSM's sort and accumulation sum
    /// them.
    pub(crate) fn dealt_sums(
        &self,
        curve: Curve,
        points: &Chunked,
        n: usize,
        stream: &wgpu::Buffer,
        deal: DealShape,
        tag: Tag,
    ) -> Result<Vec<Option<Vec<u32>>>, WgpuError> {
        let dev = self.dev();
        let mem = &*self.mem;
        let span = subgroup_span(curve);
        let plan = Plan::dealt(n, deal);
        let b = self.buckets(curve, &plan)?;
        let unused_scalars = mem.placeholder(Elem::Fr)?;
        let kernel = self.pipelines.kernel(Module::MsmDeal, "deal")?;
        let mut block = ParamBlock::new(mem, PARAM_SLOTS)?;
        let mut op = Op::new(&self.timing, tag, Some(span));
        op.encoder.clear_buffer(&b.counts, 0, None);
        op.encoder.clear_buffer(&b.cursor, 0, None);
        {
            let params = [plan.n, deal.passes, deal.bucket_bits, deal.words, 64 / deal.bucket_bits, 0, 0, 0];
            let g = kernel.bind_in(
                dev,
                &mut block,
                &params,
                &[Res::Plain(stream), Res::Plain(&b.keys), Res::Plain(&b.counts)],
            )?;
            let mut pass = op.pass(&format!("{span}.deal"));
            kernel.dispatch(dev, &mut pass, &g, u64::from(plan.n))?;
        }
        let sort_params = sort_params(&plan, 0);
        let sums = (points, 0, &*unused_scalars);
        let pin = self.sort_and_accumulate(curve, &plan, &b, sums, &sort_params, &mut op, &mut block, span)?;
        block.write(dev);
        op.submit()?;
        // After the last level a bucket has at most one partial, at its task offset: the
        // partials of the buckets in order, the empty ones taking none.
        let buckets = u64::from(plan.nb - 1);
        let pb = curve.xyzz().bytes();
        let words = staging::read_back(mem, &[(b.last_tasks(), 0, (buckets + 1) * 4), (pin, 0, buckets * pb)])?;
        let (tasks, partials) = words.split_at(buckets as usize + 1);
        let w = curve.xyzz().words();
        Ok(tasks
            .windows(2)
            .map(|t| (t[1] > t[0]).then(|| partials[t[0] as usize * w..(t[0] as usize + 1) * w].to_vec()))
            .collect())
    }
}
