//! NTTs over Fr and the pointwise operations of H (kernels: `kernels/ntt.cu`).
//!
//! Per domain size the engine keeps, once: the twiddle tables ω^e and ω^(−e) for e < n/2
//! (generated on the device from two small host-computed tables), and the small split
//! tables of the coset shift g^i and of the inverse scalings n⁻¹ and n⁻¹·g^(−i).

use std::sync::Arc;

use ark_bls12_381::Fr;
use ark_ff::{FftField, Field};
use cudarc::driver::CudaSlice;

use crate::convert::{fr_to_words, FR_WORDS};
use crate::device::{lock, Arg, CudaDevice, FrBuffer};
use crate::error::CudaError;

/// The four NTTs (the same meaning as `g16_core::backend::NttKind`: natural order in and out;
/// coset NTTs on g·H with g = Fr::GENERATOR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttKind {
    Forward,
    Inverse,
    CosetForward,
    CosetInverse,
}

/// Fr's two-adicity bounds the NTT length; 32-bit indices bound it too.
pub const MAX_NTT_LOG2: u32 = 31;

/// Split tables: power(i) = hi[i >> 12]·lo[i & 4095] (`NTT_SPLIT` in ntt.cu).
const SPLIT: u32 = 12;

/// Elements of shared memory per block (`NTT_BLOCK_ELEMS` in ntt.cu).
const BLOCK_ELEMS: u32 = 1024;

pub struct NttTables {
    forward: CudaSlice<u32>,
    inverse: CudaSlice<u32>,
    coset: (CudaSlice<u32>, CudaSlice<u32>),
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

/// (hi, lo) with hi[j] = scale·base^(4096·j) for j < max(1, n/4096), lo[i] = base^i for i < min(n, 4096).
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

/// The passes of an NTT of 2^log_n: a first pass of up to 10 stages (contiguous), the rest in
/// passes of at most 8 stages (so each block holds at least 4 adjacent sub-problems).
pub fn plan_passes(log_n: u32) -> Vec<u32> {
    let first = log_n.min(10);
    let rest = log_n - first;
    let mut passes = vec![first];
    if rest > 0 {
        let count = rest.div_ceil(8);
        for i in 0..count {
            passes.push(rest / count + u32::from(i < rest % count));
        }
    }
    passes
}

impl CudaDevice {
    fn ntt_tables(&self, log_n: u32) -> Result<Arc<NttTables>, CudaError> {
        if let Some(t) = lock(&self.ntt_tables).get(&log_n) {
            return Ok(t.clone());
        }
        let n = 1usize << log_n;
        let omega = Fr::get_root_of_unity(n as u64)
            .ok_or(CudaError::NttSize { len: n, max_log2: Fr::TWO_ADICITY.min(MAX_NTT_LOG2) })?;
        let omega_inv = omega.inverse().unwrap_or(Fr::ONE);
        let g = Fr::GENERATOR;
        let g_inv = g.inverse().unwrap_or(Fr::ONE);
        let n_inv = Fr::from(n as u64).inverse().unwrap_or(Fr::ONE);
        let half = (n / 2).max(1);
        let twiddles = |base: Fr, what: &str| -> Result<CudaSlice<u32>, CudaError> {
            let (hi, lo) = split_table(base, Fr::ONE, half);
            let (hi, lo) = (self.upload_words(what, &words(&hi))?, self.upload_words(what, &words(&lo))?);
            let table = self.alloc(what, half * FR_WORDS)?;
            let (t, h, l) = (self.ptr(&table), self.ptr(&hi), self.ptr(&lo));
            let blocks = (half as u32).div_ceil(256).min(65_535);
            self.launch("ntt_twiddles", blocks, 256, &[Arg::Ptr(t), Arg::Ptr(h), Arg::Ptr(l), Arg::U32(half as u32)])?;
            self.synchronize()?; // the small tables are freed on return
            Ok(table)
        };
        let split = |base: Fr, scale: Fr, what: &str| -> Result<(CudaSlice<u32>, CudaSlice<u32>), CudaError> {
            let (hi, lo) = split_table(base, scale, n);
            Ok((self.upload_words(what, &words(&hi))?, self.upload_words(what, &words(&lo))?))
        };
        let tables = Arc::new(NttTables {
            forward: twiddles(omega, "NTT twiddles")?,
            inverse: twiddles(omega_inv, "NTT twiddles")?,
            coset: split(g, Fr::ONE, "coset powers")?,
            inverse_scale: split(Fr::ONE, n_inv, "inverse scaling")?,
            coset_inverse_scale: split(g_inv, n_inv, "inverse coset scaling")?,
        });
        lock(&self.ntt_tables).insert(log_n, tables.clone());
        Ok(tables)
    }

