//! Fixed-base scalar multiplication, as the GPU backends run it: `s·P` for many scalars s and
//! one base P (a proving key's queries: every G1 query is a multiple of one generator, every
//! G2 one of another).
//!
//! The method is the windowed one arkworks' `BatchMulPreprocessing` uses, split between host
//! and device:
//! - the host builds a table of the base's multiples per window: for window w of c bits,
//!   `table[w·(2^c − 1) + d − 1] = d·2^(c·w)·P` for every digit d in 1..2^c, affine
//!   ([`table`]);
//! - the device gives each scalar one thread, which adds the table point of each non-zero
//!   digit (`⌈255/c⌉` mixed additions at most, no doubling), then brings the sums to affine
//!   with one field inversion per thread's batch of points (Montgomery's trick).
//!
//! Digits are unsigned: a digit is a plain bit field of the scalar, so there is no carry
//! between windows to recode; signed digits would halve the table (a host cost, small next to
//! the additions: see [`TABLE_WEIGHT`]) for a recoding pass per scalar.
//!
//! Scalars cross to the device in canonical form (not Montgomery's), so the kernels read
//! digits as bits ([`scalar_words`]).

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{AdditiveGroup, AffineRepr, CurveGroup, PrimeGroup};
use ark_ff::{BigInteger, PrimeField, Zero};
use rayon::prelude::*;

use super::limbs::FR_WORDS;
use crate::curve::Fr;

/// Bits of the scalar field's modulus: scalars are below 2^255.
pub const SCALAR_BITS: u32 = Fr::MODULUS_BIT_SIZE;
/// The widest window: 2^16 − 1 table points a window, and a digit always fits 16 bits.
pub const MAX_WINDOW: u32 = 16;
/// The narrowest window the planner picks: narrower ones would save at most a few hundred
/// table points, for up to 255 additions a point in one thread (too many for a software
/// adapter's loop limit: backend-wgpu/src/fixed_base.rs).
pub const MIN_WINDOW: u32 = 4;
/// What one table point costs, in device additions, when choosing the window.
///
/// The host builds the table (one projective addition per point, then a batch normalization
/// per window, on the host's cores), and a host addition takes far longer than a device
/// thread's share of one: a host point counts as 2^8 device additions, the order of the
/// ratio between a many-core host's and a data-centre GPU's addition throughput. It is a
/// model, not a measurement; a larger weight picks narrower windows. It picks c = 13 at 2^24
/// scalars and c = 15 at 2^26 (docs/perf/keygen.md).
pub const TABLE_WEIGHT: u64 = 256;

/// The windows of one fixed-base multiplication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedBasePlan {
    /// Bits a window.
    pub c: u32,
    /// Windows: ⌈255/c⌉.
    pub windows: u32,
}

impl FixedBasePlan {
    /// The plan of width `c` (1 ..= [`MAX_WINDOW`]).
    pub fn with_window(c: u32) -> FixedBasePlan {
        let c = c.clamp(1, MAX_WINDOW);
        FixedBasePlan { c, windows: SCALAR_BITS.div_ceil(c) }
    }

    /// The width that minimizes the work for `n` scalars: n·W device additions (one a
    /// window) plus the table's W·(2^c − 1) points at [`TABLE_WEIGHT`] each.
    pub fn for_count(n: usize) -> FixedBasePlan {
        (MIN_WINDOW..=MAX_WINDOW)
            .map(FixedBasePlan::with_window)
            .min_by_key(|p| p.cost(n))
            .unwrap_or_else(|| FixedBasePlan::with_window(MAX_WINDOW))
    }

    /// The model's cost of `n` scalars, in device additions.
    pub fn cost(&self, n: usize) -> u64 {
        let windows = u64::from(self.windows);
        n as u64 * windows + TABLE_WEIGHT * windows * self.per_window() as u64
    }

    /// Table points a window: the non-zero digits, 1 ..= 2^c − 1.
    pub fn per_window(&self) -> usize {
        (1usize << self.c) - 1
    }

    /// Table points in all.
    pub fn table_len(&self) -> usize {
        self.windows as usize * self.per_window()
    }

    /// Digit `w` of a scalar as [`scalar_words`] lays it out: bits c·w .. c·w + c. The kernels
    /// read it the same way (`kernels/msm/fixed_base.cu`, `shaders/msm/fixed_base.wgsl`).
    pub fn digit(&self, words: &[u32], w: u32) -> u32 {
        let bit = w * self.c;
        let (word, shift) = ((bit / 32) as usize, bit % 32);
        let mut d = words[word] >> shift;
        if shift + self.c > 32 && word + 1 < FR_WORDS {
            d |= words[word + 1] << (32 - shift);
        }
        d & ((1u32 << self.c) - 1)
    }
}

