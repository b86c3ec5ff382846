//! What the device holds and how it is allocated: split arrays ([`Chunked`]), the scalar and
//! base buffers the backend hands out, and [`Memory`], which allocates them, keeps the pool of
//! temporaries and retries an allocation that ran out of memory after emptying the pool.
//!
//! **Split arrays.** No binding may exceed the adapter's limit, so a large array is a
//! `Chunked`: up to [`SPLIT_SLOTS`] buffers of 2^log elements each (the last one shorter), bound
//! as that many bindings and addressed through generated accessors (compile/bindings.rs).
//!
//! **The scratch pool.** An MSM's keys, buckets and partials are taken from a pool of free
//! buffers and given back when the MSM has read its result, so a run of MSMs (the proofs, a
//! benchmark) allocates them once: creating and freeing a 2^22 G1 MSM's ~2 GB of temporaries
//! per MSM cost more host time than its device work (docs/perf/wgpu.md, "Scratch pool"). A
//! buffer is taken by one operation at a time (the guard gives it back on drop), so two
//! threads sharing a device never share a temporary. Taking one of size `bytes` picks the
//! smallest free buffer of the same purpose that holds it; when none does, the free ones of
//! that purpose are dropped (they are too small for this caller) and a new one is made.
//!
//! **Upload slots.** Large uploads pass through two mappable buffers kept for the device's
//! life ([`UploadSlot`]; staging.rs fills them and copies out of them). wgpu's `write_buffer`
//! makes a new host-visible buffer for every call, and allocating and filling that buffer cost
//! ~68 ms of a 128 MiB upload on lavapipe (docs/perf/wgpu.md, "Uploads").

use std::collections::HashMap;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard};

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use g16_backend::limbs;
use g16_backend::msm_plan::Layout;

use crate::device::{lock, WgpuDevice};
use crate::error::WgpuError;

/// Storage bindings per split array: its elements may span up to this many buffers.
pub const SPLIT_SLOTS: usize = 4;

/// What a storage array holds, element by element (g16_backend's limb layouts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    U32,
    Fr,
    G1Affine,
    G2Affine,
    G1Xyzz,
    G2Xyzz,
}

impl Elem {
    /// 32-bit words per element.
    pub const fn words(self) -> usize {
        match self {
            Elem::U32 => 1,
            Elem::Fr => limbs::FR_WORDS,
            Elem::G1Affine => limbs::G1_WORDS,
            Elem::G2Affine => limbs::G2_WORDS,
            Elem::G1Xyzz => limbs::G1_XYZZ_WORDS,
            Elem::G2Xyzz => limbs::G2_XYZZ_WORDS,
        }
    }

    pub const fn bytes(self) -> u64 {
        self.words() as u64 * 4
    }

    /// log2 of the elements one buffer of a split array holds, for bindings of
    /// `binding_bytes`.
    pub fn chunk_log(self, binding_bytes: u64) -> u32 {
        let per = (binding_bytes / self.bytes()).max(1);
        (63 - per.leading_zeros()).min(31)
    }
}

/// Which group an MSM or a curve module is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Curve {
    G1,
    G2,
}

impl Curve {
    pub fn prefix(self) -> &'static str {
        match self {
            Curve::G1 => "g1",
            Curve::G2 => "g2",
        }
    }

    pub fn affine(self) -> Elem {
        match self {
            Curve::G1 => Elem::G1Affine,
            Curve::G2 => Elem::G2Affine,
        }
    }

    pub fn xyzz(self) -> Elem {
        match self {
            Curve::G1 => Elem::G1Xyzz,
            Curve::G2 => Elem::G2Xyzz,
        }
    }
}

/// A group whose points the device holds: which [`Curve`] it is, and its points' words.
pub trait Group: SWCurveConfig {
    const CURVE: Curve;
    fn affine_to_words(p: &Affine<Self>, out: &mut [u32]);
    fn affine_from_words(words: &[u32]) -> Affine<Self>;
    fn xyzz_to_projective(words: &[u32]) -> Projective<Self>;
}

