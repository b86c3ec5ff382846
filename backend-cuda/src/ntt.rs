//! NTTs over Fr and the pointwise operations of H (kernels: `kernels/ntt.cu`).
//!
//! Per domain size the engine keeps, once: the twiddle tables ω^e and ω^(−e) for e < n/2
//! (generated on the device from two small host-computed tables), the small tables of the
//! roots of unity of order 1024 that every pass's butterflies use (ω_1024^(±j), j < 512), and
//! the small split tables of the coset shift g^i and of the inverse scalings n⁻¹ and n⁻¹·g^(−i).

use std::sync::Arc;

use ark_bls12_381::Fr;
use ark_ff::{FftField, Field};
use cudarc::driver::CudaSlice;

use crate::device::{lock, Arg, CudaDevice, FrBuffer};
use crate::error::CudaError;
use g16_core::backend::limbs::{fr_to_words, FR_WORDS};
use g16_core::backend::NttKind;

/// Fr's two-adicity bounds the NTT length; 32-bit indices bound it too.
pub const MAX_NTT_LOG2: u32 = 31;

/// Split tables: power(i) = hi[i >> 12]·lo[i & 4095] (`NTT_SPLIT` in ntt.cu).
const SPLIT: u32 = 12;

/// Elements per block (`NTT_BLOCK_ELEMS` in ntt.cu).
const BLOCK_ELEMS: u32 = 1024;

/// The butterflies' roots: ω_(2^ROOTS_LOG)^j for j < 2^(ROOTS_LOG − 1) (`NTT_ROOTS_LOG`); a
/// pass has at most ROOTS_LOG stages.
const ROOTS_LOG: u32 = 10;

/// Stages per pass when an NTT takes several passes (a block then holds ≥ 4 columns).
const MAX_PASS_STAGES: u32 = 8;

pub struct NttTables {
    forward: CudaSlice<u32>,
    inverse: CudaSlice<u32>,
    /// ω^e and ω^(−e) for e < n as split tables (hi, lo), for `G16_CUDA_NTT_TWIDDLES=split`.
    forward_split: (CudaSlice<u32>, CudaSlice<u32>),
    inverse_split: (CudaSlice<u32>, CudaSlice<u32>),
    roots_forward: CudaSlice<u32>,
    roots_inverse: CudaSlice<u32>,
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

/// The roots of one direction for the butterflies: ω_1024^j for j < 512 (ω_1024 from arkworks,
/// whose roots of orders 2^m are all powers of one 2-adic root, so these agree with every
/// domain's ω: ω_(2^(q+1)) = ω_1024^(2^(9−q)) = ω_n^(n/2^(q+1))).
fn butterfly_roots(inverse: bool) -> Vec<Fr> {
    let root = Fr::get_root_of_unity(1 << ROOTS_LOG).unwrap_or(Fr::ONE);
    let root = if inverse { root.inverse().unwrap_or(Fr::ONE) } else { root };
    std::iter::successors(Some(Fr::ONE), |x| Some(*x * root)).take(1 << (ROOTS_LOG - 1)).collect()
}

/// The passes of an NTT of 2^log_n, in stages: one pass up to 2^10, else the fewest passes of
/// at most 8 stages, balanced (2^24: 8, 8, 8; 2^22: 8, 7, 7).
pub fn plan_passes(log_n: u32) -> Vec<u32> {
    if log_n <= ROOTS_LOG {
        return vec![log_n];
    }
    let count = log_n.div_ceil(MAX_PASS_STAGES);
    (0..count).map(|i| log_n / count + u32::from(i < log_n % count)).collect()
}

/// One launch of a pass kernel: stages s0+1 … s0+k, blocks of 2^log_cols columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PassLaunch {
    s0: u32,
    k: u32,
    log_cols: u32,
    blocks: u32,
}

impl PassLaunch {
    /// Threads a block for a kernel whose rounds hold 2^log_radix elements a thread (at least
    /// a warp; the kernels stride, so any count is correct).
    fn threads(&self, log_radix: u32) -> u32 {
        ((1u32 << (self.k + self.log_cols)) >> log_radix).max(32)
    }
}

