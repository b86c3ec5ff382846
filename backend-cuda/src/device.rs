//! The device: one CUDA context with a compute stream, a copy stream and a background stream,
//! allocation under a
//! memory headroom, copies on the device, and the operation lock. It holds the device's own
//! state only: the kernels (compile), the spans (timing) and the caches of the layers above
//! (staging slots, NTT tables, the MSM's workspace) belong to those layers.
//!
//! Kernels and downloads go onto the compute stream, in order; the host waits only where a
//! result must come back. Operations that use a layer's scratch take the operation lock, so
//! no two of them share it. Uploads copy on the copy stream (`staging.rs`), so one worker's
//! staging runs beside another's kernels. Work no operation waits for (the MSM's shifted
//! bases) goes on the background stream, of the lowest priority: the compute stream's blocks
//! are scheduled first whenever both have work.
//!
//! Memory held for speed alone (the shifted bases) is registered as a [`Spare`]: an allocation
//! that finds too little free takes the spares back and tries once more, so what they hold
//! never costs a key its bases or a proof its vectors.

use std::sync::{Arc, Mutex, MutexGuard, TryLockError, Weak};

use cudarc::driver::{result as cu, sys, CudaContext, CudaSlice, CudaStream, DevicePtr};

use crate::error::{during, CudaError};

/// Whether the CUDA driver library can be loaded (cudarc panics on first use otherwise).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen libcuda under its candidate names; no driver function runs.
    unsafe { sys::is_culib_present() }
}

/// How many CUDA devices the driver sees; `Unavailable` (with the reason) when it cannot run
/// here. Whether kernels can be compiled (NVRTC) is the compile layer's question.
pub fn device_count() -> Result<usize, CudaError> {
    if !driver_present() {
        return Err(CudaError::Unavailable("no CUDA driver (libcuda.so not found)".to_string()));
    }
    match CudaContext::device_count() {
        Ok(n) if n > 0 => Ok(n as usize),
        Ok(_) => Err(CudaError::Unavailable("the CUDA driver found no device".to_string())),
        Err(e) => Err(CudaError::Unavailable(format!("the CUDA driver did not start: {:?}", e.0))),
    }
}

/// What the backend reports about its device.
#[derive(Clone, Debug)]
pub(crate) struct DeviceInfo {
    pub name: String,
    /// `sm_90` on an H200: what the kernels were compiled for.
    pub arch: String,
    pub memory_bytes: u64,
    pub multiprocessors: u32,
    pub driver_version: String,
}

/// Device memory held for speed alone, which an allocation that finds too little free may take
/// back (the MSM's shifted bases: `buffers::TableSlot`).
pub(crate) trait Spare: Send + Sync {
    /// Frees what it holds, in the background stream's order after every kernel queued so far
    /// on the compute stream; false where it holds nothing or is in use now.
    fn give_back(&self) -> bool;
}

/// Memory kept free for the driver and the kernels' own needs.
const HEADROOM_BYTES: u64 = 256 << 20;

pub(crate) struct CudaDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// Where uploads' copies go: beside `stream`, not behind the kernels already queued on it.
    copy_stream: Arc<CudaStream>,
    /// Where work goes that no operation waits for (shifted bases), at the lowest priority.
    background_stream: Arc<CudaStream>,
    info: DeviceInfo,
    op: Mutex<()>,
    spares: Mutex<Vec<Weak<dyn Spare>>>,
}

