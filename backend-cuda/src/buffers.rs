//! What the backend keeps on the device: scalar and base vectors behind the contract's buffer
//! handles, the bases' shifted copies for the MSM, and the MSM's workspace.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Mutex;

use ark_ec::short_weierstrass::SWCurveConfig;
use cudarc::driver::CudaSlice;
use g16_backend::msm_plan::Layout;

use crate::device::{lock, CudaDevice};
use crate::error::CudaError;

/// Fr scalars: 8 words each.
pub(crate) struct FrBuffer {
    pub data: CudaSlice<u32>,
    pub len: usize,
}

impl FrBuffer {
    /// `len` zeros.
    pub fn zeros(dev: &CudaDevice, len: usize) -> Result<FrBuffer, CudaError> {
        Ok(FrBuffer { data: dev.alloc_zeros("scalars", len * g16_backend::limbs::FR_WORDS)?, len })
    }
}

/// Affine bases of curve C (24 words a G1 point, 48 a G2 one), and for vectors the MSM gains
/// from, their shifted multiples.
pub(crate) struct Bases<C: SWCurveConfig> {
    pub data: CudaSlice<u32>,
    pub len: usize,
    pub table: Option<BaseTable>,
    pub _curve: PhantomData<C>,
}

pub(crate) type G1Buffer = Bases<ark_bls12_381::g1::Config>;
pub(crate) type G2Buffer = Bases<ark_bls12_381::g2::Config>;

/// Shifted bases for the MSM's shared layout: `data[w·len + i]` = 2^(c·w)·P_i, affine, for the
/// layout's c and every window w.
pub(crate) struct BaseTable {
    pub data: CudaSlice<u32>,
    pub len: usize,
    pub layout: Layout,
}

/// Device buffers by name, kept between operations and grown on demand, so an MSM allocates
/// nothing once the workspace is warm. Callers hold the operation lock.
pub(crate) struct Workspace {
    buffers: Mutex<HashMap<&'static str, CudaSlice<u32>>>,
}

impl Workspace {
    pub fn new() -> Workspace {
        Workspace { buffers: Mutex::new(HashMap::new()) }
    }

    /// The buffer `name` with room for `words` words (grown if smaller), as a device pointer.
    /// Its contents are whatever the last user left. Valid until the next request for the same
    /// name, or `clear`.
    pub fn get(&self, dev: &CudaDevice, name: &'static str, words: usize) -> Result<u64, CudaError> {
        let mut map = lock(&self.buffers);
        if let Some(buf) = map.get(name).filter(|b| b.len() >= words.max(1)) {
            return Ok(dev.ptr(buf));
        }
        // The old buffer is freed first (ordered on the stream after the work that used it).
        map.remove(name);
        let buf = dev.alloc(name, words)?;
        let p = dev.ptr(&buf);
        map.insert(name, buf);
        Ok(p)
    }

    /// Frees every buffer (after the stream's work that uses them).
    pub fn clear(&self, dev: &CudaDevice) -> Result<(), CudaError> {
        lock(&self.buffers).clear();
        dev.synchronize()
    }
}
