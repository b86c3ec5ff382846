//! Staging: host data to and from the device through pinned memory. Uploads convert items
//! into two pinned slots in turn (in parallel, on rayon's pool) and copy each slot on the copy
//! stream while the next chunk converts; downloads copy into one pinned slot and convert out of
//! it. Staging takes no operation lock: its slots have their own locks and its copies their
//! own stream, so one worker's staging runs beside another's kernels.

use std::sync::{Arc, Mutex};

use ark_bls12_381::Fr;
use cudarc::driver::{result as cu, sys, CudaEvent, CudaSlice, PinnedHostSlice};
use g16_backend::limbs::{self, FR_WORDS};
use g16_backend::timeline::SpanId;
use rayon::prelude::*;

use crate::buffers::FrBuffer;
use crate::device::{lock, CudaDevice};
use crate::error::{during, CudaError};
use crate::timing::Timing;

/// Words per pinned staging chunk (16 MiB): conversion of one chunk overlaps the copy of the last.
const STAGING_WORDS: usize = 4 << 20;

/// Below this, a download converts on the calling thread (an MSM's result: waking rayon's pool
/// costs more than the work).
const SMALL_DOWNLOAD_WORDS: usize = 1 << 14;

struct StagingSlot {
    host: PinnedHostSlice<u32>,
    copied: Option<CudaEvent>,
}

/// The staging layer of one device: its pinned slots, kept between transfers.
pub(crate) struct Staging {
    dev: Arc<CudaDevice>,
    timing: Arc<Timing>,
    upload_slots: Mutex<Vec<StagingSlot>>,
    download_slot: Mutex<Option<PinnedHostSlice<u32>>>,
}

impl Staging {
    pub fn new(dev: Arc<CudaDevice>, timing: Arc<Timing>) -> Staging {
        Staging { dev, timing, upload_slots: Mutex::new(Vec::new()), download_slot: Mutex::new(None) }
    }

    /// Copies `items.len()` items of `per` words each to a new device allocation, converting
    /// them into pinned chunks while the previous chunk's copy runs. The conversions and copies
    /// (not the allocation) are the device span `span` (`upload_scalars`, as the CPU backend
    /// names its copy, or `upload_bases`), so a trace shows them apart from the allocation and
    /// from the host's `stage` span around them.
    ///
    /// The copies go on the copy stream: on the compute stream they would queue behind every
    /// kernel already there, and under the engine's `split` lock one worker's staging would wait
    /// for the other's MSMs (docs/perf/cuda.md: uploads). The compute stream is made to wait
    /// for the last copy before anything queued on it after this returns.
    pub fn upload_items<T: Sync>(
        &self,
        what: &str,
        items: &[T],
        per: usize,
        convert: impl Fn(&T, &mut [u32]) + Sync,
        (span, parent): (&str, Option<SpanId>),
    ) -> Result<CudaSlice<u32>, CudaError> {
        let dev = &*self.dev;
        let dst = dev.alloc_for_upload(what, items.len() * per)?;
        let base = dev.ptr(&dst);
        let chunk_items = (STAGING_WORDS / per).max(1);
        let mut slots = lock(&self.upload_slots);
        while slots.len() < 2 {
            // SAFETY: pinned memory is written by the conversion below before any copy reads it.
            // Write-combined: the host only writes these, and the copy engine reads them without
            // snooping the CPU's caches.
            let host = unsafe {
                dev.ctx().alloc_pinned_with_flags::<u32>(STAGING_WORDS.max(per), sys::CU_MEMHOSTALLOC_WRITECOMBINED)
            }
            .map_err(during("allocating pinned staging memory"))?;
            slots.push(StagingSlot { host, copied: None });
        }
        let copy_stream = dev.copy_stream();
        let queued = self.timing.span_on(copy_stream, span, parent, || {
            copy_chunks(dev, (&mut slots[..], chunk_items, base), items, per, &convert)
        });
        // Also after a failure: `dst` is freed on the compute stream, which must not free it
        // under a copy still in flight.
        let copied = copy_stream
            .record_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .map_err(during("recording the end of an upload"))?;
        dev.stream().wait(&copied).map_err(during("ordering kernels after an upload"))?;
        queued?;
        Ok(dst)
    }

