//! The device: one CUDA context and stream, the compiled kernels, device buffers, staging
//! through pinned memory, the memory budget, and the span recorder.
//!
//! Kernels and downloads go onto one stream, in order; the host waits only where a result must
//! come back (downloads, an MSM's result, the big-bucket count). Operations are serialised by a
//! lock, so the scratch buffers are never shared by two of them. Uploads have a stream of their
//! own (see `upload_items`), so one worker's staging copies run beside another's kernels.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ark_bls12_381::{Fr, G1Affine, G2Affine};
use cudarc::driver::{
    result as cu, sys, CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr,
    LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use rayon::prelude::*;

use crate::compile::{compile_cached, nvrtc_present, nvrtc_version};
use crate::error::{during, CudaError};
use crate::kernels::programs;
use crate::msm::{ShiftedBases, G1, G2};
use crate::ntt::NttTables;
use crate::timing::{Clock, SpanRecord, Timing};
use g16_core::backend::limbs::{self as convert, FR_WORDS, G1_WORDS, G2_WORDS};

/// Whether the CUDA driver library can be loaded (cudarc panics on first use otherwise).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen libcuda under its candidate names; no driver call is made.
    unsafe { sys::is_culib_present() }
}

/// How many CUDA devices there are; `Unavailable` (with the reason) when CUDA cannot run here.
pub fn device_count() -> Result<usize, CudaError> {
    if !driver_present() {
        return Err(CudaError::Unavailable("no CUDA driver (libcuda.so not found)".to_string()));
    }
    if !nvrtc_present() {
        return Err(CudaError::Unavailable(
            "NVRTC (libnvrtc.so.13) not found: install the CUDA toolkit or the nvidia-cuda-nvrtc wheel and put its \
             lib directory on LD_LIBRARY_PATH"
                .to_string(),
        ));
    }
    match CudaContext::device_count() {
        Ok(n) if n > 0 => Ok(n as usize),
        Ok(_) => Err(CudaError::Unavailable("the CUDA driver found no device".to_string())),
        Err(e) => Err(CudaError::Unavailable(format!("the CUDA driver did not start: {:?}", e.0))),
    }
}

/// What the engine reports about its device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub name: String,
    /// `sm_90` on an H200: what the kernels were compiled for.
    pub arch: String,
    pub memory_bytes: u64,
    pub multiprocessors: u32,
    pub driver_version: String,
    pub nvrtc_version: String,
}

/// Fr scalars on the device: 8 words each.
pub struct FrBuffer {
    pub(crate) data: CudaSlice<u32>,
    pub(crate) len: usize,
}

/// Affine G1 bases on the device: 24 words each; for long vectors also their shifted
/// multiples for the MSM's shared bucket layout (`msm.rs`).
pub struct G1Buffer {
    pub(crate) data: CudaSlice<u32>,
    pub(crate) len: usize,
    pub(crate) shifted: Option<ShiftedBases>,
}

/// Affine G2 bases on the device: 48 words each; shifted multiples as for G1.
pub struct G2Buffer {
    pub(crate) data: CudaSlice<u32>,
    pub(crate) len: usize,
    pub(crate) shifted: Option<ShiftedBases>,
}