/// The launches of an NTT of 2^log_n: as many columns a block as fit in BLOCK_ELEMS, and as
/// the pass has (first pass: 2^(L−k) groups; later ones: 2^s0 columns a group).
fn plan_launches(log_n: u32) -> Vec<PassLaunch> {
    let mut s0 = 0;
    plan_passes(log_n)
        .into_iter()
        .map(|k| {
            let log_block = BLOCK_ELEMS.trailing_zeros();
            let log_cols = (log_block - k).min(if s0 == 0 { log_n - k } else { s0 });
            let elems = 1u32 << (k + log_cols);
            let launch = PassLaunch { s0, k, log_cols, blocks: (1u32 << log_n) / elems };
            s0 += k;
            launch
        })
        .collect()
}

/// One of `ntt.cu`'s pass kernels: its name and the most stages a round runs in registers (a
/// block has BLOCK_ELEMS >> log_radix threads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PassVariant {
    kernel: &'static str,
    log_radix: u32,
}

/// Every pass kernel, by its `G16_CUDA_NTT_KERNEL` name; the first is the default.
const PASS_VARIANTS: [(&str, PassVariant); 5] = [
    ("r4", PassVariant { kernel: "ntt_radix4_pass", log_radix: 2 }),
    ("r8", PassVariant { kernel: "ntt_radix_pass", log_radix: 3 }),
    ("r8call", PassVariant { kernel: "ntt_radix_pass_call", log_radix: 3 }),
    ("r4x4", PassVariant { kernel: "ntt_radix4_pass_4", log_radix: 2 }),
    ("r2", PassVariant { kernel: "ntt_radix2_pass", log_radix: 1 }),
];

/// The pass kernel: `G16_CUDA_NTT_KERNEL` names one of PASS_VARIANTS (an experiment switch),
/// else the default.
fn pass_variant() -> PassVariant {
    let chosen = std::env::var("G16_CUDA_NTT_KERNEL").ok();
    PASS_VARIANTS.iter().find(|(name, _)| chosen.as_deref() == Some(*name)).unwrap_or(&PASS_VARIANTS[0]).1
}

/// `G16_CUDA_NTT_TWIDDLES=split`: inter-pass twiddles from split tables (two small-table reads
/// and a product) instead of one read from the n/2 table; an experiment switch.
fn split_twiddles() -> bool {
    std::env::var("G16_CUDA_NTT_TWIDDLES").is_ok_and(|v| v == "split")
}

