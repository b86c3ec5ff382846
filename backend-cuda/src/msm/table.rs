//! Shifted bases (`kernels/msm/table.cu`), made for a vector that the planner gives them, on
//! the device's background stream: the upload returns without them (or, with
//! [`TableBuild::Blocking`], once they are made), and MSMs take the windowed layout until they
//! are (docs/perf/cuda.md: shifted bases).
//!
//! Memory: the table and its scratch are allocated when the upload is queued, and only where
//! they take at most half the free memory; where a shared table does not, a grouped one of
//! `CudaOptions::table_shifts` shifts may (`fitting_layout`). The scratch is freed in the
//! background stream's order, after the kernels; the table and the bases go with `Bases`'s
//! drop (buffers.rs). The table is a spare (device.rs): an allocation that finds too little
//! free takes it back, once made and while no MSM reads it, and the vector's MSMs are windowed
//! from then on.

use std::sync::Arc;

use ark_ec::short_weierstrass::SWCurveConfig;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaSlice};
use g16_backend::msm_plan::Layout;

use super::{Curve, Msm};
use crate::buffers::BaseTable;
use crate::compile::{Arg, Kernel};
use crate::device::CudaDevice;
use crate::error::{during, CudaError};
use crate::options::TableBuild;

/// Points per launch of the shifted-bases kernel (its scratch holds W−1 multiples of each).
const SHIFT_CHUNK: usize = 1 << 18;

/// Words of one multiple in the kernel's scratch: a Jacobian point (X, Y, Z).
const MULTIPLE_FIELDS: usize = 3;

/// The table's buffers, allocated before anything is queued.
struct Buffers {
    table: CudaSlice<u32>,
    multiples: CudaSlice<u32>,
    products: CudaSlice<u32>,
}

impl Msm {
    /// The shifted bases of `len` points at `bases` (see `kernels/msm/table.cu`), queued on
    /// the background stream after `uploaded` (recorded after the bases' copies), where the
    /// policy and the planner give the vector a table and device memory holds it with room to
    /// spare; None otherwise. The caller holds the operation lock.
    ///
    /// Should queuing fail part-way, the host waits for the background stream before the error
    /// returns, so the caller may free the bases.
    pub(super) fn shifted_bases<C: SWCurveConfig>(
        &self,
        curve: &Curve<C>,
        (bases, len): (u64, usize),
        uploaded: &CudaEvent,
    ) -> Result<Option<BaseTable>, CudaError> {
        if self.table_build == TableBuild::Off {
            return Ok(None);
        }
        let Some(layout) = super::table_layout(&self.planner, curve.kernels, len, self.table_bounds) else {
            return Ok(None);
        };
        // At most half the free memory: the MSMs and the prover's vectors need the rest.
        let half = self.dev.available_bytes()? / 2;
        let words = (curve.affine_words, curve.field_words);
        let fits = |l: Layout| table_bytes(words, len, l) <= half;
        let Some(layout) = super::fitting_layout(&self.planner, len, (layout, self.table_bounds.shifts), fits) else {
            return Ok(None);
        };
        let Some(buffers) = self.table_buffers(curve, len, layout)? else { return Ok(None) };
        let built = self.queue_shift(curve, (bases, len), layout, uploaded, buffers);
        let table = match built {
            Ok((data, built)) => BaseTable::new(self.dev.clone(), data, len, layout, built),
            Err(e) => {
                let _ = self.dev.synchronize_background();
                return Err(e);
            }
        };
        if self.table_build == TableBuild::Blocking {
            table.wait()?;
        }
        Ok(Some(table))
    }

    /// The table and its scratch, on the background stream; None where the allocation fails:
    /// the tables are an optimisation, and memory that runs short skips them, never the upload.
    fn table_buffers<C: SWCurveConfig>(
        &self,
        curve: &Curve<C>,
        len: usize,
        layout: Layout,
    ) -> Result<Option<Buffers>, CudaError> {
        let dev = &*self.dev;
        let (table_words, multiple_words, product_words) =
            table_words((curve.affine_words, curve.field_words), len, layout);
        let background = dev.background_stream();
        let alloc = |what, words| match dev.alloc_spare_on(background, what, words) {
            Ok(buf) => Ok(Some(buf)),
            Err(CudaError::OutOfMemory { .. }) => Ok(None),
            Err(e) => Err(e),
        };
        let Some(table) = alloc("MSM shifted bases", table_words)? else { return Ok(None) };
        let Some(multiples) = alloc("MSM shifted-bases scratch", multiple_words)? else { return Ok(None) };
        let Some(products) = alloc("MSM shifted-bases products", product_words)? else { return Ok(None) };
        Ok(Some(Buffers { table, multiples, products }))
    }

    /// Queues the kernels on the background stream after `uploaded`, as the device span
    /// `<curve>.shift_bases` (its length there includes the time the compute stream's blocks
    /// went first), and records the event that says the table is made. Returns the table.
    fn queue_shift<C: SWCurveConfig>(
        &self,
        curve: &Curve<C>,
        (bases, len): (u64, usize),
        layout: Layout,
        uploaded: &CudaEvent,
        buffers: Buffers,
    ) -> Result<(CudaSlice<u32>, CudaEvent), CudaError> {
        let dev: &Arc<CudaDevice> = &self.dev;
        let background = dev.background_stream();
        background.wait(uploaded).map_err(during("ordering shifted bases after their upload"))?;
        let chunk = len.min(SHIFT_CHUNK);
        let (table_p, multiples_p, products_p) =
            (dev.ptr(&buffers.table), dev.ptr(&buffers.multiples), dev.ptr(&buffers.products));
        self.timing.span_on(background, &format!("{}.shift_bases", curve.span), None, || {
            for first in (0..len).step_by(chunk) {
                let count = chunk.min(len - first) as u32;
                self.kernels.launch_on(
                    background,
                    Kernel::ShiftBases(curve.kernels),
                    count.div_ceil(128),
                    128,
                    &[
                        Arg::Ptr(bases),
                        Arg::U32(len as u32),
                        Arg::U32(layout.c),
                        Arg::U32(layout.shifts),
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
        let built = background
            .record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .map_err(during("recording the end of shifted bases"))?;
        // The scratch is freed here, in the background stream's order: after the kernels.
        let Buffers { table, .. } = buffers;
        Ok((table, built))
    }
}

/// Words of the table of `len` points in `layout`, and of its kernel's two scratch buffers
/// (the multiples of a chunk of points, and their products), for points of `affine` words
/// over a field of `field` words.
fn table_words((affine, field): (usize, usize), len: usize, layout: Layout) -> (usize, usize, usize) {
    let shifted = layout.shifts as usize - 1;
    let chunk = len.min(SHIFT_CHUNK);
    (layout.shifts as usize * len * affine, shifted * chunk * MULTIPLE_FIELDS * field, shifted * chunk * field)
}

/// Bytes of the table and its scratch (`table_words`).
pub(super) fn table_bytes(words: (usize, usize), len: usize, layout: Layout) -> u64 {
    let (t, m, p) = table_words(words, len, layout);
    ((t + m + p) * 4) as u64
}
