//! NTTs and the pointwise ops of H on Fr buffers.
//!
//! An NTT of 2^L elements is a few passes of the pass kernel (shaders/ntt/ntt.wgsl, whose
//! header has the maths): each pass reads the array once, runs up to 8 stages in workgroup
//! memory, and writes it once, ping-ponging between the buffer and a cached scratch buffer of
//! the same size — when the result ends in the scratch the two are swapped, so no copy is
//! made. The passes are planned from the tile the device's workgroup storage holds
//! ([`NttTile`]): one pass up to the tile, else the fewest passes of at most 8 stages, as the
//! CUDA backend plans them.
//!
//! Coset NTTs multiply input i by g^i in the first pass's load, inverse ones scale output i by
//! n⁻¹ (times g^(−i) on the coset) in the last pass's store. Each direction has one table per
//! size, computed once on the host and kept on the device ([`DirectionTable`]): the
//! butterflies' roots, the inter-pass twiddles ω^(±e) for e < n/2 (the half table), then the
//! short power tables of the scalings. (A split power table for the twiddles, one product more
//! a twiddle and a few hundred KiB instead of n/2 elements, ran within 4 % of the half table
//! on the H200: docs/perf/wgpu.md, "The NTT's cliff".)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ark_ff::{FftField, Field};
use rayon::prelude::*;

use g16_backend::limbs::{fr_to_words, FR_WORDS};
use g16_backend::ntt_plan::balanced_passes;
use g16_backend::Fr;
use g16_backend::{check_ntt_len, check_same_len, NttKind};

use crate::buffers::{Chunked, Elem, FrBuffer, Memory};
use crate::compile::{Module, NttTile, Pipelines, Res};
use crate::device::lock;
use crate::error::WgpuError;
use crate::staging;
use crate::timing::{Op, Tag, Timing};

/// Most stages a pass runs when an NTT takes several: three passes reach 2^24, as on CUDA.
const MAX_PASS_STAGES: u32 = 8;

/// The split of the power tables: power(i) = hi[i >> SPLIT]·lo[i mod 2^SPLIT] (`NTT_SPLIT`
/// in shaders/ntt/ntt.wgsl).
const SPLIT: u32 = 12;

/// The stages of each pass of an NTT of 2^log_n on tiles of 2^tile_log elements: one pass
/// when the whole transform fits a tile; else the fewest passes of at most
/// min(8, tile_log − 1) stages, balanced (a tile of 1024: 2^24 in 8, 8, 8; 2^22 in 8, 7, 7).
/// At most tile_log − 1 stages leaves a pass at least two columns a tile row, so that its
/// reads and writes move at least 64 adjacent bytes; with WebGPU's 16 KiB (a tile of 512) that
/// still reaches 2^24 in three passes, where four columns would take four.
pub fn plan_passes(log_n: u32, tile_log: u32) -> Vec<u32> {
    plan_passes_of_at_most(log_n, tile_log, MAX_PASS_STAGES)
}

/// As [`plan_passes`], with passes of at most `max_stages` (≤ 8) when there are several.
fn plan_passes_of_at_most(log_n: u32, tile_log: u32, max_stages: u32) -> Vec<u32> {
    balanced_passes(log_n, tile_log, max_stages.min(MAX_PASS_STAGES).min(tile_log.saturating_sub(1)).max(1))
}

/// One dispatch of the pass kernel: stages s0+1 … s0+k, tiles of 2^log_cols columns whose rows
/// are `stride` elements apart in workgroup memory, one workgroup a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PassLaunch {
    s0: u32,
    k: u32,
    log_cols: u32,
    stride: u32,
    workgroups: u32,
}

/// The dispatches of an NTT of 2^log_n on `tile`: as many columns a tile as it holds and as
/// the pass has (first pass: 2^(L−k) groups; later ones: 2^s0 columns a group), and a pad
/// element a row where the workgroup array has room for it.
fn plan_launches(log_n: u32, tile: NttTile, max_stages: u32) -> Vec<PassLaunch> {
    let mut s0 = 0;
    plan_passes_of_at_most(log_n, tile.log, max_stages)
        .into_iter()
        .map(|k| {
            let log_cols = (tile.log - k).min(if s0 == 0 { log_n - k } else { s0 });
            let cols = 1u32 << log_cols;
            let padded = cols > 1 && (cols + 1) << k <= tile.shared;
            let stride = cols + u32::from(padded);
            let launch = PassLaunch { s0, k, log_cols, stride, workgroups: 1 << (log_n - k - log_cols) };
            s0 += k;
            launch
        })
        .collect()
}

