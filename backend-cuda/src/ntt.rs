//! NTTs over Fr and the pointwise operations of H (kernels: `kernels/ntt/`, whose header
//! documents the passes).
//!
//! Per domain size [`Ntt`] keeps, once: the twiddle tables ω^e and ω^(−e), either for e < n/2
//! (generated on the device from two small host-computed tables) or, with
//! [`NttTwiddles::Split`], those two small tables themselves (for e < n), the small tables of the
//! roots of unity of order 1024 that every pass's butterflies use (ω_1024^(±j), j < 512), the
//! small split tables of the coset shift g^i and of the inverse scalings n⁻¹ and n⁻¹·g^(−i);
//! and a scratch vector for the passes to ping-pong with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ark_bls12_381::Fr;
use ark_ff::{FftField, Field};
use cudarc::driver::CudaSlice;
use g16_backend::limbs::{fr_to_words, FR_WORDS};
use g16_backend::ntt_plan::balanced_passes;
use g16_backend::timeline::SpanId;
use g16_backend::NttKind;

use crate::buffers::FrBuffer;
use crate::compile::{Arg, Kernel, Kernels};
use crate::device::{lock, CudaDevice};
use crate::error::CudaError;
use crate::options::{NttBlock, NttTwiddles};
use crate::timing::Timing;

/// Fr's two-adicity bounds the NTT length; 32-bit indices bound it too.
pub(crate) const MAX_NTT_LOG2: u32 = if Fr::TWO_ADICITY < 31 { Fr::TWO_ADICITY } else { 31 };

/// Split tables: `power(i) = hi[i >> 12]·lo[i & 4095]` (`NTT_SPLIT` in ntt.cu).
const SPLIT: u32 = 12;

/// Stages a round runs in registers (`NTT_LOG_RADIX` in ntt.cu): a block of E elements has
/// E >> LOG_RADIX threads.
const LOG_RADIX: u32 = 2;

/// The butterflies' roots: ω_(2^ROOTS_LOG)^j for j < 2^(ROOTS_LOG − 1) (`NTT_ROOTS_LOG`); a
/// pass has at most ROOTS_LOG stages.
const ROOTS_LOG: u32 = 10;

/// Stages per pass when an NTT takes several passes (a block then holds ≥ 4 columns of 1024
/// elements, ≥ 2 of 512).
const MAX_PASS_STAGES: u32 = 8;

/// The pass kernel (`kernels/ntt/ntt.cu`) of a block size.
fn pass_kernel(block: NttBlock) -> Kernel {
    match block {
        NttBlock::Elems1024 => Kernel::NttRadix4Pass,
        NttBlock::Elems512 => Kernel::NttRadix4Pass512,
    }
}

/// One direction's inter-pass twiddles, as the pass kernel's `tw` and `tw_lo` read them.
enum Twiddles {
    /// ω^e for e < n/2 (`tw_lo` null).
    Table(CudaSlice<u32>),
    /// (hi, lo): ω^e = hi[e >> 12]·lo[e & 4095] for e < n.
    Split(CudaSlice<u32>, CudaSlice<u32>),
}

struct NttTables {
    forward: Twiddles,
    inverse: Twiddles,
    roots_forward: CudaSlice<u32>,
    roots_inverse: CudaSlice<u32>,
    coset: (CudaSlice<u32>, CudaSlice<u32>),
    /// ω₂ₙ^i: the shift onto the odd 2n-th roots of unity (snarkjs's coset).
    odd_coset: (CudaSlice<u32>, CudaSlice<u32>),
    inverse_scale: (CudaSlice<u32>, CudaSlice<u32>),
    coset_inverse_scale: (CudaSlice<u32>, CudaSlice<u32>),
}

fn words(values: &[Fr]) -> Vec<u32> {
    let mut w = vec![0u32; values.len() * FR_WORDS];
    for (v, out) in values.iter().zip(w.chunks_mut(FR_WORDS)) {
        fr_to_words(v, out);
    }
    w
}

/// (hi, lo) with `hi[j] = scale·base^(4096·j)` for j < max(1, n/4096), `lo[i] = base^i` for
/// i < min(n, 4096).
fn split_table(base: Fr, scale: Fr, n: usize) -> (Vec<Fr>, Vec<Fr>) {
    let lo_len = n.min(1 << SPLIT);
    let hi_len = (n >> SPLIT).max(1);
    let mut lo = Vec::with_capacity(lo_len);
    let mut x = Fr::ONE;
    for _ in 0..lo_len {
        lo.push(x);
        x *= base;
    }
    let step = base.pow([1u64 << SPLIT]);
    let mut hi = Vec::with_capacity(hi_len);
    let mut y = scale;
    for _ in 0..hi_len {
        hi.push(y);
        y *= step;
    }
    (hi, lo)
}

