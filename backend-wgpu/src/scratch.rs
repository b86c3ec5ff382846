//! Temporaries kept across operations: an MSM's keys, buckets and partials are taken from a
//! pool of free buffers and given back when the MSM has read its result, so a run of MSMs
//! (the proofs, a benchmark) allocates them once.
//!
//! Why: on the H200 (NVIDIA Vulkan 580), creating and freeing a 2^22 G1 MSM's ~2 GB of
//! temporaries per call made the host wait 75 ms longer than the MSM's 83 ms of device
//! work (2^20: 20 ms on 38); the CUDA backend keeps a workspace for the same reason.
//!
//! A buffer is taken by one operation at a time (the guard gives it back on drop), so two
//! threads sharing a device never share a temporary. Taking one of size `bytes` picks the
//! smallest free buffer of the same purpose that holds it; when none does, the free ones of
//! that purpose are dropped (they are too small for this caller) and a new one is made.

use std::ops::Deref;
use std::sync::Mutex;

use crate::device::{lock, WgpuDevice};
use crate::WgpuError;

/// Free buffers: (purpose, size in bytes, buffer).
#[derive(Default)]
pub(crate) struct Pool(Mutex<Vec<(&'static str, u64, wgpu::Buffer)>>);

impl Pool {
    /// Drops every free buffer (before retrying an allocation that ran out of memory); false
    /// if there was none.
    pub(crate) fn clear(&self) -> bool {
        let mut free = lock(&self.0);
        let had = !free.is_empty();
        free.clear();
        had
    }
}

/// A pooled buffer, given back on drop.
pub(crate) struct Scratch<'d> {
    pool: &'d Pool,
    what: &'static str,
    size: u64,
    buffer: Option<wgpu::Buffer>,
}

impl Deref for Scratch<'_> {
    type Target = wgpu::Buffer;
    fn deref(&self) -> &wgpu::Buffer {
        // Only `drop` takes the buffer out.
        self.buffer.as_ref().expect("a scratch buffer is present until dropped")
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        if let Some(b) = self.buffer.take() {
            lock(&self.pool.0).push((self.what, self.size, b));
        }
    }
}

impl WgpuDevice {
    /// A storage buffer of at least `bytes` for `what`, bound whole: from the pool, or new.
    /// Its contents are whatever the last user left.
    pub(crate) fn scratch(&self, what: &'static str, bytes: u64) -> Result<Scratch<'_>, WgpuError> {
        self.scratch_with(what, bytes, || self.plain(what, bytes))
    }

    /// `scratch`, with `make` creating the buffer when the pool has none (for other usages
    /// than storage; one purpose, one usage).
    pub(crate) fn scratch_with(
        &self,
        what: &'static str,
        bytes: u64,
        make: impl FnOnce() -> Result<wgpu::Buffer, WgpuError>,
    ) -> Result<Scratch<'_>, WgpuError> {
        let pool = &self.scratch_pool;
        let taken = {
            let mut free = lock(&pool.0);
            let best = free
                .iter()
                .enumerate()
                .filter(|(_, (w, size, _))| *w == what && *size >= bytes)
                .min_by_key(|(_, (_, size, _))| *size)
                .map(|(i, _)| i);
            match best {
                Some(i) => Some(free.swap_remove(i)),
                None => {
                    free.retain(|(w, _, _)| *w != what);
                    None
                }
            }
        };
        let (size, buffer) = match taken {
            Some((_, size, b)) => (size, b),
            // (An allocation that runs out of memory empties the pool and retries: device.rs.)
            None => (bytes, make()?),
        };
        Ok(Scratch { pool, what, size, buffer: Some(buffer) })
    }
}