    /// Copies `len` items of `per` words from device address `base` (inside a live allocation
    /// of at least `len · per` words) and converts each. Always through the pinned download
    /// slot: a copy into pageable memory returns only once the copy is done, and while this
    /// thread waited in it for the kernels queued before it, another worker's uploads were seen
    /// to wait too (docs/perf/cuda.md: downloads).
    pub fn download_items<T: Send>(
        &self,
        base: u64,
        len: usize,
        per: usize,
        convert: impl Fn(&[u32]) -> T + Sync,
    ) -> Result<Vec<T>, CudaError> {
        let dev = &*self.dev;
        let mut out = Vec::with_capacity(len);
        let chunk_items = (STAGING_WORDS / per).max(1);
        let mut slot = lock(&self.download_slot);
        if slot.is_none() {
            // SAFETY: pinned memory is written by the copies below before it is read. Not
            // write-combined: the host reads it.
            *slot = Some(
                unsafe { dev.ctx().alloc_pinned_with_flags::<u32>(STAGING_WORDS.max(per), 0) }
                    .map_err(during("allocating pinned staging memory"))?,
            );
        }
        let host = slot.as_mut().map(|s| s.as_mut_slice()).transpose().map_err(during("mapping pinned memory"))?;
        let host = host.ok_or_else(|| CudaError::Driver { context: "staging".into(), message: "no buffer".into() })?;
        let mut done = 0;
        while done < len {
            let items = chunk_items.min(len - done);
            let words = items * per;
            // SAFETY: the source range lies inside the caller's allocation; `host` holds at
            // least `words` words.
            unsafe {
                cu::memcpy_dtoh_async(&mut host[..words], base + (done * per * 4) as u64, dev.stream().cu_stream())
            }
            .map_err(during("copying from the device"))?;
            dev.stream().synchronize().map_err(during("waiting for a copy from the device"))?;
            if words < SMALL_DOWNLOAD_WORDS {
                out.extend(host[..words].chunks(per).map(&convert));
            } else {
                out.par_extend(host[..words].par_chunks(per).map(&convert));
            }
            done += items;
        }
        Ok(out)
    }

    pub fn upload_fr(&self, host: &[Fr], parent: Option<SpanId>) -> Result<FrBuffer, CudaError> {
        let data = self.upload_items("scalars", host, FR_WORDS, limbs::fr_to_words, ("upload_scalars", parent))?;
        Ok(FrBuffer { data, len: host.len() })
    }

    pub fn download_fr(&self, buf: &FrBuffer) -> Result<Vec<Fr>, CudaError> {
        self.download_items(self.dev.ptr(&buf.data), buf.len, FR_WORDS, limbs::fr_from_words)
    }

    /// `words` words from device address `src` (inside a live allocation of at least as many).
    pub fn download_words(&self, src: u64, words: usize) -> Result<Vec<u32>, CudaError> {
        self.download_items(src, words, 1, |w| w[0])
    }
}

/// The chunked conversion and copy of `upload_items`, alternating between the two slots.
fn copy_chunks<T: Sync>(
    dev: &CudaDevice,
    (slots, chunk_items, base): (&mut [StagingSlot], usize, u64),
    items: &[T],
    per: usize,
    convert: &(impl Fn(&T, &mut [u32]) + Sync),
) -> Result<(), CudaError> {
    for (i, chunk) in items.chunks(chunk_items).enumerate() {
        let slot = &mut slots[i % 2];
        if let Some(ev) = slot.copied.take() {
            ev.synchronize().map_err(during("waiting for a staging copy"))?;
        }
        let words = chunk.len() * per;
        let host = slot.host.as_mut_slice().map_err(during("mapping pinned memory"))?;
        // On rayon's pool: converting on this thread alone measured slower under load
        // (docs/perf/engine.md: tried and not kept).
        host[..words].par_chunks_mut(per).zip(chunk.par_iter()).for_each(|(out, item)| convert(item, out));
        let offset = (i * chunk_items * per * 4) as u64;
        // SAFETY: the destination range lies inside `dst` (offset + words ≤ its length) and
        // the pinned source stays untouched until `copied` has completed.
        unsafe { cu::memcpy_htod_async(base + offset, &host[..words], dev.copy_stream().cu_stream()) }
            .map_err(during("copying to the device"))?;
        slot.copied = Some(
            dev.copy_stream()
                .record_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
                .map_err(during("recording a staging event"))?,
        );
    }
    Ok(())
}
