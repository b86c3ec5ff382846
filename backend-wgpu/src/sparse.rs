//! Sparse matrices on the device, their products with a vector and the R1CS check (shaders:
//! `shaders/r1cs/`, whose headers say how they map rows to threads).
//!
//! A matrix is held as `g16_backend`'s packed words ([`PackedMatrix`]), one `U32` array split
//! over bindings like any large array, and stays resident. A product is one pass, the device
//! span `spmv` (short rows a thread each, long rows a workgroup each); the check is one pass,
//! `r1cs_check`, of one dispatch a chunk of the vectors, and one word read back.

use std::sync::Arc;

use g16_backend::sparse::packed::{PackedLayout, PackedMatrix};
use g16_backend::SparseMatrix;

use crate::buffers::{Chunked, Elem, FrBuffer, Memory};
use crate::compile::{Module, Pipelines, Res};
use crate::error::WgpuError;
use crate::staging;
use crate::timing::{Op, Tag, Timing};

/// Rows of more entries than this are summed by a workgroup (`long_rows`), shorter ones by a
/// thread: a thread then sums at most this many entries while others of its subgroup wait.
pub(crate) const LONG_ROW: u32 = 16;

/// Threads of a workgroup (`WORKGROUP` in util/dispatch.wgsl): `long_rows` takes one a row.
const WORKGROUP: u64 = 64;

/// The check's answer when every row holds.
const NONE_FAILED: u32 = u32::MAX;

/// A matrix resident on the device: its packed words and where each part starts.
pub(crate) struct DeviceMatrix {
    words: Chunked,
    pub(crate) layout: PackedLayout,
}

/// The sparse layer of one device.
pub(crate) struct Sparse {
    mem: Arc<Memory>,
    pipelines: Arc<Pipelines>,
    timing: Arc<Timing>,
}

impl Sparse {
    pub(crate) fn new(mem: Arc<Memory>, pipelines: Arc<Pipelines>, timing: Arc<Timing>) -> Sparse {
        Sparse { mem, pipelines, timing }
    }

    /// Packs `m` and copies it to the device.
    pub(crate) fn upload(&self, m: &SparseMatrix) -> Result<DeviceMatrix, WgpuError> {
        let packed = PackedMatrix::new(m, LONG_ROW)?;
        let words = staging::upload(&self.mem, "sparse matrix", Elem::U32, &packed.words)?;
        Ok(DeviceMatrix { words, layout: packed.layout })
    }

    /// `out = m·z`, rows of `out` past the matrix set to 0; one device span `spmv`. The caller
    /// has checked the lengths (`check_spmv`): z holds every column, out every row.
    pub(crate) fn spmv(&self, m: &DeviceMatrix, z: &FrBuffer, out: &mut FrBuffer, tag: Tag) -> Result<(), WgpuError> {
        let dev = self.mem.device();
        let l = m.layout;
        let params = [l.starts, l.entries, l.rows, l.long_row, l.long_rows, l.long_count, out.len() as u32, 0];
        let res = [Res::Split(&out.0), Res::Split(&z.0), Res::Split(&m.words)];
        let rows = self.pipelines.kernel(Module::Spmv, "rows")?;
        let long_rows = self.pipelines.kernel(Module::Spmv, "long_rows")?;
        let (rows_group, long_group) = (rows.bind(dev, &params, &res)?, long_rows.bind(dev, &params, &res)?);
        let mut op = Op::new(&self.timing, tag, None);
        {
            let mut pass = op.pass("spmv");
            rows.dispatch(dev, &mut pass, &rows_group, out.len() as u64)?;
            long_rows.dispatch(dev, &mut pass, &long_group, u64::from(l.long_count) * WORKGROUP)?;
        }
        op.submit()
    }

    /// The first row r < `rows` with a[r]·b[r] ≠ c[r]; one device span `r1cs_check`. The
    /// caller has checked that a, b and c hold `rows` elements.
    pub(crate) fn first_unsatisfied(
        &self,
        (a, b, c): (&FrBuffer, &FrBuffer, &FrBuffer),
        rows: usize,
        tag: Tag,
    ) -> Result<Option<usize>, WgpuError> {
        if rows == 0 {
            return Ok(None);
        }
        let (a, b, c) = (&a.0, &b.0, &c.0);
        // Every Fr array of a device has the same chunks, so chunk k of each holds the same rows.
        if a.log != b.log || a.log != c.log {
            return Err(WgpuError::Device("r1cs_check: vectors split at different lengths".into()));
        }
        let per = 1usize << a.log;
        let dev = self.mem.device();
        let first = self.mem.scratch("the R1CS check's answer", 4)?;
        dev.queue().write_buffer(&first, 0, bytemuck::cast_slice(&[NONE_FAILED]));
        let check = self.pipelines.kernel(Module::R1csCheck, "check")?;
        let mut groups = Vec::new();
        for k in 0..rows.div_ceil(per) {
            let (offset, count) = (k * per, per.min(rows - k * per));
            let res =
                [Res::Plain(&a.chunks[k]), Res::Plain(&b.chunks[k]), Res::Plain(&c.chunks[k]), Res::Plain(&first)];
            groups.push((check.bind(dev, &[offset as u32, count as u32, 0, 0], &res)?, count as u64));
        }
        let mut op = Op::new(&self.timing, tag, None);
        {
            let mut pass = op.pass("r1cs_check");
            for (group, count) in &groups {
                check.dispatch(dev, &mut pass, group, *count)?;
            }
        }
        op.submit()?;
        let found = staging::read_back(&self.mem, &[(&first, 0, 4)])?;
        Ok(found.first().filter(|&&r| r != NONE_FAILED).map(|&r| r as usize))
    }
}
