//! NTTs and the pointwise ops of H on Fr buffers.
//!
//! An NTT of 2^L elements is L Stockham passes (shaders/ntt.wgsl), ping-ponging between the
//! buffer and a cached scratch buffer of the same size — when the result ends in the scratch
//! the two are swapped, so no copy is made. Coset NTTs multiply by g^i before the forward
//! transform; inverse ones scale by n^-1 (times g^-i on the coset) after it. Twiddles and
//! coset powers are computed once per size on the host and stay on the device.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ark_bls12_381::Fr;
use ark_ff::{FftField, Field};
use rayon::prelude::*;

use crate::device::{lock, Chunked, Res, WgpuDevice};
use crate::shader::{Elem, Module};
use crate::timing::Op;
use crate::WgpuError;
use g16_core::backend::limbs::{fr_to_words, to_words, FR_WORDS};
use g16_core::backend::NttKind;

/// Fr scalars on the device.
pub struct FrBuffer(pub(crate) Chunked);

impl FrBuffer {
    pub fn len(&self) -> usize {
        self.0.len
    }
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Table {
    /// ω^i, i < n/2.
    Twiddles,
    /// ω^-i, i < n/2.
    InverseTwiddles,
    /// g^i, i < n.
    Coset,
    /// n^-1·g^-i, i < n.
    CosetInverse,
}

#[derive(Default)]
pub(crate) struct Tables {
    tables: Mutex<HashMap<(u32, Table), Arc<Chunked>>>,
    scratch: Mutex<HashMap<usize, Vec<Chunked>>>,
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

impl WgpuDevice {
    /// The largest NTT: Fr's two-adicity, the split bindings, and 32-bit thread indices.
    pub fn max_ntt_log2(&self) -> u32 {
        let by_memory = 63 - self.max_elements(Elem::Fr).leading_zeros();
        Fr::TWO_ADICITY.min(by_memory).min(31)
    }

    pub fn upload_fr(&self, host: &[Fr]) -> Result<FrBuffer, WgpuError> {
        let buf = self.chunked("scalars", Elem::Fr, host.len())?;
        self.write_chunked(&buf, &to_words(host, FR_WORDS, fr_to_words))?;
        self.check_errors("uploading scalars")?;
        Ok(FrBuffer(buf))
    }

    pub fn alloc_fr(&self, len: usize) -> Result<FrBuffer, WgpuError> {
        Ok(FrBuffer(self.chunked("scalars", Elem::Fr, len)?))
    }

    pub fn download_fr(&self, buf: &FrBuffer) -> Result<Vec<Fr>, WgpuError> {
        let words = self.read_chunked(&buf.0)?;
        Ok(words.par_chunks_exact(FR_WORDS).map(g16_core::backend::limbs::fr_from_words).collect())
    }

    fn table(&self, log: u32, which: Table) -> Result<Arc<Chunked>, WgpuError> {
        if let Some(t) = lock(&self.tables.tables).get(&(log, which)) {
            return Ok(t.clone());
        }
        let n = 1usize << log;
        let omega =
            Fr::get_root_of_unity(n as u64).ok_or(WgpuError::NttSize { len: n, max_log2: self.max_ntt_log2() })?;
        let n_inv = Fr::from(n as u64).inverse().unwrap_or(Fr::ONE);
        let g = Fr::GENERATOR;
        let g_inv = g.inverse().unwrap_or(Fr::ONE);
        let host = match which {
            Table::Twiddles => powers(omega, Fr::ONE, n / 2),
            Table::InverseTwiddles => powers(omega.inverse().unwrap_or(Fr::ONE), Fr::ONE, n / 2),
            Table::Coset => powers(g, Fr::ONE, n),
            Table::CosetInverse => powers(g_inv, n_inv, n),
        };
        let buf = self.chunked("NTT table", Elem::Fr, host.len())?;
        self.write_chunked(&buf, &to_words(&host, FR_WORDS, fr_to_words))?;
        let buf = Arc::new(buf);
        lock(&self.tables.tables).insert((log, which), buf.clone());
        Ok(buf)
    }

    fn take_scratch(&self, n: usize) -> Result<Chunked, WgpuError> {
        if let Some(s) = lock(&self.tables.scratch).get_mut(&n).and_then(Vec::pop) {
            return Ok(s);
        }
        self.chunked("NTT scratch", Elem::Fr, n)
    }

    fn give_scratch(&self, s: Chunked) {
        lock(&self.tables.scratch).entry(s.len).or_default().push(s);
    }