impl Group for ark_bls12_381::g1::Config {
    const CURVE: Curve = Curve::G1;
    fn affine_to_words(p: &Affine<Self>, out: &mut [u32]) {
        limbs::g1_to_words(p, out)
    }
    fn affine_from_words(words: &[u32]) -> Affine<Self> {
        limbs::g1_from_words(words)
    }
    fn xyzz_to_projective(words: &[u32]) -> Projective<Self> {
        limbs::g1_xyzz_to_projective(words)
    }
}

impl Group for ark_bls12_381::g2::Config {
    const CURVE: Curve = Curve::G2;
    fn affine_to_words(p: &Affine<Self>, out: &mut [u32]) {
        limbs::g2_to_words(p, out)
    }
    fn affine_from_words(words: &[u32]) -> Affine<Self> {
        limbs::g2_from_words(words)
    }
    fn xyzz_to_projective(words: &[u32]) -> Projective<Self> {
        limbs::g2_xyzz_to_projective(words)
    }
}

/// A device array of `len` elements, split into buffers of 2^log elements each (the last
/// one shorter), so that no binding exceeds the adapter's limit.
pub(crate) struct Chunked {
    pub(crate) elem: Elem,
    pub(crate) len: usize,
    pub(crate) chunks: Vec<wgpu::Buffer>,
    pub(crate) log: u32,
}

impl Chunked {
    /// (buffer, byte offset, bytes) of each chunk's elements, in order.
    pub(crate) fn parts(&self) -> Vec<(&wgpu::Buffer, u64, u64)> {
        let per = 1u64 << self.log;
        self.chunks
            .iter()
            .enumerate()
            .map(|(k, b)| {
                let elems = (self.len as u64).saturating_sub(k as u64 * per).min(per);
                (b, 0, elems * self.elem.bytes())
            })
            .collect()
    }
}

/// Fr scalars on the device.
pub(crate) struct FrBuffer(pub(crate) Chunked);

impl FrBuffer {
    pub(crate) fn len(&self) -> usize {
        self.0.len
    }
}

/// Shifted bases of a base vector (msm.rs makes them, shaders/msm/table.wgsl computes them):
/// `table[w·len + i]` = 2^(c·w)·P_i, affine, for every window w of `layout`.
pub(crate) struct Shifted {
    pub(crate) table: Chunked,
    pub(crate) layout: Layout,
}

impl Shifted {
    /// Points a window: the base vector's length.
    pub(crate) fn stride(&self) -> usize {
        self.table.len / self.layout.windows as usize
    }
}

/// Resident bases of group `G` (affine), with their shifted bases where made.
pub struct Bases<G: Group> {
    /// The points in groups of at most [`Memory::max_elements`] (every group but the last
    /// full): one kernel binds one group's split bindings, so a vector longer than a group
    /// (G2 beyond 2^25 points on a 2 GiB binding) is several, and its MSM several sub-MSMs.
    pub(crate) points: Vec<Chunked>,
    /// Only for a vector of one group.
    pub(crate) shifted: Option<Shifted>,
    _group: PhantomData<fn() -> G>,
}

pub type G1Buffer = Bases<ark_bls12_381::g1::Config>;
pub type G2Buffer = Bases<ark_bls12_381::g2::Config>;

impl<G: Group> Bases<G> {
    pub(crate) fn new(points: Vec<Chunked>, shifted: Option<Shifted>) -> Self {
        Bases { points, shifted, _group: PhantomData }
    }