impl FrBuffer {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
impl G1Buffer {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
impl G2Buffer {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Every kernel the engine launches, loaded once at open.
pub(crate) struct Kernels {
    pub functions: HashMap<&'static str, CudaFunction>,
    _modules: Vec<Arc<CudaModule>>,
}

impl Kernels {
    pub fn get(&self, name: &'static str) -> Result<&CudaFunction, CudaError> {
        self.functions
            .get(name)
            .ok_or_else(|| CudaError::Driver { context: format!("kernel {name}"), message: "not loaded".into() })
    }
}

/// Words per pinned staging chunk (16 MiB): conversion of one chunk overlaps the copy of the last.
const STAGING_WORDS: usize = 4 << 20;

/// Below this, a download converts on the calling thread (an MSM's result: waking rayon's pool
/// costs more than the work).
const SMALL_DOWNLOAD_WORDS: usize = 1 << 14;

struct StagingSlot {
    host: PinnedHostSlice<u32>,
    copied: Option<CudaEvent>,
}

/// Where an upload's host time goes (`G16_CUDA_STAGING_PROFILE=1` prints one line an upload
/// to stderr): the allocation, taking the pinned slots, waiting for a slot's last copy,
/// converting into it, and queueing the copy. A diagnostic for the staging regression in
/// NOTES.md; off, it costs a few clock reads an upload.
struct StagingProfile {
    what: String,
    bytes: usize,
    on: bool,
    last: std::time::Instant,
    /// Nanoseconds in: alloc, slots, wait, convert, enqueue.
    ns: [u128; 5],
}

impl StagingProfile {
    fn start(what: &str, bytes: usize) -> Self {
        let on = std::env::var("G16_CUDA_STAGING_PROFILE").is_ok_and(|v| v == "1");
        StagingProfile { what: what.to_string(), bytes, on, last: std::time::Instant::now(), ns: [0; 5] }
    }
    fn mark(&mut self, i: usize) {
        let now = std::time::Instant::now();
        self.ns[i] += (now - self.last).as_nanos();
        self.last = now;
    }
    fn mark_alloc(&mut self) {
        self.mark(0)
    }
    fn mark_slots(&mut self) {
        self.mark(1)
    }
    fn mark_wait(&mut self) {
        self.mark(2)
    }
    fn mark_convert(&mut self) {
        self.mark(3)
    }
    fn mark_enqueue(&mut self) {
        self.mark(4)
    }
    fn finish(&self) {
        if self.on {
            let ms = |i: usize| self.ns[i] as f64 / 1e6;
            eprintln!(
                "staging {} {} MB: alloc {:.2} ms, slots {:.2}, wait {:.2}, convert {:.2}, enqueue {:.2}",
                self.what,
                self.bytes >> 20,
                ms(0),
                ms(1),
                ms(2),
                ms(3),
                ms(4)
            );
        }
    }
}

/// Memory kept free for the driver and the kernels' own needs.
const HEADROOM_BYTES: u64 = 256 << 20;

pub struct CudaDevice {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    /// Where uploads' copies go: beside `stream`, not behind the kernels already queued on it.
    copy_stream: Arc<CudaStream>,
    pub(crate) kernels: Kernels,
    info: DeviceInfo,
    pub(crate) timing: Mutex<Timing>,
    pub(crate) ntt_tables: Mutex<HashMap<u32, Arc<NttTables>>>,
    pub(crate) scratch: Mutex<HashMap<usize, CudaSlice<u32>>>,
    /// The MSM's buffers, by name, kept between MSMs and grown on demand (no allocation per
    /// MSM); freed on an out-of-memory retry.
    workspace: Mutex<HashMap<&'static str, CudaSlice<u32>>>,
    upload_slots: Mutex<Vec<StagingSlot>>,
    download_slot: Mutex<Option<PinnedHostSlice<u32>>>,
    ones_split: AtomicBool,
    op: Mutex<()>,
    /// Whether the pinned upload slots are write-combined (`G16_CUDA_PINNED_WC=0` turns it off).
    pinned_write_combined: bool,
}

/// Stops the device's default memory pool from making one stream wait for another to reuse
/// memory: staged buffers are allocated on the copy stream and freed on the compute stream, and
/// with internal dependencies allowed the driver may order the next upload's allocation after
/// the kernels queued before that free — the very wait the copy stream exists to avoid. Without
/// them the pool reuses memory whose free has completed, or takes more.
fn no_cross_stream_pool_waits(ctx: &CudaContext) -> Result<(), CudaError> {
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    let mut allow: i32 = 0;
    // SAFETY: the driver is loaded (the context exists); `pool` and `allow` are valid for the
    // calls, which read or write exactly one value of their type (the attribute is an int).
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
    /// Opens device `ordinal`, compiles (or loads from the cache) the kernels for its
    /// architecture, and takes `clock` as the host clock for device spans.
    pub fn open(ordinal: usize, clock: Clock) -> Result<CudaDevice, CudaError> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(CudaError::Unavailable(format!("no CUDA device {ordinal} ({count} found)")));
        }
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| CudaError::Unavailable(format!("cannot open CUDA device {ordinal}: {:?}", e.0)))?;
        // One stream, ordered: the engine does its own synchronisation, so cudarc's per-buffer
        // event tracking would only add work.
        // SAFETY: every buffer is used on `stream` alone, so stream order is the only ordering needed.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(during("creating a stream"))?;
        let copy_stream = ctx.new_stream().map_err(during("creating the copy stream"))?;
        let (major, minor) = ctx.compute_capability().map_err(during("reading the compute capability"))?;
        let arch = format!("sm_{major}{minor}");
        let (nv_major, nv_minor) = nvrtc_version()?;
        let mut modules = Vec::new();
        let mut functions = HashMap::new();
        for program in programs() {
            let cubin = compile_cached(&program, &arch)?;
            let module = ctx
                .load_module(Ptx::from_binary(cubin))
                .map_err(|e| CudaError::driver(format!("loading the {} kernels for {arch}", program.name), e))?;
            for &name in program.kernels {
                let f = module.load_function(name).map_err(|e| CudaError::driver(format!("kernel {name}"), e))?;
                functions.insert(name, f);
            }
            modules.push(module);
        }
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
            nvrtc_version: format!("NVRTC {nv_major}.{nv_minor}"),
        };
        let split = std::env::var("G16_CUDA_ONES_SPLIT").map(|v| v != "0").unwrap_or(true);
        no_cross_stream_pool_waits(&ctx)?;
        let pinned_write_combined = std::env::var("G16_CUDA_PINNED_WC").map(|v| v != "0").unwrap_or(true);
        Ok(CudaDevice {
            ctx,
            stream,
            copy_stream,
            kernels: Kernels { functions, _modules: modules },
            info,
            timing: Mutex::new(Timing::new(clock)),
            ntt_tables: Mutex::new(HashMap::new()),
            scratch: Mutex::new(HashMap::new()),
            workspace: Mutex::new(HashMap::new()),
            upload_slots: Mutex::new(Vec::new()),
            download_slot: Mutex::new(None),
            ones_split: AtomicBool::new(split),
            op: Mutex::new(()),
            pinned_write_combined,
        })
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Whether MSMs send scalars equal to 1 to the batch addition instead of Pippenger
    /// (default on; `G16_CUDA_ONES_SPLIT=0` at open turns it off).
    pub fn set_ones_split(&self, on: bool) {
        self.ones_split.store(on, Ordering::Relaxed);
    }
    pub fn ones_split(&self) -> bool {
        self.ones_split.load(Ordering::Relaxed)
    }