    /// In place, natural order in and out; one device span `name`.
    pub fn ntt(&self, buf: &mut FrBuffer, kind: NttKind, name: &str, tag: Option<u64>) -> Result<(), WgpuError> {
        let n = buf.len();
        let max_log2 = self.max_ntt_log2();
        if n < 2 || !n.is_power_of_two() || n.trailing_zeros() > max_log2 {
            return Err(WgpuError::NttSize { len: n, max_log2 });
        }
        let log = n.trailing_zeros();
        let twiddles = self.table(
            log,
            if matches!(kind, NttKind::Forward | NttKind::CosetForward) {
                Table::Twiddles
            } else {
                Table::InverseTwiddles
            },
        )?;
        let pre = if kind == NttKind::CosetForward { Some(self.table(log, Table::Coset)?) } else { None };
        let post = if kind == NttKind::CosetInverse { Some(self.table(log, Table::CosetInverse)?) } else { None };
        let scratch = self.take_scratch(n)?;

        let stockham = self.kernel(Module::Ntt, "stockham_pass")?;
        let mul = self.kernel(Module::Pointwise, "mul")?;
        let scale = self.kernel(Module::Pointwise, "scale")?;
        let mut groups = Vec::new();
        if let Some(pre) = &pre {
            groups.push((
                mul.clone(),
                self.bind(
                    &mul,
                    &pointwise_params(n, Fr::ONE),
                    &[Res::Split(&buf.0), Res::Split(pre), Res::Split(pre)],
                )?,
                n as u64,
            ));
        }
        let half = (n / 2) as u32;
        for p in 0..log {
            let (src, dst) = if p % 2 == 0 { (&buf.0, &scratch) } else { (&scratch, &buf.0) };
            let params = [half, 1u32 << p, log - 1 - p, 0];
            groups.push((
                stockham.clone(),
                self.bind(&stockham, &params, &[Res::Split(src), Res::Split(dst), Res::Split(&twiddles)])?,
                u64::from(half),
            ));
        }
        let result_in_scratch = log % 2 == 1;
        let result = if result_in_scratch { &scratch } else { &buf.0 };
        if kind == NttKind::Inverse {
            let dummy = self.dummy(Elem::Fr)?;
            let n_inv = Fr::from(n as u64).inverse().unwrap_or(Fr::ONE);
            groups.push((
                scale.clone(),
                self.bind(
                    &scale,
                    &pointwise_params(n, n_inv),
                    &[Res::Split(result), Res::Split(&dummy), Res::Split(&dummy)],
                )?,
                n as u64,
            ));
        }
        if let Some(post) = &post {
            groups.push((
                mul.clone(),
                self.bind(
                    &mul,
                    &pointwise_params(n, Fr::ONE),
                    &[Res::Split(result), Res::Split(post), Res::Split(post)],
                )?,
                n as u64,
            ));
        }
        let mut op = Op::new(self, tag, None);
        {
            let mut pass = op.pass(name);
            for (kernel, group, threads) in &groups {
                self.dispatch(&mut pass, kernel, group, *threads)?;
            }
        }
        op.submit()?;
        if result_in_scratch {
            let old = std::mem::replace(&mut buf.0, scratch);
            self.give_scratch(old);
        } else {
            self.give_scratch(scratch);
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)] // the op's whole description: its entry, name, operands, constant and tag
    fn pointwise(
        &self,
        entry: &'static str,
        name: &str,
        a: &mut FrBuffer,
        b: Option<&FrBuffer>,
        c: Option<&FrBuffer>,
        k: Fr,
        tag: Option<u64>,
    ) -> Result<(), WgpuError> {
        for other in [b, c].into_iter().flatten() {
            if other.len() != a.len() {
                return Err(WgpuError::LengthMismatch { op: name.to_string(), expected: a.len(), got: other.len() });
            }
        }
        let n = a.len();
        if n == 0 {
            return Ok(());
        }
        let kernel = self.kernel(Module::Pointwise, entry)?;
        let dummy = self.dummy(Elem::Fr)?;
        let b = b.map_or(&*dummy, |x| &x.0);
        let c = c.map_or(&*dummy, |x| &x.0);
        let group = self.bind(&kernel, &pointwise_params(n, k), &[Res::Split(&a.0), Res::Split(b), Res::Split(c)])?;
        let mut op = Op::new(self, tag, None);
        {
            let mut pass = op.pass(name);
            self.dispatch(&mut pass, &kernel, &group, n as u64)?;
        }
        op.submit()
    }

    /// `a[i] *= b[i]`
    pub fn mul_assign(&self, a: &mut FrBuffer, b: &FrBuffer, tag: Option<u64>) -> Result<(), WgpuError> {
        self.pointwise("mul", "mul_assign", a, Some(b), None, Fr::ONE, tag)
    }

    /// `a[i] -= b[i]`
    pub fn sub_assign(&self, a: &mut FrBuffer, b: &FrBuffer, tag: Option<u64>) -> Result<(), WgpuError> {
        self.pointwise("sub", "sub_assign", a, Some(b), None, Fr::ONE, tag)
    }

    /// `a[i] *= k`
    pub fn scale(&self, a: &mut FrBuffer, k: Fr, tag: Option<u64>) -> Result<(), WgpuError> {
        self.pointwise("scale", "scale", a, None, None, k, tag)
    }

    /// `a[i] = (a[i]·b[i] − c[i])·k`, in one pass.
    pub fn quotient(
        &self,
        a: &mut FrBuffer,
        b: &FrBuffer,
        c: &FrBuffer,
        k: Fr,
        tag: Option<u64>,
    ) -> Result<(), WgpuError> {
        self.pointwise("quotient", "quotient", a, Some(b), Some(c), k, tag)
    }
}

/// The pointwise module's uniform: n, padding, then the constant's eight limbs.
fn pointwise_params(n: usize, k: Fr) -> Vec<u32> {
    let mut p = vec![n as u32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    fr_to_words(&k, &mut p[4..12]);
    p
}
