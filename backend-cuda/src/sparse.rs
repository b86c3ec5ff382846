//! Sparse matrices on the device, their products with a vector and the R1CS check (kernels:
//! `kernels/r1cs/`, whose headers say how they map rows to threads).
//!
//! A matrix is held as `g16_backend`'s packed words ([`PackedMatrix`]) in one allocation, uploaded
//! through the staging layer's copy stream like a key's bases and resident from then on. A
//! product is the device span `spmv` (two launches: short rows a thread each, long rows a block
//! each); the check is the span `r1cs_check` (one launch, one word read back).

use std::sync::Arc;

use cudarc::driver::CudaSlice;
use g16_backend::sparse::packed::{PackedLayout, PackedMatrix};
use g16_backend::{BackendResult, SparseMatrix};
use g16_backend::timeline::SpanId;

use crate::buffers::FrBuffer;
use crate::compile::{Arg, Kernel, Kernels};
use crate::device::CudaDevice;
use crate::error::CudaError;
use crate::staging::Staging;
use crate::timing::Timing;

/// Rows of more entries than this are summed by a block (`spmv_long_rows`), shorter ones by a
/// thread: a warp of short rows then waits at most this many entries for its longest row.
pub(crate) const LONG_ROW: u32 = 16;

/// Threads of a long row's block (`SPMV_LONG_THREADS` in spmv.cu).
const LONG_THREADS: u32 = 32;

/// Threads a block of the row-parallel kernels (`spmv_rows`, `r1cs_check`).
const THREADS: u32 = 256;

/// Blocks of one launch at most; the kernels stride over the rest.
const MAX_BLOCKS: u32 = 65_535;

/// The check's answer when every row holds.
const NONE_FAILED: u32 = u32::MAX;

/// A matrix resident on the device: its packed words and where each part starts.
pub(crate) struct DeviceMatrix {
    data: CudaSlice<u32>,
    pub layout: PackedLayout,
}

/// Blocks for `items` items at `per_block` a block (at least one, at most [`MAX_BLOCKS`]).
fn blocks(items: usize, per_block: u32) -> u32 {
    items.div_ceil(per_block as usize).clamp(1, MAX_BLOCKS as usize) as u32
}

/// The sparse layer of one device.
pub(crate) struct Sparse {
    dev: Arc<CudaDevice>,
    kernels: Arc<Kernels>,
    timing: Arc<Timing>,
    staging: Arc<Staging>,
}

impl Sparse {
    pub fn new((dev, kernels, timing, staging): (Arc<CudaDevice>, Arc<Kernels>, Arc<Timing>, Arc<Staging>)) -> Sparse {
        Sparse { dev, kernels, timing, staging }
    }

    /// Packs `m` and copies it to the device on the copy stream, as the device span
    /// `upload_matrix`.
    pub fn upload(&self, m: &SparseMatrix, parent: Option<SpanId>) -> BackendResult<DeviceMatrix> {
        let packed = PackedMatrix::new(m, LONG_ROW)?;
        let copy = |w: &u32, out: &mut [u32]| out[0] = *w;
        let data = self.staging.upload_items("sparse matrix", &packed.words, 1, copy, ("upload_matrix", parent))?;
        Ok(DeviceMatrix { data, layout: packed.layout })
    }

    /// `out = m·z`, rows of `out` past the matrix set to 0. The caller has checked the lengths
    /// (`check_spmv`): z holds every column, out every row.
    pub fn spmv(
        &self,
        m: &DeviceMatrix,
        z: &FrBuffer,
        out: &mut FrBuffer,
        parent: Option<SpanId>,
    ) -> Result<(), CudaError> {
        let dev = &*self.dev;
        let _op = dev.op();
        let l = m.layout;
        let (out_ptr, z_ptr, m_ptr) = (dev.ptr(&out.data), dev.ptr(&z.data), dev.ptr(&m.data));
        self.timing.span("spmv", parent, || {
            if out.len > 0 {
                let args = [l.starts, l.entries, l.rows, l.long_row, out.len as u32].map(Arg::U32);
                let mut all = vec![Arg::Ptr(out_ptr), Arg::Ptr(z_ptr), Arg::Ptr(m_ptr)];
                all.extend(args);
                self.kernels.launch(Kernel::SpmvRows, blocks(out.len, THREADS), THREADS, &all)?;
            }
            if l.long_count > 0 {
                let args = [l.starts, l.entries, l.long_rows, l.long_count].map(Arg::U32);
                let mut all = vec![Arg::Ptr(out_ptr), Arg::Ptr(z_ptr), Arg::Ptr(m_ptr)];
                all.extend(args);
                self.kernels.launch(Kernel::SpmvLongRows, blocks(l.long_count as usize, 1), LONG_THREADS, &all)?;
            }
            Ok(())
        })
    }

    /// The first row r < `rows` with a[r]·b[r] ≠ c[r]. The caller has checked that a, b and c
    /// hold `rows` elements.
    pub fn first_unsatisfied(
        &self,
        (a, b, c): (&FrBuffer, &FrBuffer, &FrBuffer),
        rows: usize,
        parent: Option<SpanId>,
    ) -> Result<Option<usize>, CudaError> {
        let dev = &*self.dev;
        if rows == 0 {
            return Ok(None);
        }
        let _op = dev.op();
        let first = dev.upload_words("the R1CS check's answer", &[NONE_FAILED])?;
        let args = [
            Arg::Ptr(dev.ptr(&a.data)),
            Arg::Ptr(dev.ptr(&b.data)),
            Arg::Ptr(dev.ptr(&c.data)),
            Arg::U32(rows as u32),
            Arg::Ptr(dev.ptr(&first)),
        ];
        let grid = blocks(rows, THREADS);
        self.timing.span("r1cs_check", parent, || self.kernels.launch(Kernel::R1csCheck, grid, THREADS, &args))?;
        let found = self.staging.download_words(dev.ptr(&first), 1)?;
        Ok(found.first().filter(|&&r| r != NONE_FAILED).map(|&r| r as usize))
    }
}

#[cfg(test)]
mod tests;