/// How `ntt_radix_pass` scales (its `load_mode` and `store_mode`): the coset shift g^i on the
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
            NttKind::CosetForward => Self { load: 1, store: 0 },
            NttKind::CosetInverse => Self { load: 0, store: 2 },
        }
    }
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
            forward_split: split(omega, Fr::ONE, "NTT twiddles")?,
            inverse_split: split(omega_inv, Fr::ONE, "NTT twiddles")?,
            roots_forward: self.upload_words("NTT roots", &words(&butterfly_roots(false)))?,
            roots_inverse: self.upload_words("NTT roots", &words(&butterfly_roots(true)))?,
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
        let name = kind.span_name();
        let inverse = matches!(kind, NttKind::Inverse | NttKind::CosetInverse);
        let tw = self.ptr(if inverse { &tables.inverse } else { &tables.forward });
        let roots = self.ptr(if inverse { &tables.roots_inverse } else { &tables.roots_forward });
        // The inter-pass twiddles: one read from the n/2 table (default), or split tables.
        let (tw, tw_lo) = if split_twiddles() {
            let (hi, lo) = if inverse { &tables.inverse_split } else { &tables.forward_split };
            (self.ptr(hi), self.ptr(lo))
        } else {
            (tw, 0)
        };
        let modes = ScaleModes::of(kind);
        let (load_hi, load_lo) = match kind {
            NttKind::CosetForward => (self.ptr(&tables.coset.0), self.ptr(&tables.coset.1)),
            _ => (0, 0),
        };
        let (store_hi, store_lo) = match kind {
            NttKind::Inverse => (self.ptr(&tables.inverse_scale.0), self.ptr(&tables.inverse_scale.1)),
            NttKind::CosetInverse => (self.ptr(&tables.coset_inverse_scale.0), self.ptr(&tables.coset_inverse_scale.1)),
            _ => (0, 0),
        };
        let passes = plan_launches(log_n);
        let variant = pass_variant();
        let bufs = [self.ptr(&buf.data), self.ptr(&scratch)];
        let result = self.span(name, tag, || {
            for (i, pass) in passes.iter().enumerate() {
                let (input, output) = (bufs[i % 2], bufs[(i + 1) % 2]);
                let (first, last) = (i == 0, i + 1 == passes.len());
                self.launch(
                    variant.kernel,
                    pass.blocks,
                    pass.threads(variant.log_radix),
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

    /// The kernel's shared array, row pads included (`NTT_SHARED_ELEMS` in ntt.cu).
    const SHARED_ELEMS: u32 = 1280;

    #[test]
    fn passes_cover_every_stage_within_the_block() {
        for log_n in 1..=31 {
            let passes = plan_passes(log_n);
            assert_eq!(passes.iter().sum::<u32>(), log_n, "2^{log_n}: {passes:?}");
            let most = if passes.len() == 1 { ROOTS_LOG } else { MAX_PASS_STAGES };
            assert!(passes.iter().all(|&k| (1..=most).contains(&k)), "{passes:?}");
        }
    }

    #[test]
    fn constants_agree_with_the_kernel_source() {
        let source = include_str!("../../kernels/ntt.cu");
        for (name, value) in [
            ("NTT_SPLIT", SPLIT),
            ("NTT_BLOCK_ELEMS", BLOCK_ELEMS),
            ("NTT_SHARED_ELEMS", SHARED_ELEMS),
            ("NTT_ROOTS_LOG", ROOTS_LOG),
        ] {
            assert!(source.contains(&format!("#define {name} {value}\n")), "ntt.cu: #define {name} {value}");
        }
    }

    #[test]
    fn launches_tile_the_array_and_fit_the_shared_array() {
        for log_n in 1..=31 {
            let launches = plan_launches(log_n);
            let mut s0 = 0;
            for l in &launches {
                assert_eq!(l.s0, s0, "2^{log_n}: {launches:?}");
                let (cols, rows) = (1u64 << l.log_cols, 1u64 << l.k);
                assert_eq!(u64::from(l.blocks) * cols * rows, 1u64 << log_n, "{launches:?}");
                let padded = rows * (cols + u64::from(cols > 1));
                assert!(cols * rows <= u64::from(BLOCK_ELEMS) && padded <= u64::from(SHARED_ELEMS), "{launches:?}");
                // A block's columns lie inside one group (later passes) or the input matrix (first).
                let available = if s0 == 0 { log_n - l.k } else { s0 };
                assert!(l.log_cols <= available, "{launches:?}");
                s0 += l.k;
            }
            assert_eq!(s0, log_n);
            if log_n >= 12 {
                assert!(launches.iter().all(|l| l.log_cols >= 2), "coalesced: {launches:?}");
            }
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

    /// `kernels/ntt.cu` run on the host: ff.cuh and ntt.cu compiled by the host's C++ compiler
    /// (`G16_HOST_EMULATION`), each launch of `plan_launches` run block by block with one
    /// thread a block (the kernels stride by blockDim.x, so one thread does a block's work in
    /// order and the barriers have nothing to wait for), against arkworks. This checks the
    /// passes' index arithmetic, twiddles and orders without a GPU; the GPU suite checks the
    /// same kernels on the device. Without a C++ compiler it says so loudly and passes, unless
    /// `G16_REQUIRE_CXX=1`.
    mod host_emulation {
        use super::*;
        use ark_ff::UniformRand;
        use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
        use rand::SeedableRng;
        use std::io::Write;
        use std::process::{Command, Stdio};

        const HARNESS: &str = r#"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
using std::min;
struct EmulatedDim { unsigned x; };
static EmulatedDim threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __shared__ static
#define __syncthreads() ((void)0)
#define __launch_bounds__(...)
static unsigned __brev(unsigned x) { unsigned r = 0; for (int i = 0; i < 32; i++, x >>= 1) r = (r << 1) | (x & 1); return r; }
"#;

        const MAIN: &str = r#"
static std::vector<Fr> read_frs() {
  unsigned count;
  if (scanf("%u", &count) != 1) exit(2);
  std::vector<Fr> v(count ? count : 1);
  for (unsigned i = 0; i < count; i++) for (int j = 0; j < Fr::N; j++) if (scanf("%x", &v[i].l[j]) != 1) exit(2);
  return v;
}
int main() {
  unsigned log_n, load_mode, store_mode, passes, split, variant;
  if (scanf("%u %u %u %u %u %u", &log_n, &load_mode, &store_mode, &passes, &split, &variant) != 6) return 2;
  void (*kernels[])(NTT_PASS_PARAMS) = {PASS_KERNELS};
  if (variant >= sizeof(kernels) / sizeof(kernels[0])) return 2;
  std::vector<Fr> a = read_frs(), tw = read_frs(), tw_lo = read_frs(), roots = read_frs();
  std::vector<Fr> load_hi = read_frs(), load_lo = read_frs(), store_hi = read_frs(), store_lo = read_frs();
  std::vector<Fr> b(a.size());
  for (unsigned i = 0; i < passes; i++) {
    unsigned s0, k, log_cols, blocks;
    if (scanf("%u %u %u %u", &s0, &k, &log_cols, &blocks) != 4) return 2;
    const bool first = i == 0, last = i + 1 == passes;
    blockDim.x = 1; threadIdx.x = 0; gridDim.x = blocks;
    for (unsigned blk = 0; blk < blocks; blk++) {
      blockIdx.x = blk;
      kernels[variant](a.data(), b.data(), tw.data(), split ? tw_lo.data() : nullptr, roots.data(), log_n, s0, k, log_cols, first ? load_mode : 0,
                     load_hi.data(), load_lo.data(), last ? store_mode : 0, store_hi.data(), store_lo.data());
    }
    a.swap(b);
  }
  for (const Fr& x : a) { for (int j = 0; j < Fr::N; j++) printf("%x ", x.l[j]); printf("\n"); }
  return 0;
}
"#;

        fn compiler() -> Option<String> {
            let candidates = std::env::var("CXX").ok().into_iter().chain(["c++", "g++", "clang++"].map(String::from));
            candidates.into_iter().find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
        }

        fn push_frs(input: &mut String, values: &[Fr]) {
            input.push_str(&format!("{}\n", values.len()));
            for w in words(values) {
                input.push_str(&format!("{w:x} "));
            }
            input.push('\n');
        }

        fn reference(input: &[Fr], kind: NttKind) -> Vec<Fr> {
            let domain = Radix2EvaluationDomain::<Fr>::new(input.len()).expect("domain");
            let coset = domain.get_coset(Fr::GENERATOR).expect("coset");
            match kind {
                NttKind::Forward => domain.fft(input),
                NttKind::Inverse => domain.ifft(input),
                NttKind::CosetForward => coset.fft(input),
                NttKind::CosetInverse => coset.ifft(input),
            }
        }

        /// Runs the emulated kernel passes of one NTT; the tables are the engine's (`ntt_tables`
        /// builds the same ones on the device).
        fn emulated_ntt(
            exe: &std::path::Path,
            input: &[Fr],
            kind: NttKind,
            split_twiddles: bool,
            variant: usize,
        ) -> Vec<Fr> {
            let n = input.len();
            let log_n = n.trailing_zeros();
            let inverse = matches!(kind, NttKind::Inverse | NttKind::CosetInverse);
            let omega = Fr::get_root_of_unity(n as u64).expect("root");
            let omega = if inverse { omega.inverse().expect("inverse") } else { omega };
            let tw: Vec<Fr> = std::iter::successors(Some(Fr::ONE), |x| Some(*x * omega)).take((n / 2).max(1)).collect();
            let n_inv = Fr::from(n as u64).inverse().expect("n⁻¹");
            let g = Fr::GENERATOR;
            let none = (Vec::new(), Vec::new());
            let (load, store) = match kind {
                NttKind::Forward => (none.clone(), none),
                NttKind::Inverse => (none, split_table(Fr::ONE, n_inv, n)),
                NttKind::CosetForward => (split_table(g, Fr::ONE, n), none),
                NttKind::CosetInverse => (none, split_table(g.inverse().expect("g⁻¹"), n_inv, n)),
            };
            let modes = ScaleModes::of(kind);
            let launches = plan_launches(log_n);
            let (tw, tw_lo) = if split_twiddles { split_table(omega, Fr::ONE, n) } else { (tw, Vec::new()) };
            let mut text = format!(
                "{log_n} {} {} {} {} {variant}\n",
                modes.load,
                modes.store,
                launches.len(),
                u8::from(split_twiddles)
            );
            for table in [input, &tw, &tw_lo, &butterfly_roots(inverse), &load.0, &load.1, &store.0, &store.1] {
                push_frs(&mut text, table);
            }
            for l in &launches {
                text.push_str(&format!("{} {} {} {}\n", l.s0, l.k, l.log_cols, l.blocks));
            }
            let mut child = Command::new(exe).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("harness");
            child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("write input");
            let out = child.wait_with_output().expect("harness output");
            assert!(out.status.success(), "harness failed");
            let text = String::from_utf8(out.stdout).expect("utf8");
            text.lines()
                .map(|line| {
                    let w: Vec<u32> =
                        line.split_whitespace().map(|x| u32::from_str_radix(x, 16).expect("hex")).collect();
                    g16_core::backend::limbs::fr_from_words(&w)
                })
                .collect()
        }

        #[test]
        fn kernel_passes_match_arkworks_on_the_host() {
            let Some(cxx) = compiler() else {
                if std::env::var("G16_REQUIRE_CXX").as_deref() == Ok("1") {
                    panic!("a C++ compiler is required (G16_REQUIRE_CXX=1) but none of $CXX, c++, g++, clang++ runs");
                }
                eprintln!("\n!!! SKIPPED: no C++ compiler for the host-emulated NTT kernel (set G16_REQUIRE_CXX=1)\n");
                return;
            };
            let dir = std::env::temp_dir().join(format!("g16-host-ntt-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("temp dir");
            let ff = include_str!("../../kernels/ff.cuh");
            let ntt = include_str!("../../kernels/ntt.cu");
            // The harness indexes the pass kernels in PASS_VARIANTS' order.
            let kernels: Vec<&str> = PASS_VARIANTS.iter().map(|(_, v)| v.kernel).collect();
            let source = format!(
                "#define G16_HOST_EMULATION\n{HARNESS}\n{ff}\n{ntt}\n#define PASS_KERNELS {}\n{MAIN}",
                kernels.join(", ")
            );
            std::fs::write(dir.join("ntt_harness.cpp"), source).expect("write harness");
            let exe = dir.join("ntt_harness");
            let out = Command::new(&cxx)
                .args(["-std=c++17", "-O2", "-o"])
                .arg(&exe)
                .arg(dir.join("ntt_harness.cpp"))
                .output()
                .expect("run the C++ compiler");
            assert!(out.status.success(), "{cxx} failed:\n{}", String::from_utf8_lossy(&out.stderr));

            let seed: u64 =
                std::env::var("G16_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
            eprintln!("kernel_passes_match_arkworks_on_the_host: G16_TEST_SEED={seed}");
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
            // One pass (1 … 10), two (11 … 16), three (17): every round shape and pass position.
            for log_n in (1..=14).chain([17]) {
                let n = 1usize << log_n;
                let input: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
                for kind in [NttKind::Forward, NttKind::Inverse, NttKind::CosetForward, NttKind::CosetInverse] {
                    let want = reference(&input, kind);
                    // Each kernel (PASS_VARIANTS' order) with the half table; the default one with
                    // split twiddles.
                    let variants = (0..PASS_VARIANTS.len()).map(|v| (false, v)).chain([(true, 0)]);
                    for (split, variant) in variants {
                        let got = emulated_ntt(&exe, &input, kind, split, variant);
                        assert!(
                            got == want,
                            "{kind:?} of 2^{log_n} (kernel variant {variant}, split twiddles: {split}) differs from arkworks"
                        );
                    }
                }
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
