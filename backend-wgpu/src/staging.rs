//! Moving data between the host and the device: writes into split arrays through the upload
//! slots, read-backs through a mappable buffer, and the scalar and point conversions
//! (g16_backend's limb layouts, so a transfer reinterprets limbs and never computes).

use std::ops::Range;

use ark_ec::short_weierstrass::Affine;
use rayon::prelude::*;

use g16_backend::limbs::{fr_from_words, fr_to_words, FR_WORDS};
use g16_backend::Fr;

use crate::buffers::{Chunked, Elem, FrBuffer, Group, Memory};
use crate::device::WgpuDevice;
use crate::error::WgpuError;

/// Below this many bytes an upload goes through `write_buffer` (wgpu's own staging: a new
/// host-visible buffer a call, cheap at this size) rather than the upload slots.
const SMALL_UPLOAD_BYTES: u64 = 256 << 10;

/// Bytes one rayon task converts at a time: into its own words, then into the slot in one
/// copy (mapped memory may be write-combined: written in long runs, never read). 192 KiB, a
/// whole number of every element (4, 32, 96, 192 and 384 bytes).
const CONVERT_BYTES: usize = 192 << 10;

/// Writes `len` elements into `dst` from element 0, `convert(i, out)` giving element i's words,
/// and returns once the copy to the device is done.
///
/// Large uploads go through the two upload slots (buffers.rs) in turn: the elements of one
/// slot are converted straight into it (on rayon's pool) while the other slot's copy runs, so
/// an upload allocates nothing and touches each byte once on the host, as the CUDA backend's
/// pinned slots do. Each slot's elements are copied into the buffers of `dst` they fall in.
///
/// Why wait: an operation's time is its own on both backends (the CUDA backend's uploads also
/// return once copied): without the wait an upload's transfer lands in whatever operation
/// comes next and is counted as its time (docs/perf/wgpu.md, "Smaller choices").
pub(crate) fn write_items(
    mem: &Memory,
    dst: &Chunked,
    len: usize,
    convert: impl Fn(usize, &mut [u32]) + Sync,
) -> Result<(), WgpuError> {
    let dev = mem.device();
    let per = dst.elem.words();
    if ((len * per * 4) as u64) < SMALL_UPLOAD_BYTES {
        let mut words = vec![0u32; len * per];
        words.chunks_exact_mut(per).enumerate().for_each(|(i, out)| convert(i, out));
        return write_small(dev, dst, &words);
    }
    let slot_items = (mem.slot_bytes() as usize / (per * 4)).max(1);
    let chunk_items = 1usize << dst.log;
    let mut slots = mem.upload_slots()?;
    let mut last = None;
    for (k, start) in (0..len).step_by(slot_items).enumerate() {
        let items = slot_items.min(len - start);
        let slot = &mut slots[k % 2];
        {
            let mut view = slot.view(dev, (items * per * 4) as u64)?;
            convert_into(view.slice(..), start..start + items, per, &convert);
        }
        let bytes = |elems: usize| (elems * per * 4) as u64;
        last = Some(slot.copy_out(dev, |encoder, src| {
            for (at, chunk, inside, n) in cut(start..start + items, chunk_items) {
                encoder.copy_buffer_to_buffer(src, bytes(at - start), &dst.chunks[chunk], bytes(inside), bytes(n));
            }
        }));
    }
    if let Some(index) = last {
        dev.wait_for(index, "an upload")?;
    }
    Ok(())
}

/// Elements `range` converted into `out` (their words, in order), in parallel.
fn convert_into(
    out: wgpu::WriteOnly<'_, [u8]>,
    range: Range<usize>,
    per: usize,
    convert: &(impl Fn(usize, &mut [u32]) + Sync),
) {
    let group = CONVERT_BYTES / (per * 4);
    let fill = |words: &mut Vec<u32>, first: usize, mut part: wgpu::WriteOnly<'_, [u8]>| {
        let n = part.len() / (per * 4);
        words.resize(n * per, 0);
        for (i, w) in words.chunks_exact_mut(per).enumerate() {
            convert(first + i, w);
        }
        part.copy_from_slice(bytemuck::cast_slice(&words[..n * per]));
    };
    // Fixed-size blocks, since a write-only view of a fixed-size array can go to another
    // thread and one of a slice cannot.
    let (blocks, tail) = out.into_chunks::<CONVERT_BYTES>();
    let blocks: Vec<_> = blocks.into_iter().enumerate().collect();
    let whole = blocks.len();
    blocks
        .into_par_iter()
        .for_each_init(Vec::new, |words, (j, block)| fill(words, range.start + j * group, block.into()));
    if !tail.is_empty() {
        fill(&mut Vec::new(), range.start + whole * group, tail);
    }
}

/// Elements `range` of a split array cut at the ends of its buffers of `chunk_items`
/// elements: (first element, buffer, first element inside it, elements), in order.
fn cut(range: Range<usize>, chunk_items: usize) -> impl Iterator<Item = (usize, usize, usize, usize)> {
    let end = range.end;
    std::iter::successors(Some(range.start).filter(|&at| at < end), move |&at| {
        Some(at + chunk_items - at % chunk_items).filter(|&next| next < end)
    })
    .map(move |at| (at, at / chunk_items, at % chunk_items, (chunk_items - at % chunk_items).min(end - at)))
}