    /// Serialises operations (see the module docs).
    pub(crate) fn op(&self) -> MutexGuard<'_, ()> {
        lock(&self.op)
    }

    // --- memory --------------------------------------------------------------------------

    /// Allocates `words` 32-bit words, refusing (as `OutOfMemory`) what the free memory less a
    /// headroom cannot hold, rather than letting the driver fail mid-operation.
    pub(crate) fn alloc(&self, what: &str, words: usize) -> Result<CudaSlice<u32>, CudaError> {
        let bytes = (words as u64) * 4;
        self.ctx.bind_to_thread().map_err(during("binding the context"))?;
        let (free, _) = cu::mem_get_info().map_err(during("reading free memory"))?;
        let available = (free as u64).saturating_sub(HEADROOM_BYTES);
        if bytes > available {
            return Err(CudaError::OutOfMemory { what: what.to_string(), requested: bytes, available });
        }
        // SAFETY: the memory is written (by a copy, a memset or a kernel) before it is read;
        // every caller fills what it allocates.
        unsafe { self.stream.alloc::<u32>(words.max(1)) }.map_err(|e| match CudaError::driver(what, e) {
            CudaError::OutOfMemory { what, available, .. } => {
                CudaError::OutOfMemory { what, requested: bytes, available }
            }
            other => other,
        })
    }

    /// `alloc` for an upload: allocated in the copy stream's order (so its copies need not wait
    /// for the compute stream) but owned by the compute stream, so dropping it frees it after
    /// every kernel queued there so far, whichever stream last used it.
    fn alloc_for_upload(&self, what: &str, words: usize) -> Result<CudaSlice<u32>, CudaError> {
        let bytes = (words.max(1) as u64) * 4;
        let available = self.available_bytes()?;
        if bytes > available {
            return Err(CudaError::OutOfMemory { what: what.to_string(), requested: bytes, available });
        }
        // SAFETY: the context is bound (available_bytes); the size is non-zero.
        let ptr = unsafe { cu::malloc_async(self.copy_stream.cu_stream(), bytes as usize) }.map_err(|e| {
            match CudaError::driver(what, e) {
                CudaError::OutOfMemory { what, available, .. } => {
                    CudaError::OutOfMemory { what, requested: bytes, available }
                }
                other => other,
            }
        })?;
        // SAFETY: `ptr` is a live allocation of `bytes` = 4·words bytes; every upload writes all
        // of it before any kernel reads it.
        Ok(unsafe { self.stream.upgrade_device_ptr::<u32>(ptr, words.max(1)) })
    }

    /// Device memory free for new allocations (the driver's free memory less the headroom).
    pub(crate) fn available_bytes(&self) -> Result<u64, CudaError> {
        self.ctx.bind_to_thread().map_err(during("binding the context"))?;
        let (free, _) = cu::mem_get_info().map_err(during("reading free memory"))?;
        Ok((free as u64).saturating_sub(HEADROOM_BYTES))
    }

    /// The workspace buffer `name` with room for `words` words (grown if smaller), as a device
    /// pointer. Its contents are whatever the last user left. Valid until the next call with
    /// the same name or `clear_workspace`; callers hold the operation lock.
    pub(crate) fn workspace(&self, name: &'static str, words: usize) -> Result<u64, CudaError> {
        let mut map = lock(&self.workspace);
        if let Some(buf) = map.get(name).filter(|b| b.len() >= words.max(1)) {
            return Ok(self.ptr(buf));
        }
        // The old buffer is freed first (ordered on the stream after the work that used it).
        map.remove(name);
        let buf = self.alloc(name, words)?;
        let p = self.ptr(&buf);
        map.insert(name, buf);
        Ok(p)
    }

    /// Frees the workspace (after the stream's work that uses it).
    pub(crate) fn clear_workspace(&self) -> Result<(), CudaError> {
        lock(&self.workspace).clear();
        self.synchronize()
    }

    pub(crate) fn alloc_zeros(&self, what: &str, words: usize) -> Result<CudaSlice<u32>, CudaError> {
        let mut s = self.alloc(what, words)?;
        self.stream.memset_zeros(&mut s).map_err(during("clearing memory"))?;
        Ok(s)
    }

    pub(crate) fn ptr(&self, s: &CudaSlice<u32>) -> u64 {
        let (p, _sync) = s.device_ptr(&self.stream);
        p
    }

    // --- staging ---------------------------------------------------------------------------

    /// Copies `count` items of `per` words each to a new device allocation, converting them
    /// into pinned chunks (in parallel) while the previous chunk's copy runs. The conversions
    /// and copies (not the allocation) are a device span (`upload_scalars`, as the CPU backend
    /// names its copy, or `upload_bases`) under a tag, so a trace shows them apart from the
    /// allocation and from the host's `stage` span around them.
    ///
    /// The copies go on the copy stream. On the compute stream they would queue behind every
    /// kernel already there: under the engine's `split` lock one worker's staging then waited
    /// for the other's MSMs (a 2^20 partition's `stage` took 67 ms against 7 alone). The compute
    /// stream is made to wait for the last copy before anything queued on it after this returns.
    fn upload_items<T: Sync>(
        &self,
        what: &str,
        items: &[T],
        per: usize,
        convert: impl Fn(&T, &mut [u32]) + Sync,
        (span, tag): (&str, Option<u64>),
    ) -> Result<CudaSlice<u32>, CudaError> {
        let mut profile = StagingProfile::start(what, items.len() * per * 4);
        let dst = self.alloc_for_upload(what, items.len() * per)?;
        let base = self.ptr(&dst);
        profile.mark_alloc();
        let chunk_items = (STAGING_WORDS / per).max(1);
        let mut slots = lock(&self.upload_slots);
        while slots.len() < 2 {
            // SAFETY: pinned memory is written by the conversion below before any copy reads it.
            // Write-combined by default: the host only writes these, and the copy engine reads
            // them without snooping the CPU's caches.
            let flags = if self.pinned_write_combined { sys::CU_MEMHOSTALLOC_WRITECOMBINED } else { 0 };
            let host = unsafe { self.ctx.alloc_pinned_with_flags::<u32>(STAGING_WORDS.max(per), flags) }
                .map_err(during("allocating pinned staging memory"))?;
            slots.push(StagingSlot { host, copied: None });
        }
        profile.mark_slots();
        let copies = (&mut slots[..], chunk_items, base, &mut profile);
        let queued = self.span_on(&self.copy_stream, span, tag, || self.copy_chunks(copies, items, per, &convert));
        // Also after a failure: `dst` is freed on the compute stream, which must not free it
        // under a copy still in flight.
        let copied = self
            .copy_stream
            .record_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .map_err(during("recording the end of an upload"))?;
        self.stream.wait(&copied).map_err(during("ordering kernels after an upload"))?;
        queued?;
        profile.finish();
        Ok(dst)
    }

    /// The chunked conversion and copy of `upload_items`, alternating between the two slots.
    fn copy_chunks<T: Sync>(
        &self,
        (slots, chunk_items, base, profile): (&mut [StagingSlot], usize, u64, &mut StagingProfile),
        items: &[T],
        per: usize,
        convert: &(impl Fn(&T, &mut [u32]) + Sync),
    ) -> Result<(), CudaError> {
        for (i, chunk) in items.chunks(chunk_items).enumerate() {
            let slot = &mut slots[i % 2];
            if let Some(ev) = slot.copied.take() {
                ev.synchronize().map_err(during("waiting for a staging copy"))?;
            }
            profile.mark_wait();
            let words = chunk.len() * per;
            let host = slot.host.as_mut_slice().map_err(during("mapping pinned memory"))?;
            // On rayon's pool: converting on this thread alone was measured slower under load
            // (`G16_CUDA_STAGING_SERIAL`, fourth session: 77 % against 93 % device-busy).
            host[..words].par_chunks_mut(per).zip(chunk.par_iter()).for_each(|(out, item)| convert(item, out));
            profile.mark_convert();
            let offset = (i * chunk_items * per * 4) as u64;
            // SAFETY: the destination range lies inside `dst` (offset + words ≤ its length) and
            // the pinned source stays untouched until `copied` has completed.
            unsafe { cu::memcpy_htod_async(base + offset, &host[..words], self.copy_stream.cu_stream()) }
                .map_err(during("copying to the device"))?;
            slot.copied = Some(
                self.copy_stream
                    .record_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
                    .map_err(during("recording a staging event"))?,
            );
            profile.mark_enqueue();
        }
        Ok(())
    }

    /// Copies `len` items of `per` words from the device and converts each.
    fn download_items<T: Send>(
        &self,
        src: &CudaSlice<u32>,
        len: usize,
        per: usize,
        convert: impl Fn(&[u32]) -> T + Sync,
    ) -> Result<Vec<T>, CudaError> {
        self.download_items_from(self.ptr(src), len, per, convert)
    }

    /// `download_items` from device address `base` (inside a live allocation of at least
    /// `len · per` words). Always through the pinned download slot: a copy into pageable memory
    /// returns only once the copy is done, and while this thread waited in it for the kernels
    /// queued before it, another worker's upload calls were seen to wait too (130–170 ms at
    /// 2^22 under `split`, `benches/results/h200-engine-cuda.md`).
    fn download_items_from<T: Send>(
        &self,
        base: u64,
        len: usize,
        per: usize,
        convert: impl Fn(&[u32]) -> T + Sync,
    ) -> Result<Vec<T>, CudaError> {
        let mut out = Vec::with_capacity(len);
        let chunk_items = (STAGING_WORDS / per).max(1);
        let mut slot = lock(&self.download_slot);
        if slot.is_none() {
            // SAFETY: pinned memory is written by the copies below before it is read. Not
            // write-combined: the host reads it.
            *slot = Some(
                unsafe { self.ctx.alloc_pinned_with_flags::<u32>(STAGING_WORDS.max(per), 0) }
                    .map_err(during("allocating pinned staging memory"))?,
            );
        }
        let host = slot.as_mut().map(|s| s.as_mut_slice()).transpose().map_err(during("mapping pinned memory"))?;
        let host = host.ok_or_else(|| CudaError::Driver { context: "staging".into(), message: "no buffer".into() })?;
        let mut done = 0;
        while done < len {
            let items = chunk_items.min(len - done);
            let words = items * per;
            // SAFETY: the source range lies inside `src`; `host` holds at least `words` words.
            unsafe {
                cu::memcpy_dtoh_async(&mut host[..words], base + (done * per * 4) as u64, self.stream.cu_stream())
            }
            .map_err(during("copying from the device"))?;
            self.stream.synchronize().map_err(during("waiting for a copy from the device"))?;
            if words < SMALL_DOWNLOAD_WORDS {
                out.extend(host[..words].chunks(per).map(&convert));
            } else {
                out.par_extend(host[..words].par_chunks(per).map(&convert));
            }
            done += items;
        }
        Ok(out)
    }

    // Staging takes no operation lock: it touches no shared scratch (its pinned slots have
    // their own lock) and its copies have their own stream. Holding the lock here made the
    // engine's `split` design moot: a worker converting its inputs under CPU load kept the
    // other worker's kernels from being launched, and the two-H200 runs showed device sections
    // waiting up to 0.24 s to launch their first NTT.
    pub fn upload_fr(&self, host: &[Fr], tag: Option<u64>) -> Result<FrBuffer, CudaError> {
        let data = self.upload_items("scalars", host, FR_WORDS, convert::fr_to_words, ("upload_scalars", tag))?;
        Ok(FrBuffer { data, len: host.len() })
    }

    pub fn alloc_fr(&self, len: usize) -> Result<FrBuffer, CudaError> {
        Ok(FrBuffer { data: self.alloc_zeros("scalars", len * FR_WORDS)?, len })
    }

    pub fn download_fr(&self, buf: &FrBuffer) -> Result<Vec<Fr>, CudaError> {
        self.download_items(&buf.data, buf.len, FR_WORDS, convert::fr_from_words)
    }

    /// Uploads G1 bases, and makes their shifted multiples where the MSM gains from them.
    pub fn upload_g1(&self, host: &[G1Affine]) -> Result<G1Buffer, CudaError> {
        let _op = self.op();
        let data = self.upload_items("G1 bases", host, G1_WORDS, convert::g1_to_words, ("upload_bases", None))?;
        let shifted = self.shifted_bases(&G1, self.ptr(&data), host.len())?;
        Ok(G1Buffer { data, len: host.len(), shifted })
    }

    /// Uploads G2 bases, and makes their shifted multiples where the MSM gains from them.
    pub fn upload_g2(&self, host: &[G2Affine]) -> Result<G2Buffer, CudaError> {
        let _op = self.op();
        let data = self.upload_items("G2 bases", host, G2_WORDS, convert::g2_to_words, ("upload_bases", None))?;
        let shifted = self.shifted_bases(&G2, self.ptr(&data), host.len())?;
        Ok(G2Buffer { data, len: host.len(), shifted })
    }

    /// Small host data (tables, constants) to the device, synchronously.
    pub(crate) fn upload_words(&self, what: &str, words: &[u32]) -> Result<CudaSlice<u32>, CudaError> {
        let mut dst = self.alloc(what, words.len())?;
        self.stream.memcpy_htod(words, &mut dst).map_err(during("copying to the device"))?;
        Ok(dst)
    }

    /// `words` words from device address `src` (inside a live allocation of at least as many).
    pub(crate) fn download_from(&self, src: u64, words: usize) -> Result<Vec<u32>, CudaError> {
        self.download_items_from(src, words, 1, |w| w[0])
    }

    // --- launches and spans --------------------------------------------------------------

    /// Launches `name` with `grid × block` threads and the given kernel arguments (each a u32
    /// or a device pointer as u64).
    pub(crate) fn launch(&self, name: &'static str, grid: u32, block: u32, args: &[Arg]) -> Result<(), CudaError> {
        let f = self.kernels.get(name)?;
        let mut builder = self.stream.launch_builder(f);
        for a in args {
            match a {
                Arg::U32(v) => builder.arg(v),
                Arg::Ptr(p) => builder.arg(p),
            };
        }
        let cfg = LaunchConfig { grid_dim: (grid.max(1), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: each kernel's argument list is built by its one caller in this crate to match
        // the kernel's C signature, with pointers into live allocations of the sizes it indexes.
        unsafe { builder.launch(cfg) }.map_err(|e| CudaError::driver(format!("launching {name}"), e))?;
        Ok(())
    }

    /// Runs `work` (a group of launches) between two events, as the device span `name`.
    pub(crate) fn span<R>(
        &self,
        name: &str,
        tag: Option<u64>,
        work: impl FnOnce() -> Result<R, CudaError>,
    ) -> Result<R, CudaError> {
        self.span_on(&self.stream, name, tag, work)
    }

    /// `span` for work queued on `stream` (the compute stream or the copy stream).
    fn span_on<R>(
        &self,
        stream: &CudaStream,
        name: &str,
        tag: Option<u64>,
        work: impl FnOnce() -> Result<R, CudaError>,
    ) -> Result<R, CudaError> {
        let begun = lock(&self.timing).begin(&self.ctx, stream)?;
        let out = work();
        // The span is closed even when the work failed, so the timeline shows how far it got.
        lock(&self.timing).end(&self.ctx, stream, name, tag, begun)?;
        out
    }

    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.stream.synchronize().map_err(during("synchronising"))
    }

    /// Every device span finished so far, on the host clock; spans still running stay for a
    /// later drain. It waits for nothing: it used to synchronise the stream under the operation
    /// lock, so a worker draining after its staging held back the other worker's launches
    /// until that worker's queued kernels had run out. The clock reference is renewed only
    /// where that costs no wait: the lock free and the stream idle.
    pub fn drain_spans(&self) -> Result<Vec<SpanRecord>, CudaError> {
        let idle = self.op.try_lock().ok().filter(|_| self.stream_idle());
        let spans = lock(&self.timing).drain(&self.ctx, &self.stream, idle.is_some());
        drop(idle);
        spans
    }

    /// Whether every operation queued on the compute stream has finished.
    fn stream_idle(&self) -> bool {
        // SAFETY: the stream is alive (owned by self); cuStreamQuery only reads its state.
        let status = unsafe { sys::cuStreamQuery(self.stream.cu_stream()) };
        status == sys::CUresult::CUDA_SUCCESS
    }
}

/// A kernel argument.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arg {
    U32(u32),
    Ptr(u64),
}