/// The roots of one direction for the butterflies: ω_1024^j for j < 512 (ω_1024 from arkworks,
/// whose roots of orders 2^m are all powers of one 2-adic root, so these agree with every
/// domain's ω: ω_(2^(q+1)) = ω_1024^(2^(9−q)) = ω_n^(n/2^(q+1))).
fn butterfly_roots(inverse: bool) -> Vec<Fr> {
    let root = Fr::get_root_of_unity(1 << ROOTS_LOG).unwrap_or(Fr::ONE);
    let root = if inverse { root.inverse().unwrap_or(Fr::ONE) } else { root };
    std::iter::successors(Some(Fr::ONE), |x| Some(*x * root)).take(1 << (ROOTS_LOG - 1)).collect()
}

/// The passes of an NTT of 2^log_n in blocks of `block_elems`, in stages: one pass up to a
/// block (2^10 or 2^9), else the fewest passes of at most 8 stages, balanced (2^24: 8, 8, 8;
/// 2^22: 8, 7, 7).
fn plan_passes(log_n: u32, block_elems: u32) -> Vec<u32> {
    balanced_passes(log_n, ROOTS_LOG.min(block_elems.trailing_zeros()), MAX_PASS_STAGES)
}

/// One launch of the pass kernel: stages s0+1 … s0+k, blocks of 2^log_cols columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PassLaunch {
    s0: u32,
    k: u32,
    log_cols: u32,
    blocks: u32,
}

impl PassLaunch {
    /// Threads a block: 4 elements a thread a round, at least a warp (the kernel strides, so
    /// any count is correct).
    fn threads(&self) -> u32 {
        ((1u32 << (self.k + self.log_cols)) >> LOG_RADIX).max(32)
    }
}

/// The launches of an NTT of 2^log_n: as many columns a block as fit in `block_elems`, and as
/// the pass has (first pass: 2^(L−k) groups; later ones: 2^s0 columns a group).
fn plan_launches(log_n: u32, block_elems: u32) -> Vec<PassLaunch> {
    let mut s0 = 0;
    plan_passes(log_n, block_elems)
        .into_iter()
        .map(|k| {
            let log_block = block_elems.trailing_zeros();
            let log_cols = (log_block - k).min(if s0 == 0 { log_n - k } else { s0 });
            let elems = 1u32 << (k + log_cols);
            let launch = PassLaunch { s0, k, log_cols, blocks: (1u32 << log_n) / elems };
            s0 += k;
            launch
        })
        .collect()
}

/// How the pass kernel scales (its `load_mode` and `store_mode`): the coset shift g^i on the
/// first pass's load (1: split-table powers), the inverse scaling on the last pass's store
/// (1: the constant n⁻¹; 2: split-table powers n⁻¹·g^(−i)).
#[derive(Clone, Copy, Debug)]
struct ScaleModes {
    load: u32,
    store: u32,
}

impl ScaleModes {
    fn of(kind: NttKind) -> Self {
        match kind {
            NttKind::Forward => Self { load: 0, store: 0 },
            NttKind::Inverse => Self { load: 0, store: 1 },
            NttKind::CosetForward | NttKind::OddCosetForward => Self { load: 1, store: 0 },
            NttKind::CosetInverse => Self { load: 0, store: 2 },
        }
    }
}

/// The NTT layer of one device: its tables and scratch, by domain size, kept between NTTs.
pub(crate) struct Ntt {
    dev: Arc<CudaDevice>,
    kernels: Arc<Kernels>,
    timing: Arc<Timing>,
    tables: Mutex<HashMap<u32, Arc<NttTables>>>,
    scratch: Mutex<HashMap<usize, CudaSlice<u32>>>,
    layout: NttTwiddles,
    block: NttBlock,
}

impl Ntt {
    pub fn new(
        dev: Arc<CudaDevice>,
        kernels: Arc<Kernels>,
        timing: Arc<Timing>,
        layout: NttTwiddles,
        block: NttBlock,
    ) -> Ntt {
        let (tables, scratch) = (Mutex::new(HashMap::new()), Mutex::new(HashMap::new()));
        Ntt { dev, kernels, timing, tables, scratch, layout, block }
    }

