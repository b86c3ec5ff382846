//! NTTs and the pointwise ops of H on Fr buffers.
//!
//! An NTT of 2^L elements is L Stockham passes (shaders/ntt/ntt.wgsl), ping-ponging between the
//! buffer and a cached scratch buffer of the same size — when the result ends in the scratch
//! the two are swapped, so no copy is made. Coset NTTs multiply by g^i before the forward
//! transform; inverse ones scale by n^-1 (times g^-i on the coset) after it. Twiddles and
//! coset powers are computed once per size on the host and stay on the device ([`Ntt`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ark_ff::{FftField, Field};
use rayon::prelude::*;

use g16_core::backend::limbs::{fr_to_words, to_words, FR_WORDS};
use g16_core::backend::{check_ntt_len, check_same_len, BackendError, NttKind};
use g16_core::Fr;

use crate::buffers::{Chunked, Elem, FrBuffer, Memory};
use crate::compile::{Module, Pipelines, Res};
use crate::device::lock;
use crate::error::WgpuError;
use crate::staging;
use crate::timing::{Op, Tag, Timing};

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
    /// ω₂ₙ^i, i < n: the shift onto the odd 2n-th roots of unity (snarkjs's coset).
    OddCoset,
}

/// The NTT layer of one device: its tables by size, and its free scratch buffers by length.
pub(crate) struct Ntt {
    mem: Arc<Memory>,
    pipelines: Arc<Pipelines>,
    timing: Arc<Timing>,
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

/// The pointwise module's uniform: n, padding, then the constant's eight limbs.
fn pointwise_params(n: usize, k: Fr) -> Vec<u32> {
    let mut p = vec![n as u32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    fr_to_words(&k, &mut p[4..12]);
    p
}

impl Ntt {
    pub(crate) fn new(mem: Arc<Memory>, pipelines: Arc<Pipelines>, timing: Arc<Timing>) -> Ntt {
        Ntt { mem, pipelines, timing, tables: Mutex::default(), scratch: Mutex::default() }
    }

    /// The largest NTT: Fr's two-adicity, the split bindings, and 32-bit thread indices.
    pub(crate) fn max_log2(&self) -> u32 {
        let by_memory = 63 - self.mem.max_elements(Elem::Fr).leading_zeros();
        Fr::TWO_ADICITY.min(by_memory).min(31)
    }

    fn table(&self, log: u32, which: Table) -> Result<Arc<Chunked>, WgpuError> {
        if let Some(t) = lock(&self.tables).get(&(log, which)) {
            return Ok(t.clone());
        }
        let n = 1usize << log;
        let omega =
            Fr::get_root_of_unity(n as u64).ok_or(BackendError::NttSize { len: n, max_log2: self.max_log2() })?;
        let n_inv = Fr::from(n as u64).inverse().unwrap_or(Fr::ONE);
        let g = Fr::GENERATOR;
        let g_inv = g.inverse().unwrap_or(Fr::ONE);
        let host = match which {
            Table::Twiddles => powers(omega, Fr::ONE, n / 2),
            Table::InverseTwiddles => powers(omega.inverse().unwrap_or(Fr::ONE), Fr::ONE, n / 2),
            Table::Coset => powers(g, Fr::ONE, n),
            Table::CosetInverse => powers(g_inv, n_inv, n),
            // Fr's two-adicity (32) exceeds the largest NTT, so a 2n-th root exists.
            Table::OddCoset => powers(Fr::get_root_of_unity(2 * n as u64).unwrap_or(Fr::ONE), Fr::ONE, n),
        };
        let buf = self.mem.chunked("NTT table", Elem::Fr, host.len())?;
        staging::write(self.mem.device(), &buf, &to_words(&host, FR_WORDS, fr_to_words))?;
        let buf = Arc::new(buf);
        lock(&self.tables).insert((log, which), buf.clone());
        Ok(buf)
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
        let twiddles = self.table(log, if kind.is_inverse() { Table::InverseTwiddles } else { Table::Twiddles })?;
        let pre = match kind {
            NttKind::CosetForward => Some(self.table(log, Table::Coset)?),
            NttKind::OddCosetForward => Some(self.table(log, Table::OddCoset)?),
            _ => None,
        };
        let post = if kind == NttKind::CosetInverse { Some(self.table(log, Table::CosetInverse)?) } else { None };
        let scratch = self.take_scratch(n)?;

        let stockham = self.pipelines.kernel(Module::Ntt, "stockham_pass")?;
        let mul = self.pipelines.kernel(Module::Pointwise, "mul")?;
        let scale = self.pipelines.kernel(Module::Pointwise, "scale")?;
        let mut groups = Vec::new();
        if let Some(pre) = &pre {
            let params = pointwise_params(n, Fr::ONE);
            let group = mul.bind(dev, &params, &[Res::Split(&buf.0), Res::Split(pre), Res::Split(pre)])?;
            groups.push((mul.clone(), group, n as u64));
        }
        let half = (n / 2) as u32;
        for p in 0..log {
            let (src, dst) = if p % 2 == 0 { (&buf.0, &scratch) } else { (&scratch, &buf.0) };
            let params = [half, 1u32 << p, log - 1 - p, 0];
            let group = stockham.bind(dev, &params, &[Res::Split(src), Res::Split(dst), Res::Split(&twiddles)])?;
            groups.push((stockham.clone(), group, u64::from(half)));
        }
        let result_in_scratch = log % 2 == 1;
        let result = if result_in_scratch { &scratch } else { &buf.0 };
        if kind == NttKind::Inverse {
            let unused = self.mem.placeholder(Elem::Fr)?;
            let n_inv = Fr::from(n as u64).inverse().unwrap_or(Fr::ONE);
            let params = pointwise_params(n, n_inv);
            let group = scale.bind(dev, &params, &[Res::Split(result), Res::Split(&unused), Res::Split(&unused)])?;
            groups.push((scale.clone(), group, n as u64));
        }
        if let Some(post) = &post {
            let params = pointwise_params(n, Fr::ONE);
            let group = mul.bind(dev, &params, &[Res::Split(result), Res::Split(post), Res::Split(post)])?;
            groups.push((mul.clone(), group, n as u64));
        }
        let mut op = Op::new(&self.timing, tag, None);
        {
            let mut pass = op.pass(kind.span_name());
            for (kernel, group, threads) in &groups {
                kernel.dispatch(dev, &mut pass, group, *threads)?;
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