/// The table of `base`'s multiples for `plan` (see the module docs), window-major. Windows are
/// built in parallel, each in stretches of consecutive digits (one scalar multiplication to
/// start a stretch, then an addition a point), and normalized in one batch per stretch.
pub fn table<C: SWCurveConfig>(base: Projective<C>, plan: FixedBasePlan) -> Vec<Affine<C>> {
    const STRETCH: usize = 1 << 10;
    let per = plan.per_window();
    let mut window_bases = Vec::with_capacity(plan.windows as usize);
    let mut b = base;
    for _ in 0..plan.windows {
        window_bases.push(b);
        for _ in 0..plan.c {
            b.double_in_place();
        }
    }
    let mut out = vec![Affine::<C>::zero(); plan.table_len()];
    out.par_chunks_mut(per).zip(window_bases.par_iter()).for_each(|(window, wb)| {
        window.par_chunks_mut(STRETCH).enumerate().for_each(|(k, stretch)| {
            let first = k * STRETCH + 1;
            let mut acc = wb.mul_bigint([first as u64]);
            let mut points = Vec::with_capacity(stretch.len());
            for _ in 0..stretch.len() {
                points.push(acc);
                acc += wb;
            }
            stretch.copy_from_slice(&Projective::normalize_batch(&points));
        });
    });
    out
}