    fn tables(&self, log_n: u32) -> Result<Arc<NttTables>, CudaError> {
        let dev = &*self.dev;
        if let Some(t) = lock(&self.tables).get(&log_n) {
            return Ok(t.clone());
        }
        let n = 1usize << log_n;
        let omega = Fr::get_root_of_unity(n as u64).ok_or(CudaError::NttSize { len: n, max_log2: MAX_NTT_LOG2 })?;
        let omega_inv = omega.inverse().unwrap_or(Fr::ONE);
        let g = Fr::GENERATOR;
        let g_inv = g.inverse().unwrap_or(Fr::ONE);
        // Fr's two-adicity (32) exceeds the largest NTT (2^31), so a 2n-th root exists.
        let omega_2n = Fr::get_root_of_unity(2 * n as u64).unwrap_or(Fr::ONE);
        let n_inv = Fr::from(n as u64).inverse().unwrap_or(Fr::ONE);
        let half = (n / 2).max(1);
        let twiddles = |base: Fr, what: &str| -> Result<Twiddles, CudaError> {
            if self.layout == NttTwiddles::Split {
                let (hi, lo) = split_table(base, Fr::ONE, n);
                return Ok(Twiddles::Split(dev.upload_words(what, &words(&hi))?, dev.upload_words(what, &words(&lo))?));
            }
            let (hi, lo) = split_table(base, Fr::ONE, half);
            let (hi, lo) = (dev.upload_words(what, &words(&hi))?, dev.upload_words(what, &words(&lo))?);
            let table = dev.alloc(what, half * FR_WORDS)?;
            let (t, h, l) = (dev.ptr(&table), dev.ptr(&hi), dev.ptr(&lo));
            let blocks = (half as u32).div_ceil(256).min(65_535);
            let args = [Arg::Ptr(t), Arg::Ptr(h), Arg::Ptr(l), Arg::U32(half as u32)];
            self.kernels.launch(Kernel::NttTwiddles, blocks, 256, &args)?;
            dev.synchronize()?; // the small tables are freed on return
            Ok(Twiddles::Table(table))
        };
        let split = |base: Fr, scale: Fr, what: &str| -> Result<(CudaSlice<u32>, CudaSlice<u32>), CudaError> {
            let (hi, lo) = split_table(base, scale, n);
            Ok((dev.upload_words(what, &words(&hi))?, dev.upload_words(what, &words(&lo))?))
        };
        let tables = Arc::new(NttTables {
            forward: twiddles(omega, "NTT twiddles")?,
            inverse: twiddles(omega_inv, "NTT twiddles")?,
            roots_forward: dev.upload_words("NTT roots", &words(&butterfly_roots(false)))?,
            roots_inverse: dev.upload_words("NTT roots", &words(&butterfly_roots(true)))?,
            coset: split(g, Fr::ONE, "coset powers")?,
            odd_coset: split(omega_2n, Fr::ONE, "odd coset powers")?,
            inverse_scale: split(Fr::ONE, n_inv, "inverse scaling")?,
            coset_inverse_scale: split(g_inv, n_inv, "inverse coset scaling")?,
        });
        lock(&self.tables).insert(log_n, tables.clone());
        Ok(tables)
    }