/// scale·base^i for i < count, in parallel stretches.
fn powers(base: Fr, scale: Fr, count: usize) -> Vec<Fr> {
    const STRETCH: usize = 1 << 12;
    (0..count.div_ceil(STRETCH))
        .into_par_iter()
        .flat_map_iter(|k| {
            let start = k * STRETCH;
            let mut x = scale * base.pow([start as u64]);
            (start..(start + STRETCH).min(count)).map(move |_| {
                let out = x;
                x *= base;
                out
            })
        })
        .collect()
}

/// Where a power table scale·base^i (i < n) lies in a direction's table: its low part
/// base^j (j < min(n, 2^SPLIT)) at `lo`, its high part scale·base^(2^SPLIT·j) after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PowerTable {
    hi: u32,
    lo: u32,
}

impl PowerTable {
    /// (low part's length, high part's length) for a domain of n.
    fn lens(n: usize) -> (usize, usize) {
        (n.min(1 << SPLIT), (n >> SPLIT).max(1))
    }

    /// Appends the table of scale·base^i, i < n, to `table`, and says where it went.
    fn append(table: &mut Vec<Fr>, base: Fr, scale: Fr, n: usize) -> PowerTable {
        let (lo_len, hi_len) = Self::lens(n);
        let lo = table.len();
        table.extend(powers(base, Fr::ONE, lo_len));
        table.extend(powers(base.pow([1u64 << SPLIT]), scale, hi_len));
        PowerTable { hi: (lo + lo_len) as u32, lo: lo as u32 }
    }
}

/// What a direction's table of a domain of n holds, and where (offsets in Fr elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TableLayout {
    /// ω_(2^roots_log)^(±j) for j < 2^(roots_log − 1), from offset 0.
    roots_log: u32,
    /// The inter-pass twiddles ω^(±e) for e < n/2, from this offset (the kernel negates the
    /// upper half).
    twiddles: u32,
    /// The coset shift's power table: forward g^i, inverse n⁻¹·g^(−i).
    coset: PowerTable,
    /// Forward, snarkjs's ω₂ₙ^i; inverse, a copy of `coset`.
    odd_coset: PowerTable,
}

/// One direction's table of a domain of 2^log, for passes of at most `roots_log` stages, on
/// the host: the layout, and the elements.
fn direction_table(log: u32, inverse: bool, roots_log: u32) -> (TableLayout, Vec<Fr>) {
    let n = 1usize << log;
    let invert = |x: Fr| if inverse { x.inverse().unwrap_or(Fr::ONE) } else { x };
    // Fr's two-adicity (32) exceeds every domain here, so these roots exist.
    let root = |order: u64| invert(Fr::get_root_of_unity(order).unwrap_or(Fr::ONE));
    let omega = root(n as u64);
    let roots_len = (1usize << roots_log) / 2;
    let (lo_len, hi_len) = PowerTable::lens(n);
    let mut host = Vec::with_capacity(roots_len + n / 2 + 3 * (lo_len + hi_len));
    host.extend(powers(root(1 << roots_log), Fr::ONE, roots_len));
    let twiddles = host.len() as u32;
    host.extend(powers(omega, Fr::ONE, n / 2));
    let g = invert(Fr::GENERATOR);
    let (coset, odd_coset) = if inverse {
        let n_inv = Fr::from(n as u64).inverse().unwrap_or(Fr::ONE);
        let coset = PowerTable::append(&mut host, g, n_inv, n);
        (coset, coset)
    } else {
        let coset = PowerTable::append(&mut host, g, Fr::ONE, n);
        (coset, PowerTable::append(&mut host, root(2 * n as u64), Fr::ONE, n))
    };
    (TableLayout { roots_log, twiddles, coset, odd_coset }, host)
}

/// One direction's table of a domain of n, on the device.
struct DirectionTable {
    table: Chunked,
    layout: TableLayout,
}

/// How a pass scales what it loads or stores (the kernel's `load_mode`, `store_mode`).
#[derive(Clone, Copy, Debug)]
enum Scaling {
    None,
    /// By the constant (the kernel has it for stores only).
    Constant(Fr),
    /// Element i by entry i of a power table.
    Powers(PowerTable),
}