/// Scalars as the kernels read them: canonical (not Montgomery) little-endian 32-bit words,
/// [`FR_WORDS`] a scalar, converted in parallel.
pub fn scalar_words(scalars: &[Fr]) -> Vec<u32> {
    let mut out = vec![0u32; scalars.len() * FR_WORDS];
    out.par_chunks_mut(FR_WORDS * 1024).zip(scalars.par_chunks(1024)).for_each(|(o, s)| {
        for (dst, x) in o.chunks_exact_mut(FR_WORDS).zip(s) {
            let bytes = x.into_bigint().to_bytes_le();
            for (w, b) in dst.iter_mut().zip(bytes.chunks(4)) {
                *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
    });
    out
}

/// One thread's work on the host: Σ_w table[w][digit_w] for one scalar. The reference the
/// kernels' digit and table indexing are checked against.
pub fn reference_mul<C: SWCurveConfig>(table: &[Affine<C>], plan: FixedBasePlan, words: &[u32]) -> Projective<C> {
    let mut acc = Projective::<C>::zero();
    for w in 0..plan.windows {
        let d = plan.digit(words, w) as usize;
        if d != 0 {
            acc += table[w as usize * plan.per_window() + d - 1];
        }
    }
    acc
}

/// The scalars of every batch of a call: a device runs them end to end, over one table.
pub fn total_len(batches: &[&[Fr]]) -> usize {
    batches.iter().map(|b| b.len()).sum()
}

/// The scalars at flat positions `start .. start + len` of the batches laid end to end, as
/// canonical words ([`scalar_words`]): one device launch's scalars, which may span batches.
pub fn flat_words(batches: &[&[Fr]], start: usize, len: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(len * FR_WORDS);
    let (mut skip, mut left) = (start, len);
    for b in batches {
        if left == 0 {
            break;
        }
        if skip >= b.len() {
            skip -= b.len();
            continue;
        }
        let take = (b.len() - skip).min(left);
        out.extend(scalar_words(&b[skip..skip + take]));
        (skip, left) = (0, left - take);
    }
    out
}

/// The results where there is nothing to compute (the identity as the base, or no scalars):
/// the identity for every scalar. None otherwise.
pub fn trivial<C: SWCurveConfig>(base: &Projective<C>, batches: &[&[Fr]]) -> Option<Vec<Vec<Affine<C>>>> {
    (base.is_zero() || total_len(batches) == 0).then(|| batches.iter().map(|b| vec![Affine::zero(); b.len()]).collect())
}

/// Empty result vectors, one a batch, each with room for its batch.
pub fn batch_outputs<T>(batches: &[&[Fr]]) -> Vec<Vec<T>> {
    batches.iter().map(|b| Vec::with_capacity(b.len())).collect()
}

/// Appends results in flat order (the order of [`flat_words`]) to the batches' vectors, each
/// filled to its batch's length before the next.
pub fn fill_batches<T>(out: &mut [Vec<T>], batches: &[&[Fr]], items: impl IntoIterator<Item = T>) {
    let mut k = 0;
    for item in items {
        while k < out.len() && out[k].len() == batches[k].len() {
            k += 1;
        }
        if let Some(o) = out.get_mut(k) {
            o.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::test_rng;
    use crate::curve::{G1Projective, G2Projective};
    use ark_ec::PrimeGroup;
    use ark_ff::{Field, UniformRand};

    #[test]
    fn windows_follow_the_cost_model() {
        for n in [0usize, 1, 10, 1 << 10, 1 << 20, 1 << 24, 1 << 26, 1 << 30] {
            let p = FixedBasePlan::for_count(n);
            assert!(p.c * p.windows >= SCALAR_BITS && (p.c - 1) * p.windows < SCALAR_BITS + p.windows, "{p:?}");
            for c in MIN_WINDOW..=MAX_WINDOW {
                assert!(p.cost(n) <= FixedBasePlan::with_window(c).cost(n), "n = {n}: {p:?} vs c = {c}");
            }
            assert!(p.c >= MIN_WINDOW, "{p:?}");
        }
        assert_eq!(FixedBasePlan::for_count(1 << 24).c, 13);
        assert_eq!(FixedBasePlan::for_count(1 << 26).c, 15);
    }

    #[test]
    fn digits_rebuild_the_scalar() {
        let mut rng = test_rng("digits_rebuild_the_scalar");
        let cases = [Fr::zero(), Fr::ONE, -Fr::ONE, Fr::from(u64::MAX), Fr::rand(&mut rng), Fr::rand(&mut rng)];
        for s in cases {
            let words = scalar_words(&[s]);
            for c in 1..=MAX_WINDOW {
                let plan = FixedBasePlan::with_window(c);
                // Σ d_w·2^(c·w), in the field: the digits are the scalar's bits.
                let shift = Fr::from(2u64).pow([u64::from(c)]);
                let rebuilt =
                    (0..plan.windows).rev().fold(Fr::zero(), |acc, w| acc * shift + Fr::from(plan.digit(&words, w)));
                assert_eq!(rebuilt, s, "c = {c}");
            }
        }
    }

    #[test]
    fn the_table_and_its_sums_are_arkworks_multiples() {
        let mut rng = test_rng("the_table_and_its_sums_are_arkworks_multiples");
        for c in [1, 5, 13] {
            let plan = FixedBasePlan::with_window(c);
            let base = G1Projective::rand(&mut rng);
            let t = table(base, plan);
            assert_eq!(t.len(), plan.table_len());
            let w = plan.windows - 1;
            let d = plan.per_window().min(77);
            let want = base * (Fr::from(2u64).pow([u64::from(c * w)]) * Fr::from(d as u64));
            assert_eq!(t[w as usize * plan.per_window() + d - 1], want.into_affine(), "c = {c}");
            let scalars = [Fr::zero(), Fr::ONE, -Fr::ONE, Fr::rand(&mut rng)];
            let words = scalar_words(&scalars);
            for (s, wd) in scalars.iter().zip(words.chunks(FR_WORDS)) {
                assert_eq!(reference_mul(&t, plan, wd), base * s, "c = {c}");
            }
        }
        let g2 = G2Projective::generator();
        let plan = FixedBasePlan::with_window(4);
        let s = Fr::rand(&mut rng);
        assert_eq!(reference_mul(&table(g2, plan), plan, &scalar_words(&[s])), g2 * s);
    }

    #[test]
    fn launches_cross_batches_and_results_fill_them_in_order() {
        let (a, b, c) = (vec![Fr::ONE; 3], vec![], vec![Fr::from(2u64), Fr::from(3u64)]);
        let batches: [&[Fr]; 3] = [&a, &b, &c];
        assert_eq!(total_len(&batches), 5);
        assert_eq!(flat_words(&batches, 2, 2), scalar_words(&[Fr::ONE, Fr::from(2u64)]));
        assert_eq!(flat_words(&batches, 4, 1), scalar_words(&[Fr::from(3u64)]));
        let mut out = batch_outputs(&batches);
        fill_batches(&mut out, &batches, 0..2);
        fill_batches(&mut out, &batches, 2..5);
        assert_eq!(out, vec![vec![0, 1, 2], vec![], vec![3, 4]]);
    }
}