    /// In place, natural order in and out; the length is a power of two from 2 to
    /// 2^MAX_NTT_LOG2 (`g16_backend::check_ntt_len`).
    pub fn run(&self, buf: &mut FrBuffer, kind: NttKind, parent: Option<SpanId>) -> Result<(), CudaError> {
        let dev = &*self.dev;
        let n = buf.len;
        let _op = dev.op();
        let log_n = n.trailing_zeros();
        let tables = self.tables(log_n)?;
        let mut scratch = match lock(&self.scratch).remove(&n) {
            Some(s) => s,
            None => dev.alloc("NTT scratch", n * FR_WORDS)?,
        };
        let inverse = kind.is_inverse();
        let (tw, tw_lo) = match if inverse { &tables.inverse } else { &tables.forward } {
            Twiddles::Table(t) => (dev.ptr(t), 0),
            Twiddles::Split(hi, lo) => (dev.ptr(hi), dev.ptr(lo)),
        };
        let roots = dev.ptr(if inverse { &tables.roots_inverse } else { &tables.roots_forward });
        let modes = ScaleModes::of(kind);
        let (load_hi, load_lo) = match kind {
            NttKind::CosetForward => (dev.ptr(&tables.coset.0), dev.ptr(&tables.coset.1)),
            NttKind::OddCosetForward => (dev.ptr(&tables.odd_coset.0), dev.ptr(&tables.odd_coset.1)),
            _ => (0, 0),
        };
        let (store_hi, store_lo) = match kind {
            NttKind::Inverse => (dev.ptr(&tables.inverse_scale.0), dev.ptr(&tables.inverse_scale.1)),
            NttKind::CosetInverse => (dev.ptr(&tables.coset_inverse_scale.0), dev.ptr(&tables.coset_inverse_scale.1)),
            _ => (0, 0),
        };
        let passes = plan_launches(log_n, self.block.elems());
        let bufs = [dev.ptr(&buf.data), dev.ptr(&scratch)];
        let result = self.timing.span(kind.span_name(), parent, || {
            for (i, pass) in passes.iter().enumerate() {
                let (input, output) = (bufs[i % 2], bufs[(i + 1) % 2]);
                let (first, last) = (i == 0, i + 1 == passes.len());
                self.kernels.launch(
                    pass_kernel(self.block),
                    pass.blocks,
                    pass.threads(),
                    &[
                        Arg::Ptr(input),
                        Arg::Ptr(output),
                        Arg::Ptr(tw),
                        Arg::Ptr(tw_lo),
                        Arg::Ptr(roots),
                        Arg::U32(log_n),
                        Arg::U32(pass.s0),
                        Arg::U32(pass.k),
                        Arg::U32(pass.log_cols),
                        Arg::U32(if first { modes.load } else { 0 }),
                        Arg::Ptr(if first { load_hi } else { 0 }),
                        Arg::Ptr(if first { load_lo } else { 0 }),
                        Arg::U32(if last { modes.store } else { 0 }),
                        Arg::Ptr(if last { store_hi } else { 0 }),
                        Arg::Ptr(if last { store_lo } else { 0 }),
                    ],
                )?;
            }
            Ok(())
        });
        // An odd number of passes leaves the result in the scratch buffer: swap the two.
        if passes.len() % 2 == 1 {
            std::mem::swap(&mut buf.data, &mut scratch);
        }
        lock(&self.scratch).insert(n, scratch);
        result
    }

    /// Runs `op` on `a` as one launch, the device span named as the operation.
    pub fn pointwise(&self, a: &mut FrBuffer, op: Pointwise<'_>, parent: Option<SpanId>) -> Result<(), CudaError> {
        let dev = &*self.dev;
        let _op = dev.op();
        let constant;
        let (name, kernel, mut args) = match op {
            Pointwise::Mul(b) => ("mul_assign", Kernel::FrMul, vec![dev.ptr(&b.data)]),
            Pointwise::Sub(b) => ("sub_assign", Kernel::FrSub, vec![dev.ptr(&b.data)]),
            Pointwise::Scale(c) => {
                constant = dev.upload_words("a constant", &words(&[c]))?;
                ("scale", Kernel::FrScale, vec![dev.ptr(&constant)])
            }
            Pointwise::Quotient(b, c, z_inv) => {
                constant = dev.upload_words("a constant", &words(&[z_inv]))?;
                ("quotient", Kernel::FrQuotient, vec![dev.ptr(&b.data), dev.ptr(&c.data), dev.ptr(&constant)])
            }
        };
        args.insert(0, dev.ptr(&a.data));
        let mut args: Vec<Arg> = args.into_iter().map(Arg::Ptr).collect();
        args.push(Arg::U32(a.len as u32));
        let blocks = (a.len as u32).div_ceil(256).clamp(1, 8 * 1024);
        self.timing.span(name, parent, || self.kernels.launch(kernel, blocks, 256, &args))
    }
}

/// A pointwise operation on an Fr vector `a` (operands of its length: checked by the caller).
pub(crate) enum Pointwise<'a> {
    /// `a[i] *= b[i]`
    Mul(&'a FrBuffer),
    /// `a[i] -= b[i]`
    Sub(&'a FrBuffer),
    /// `a[i] *= c`
    Scale(Fr),
    /// `a[i] = (a[i]·b[i] − c[i])·z_inv`, in one pass.
    Quotient(&'a FrBuffer, &'a FrBuffer, Fr),
}

#[cfg(test)]
mod tests;