/// Stops the device's default memory pool from making one stream wait for another to reuse
/// memory: staged buffers are allocated on the copy stream and freed on the compute stream, and
/// with internal dependencies allowed the driver may order the next upload's allocation after
/// the kernels queued before that free — the very wait the copy stream exists to avoid. Without
/// them the pool reuses memory whose free has completed, or takes more.
fn no_cross_stream_pool_waits(ctx: &CudaContext) -> Result<(), CudaError> {
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    let mut allow: i32 = 0;
    // SAFETY: the driver is loaded (the context exists); `pool` and `allow` are valid for
    // both functions, which read or write exactly one value of their type (the attribute is an int).
    unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device())
            .result()
            .map_err(during("reading the memory pool"))?;
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
            (&mut allow as *mut i32).cast(),
        )
        .result()
        .map_err(during("setting the memory pool's reuse policy"))?;
    }
    Ok(())
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means another thread panicked; the data is still consistent enough
    // (worst case a scratch buffer is reallocated).
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl CudaDevice {
    /// Opens device `ordinal`.
    pub fn open(ordinal: usize) -> Result<CudaDevice, CudaError> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(CudaError::Unavailable(format!("no CUDA device {ordinal} ({count} found)")));
        }
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| CudaError::Unavailable(format!("cannot open CUDA device {ordinal}: {:?}", e.0)))?;
        // The backend orders its work itself (streams, events, the operation lock), so cudarc's
        // per-buffer event tracking would only add work.
        // SAFETY: every buffer is used on the compute stream, or on the copy stream with the
        // compute stream made to wait for its copies (staging.rs), or on the background stream
        // made to wait for its inputs and read on the compute stream only once its event has
        // completed (msm/table.rs), so stream order and those waits are the only ordering needed.
        unsafe { ctx.disable_event_tracking() };
        // Lower numbers are higher priorities; a plain stream has the lowest, so the compute
        // stream takes the highest for the background stream's work to yield to it.
        let (lowest, highest) = cu::stream::get_priority_range().map_err(during("reading stream priorities"))?;
        let stream = ctx.new_stream_with_priority(highest).map_err(during("creating a stream"))?;
        let copy_stream = ctx.new_stream().map_err(during("creating the copy stream"))?;
        let background_stream =
            ctx.new_stream_with_priority(lowest).map_err(during("creating the background stream"))?;
        let (major, minor) = ctx.compute_capability().map_err(during("reading the compute capability"))?;
        let arch = format!("sm_{major}{minor}");
        let mut driver = 0;
        // SAFETY: the driver is loaded (the context exists); `driver` is valid for writes.
        let _ = unsafe { sys::cuDriverGetVersion(&mut driver) };
        let info = DeviceInfo {
            name: ctx.name().map_err(during("reading the device name"))?,
            arch,
            memory_bytes: ctx.total_mem().map_err(during("reading the memory size"))? as u64,
            multiprocessors: ctx
                .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .map_err(during("reading the multiprocessor count"))? as u32,
            driver_version: format!("CUDA {}.{}", driver / 1000, (driver % 1000) / 10),
        };
        no_cross_stream_pool_waits(&ctx)?;
        Ok(CudaDevice {
            ctx,
            stream,
            copy_stream,
            background_stream,
            info,
            op: Mutex::new(()),
            spares: Mutex::new(Vec::new()),
        })
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    pub fn ctx(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream every kernel and download runs on.
    pub fn stream(&self) -> &CudaStream {
        &self.stream
    }

    /// The stream uploads copy on.
    pub fn copy_stream(&self) -> &CudaStream {
        &self.copy_stream
    }

    /// The stream of work no operation waits for, at the lowest priority.
    pub fn background_stream(&self) -> &Arc<CudaStream> {
        &self.background_stream
    }

    /// Serialises the operations that use a layer's scratch (see the module docs).
    pub fn op(&self) -> MutexGuard<'_, ()> {
        lock(&self.op)
    }

    /// The operation lock if no operation holds it now, without waiting.
    pub fn try_op(&self) -> Option<MutexGuard<'_, ()>> {
        match self.op.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    // --- memory --------------------------------------------------------------------------

    /// Allocates `words` 32-bit words, refusing (as `OutOfMemory`) what the free memory less a
    /// headroom cannot hold, rather than letting the driver fail mid-operation.
    pub fn alloc(&self, what: &str, words: usize) -> Result<CudaSlice<u32>, CudaError> {
        self.alloc_on(&self.stream, what, words)
    }

    /// `alloc` in `stream`'s order, owned by it: dropped, it is freed after the work queued
    /// there so far.
    pub fn alloc_on(&self, stream: &Arc<CudaStream>, what: &str, words: usize) -> Result<CudaSlice<u32>, CudaError> {
        self.with_room(|| self.alloc_spare_on(stream, what, words))
    }

    /// `alloc_on` for memory held for speed alone (a spare): where too little is free it fails
    /// rather than take other spares back.
    pub fn alloc_spare_on(
        &self,
        stream: &Arc<CudaStream>,
        what: &str,
        words: usize,
    ) -> Result<CudaSlice<u32>, CudaError> {
        let bytes = self.check_room(what, words)?;
        // SAFETY: the memory is written (by a copy, a memset or a kernel) before it is read;
        // every caller fills what it allocates.
        unsafe { stream.alloc::<u32>(words.max(1)) }.map_err(out_of_memory(what, bytes))
    }

    /// Registers memory held for speed alone, for allocations to take back when memory runs
    /// short (dropped spares are forgotten here).
    pub fn add_spare(&self, spare: Weak<dyn Spare>) {
        let mut spares = lock(&self.spares);
        spares.retain(|s| s.strong_count() > 0);
        spares.push(spare);
    }

    /// `alloc()`, and where it finds too little memory, once more after the spares are taken
    /// back.
    fn with_room<T>(&self, alloc: impl Fn() -> Result<T, CudaError>) -> Result<T, CudaError> {
        match alloc() {
            Err(CudaError::OutOfMemory { .. }) if self.reclaim() => alloc(),
            other => other,
        }
    }

    /// Takes back every spare not in use: first waits for the background stream (a table still
    /// being made is read by its kernels), then gives each back, then waits for their frees,
    /// so the memory is free when this returns. Whether any was given back.
    fn reclaim(&self) -> bool {
        let spares: Vec<Arc<dyn Spare>> = lock(&self.spares).iter().filter_map(Weak::upgrade).collect();
        if spares.is_empty() || self.synchronize_background().is_err() {
            return false;
        }
        let given = spares.iter().fold(false, |any, s| s.give_back() | any);
        given && self.synchronize_background().is_ok()
    }

    /// `alloc` for an upload: allocated in the copy stream's order (so its copies need not wait
    /// for the compute stream) but owned by the compute stream, so dropping it frees it after
    /// every kernel queued there so far, whichever stream last used it.
    pub fn alloc_for_upload(&self, what: &str, words: usize) -> Result<CudaSlice<u32>, CudaError> {
        let ptr = self.with_room(|| {
            let bytes = self.check_room(what, words)?;
            // SAFETY: the context is bound (check_room); the size is non-zero.
            unsafe { cu::malloc_async(self.copy_stream.cu_stream(), bytes as usize) }
                .map_err(out_of_memory(what, bytes))
        })?;
        // SAFETY: `ptr` is a live allocation of 4·words bytes; every upload writes all of it
        // before any kernel reads it.
        Ok(unsafe { self.stream.upgrade_device_ptr::<u32>(ptr, words.max(1)) })
    }

    /// The bytes of `words` words (at least one), if the memory free for new allocations holds
    /// them.
    fn check_room(&self, what: &str, words: usize) -> Result<u64, CudaError> {
        let bytes = (words.max(1) as u64) * 4;
        let available = self.available_bytes()?;
        if bytes > available {
            return Err(CudaError::OutOfMemory { what: what.to_string(), requested: bytes, available });
        }
        Ok(bytes)
    }

    /// Device memory free for new allocations (the driver's free memory less the headroom).
    pub fn available_bytes(&self) -> Result<u64, CudaError> {
        self.ctx.bind_to_thread().map_err(during("binding the context"))?;
        let (free, _) = cu::mem_get_info().map_err(during("reading free memory"))?;
        Ok((free as u64).saturating_sub(HEADROOM_BYTES))
    }

    pub fn alloc_zeros(&self, what: &str, words: usize) -> Result<CudaSlice<u32>, CudaError> {
        let mut s = self.alloc(what, words)?;
        self.stream.memset_zeros(&mut s).map_err(during("clearing memory"))?;
        Ok(s)
    }

    /// The device address of `s` (used on the compute stream).
    pub fn ptr(&self, s: &CudaSlice<u32>) -> u64 {
        let (p, _sync) = s.device_ptr(&self.stream);
        p
    }

    /// Small host data (tables, constants) to the device, synchronously.
    pub fn upload_words(&self, what: &str, words: &[u32]) -> Result<CudaSlice<u32>, CudaError> {
        let mut dst = self.alloc(what, words.len())?;
        self.stream.memcpy_htod(words, &mut dst).map_err(during("copying to the device"))?;
        Ok(dst)
    }

    pub fn copy_words(&self, dst: u64, src: u64, words: usize) -> Result<(), CudaError> {
        // SAFETY: both ranges lie inside live allocations of at least `words` words (callers).
        unsafe { cu::memcpy_dtod_async(dst, src, words * 4, self.stream.cu_stream()) }
            .map_err(|e| CudaError::driver("copying on the device", e))
    }

    pub fn zero_words(&self, dst: u64, words: usize) -> Result<(), CudaError> {
        // SAFETY: the range lies inside a live allocation of at least `words` words (callers).
        unsafe { cu::memset_d8_async(dst, 0, words * 4, self.stream.cu_stream()) }
            .map_err(|e| CudaError::driver("clearing memory", e))
    }

    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.stream.synchronize().map_err(during("synchronising"))
    }

    /// Whether every operation queued on the compute stream has finished.
    pub fn stream_idle(&self) -> bool {
        idle(&self.stream)
    }

    /// Whether every piece of work queued on the background stream has finished.
    pub fn background_idle(&self) -> bool {
        idle(&self.background_stream)
    }

    /// Waits on the host for the background stream's work queued so far.
    pub fn synchronize_background(&self) -> Result<(), CudaError> {
        self.background_stream.synchronize().map_err(during("waiting for background work"))
    }
}

fn idle(stream: &CudaStream) -> bool {
    // SAFETY: the stream is alive (its owner holds it); cuStreamQuery only reads its state.
    let status = unsafe { sys::cuStreamQuery(stream.cu_stream()) };
    status == sys::CUresult::CUDA_SUCCESS
}

/// A driver error of an allocation of `bytes`, as `OutOfMemory` with the size asked for where
/// the driver ran out.
fn out_of_memory(what: &str, bytes: u64) -> impl FnOnce(cu::DriverError) -> CudaError + '_ {
    move |e| match CudaError::driver(what, e) {
        CudaError::OutOfMemory { what, available, .. } => CudaError::OutOfMemory { what, requested: bytes, available },
        other => other,
    }
}
