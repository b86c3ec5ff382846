//! Moving data between the host and the device: writes into split arrays, read-backs through
//! a mappable buffer, and the scalar and point conversions (g16_backend's limb layouts, so a
//! transfer reinterprets limbs and never computes).

use ark_ec::short_weierstrass::Affine;
use rayon::prelude::*;

use g16_backend::limbs::{fr_from_words, fr_to_words, to_words, FR_WORDS};
use g16_backend::Fr;

use crate::buffers::{Chunked, Elem, FrBuffer, Group, Memory};
use crate::device::WgpuDevice;
use crate::error::WgpuError;

/// Writes `words` (whole elements) into `dst` from element 0, and returns once the copy to
/// the device is done.
///
/// Why wait: `write_buffer` only stages the data; the transfer runs with the next submission,
/// so without the flush an upload's transfer time lands in whatever operation comes next and
/// is counted as its time (docs/perf/wgpu.md, "Smaller choices"). The CUDA backend's uploads also
/// return once copied, so an operation's time is its own on both.
pub(crate) fn write(dev: &WgpuDevice, dst: &Chunked, words: &[u32]) -> Result<(), WgpuError> {
    let w = dst.elem.words();
    let per = 1usize << dst.log;
    for (k, chunk) in dst.chunks.iter().enumerate() {
        let lo = (k * per * w).min(words.len());
        let hi = ((k + 1) * per * w).min(words.len());
        if hi > lo {
            dev.queue().write_buffer(chunk, 0, bytemuck::cast_slice(&words[lo..hi]));
        }
    }
    let index = dev.queue().submit([]);
    dev.wait_for(index, "an upload")
}

/// A new `elem` array holding `words`, once copied.
pub(crate) fn upload(mem: &Memory, what: &str, elem: Elem, words: &[u32]) -> Result<Chunked, WgpuError> {
    let buf = mem.chunked(what, elem, words.len() / elem.words())?;
    write(mem.device(), &buf, words)?;
    mem.device().check_errors(&format!("uploading {what}"))?;
    Ok(buf)
}

pub(crate) fn upload_fr(mem: &Memory, host: &[Fr]) -> Result<FrBuffer, WgpuError> {
    Ok(FrBuffer(upload(mem, "scalars", Elem::Fr, &to_words(host, FR_WORDS, fr_to_words))?))
}

pub(crate) fn download_fr(mem: &Memory, buf: &FrBuffer) -> Result<Vec<Fr>, WgpuError> {
    let words = read(mem, &buf.0)?;
    Ok(words.par_chunks_exact(FR_WORDS).map(fr_from_words).collect())
}

/// Affine points of `G` as a new array, once copied.
pub(crate) fn upload_points<G: Group>(mem: &Memory, host: &[Affine<G>]) -> Result<Chunked, WgpuError> {
    let elem = G::CURVE.affine();
    let what = format!("{} bases", G::CURVE.prefix().to_uppercase());
    upload(mem, &what, elem, &to_words(host, elem.words(), G::affine_to_words))
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