/// `words` (whole elements) into `dst` from element 0 through `write_buffer`, once copied.
fn write_small(dev: &WgpuDevice, dst: &Chunked, words: &[u32]) -> Result<(), WgpuError> {
    let per = dst.elem.words();
    for (at, chunk, inside, n) in cut(0..words.len() / per, 1usize << dst.log) {
        let part = &words[at * per..(at + n) * per];
        dev.queue().write_buffer(&dst.chunks[chunk], (inside * per * 4) as u64, bytemuck::cast_slice(part));
    }
    let index = dev.queue().submit([]);
    dev.wait_for(index, "an upload")
}

/// A new `elem` array of `len` elements, `convert(i, out)` giving element i's words, once
/// copied.
pub(crate) fn upload_items(
    mem: &Memory,
    what: &str,
    elem: Elem,
    len: usize,
    convert: impl Fn(usize, &mut [u32]) + Sync,
) -> Result<Chunked, WgpuError> {
    let buf = mem.chunked(what, elem, len)?;
    write_items(mem, &buf, len, convert)?;
    mem.device().check_errors(&format!("uploading {what}"))?;
    Ok(buf)
}

/// A new `elem` array holding `words`, once copied.
pub(crate) fn upload(mem: &Memory, what: &str, elem: Elem, words: &[u32]) -> Result<Chunked, WgpuError> {
    let per = elem.words();
    upload_items(mem, what, elem, words.len() / per, |i, out| out.copy_from_slice(&words[i * per..(i + 1) * per]))
}

pub(crate) fn upload_fr(mem: &Memory, host: &[Fr]) -> Result<FrBuffer, WgpuError> {
    Ok(FrBuffer(upload_items(mem, "scalars", Elem::Fr, host.len(), |i, out| fr_to_words(&host[i], out))?))
}

pub(crate) fn download_fr(mem: &Memory, buf: &FrBuffer) -> Result<Vec<Fr>, WgpuError> {
    let words = read(mem, &buf.0)?;
    Ok(words.par_chunks_exact(FR_WORDS).map(fr_from_words).collect())
}

/// Affine points of `G` as a new array, once copied.
pub(crate) fn upload_points<G: Group>(mem: &Memory, host: &[Affine<G>]) -> Result<Chunked, WgpuError> {
    let what = format!("{} bases", G::CURVE.prefix().to_uppercase());
    upload_items(mem, &what, G::CURVE.affine(), host.len(), |i, out| G::affine_to_words(&host[i], out))
}

/// Words as a new buffer bound whole (it must fit one binding), once copied.
pub(crate) fn upload_words(mem: &Memory, what: &str, words: &[u32]) -> Result<wgpu::Buffer, WgpuError> {
    let dev = mem.device();
    let buf = mem.plain(what, (words.len() as u64 * 4).max(4))?;
    dev.queue().write_buffer(&buf, 0, bytemuck::cast_slice(words));
    let index = dev.queue().submit([]);
    dev.wait_for(index, "an upload")?;
    dev.check_errors(&format!("uploading {what}"))?;
    Ok(buf)
}

/// Reads all `len` elements of an array back, as words.
pub(crate) fn read(mem: &Memory, src: &Chunked) -> Result<Vec<u32>, WgpuError> {
    read_back(mem, &src.parts())
}

/// Reads buffers back: each (buffer, byte offset, bytes) in turn, concatenated as words.
pub(crate) fn read_back(mem: &Memory, parts: &[(&wgpu::Buffer, u64, u64)]) -> Result<Vec<u32>, WgpuError> {
    let total: u64 = parts.iter().map(|p| p.2).sum();
    if total == 0 {
        return Ok(Vec::new());
    }
    let dev = mem.device();
    let staging = mem.create("readback", total, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?;
    let mut encoder = dev.wgpu().create_command_encoder(&Default::default());
    let mut at = 0;
    for (buf, offset, bytes) in parts {
        if *bytes > 0 {
            encoder.copy_buffer_to_buffer(buf, *offset, &staging, at, *bytes);
        }
        at += bytes;
    }
    dev.queue().submit([encoder.finish()]);
    let words = dev.map_read(&staging, total)?;
    dev.check_errors("reading back")?;
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn cuts_fall_at_the_ends_of_buffers() {
        let pieces: Vec<_> = cut(5..23, 8).collect();
        assert_eq!(pieces, vec![(5, 0, 5, 3), (8, 1, 0, 8), (16, 2, 0, 7)]);
        assert_eq!(cut(8..16, 8).collect::<Vec<_>>(), vec![(8, 1, 0, 8)], "one whole buffer");
        assert_eq!(cut(3..3, 8).count(), 0, "nothing");
        // Every element once, in order, none across a buffer's end.
        for (start, end, per) in [(0, 100, 7), (13, 14, 4), (1, 64, 1)] {
            let mut next = start;
            for (at, chunk, inside, n) in cut(start..end, per) {
                assert_eq!((at, chunk * per + inside), (next, at));
                assert!(n >= 1 && inside + n <= per);
                next += n;
            }
            assert_eq!(next, end);
        }
    }
}