    /// In place, natural order in and out.
    pub fn ntt(&self, buf: &mut FrBuffer, kind: NttKind, tag: Option<u64>) -> Result<(), CudaError> {
        let n = buf.len;
        let max_log2 = Fr::TWO_ADICITY.min(MAX_NTT_LOG2);
        if n < 2 || !n.is_power_of_two() || n.trailing_zeros() > max_log2 {
            return Err(CudaError::NttSize { len: n, max_log2 });
        }
        let _op = self.op();
        let log_n = n.trailing_zeros();
        let tables = self.ntt_tables(log_n)?;
        let mut scratch = match lock(&self.scratch).remove(&n) {
            Some(s) => s,
            None => self.alloc("NTT scratch", n * FR_WORDS)?,
        };
        let name = match kind {
            NttKind::Forward => "ntt",
            NttKind::Inverse => "ntt_inverse",
            NttKind::CosetForward => "ntt_coset",
            NttKind::CosetInverse => "ntt_coset_inverse",
        };
        let inverse = matches!(kind, NttKind::Inverse | NttKind::CosetInverse);
        let tw = self.ptr(if inverse { &tables.inverse } else { &tables.forward });
        let (load_hi, load_lo) = match kind {
            NttKind::CosetForward => (self.ptr(&tables.coset.0), self.ptr(&tables.coset.1)),
            _ => (0, 0),
        };
        let (store_hi, store_lo) = match kind {
            NttKind::Inverse => (self.ptr(&tables.inverse_scale.0), self.ptr(&tables.inverse_scale.1)),
            NttKind::CosetInverse => (self.ptr(&tables.coset_inverse_scale.0), self.ptr(&tables.coset_inverse_scale.1)),
            _ => (0, 0),
        };
        let passes = plan_passes(log_n);
        let bufs = [self.ptr(&buf.data), self.ptr(&scratch)];
        let result = self.span(name, tag, || {
            let mut s0 = 0u32;
            for (i, &k) in passes.iter().enumerate() {
                let (input, output) = (bufs[i % 2], bufs[(i + 1) % 2]);
                let last = i + 1 == passes.len();
                let cols = (1u32 << s0).min(BLOCK_ELEMS >> k);
                let elems = (1u32 << k) * cols;
                let blocks = (n as u32) / elems;
                let threads = (elems / 2).max(1);
                self.launch(
                    "ntt_pass",
                    blocks,
                    threads,
                    &[
                        Arg::Ptr(input),
                        Arg::Ptr(output),
                        Arg::Ptr(tw),
                        Arg::U32(log_n),
                        Arg::U32(s0),
                        Arg::U32(k),
                        Arg::U32(u32::from(i == 0)),
                        Arg::Ptr(if i == 0 { load_hi } else { 0 }),
                        Arg::Ptr(if i == 0 { load_lo } else { 0 }),
                        Arg::Ptr(if last { store_hi } else { 0 }),
                        Arg::Ptr(if last { store_lo } else { 0 }),
                    ],
                )?;
                s0 += k;
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

    fn pointwise(
        &self,
        name: &'static str,
        kernel: &'static str,
        len: usize,
        ptrs: &[u64],
        tag: Option<u64>,
    ) -> Result<(), CudaError> {
        let mut args: Vec<Arg> = ptrs.iter().map(|&p| Arg::Ptr(p)).collect();
        args.push(Arg::U32(len as u32));
        let blocks = (len as u32).div_ceil(256).clamp(1, 8 * 1024);
        self.span(name, tag, || self.launch(kernel, blocks, 256, &args))
    }

    fn check_pair(op: &'static str, a: &FrBuffer, b: &FrBuffer) -> Result<(), CudaError> {
        if a.len != b.len {
            return Err(CudaError::LengthMismatch { op, expected: a.len, got: b.len });
        }
        Ok(())
    }

    /// a[i] *= b[i]
    pub fn mul_assign(&self, a: &mut FrBuffer, b: &FrBuffer, tag: Option<u64>) -> Result<(), CudaError> {
        Self::check_pair("mul_assign", a, b)?;
        let _op = self.op();
        self.pointwise("mul_assign", "fr_mul", a.len, &[self.ptr(&a.data), self.ptr(&b.data)], tag)
    }

    /// a[i] -= b[i]
    pub fn sub_assign(&self, a: &mut FrBuffer, b: &FrBuffer, tag: Option<u64>) -> Result<(), CudaError> {
        Self::check_pair("sub_assign", a, b)?;
        let _op = self.op();
        self.pointwise("sub_assign", "fr_sub", a.len, &[self.ptr(&a.data), self.ptr(&b.data)], tag)
    }

    /// a[i] *= c
    pub fn scale(&self, a: &mut FrBuffer, c: Fr, tag: Option<u64>) -> Result<(), CudaError> {
        let _op = self.op();
        let k = self.upload_words("a constant", &words(&[c]))?;
        self.pointwise("scale", "fr_scale", a.len, &[self.ptr(&a.data), self.ptr(&k)], tag)
    }

    /// a[i] = (a[i]·b[i] − c[i])·z_inv, in one pass.
    pub fn quotient(
        &self,
        a: &mut FrBuffer,
        b: &FrBuffer,
        c: &FrBuffer,
        z_inv: Fr,
        tag: Option<u64>,
    ) -> Result<(), CudaError> {
        Self::check_pair("quotient", a, b)?;
        Self::check_pair("quotient", a, c)?;
        let _op = self.op();
        let k = self.upload_words("a constant", &words(&[z_inv]))?;
        let ptrs = [self.ptr(&a.data), self.ptr(&b.data), self.ptr(&c.data), self.ptr(&k)];
        self.pointwise("quotient", "fr_quotient", a.len, &ptrs, tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_cover_every_stage_within_the_block() {
        for log_n in 1..=31 {
            let passes = plan_passes(log_n);
            assert_eq!(passes.iter().sum::<u32>(), log_n, "2^{log_n}: {passes:?}");
            assert!(passes[0] <= 10 && passes[1..].iter().all(|&k| (1..=8).contains(&k)), "{passes:?}");
        }
    }

    #[test]
    fn split_tables_give_every_power() {
        let base = Fr::from(5u64);
        let scale = Fr::from(3u64);
        for n in [2usize, 4096, 1 << 14] {
            let (hi, lo) = split_table(base, scale, n);
            for i in [0usize, 1, n / 2, n - 1] {
                let got = hi[i >> SPLIT] * lo[i & ((1 << SPLIT) - 1)];
                assert_eq!(got, scale * base.pow([i as u64]), "n={n} i={i}");
            }
        }
    }
}
