//! What the backend keeps on the device: scalar and base vectors behind the contract's buffer
//! handles, the bases' shifted copies for the MSM, and the MSM's workspace.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use ark_ec::short_weierstrass::SWCurveConfig;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaSlice};
use g16_backend::msm_plan::Layout;

use crate::device::{lock, CudaDevice, Spare};
use crate::error::{during, CudaError};

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
    /// Freed by `drop`: on the background stream where a table's build may still read it.
    pub data: ManuallyDrop<CudaSlice<u32>>,
    pub len: usize,
    /// Registered with the device as a spare: an allocation short of memory may take it back.
    pub table: Option<Arc<TableSlot>>,
    _curve: PhantomData<C>,
}

impl<C: SWCurveConfig> Bases<C> {
    pub fn new(data: CudaSlice<u32>, len: usize, table: Option<Arc<TableSlot>>) -> Bases<C> {
        Bases { data: ManuallyDrop::new(data), len, table, _curve: PhantomData }
    }
}

impl<C: SWCurveConfig> Drop for Bases<C> {
    fn drop(&mut self) {
        // SAFETY: `data` is taken once, here, and not touched again.
        let data = unsafe { ManuallyDrop::take(&mut self.data) };
        match self.table.take().and_then(|slot| slot.take()) {
            Some(table) => table.free_with(data),
            // Owned by the compute stream: freed after the kernels queued there so far. (A
            // table given back was made: nothing on the background stream reads the bases.)
            None => drop(data),
        }
    }
}

/// A vector's shifted bases while the device can spare them: an MSM holds the slot's lock for
/// as long as it reads the table, and an allocation short of memory takes back only tables
/// no MSM holds (`Spare`).
pub(crate) struct TableSlot {
    table: Mutex<Option<BaseTable>>,
}

impl TableSlot {
    pub fn new(table: BaseTable) -> Arc<TableSlot> {
        Arc::new(TableSlot { table: Mutex::new(Some(table)) })
    }

    /// The table, if not given back, held until the guard drops.
    pub fn hold(&self) -> MutexGuard<'_, Option<BaseTable>> {
        lock(&self.table)
    }

    fn take(&self) -> Option<BaseTable> {
        lock(&self.table).take()
    }
}

impl Spare for TableSlot {
    fn give_back(&self) -> bool {
        let mut held = match self.table.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return false, // an MSM reads it now
        };
        // One still being made is read by its kernels, and its bases with it: kept.
        match held.as_ref().map(BaseTable::is_ready) {
            Some(Ok(true)) => {}
            _ => return false,
        }
        held.take().map(BaseTable::give_back).is_some()
    }
}

pub(crate) type G1Buffer = Bases<ark_bls12_381::g1::Config>;
pub(crate) type G2Buffer = Bases<ark_bls12_381::g2::Config>;

/// Shifted bases for the MSM's shared layout: `data[w·len + i]` = 2^(c·w)·P_i, affine, for the
/// layout's c and every window w; made on the background stream (msm/table.rs), for MSMs to
/// use once `built` has completed.
pub(crate) struct BaseTable {
    /// Allocated on the background stream, which owns it.
    pub data: CudaSlice<u32>,
    pub len: usize,
    pub layout: Layout,
    /// Recorded on the background stream after the table's kernels.
    built: CudaEvent,
    /// Set once `built` has been seen complete, so later MSMs ask the driver nothing.
    ready: AtomicBool,
    dev: Arc<CudaDevice>,
}

impl BaseTable {
    pub fn new(dev: Arc<CudaDevice>, data: CudaSlice<u32>, len: usize, layout: Layout, built: CudaEvent) -> BaseTable {
        BaseTable { data, len, layout, built, ready: AtomicBool::new(false), dev }
    }

    /// Whether the table is made, without waiting: an MSM takes it only then, and the windowed
    /// layout before. Its writes are complete and visible to any kernel launched after.
    pub fn is_ready(&self) -> Result<bool, CudaError> {
        if self.ready.load(Ordering::Acquire) {
            return Ok(true);
        }
        let done = self.built.try_is_complete().map_err(during("asking whether shifted bases are made"))?;
        self.ready.store(done, Ordering::Release);
        Ok(done)
    }

    /// Waits on the host until the table is made (benchmarks of the steady state).
    pub fn wait(&self) -> Result<(), CudaError> {
        self.built.synchronize().map_err(during("waiting for shifted bases"))?;
        self.ready.store(true, Ordering::Release);
        Ok(())
    }

    /// Frees the table (made: nothing on the background stream reads it) after every kernel
    /// queued on the compute stream so far, in the background stream's order (it owns the
    /// table); the host waits for the compute stream where that cannot be queued.
    fn give_back(self) {
        let dev = self.dev.clone();
        let ordered = dev
            .stream()
            .record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .and_then(|after| dev.background_stream().wait(&after));
        if ordered.is_err() {
            let _ = dev.synchronize();
        }
        drop(self);
    }

    /// Frees the table and its `bases` with no wait: both on the background stream, after the
    /// build (stream order) and after every kernel queued on the compute stream so far (an
    /// event it waits for), whichever of them reads them last. Ordered frees rather than a
    /// wait for the build: dropping a key mid-build then stalls neither the host nor the
    /// compute stream. Where the ordering cannot be queued, the host waits for both streams.
    fn free_with(self, bases: CudaSlice<u32>) {
        let dev = &*self.dev;
        let background = dev.background_stream();
        let ordered = dev
            .stream()
            .record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .and_then(|after| background.wait(&after));
        if ordered.is_err() {
            let _ = dev.synchronize();
            let _ = dev.synchronize_background();
            return; // both freed as they drop, with nothing left to read them
        }
        let words = bases.len();
        let ptr = bases.leak();
        // SAFETY: `ptr` is the live allocation of `words` words just leaked, owned by nothing
        // else; dropping the new handle frees it on the background stream.
        drop(unsafe { background.upgrade_device_ptr::<u32>(ptr, words) });
        // `self.data` is the background stream's: freed there, after the same wait.
    }
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