impl Scaling {
    fn mode(self) -> u32 {
        match self {
            Scaling::None => 0,
            Scaling::Constant(_) => 1,
            Scaling::Powers(_) => 2,
        }
    }

    fn table(self) -> PowerTable {
        match self {
            Scaling::Powers(t) => t,
            _ => PowerTable { hi: 0, lo: 0 },
        }
    }
}

/// The pass kernel's uniform (`Params` in shaders/ntt/ntt.wgsl).
fn pass_params(log_n: u32, pass: &PassLaunch, layout: &TableLayout, load: Scaling, store: Scaling) -> Vec<u32> {
    let (l, s) = (load.table(), store.table());
    let mut p = vec![log_n, pass.s0, pass.k, pass.log_cols, pass.stride, load.mode(), store.mode()];
    p.extend([layout.roots_log, layout.twiddles, l.hi, l.lo, s.hi, s.lo, 0, 0, 0]);
    let mut scale = [0u32; FR_WORDS];
    if let Scaling::Constant(c) = store {
        fr_to_words(&c, &mut scale);
    }
    p.extend_from_slice(&scale);
    p
}

/// The pointwise module's uniform: n, padding, then the constant's eight limbs.
fn pointwise_params(n: usize, k: Fr) -> Vec<u32> {
    let mut p = vec![n as u32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    fr_to_words(&k, &mut p[4..12]);
    p
}

/// The NTT layer of one device: its tables by size and direction, and its free scratch buffers
/// by length.
pub(crate) struct Ntt {
    mem: Arc<Memory>,
    pipelines: Arc<Pipelines>,
    timing: Arc<Timing>,
    max_stages: u32,
    tables: Mutex<HashMap<(u32, bool), Arc<DirectionTable>>>,
    scratch: Mutex<HashMap<usize, Vec<Chunked>>>,
}

impl Ntt {
    pub(crate) fn new(
        mem: Arc<Memory>,
        pipelines: Arc<Pipelines>,
        timing: Arc<Timing>,
        max_stages: Option<u32>,
    ) -> Ntt {
        let max_stages = max_stages.unwrap_or(MAX_PASS_STAGES);
        Ntt { mem, pipelines, timing, max_stages, tables: Mutex::default(), scratch: Mutex::default() }
    }

    /// The largest NTT: Fr's two-adicity, the split bindings, and 32-bit thread indices.
    pub(crate) fn max_log2(&self) -> u32 {
        let by_memory = 63 - self.mem.max_elements(Elem::Fr).leading_zeros();
        Fr::TWO_ADICITY.min(by_memory).min(31)
    }

    /// The table of direction `inverse` for a domain of 2^log, for passes of at most
    /// `roots_log` stages (fixed by the device's tile, so one table a size and direction).
    fn table(&self, log: u32, inverse: bool, roots_log: u32) -> Result<Arc<DirectionTable>, WgpuError> {
        if let Some(t) = lock(&self.tables).get(&(log, inverse)) {
            return Ok(t.clone());
        }
        let (layout, host) = direction_table(log, inverse, roots_log);
        let table = self.mem.chunked("NTT table", Elem::Fr, host.len())?;
        staging::write_items(&self.mem, &table, host.len(), |i, out| fr_to_words(&host[i], out))?;
        let table = Arc::new(DirectionTable { table, layout });
        lock(&self.tables).insert((log, inverse), table.clone());
        Ok(table)
    }

    fn take_scratch(&self, n: usize) -> Result<Chunked, WgpuError> {
        if let Some(s) = lock(&self.scratch).get_mut(&n).and_then(Vec::pop) {
            return Ok(s);
        }
        self.mem.chunked("NTT scratch", Elem::Fr, n)
    }

    fn give_scratch(&self, s: Chunked) {
        lock(&self.scratch).entry(s.len).or_default().push(s);
    }

    /// In place, natural order in and out; one device span, `kind.span_name()`.
    pub(crate) fn ntt(&self, buf: &mut FrBuffer, kind: NttKind, tag: Tag) -> Result<(), WgpuError> {
        let n = buf.len();
        check_ntt_len(n, self.max_log2())?;
        let dev = self.mem.device();
        let log = n.trailing_zeros();
        let launches = plan_launches(log, NttTile::of(dev)?, self.max_stages);
        let roots_log = launches.iter().map(|l| l.k).max().unwrap_or(0);
        let table = self.table(log, kind.is_inverse(), roots_log)?;
        let layout = &table.layout;
        let (load, store) = match kind {
            NttKind::Forward => (Scaling::None, Scaling::None),
            NttKind::Inverse => (Scaling::None, Scaling::Constant(Fr::from(n as u64).inverse().unwrap_or(Fr::ONE))),
            NttKind::CosetForward => (Scaling::Powers(layout.coset), Scaling::None),
            NttKind::OddCosetForward => (Scaling::Powers(layout.odd_coset), Scaling::None),
            NttKind::CosetInverse => (Scaling::None, Scaling::Powers(layout.coset)),
        };
        let kernel = self.pipelines.kernel(Module::Ntt, "ntt_pass")?;
        let scratch = self.take_scratch(n)?;
        let mut groups = Vec::with_capacity(launches.len());
        for (i, pass) in launches.iter().enumerate() {
            let (src, dst) = if i % 2 == 0 { (&buf.0, &scratch) } else { (&scratch, &buf.0) };
            let load = if i == 0 { load } else { Scaling::None };
            let store = if i + 1 == launches.len() { store } else { Scaling::None };
            let params = pass_params(log, pass, layout, load, store);
            let group = kernel.bind(dev, &params, &[Res::Split(src), Res::Split(dst), Res::Split(&table.table)])?;
            groups.push((group, u64::from(pass.workgroups)));
        }
        let mut op = Op::new(&self.timing, tag, None);
        {
            let mut pass = op.pass(kind.span_name());
            for (group, workgroups) in &groups {
                kernel.dispatch_groups(dev, &mut pass, group, *workgroups)?;
            }
        }
        op.submit()?;
        if launches.len() % 2 == 1 {
            let old = std::mem::replace(&mut buf.0, scratch);
            self.give_scratch(old);
        } else {
            self.give_scratch(scratch);
        }
        Ok(())
    }

    /// One pointwise op over `a` (and `b`, `c` where the op reads them), with constant `k`;
    /// one device span `name`.
    #[allow(clippy::too_many_arguments)] // reason: the op's whole description: entry, name, operands, constant, tag
    fn pointwise(
        &self,
        entry: &'static str,
        name: &'static str,
        a: &mut FrBuffer,
        b: Option<&FrBuffer>,
        c: Option<&FrBuffer>,
        k: Fr,
        tag: Tag,
    ) -> Result<(), WgpuError> {
        for other in [b, c].into_iter().flatten() {
            check_same_len(name, a.len(), other.len())?;
        }
        let n = a.len();
        if n == 0 {
            return Ok(());
        }
        let dev = self.mem.device();
        let kernel = self.pipelines.kernel(Module::Pointwise, entry)?;
        let unused = self.mem.placeholder(Elem::Fr)?;
        let b = b.map_or(&*unused, |x| &x.0);
        let c = c.map_or(&*unused, |x| &x.0);
        let group = kernel.bind(dev, &pointwise_params(n, k), &[Res::Split(&a.0), Res::Split(b), Res::Split(c)])?;
        let mut op = Op::new(&self.timing, tag, None);
        {
            let mut pass = op.pass(name);
            kernel.dispatch(dev, &mut pass, &group, n as u64)?;
        }
        op.submit()
    }

    /// `a[i] *= b[i]`
    pub(crate) fn mul_assign(&self, a: &mut FrBuffer, b: &FrBuffer, tag: Tag) -> Result<(), WgpuError> {
        self.pointwise("mul", "mul_assign", a, Some(b), None, Fr::ONE, tag)
    }

    /// `a[i] -= b[i]`
    pub(crate) fn sub_assign(&self, a: &mut FrBuffer, b: &FrBuffer, tag: Tag) -> Result<(), WgpuError> {
        self.pointwise("sub", "sub_assign", a, Some(b), None, Fr::ONE, tag)
    }

    /// `a[i] *= k`
    pub(crate) fn scale(&self, a: &mut FrBuffer, k: Fr, tag: Tag) -> Result<(), WgpuError> {
        self.pointwise("scale", "scale", a, None, None, k, tag)
    }

    /// `a[i] = (a[i]·b[i] − c[i])·k`, in one pass.
    pub(crate) fn quotient(
        &self,
        a: &mut FrBuffer,
        b: &FrBuffer,
        c: &FrBuffer,
        k: Fr,
        tag: Tag,
    ) -> Result<(), WgpuError> {
        self.pointwise("quotient", "quotient", a, Some(b), Some(c), k, tag)
    }
}

#[cfg(test)]
mod tests;