    pub fn len(&self) -> usize {
        self.points.iter().map(|g| g.len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements a group holds (the first group's length: every group but the last is full).
    pub(crate) fn group_len(&self) -> usize {
        self.points.first().map_or(0, |g| g.len).max(1)
    }

    /// The window width of the shifted bases made at upload, if any.
    pub fn shifted_window(&self) -> Option<u32> {
        self.shifted.as_ref().map(|s| s.layout.c)
    }
}

/// Free pooled buffers: (purpose, size in bytes, buffer).
type Pool = Mutex<Vec<(&'static str, u64, wgpu::Buffer)>>;

/// The device's allocations: split arrays, single bindings, pooled temporaries, and the
/// placeholder arrays bound where a kernel's layout has a binding it does not use.
pub struct Memory {
    dev: Arc<WgpuDevice>,
    pool: Pool,
    placeholders: Mutex<HashMap<Elem, Arc<Chunked>>>,
    /// Bytes of each upload slot (`WgpuOptions::upload_slot_bytes`).
    slot_bytes: u64,
    /// Made at the first large upload.
    upload_slots: Mutex<Vec<UploadSlot>>,
}

/// Bytes of an upload slot unless `WgpuOptions::upload_slot_bytes` says otherwise: 16 MiB, as
/// the CUDA backend's pinned slots.
pub const UPLOAD_SLOT_BYTES: u64 = 16 << 20;

impl Memory {
    pub(crate) fn new(dev: Arc<WgpuDevice>, slot_bytes: Option<u64>) -> Memory {
        // A whole number of words, and at least one of the largest element (a G2 point).
        let slot_bytes = slot_bytes.unwrap_or(UPLOAD_SLOT_BYTES).max(Elem::G2Xyzz.bytes()) / 4 * 4;
        Memory {
            dev,
            pool: Mutex::default(),
            placeholders: Mutex::default(),
            slot_bytes,
            upload_slots: Mutex::default(),
        }
    }

    /// Bytes of each upload slot.
    pub(crate) fn slot_bytes(&self) -> u64 {
        self.slot_bytes
    }

    /// The two upload slots, held by one upload at a time (the guard): made at the first call.
    pub(crate) fn upload_slots(&self) -> Result<MutexGuard<'_, Vec<UploadSlot>>, WgpuError> {
        let mut slots = lock(&self.upload_slots);
        while slots.len() < 2 {
            let usage = wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC;
            let buffer = self.create("upload slot", self.slot_bytes, usage)?;
            slots.push(UploadSlot { buffer, state: SlotState::Unmapped });
        }
        Ok(slots)
    }

    pub(crate) fn device(&self) -> &WgpuDevice {
        &self.dev
    }

    /// log2 of the elements per buffer of an `elem` array.
    pub(crate) fn chunk_log(&self, elem: Elem) -> u32 {
        elem.chunk_log(self.dev.binding_bytes())
    }

    /// The most elements an `elem` array can hold (its split bindings full).
    pub fn max_elements(&self, elem: Elem) -> u64 {
        (1u64 << self.chunk_log(elem)) * SPLIT_SLOTS as u64
    }

    /// A buffer; out of memory, the pooled temporaries no operation holds are freed and it
    /// tries again.
    pub(crate) fn create(&self, what: &str, size: u64, usage: wgpu::BufferUsages) -> Result<wgpu::Buffer, WgpuError> {
        match self.dev.create_buffer(what, size, usage) {
            Err(WgpuError::OutOfMemory { .. }) if self.clear_pool() => {
                self.dev.wait()?;
                self.dev.create_buffer(what, size, usage)
            }
            other => other,
        }
    }

    /// Drops every free pooled buffer; false if there was none.
    fn clear_pool(&self) -> bool {
        let mut free = lock(&self.pool);
        let had = !free.is_empty();
        free.clear();
        had
    }

    /// A storage buffer that is bound whole (one binding): it must fit in one.
    pub(crate) fn plain(&self, what: &str, bytes: u64) -> Result<wgpu::Buffer, WgpuError> {
        let limit = self.dev.binding_bytes();
        if bytes > limit {
            return Err(WgpuError::TooLarge { what: what.to_string(), requested: bytes, limit });
        }
        self.create(what, bytes, storage_usage())
    }

    /// An array of `len` elements in as many buffers as the binding limit needs; zeroed.
    pub(crate) fn chunked(&self, what: &str, elem: Elem, len: usize) -> Result<Chunked, WgpuError> {
        let log = self.chunk_log(elem);
        let per = 1usize << log;
        let count = len.div_ceil(per).max(1);
        if count > SPLIT_SLOTS {
            return Err(WgpuError::TooLarge {
                what: format!("{what} ({len} elements of {} bytes)", elem.bytes()),
                requested: len as u64 * elem.bytes(),
                limit: self.max_elements(elem) * elem.bytes(),
            });
        }
        let mut chunks = Vec::with_capacity(count);
        for k in 0..count {
            let elems = (len - (k * per).min(len)).min(per) as u64;
            chunks.push(self.create(what, elems * elem.bytes(), storage_usage())?);
        }
        Ok(Chunked { elem, len, chunks, log })
    }

    /// A one-element array to bind where a kernel's layout has a binding it does not use.
    pub(crate) fn placeholder(&self, elem: Elem) -> Result<Arc<Chunked>, WgpuError> {
        if let Some(d) = lock(&self.placeholders).get(&elem) {
            return Ok(d.clone());
        }
        let d = Arc::new(self.chunked("unused binding", elem, 1)?);
        lock(&self.placeholders).insert(elem, d.clone());
        Ok(d)
    }

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
        let taken = {
            let mut free = lock(&self.pool);
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
            None => (bytes, make()?),
        };
        Ok(Scratch { pool: &self.pool, what, size, buffer: Some(buffer) })
    }
}

/// Where an upload slot's mapping stands.
enum SlotState {
    /// Mapped: the host may write it.
    Mapped,
    /// Its mapping was asked for, to complete once submission `after` (the copy out of it, if
    /// any) is done.
    Mapping { done: Receiver<Result<(), wgpu::BufferAsyncError>>, after: Option<wgpu::SubmissionIndex> },
    /// Neither (new, or after a failed mapping).
    Unmapped,
}

/// A mappable buffer that uploads are written into and copied out of, mapped again as soon as
/// its copy is submitted so that it is ready when the host comes back to it.
pub(crate) struct UploadSlot {
    buffer: wgpu::Buffer,
    state: SlotState,
}

impl UploadSlot {
    /// Its first `bytes` for the host to write, once its last copy is done and it is mapped.
    pub(crate) fn view(&mut self, dev: &WgpuDevice, bytes: u64) -> Result<wgpu::BufferViewMut, WgpuError> {
        if matches!(self.state, SlotState::Unmapped) {
            self.map(None);
        }
        if let SlotState::Mapping { done, after } = &self.state {
            if let Some(index) = after {
                dev.wait_for(index.clone(), "an upload slot's copy")?;
            }
            let result = match done.try_recv() {
                Err(TryRecvError::Empty) => {
                    // The copy is done but the callback has not run: callbacks run in a poll.
                    dev.wait()?;
                    done.try_recv().map_err(|_| WgpuError::Device("an upload slot was never mapped".into()))?
                }
                other => other.map_err(|_| WgpuError::Device("an upload slot was never mapped".into()))?,
            };
            if let Err(e) = result {
                self.state = SlotState::Unmapped;
                return Err(WgpuError::Device(format!("mapping an upload slot: {e}")));
            }
            self.state = SlotState::Mapped;
        }
        self.buffer
            .get_mapped_range_mut(0..bytes)
            .map_err(|e| WgpuError::Device(format!("an upload slot's range: {e}")))
    }

    /// Unmaps it (the host's view dropped), submits the copies `encode` records out of it, and
    /// asks for the mapping back, to complete when they are done. The submission's index.
    pub(crate) fn copy_out(
        &mut self,
        dev: &WgpuDevice,
        encode: impl FnOnce(&mut wgpu::CommandEncoder, &wgpu::Buffer),
    ) -> wgpu::SubmissionIndex {
        self.buffer.unmap();
        self.state = SlotState::Unmapped;
        let mut encoder = dev.wgpu().create_command_encoder(&Default::default());
        encode(&mut encoder, &self.buffer);
        let index = dev.queue().submit([encoder.finish()]);
        self.map(Some(index.clone()));
        index
    }

    fn map(&mut self, after: Option<wgpu::SubmissionIndex>) {
        let (tx, done) = channel();
        self.buffer.map_async(wgpu::MapMode::Write, .., move |r| {
            let _ = tx.send(r);
        });
        self.state = SlotState::Mapping { done, after };
    }
}

fn storage_usage() -> wgpu::BufferUsages {
    wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST
}

/// A pooled buffer, given back on drop.
pub(crate) struct Scratch<'m> {
    pool: &'m Pool,
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
            lock(self.pool).push((self.what, self.size, b));
        }
    }
}
