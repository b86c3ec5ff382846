//! A sparse matrix as the GPU kernels read it (kernels/r1cs/spmv.cu, shaders/r1cs/spmv.wgsl):
//! one array of 32-bit words, so that a device holds it in one allocation (CUDA) or one split
//! binding (wgpu), uploaded by one copy.
//!
//! | words | from | what |
//! | --- | --- | --- |
//! | 8·`coefficients` | 0 | the distinct coefficients other than 0, 1 and −1, as Fr words ([`limbs`]) |
//! | `rows` + 1 | `starts` | row starts, in entries |
//! | 2·entries | `entries` | each entry's column and coefficient slot |
//! | `long_count` | `long_rows` | the rows of more than `long_row` entries, in order |
//!
//! A slot is [`SLOT_ONE`] (the kernel adds z[col], no product), [`SLOT_MINUS_ONE`] (it
//! subtracts z[col]), or the index of the entry's coefficient. Most of an R1CS's entries are 1
//! or −1, and a hash circuit's other coefficients repeat (powers of two, a few round
//! constants), so the coefficients a product reads are few and stay in cache. Entries with
//! coefficient 0 are left out.
//!
//! The products stay bit-identical to [`SparseMatrix::mul_vector_into`]: every value is kept
//! reduced below p and field addition and subtraction are exact, so 1·x = x, −1·x = 0 − x
//! (0 for x = 0) and 0·x = 0 as a Montgomery product would give them, and the order in which
//! a row's terms are added (one thread after another, or a tree across threads for long rows)
//! does not change the sum.
//!
//! [`limbs`]: crate::limbs

use std::collections::{HashMap, HashSet};

use ark_ff::{Field, Zero};
use rayon::prelude::*;

use super::SparseMatrix;
use crate::curve::Fr;
use crate::error::{BackendError, BackendResult};
use crate::limbs::{fr_to_words, FR_WORDS};

/// The slot of a coefficient equal to 1: z[col] is added as it is.
pub const SLOT_ONE: u32 = u32::MAX;
/// The slot of a coefficient equal to −1: z[col] is subtracted.
pub const SLOT_MINUS_ONE: u32 = u32::MAX - 1;

/// Where each part of a [`PackedMatrix`] starts, in words, and its counts: what a kernel is
/// given beside the words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedLayout {
    pub rows: u32,
    pub columns: u32,
    /// Distinct coefficients stored (from word 0, 8 words each).
    pub coefficients: u32,
    pub starts: u32,
    pub entries: u32,
    pub long_rows: u32,
    pub long_count: u32,
    /// Rows of more entries than this are long.
    pub long_row: u32,
    /// The words in all.
    pub words: u32,
}

/// A matrix in the GPU kernels' layout (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedMatrix {
    pub layout: PackedLayout,
    pub words: Vec<u32>,
}

/// Rows a packing task takes: enough for each task to outweigh its scheduling, few enough
/// for a 2^24 circuit's matrices to spread over every core.
const ROWS_PER_TASK: usize = 1 << 14;

impl PackedMatrix {
    /// `m` packed, rows of more than `long_row` entries listed as long. A matrix whose words
    /// 32-bit indices cannot address is refused (as out of memory: no device holds it).
    ///
    /// Packed on every core, in two passes over the rows in tasks: the first finds each task's
    /// kept entries and its distinct coefficients, the second writes the entries into place.
    /// Slots number the coefficients in order of first appearance, as one pass in row order
    /// would (a 2^24 circuit's matrices took 0.3–0.55 s each on one core).
    pub fn new(m: &SparseMatrix, long_row: u32) -> BackendResult<PackedMatrix> {
        let (starts, cols, coeffs) = m.parts();
        let rows = m.rows();
        let slot_kind = |k: &Fr| {
            if k.is_zero() {
                Kept::No
            } else if *k == Fr::ONE {
                Kept::Slot(SLOT_ONE)
            } else if *k == -Fr::ONE {
                Kept::Slot(SLOT_MINUS_ONE)
            } else {
                Kept::Coefficient
            }
        };
        let entries_of = |r: usize| starts[r] as usize..starts[r + 1] as usize;
        let tasks: Vec<std::ops::Range<usize>> =
            (0..rows).step_by(ROWS_PER_TASK).map(|r| r..(r + ROWS_PER_TASK).min(rows)).collect();

        // Pass 1: each task's rows' kept entries, and its coefficients in order of first use.
        let scans: Vec<(Vec<u32>, Vec<Fr>)> = tasks
            .par_iter()
            .map(|task| {
                let (mut kept, mut firsts, mut seen) = (Vec::with_capacity(task.len()), Vec::new(), HashSet::new());
                for r in task.clone() {
                    let mut count = 0u32;
                    for k in &coeffs[entries_of(r)] {
                        match slot_kind(k) {
                            Kept::No => continue,
                            Kept::Coefficient if seen.insert(*k) => firsts.push(*k),
                            _ => {}
                        }
                        count += 1;
                    }
                    kept.push(count);
                }
                (kept, firsts)
            })
            .collect();
        let mut slots_of: HashMap<Fr, u32> = HashMap::new();
        let mut coefficients: Vec<Fr> = Vec::new();
        for k in scans.iter().flat_map(|(_, firsts)| firsts) {
            slots_of.entry(*k).or_insert_with(|| {
                coefficients.push(*k);
                coefficients.len() as u32 - 1
            });
        }
        let kept = scans.iter().flat_map(|(kept, _)| kept);
        let long: Vec<u32> = kept.clone().enumerate().filter(|(_, &n)| n > long_row).map(|(r, _)| r as u32).collect();
        let entry_count: usize = kept.clone().map(|&n| n as usize).sum();

        let sizes = [coefficients.len() * FR_WORDS, rows + 1, 2 * entry_count, long.len()];
        let total: usize = sizes.iter().sum();
        let too_large = || BackendError::OutOfMemory {
            what: format!("a sparse matrix of {total} words (32-bit indices)"),
            requested: total as u64 * 4,
            available: u64::from(u32::MAX) * 4,
        };
        let total32 = u32::try_from(total).map_err(|_| too_large())?;
        let layout = PackedLayout {
            rows: rows as u32,
            columns: u32::try_from(m.columns()).map_err(|_| too_large())?,
            coefficients: coefficients.len() as u32,
            starts: sizes[0] as u32,
            entries: (sizes[0] + sizes[1]) as u32,
            long_rows: (sizes[0] + sizes[1] + sizes[2]) as u32,
            long_count: long.len() as u32,
            long_row,
            words: total32,
        };
        let mut words = vec![0u32; total];
        let (coefficient_words, rest) = words.split_at_mut(sizes[0]);
        let (start_words, rest) = rest.split_at_mut(sizes[1]);
        let (entry_words, long_words) = rest.split_at_mut(sizes[2]);
        for (k, out) in coefficients.iter().zip(coefficient_words.chunks_exact_mut(FR_WORDS)) {
            fr_to_words(k, out);
        }
        // Fewer entries than the matrix holds, which fit 32 bits (SparseMatrix checks).
        let mut at = 0u32;
        for (out, n) in start_words[1..].iter_mut().zip(kept) {
            at += n;
            *out = at;
        }
        long_words.copy_from_slice(&long);

        // Pass 2: each task's entries into its own stretch of the words.
        let mut stretches = Vec::with_capacity(tasks.len());
        let mut left = entry_words;
        for (kept, _) in &scans {
            let (mine, after) = left.split_at_mut(2 * kept.iter().map(|&n| n as usize).sum::<usize>());
            stretches.push(mine);
            left = after;
        }
        tasks.par_iter().zip(stretches).for_each(|(task, out)| {
            let mut i = 0;
            for e in entries_of(task.start).start..entries_of(task.end - 1).end {
                let slot = match slot_kind(&coeffs[e]) {
                    Kept::No => continue,
                    Kept::Slot(slot) => slot,
                    Kept::Coefficient => slots_of[&coeffs[e]],
                };
                out[i] = cols[e];
                out[i + 1] = slot;
                i += 2;
            }
        });
        Ok(PackedMatrix { layout, words })
    }
}

/// What becomes of an entry: left out (coefficient 0), kept with a fixed slot (±1), or kept
/// with its coefficient's slot.
enum Kept {
    No,
    Slot(u32),
    Coefficient,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limbs::fr_from_words;
    use crate::sample::{random_scalars, test_rng};
    use ark_ff::UniformRand;
    use rand::Rng;

    /// The kernels' reading of the words, on the host: short rows summed in order, long rows
    /// as a tree of `lanes` strided partial sums (the order a device's threads add them in).
    fn multiply(p: &PackedMatrix, z: &[Fr], out_len: usize, lanes: usize) -> Vec<Fr> {
        let (l, w) = (&p.layout, &p.words);
        let term = |e: usize| {
            let at = l.entries as usize + 2 * e;
            let x = z[w[at] as usize];
            match w[at + 1] {
                SLOT_ONE => x,
                SLOT_MINUS_ONE => -x,
                s => x * fr_from_words(&w[FR_WORDS * s as usize..][..FR_WORDS]),
            }
        };
        let range = |r: usize| w[l.starts as usize + r] as usize..w[l.starts as usize + r + 1] as usize;
        let mut out = vec![Fr::zero(); out_len];
        for (r, o) in out.iter_mut().enumerate().take(l.rows as usize) {
            if range(r).len() <= l.long_row as usize {
                *o = range(r).map(term).sum();
            }
        }
        for &r in &w[l.long_rows as usize..][..l.long_count as usize] {
            let r = r as usize;
            let mut partial: Vec<Fr> = (0..lanes).map(|t| range(r).skip(t).step_by(lanes).map(term).sum()).collect();
            let mut s = lanes / 2;
            while s > 0 {
                for t in 0..s {
                    partial[t] = partial[t] + partial[t + s];
                }
                s /= 2;
            }
            out[r] = partial[0];
        }
        out
    }

    #[test]
    fn packed_products_equal_the_host_reference() {
        let mut rng = test_rng("packed_products_equal_the_host_reference");
        let shared = Fr::rand(&mut rng);
        // The last spans several packing tasks, a shared coefficient in each.
        for (rows, columns) in [(0usize, 1usize), (1, 1), (37, 5), (500, 300), (2 * ROWS_PER_TASK + 77, 300)] {
            let data: Vec<Vec<(Fr, usize)>> = (0..rows)
                .map(|r| {
                    let len = if r % 50 == 7 { 200 } else { rng.gen_range(0..8) };
                    (0..len)
                        .map(|_| {
                            let k = match rng.gen_range(0..5) {
                                0 => Fr::zero(),
                                1 => Fr::ONE,
                                2 => -Fr::ONE,
                                3 => shared,
                                _ => Fr::rand(&mut rng),
                            };
                            (k, rng.gen_range(0..columns))
                        })
                        .collect()
                })
                .collect();
            let m = SparseMatrix::from_rows(columns, data.iter().map(Vec::as_slice)).unwrap();
            let z = random_scalars(columns, &mut rng);
            let mut want = vec![Fr::zero(); rows + 3];
            m.mul_vector_into(&z, &mut want);
            let p = PackedMatrix::new(&m, 16).unwrap();
            assert_eq!(p.words.len(), p.layout.words as usize);
            assert_eq!((p.layout.rows as usize, p.layout.columns as usize), (rows, columns));
            for lanes in [1, 32, 64] {
                assert!(multiply(&p, &z, rows + 3, lanes) == want, "{rows}x{columns}, {lanes} lanes");
            }
            // Slots number the coefficients in order of first appearance, each stored once.
            let slots = p.words[p.layout.entries as usize..p.layout.long_rows as usize].iter().skip(1).step_by(2);
            let mut next = 0;
            for &slot in slots.filter(|&&s| s < SLOT_MINUS_ONE) {
                assert!(slot <= next, "slot {slot} before slot {next}");
                next = next.max(slot + 1);
            }
            assert_eq!(next, p.layout.coefficients, "{rows}x{columns}");
        }
    }

    #[test]
    fn ones_zeros_and_repeats_take_no_coefficient_words() {
        let f = |x: u64| Fr::from(x);
        let rows = [
            vec![(Fr::ONE, 0), (-Fr::ONE, 1), (Fr::zero(), 2)],
            vec![(f(5), 0), (f(5), 2), (f(7), 1)],
            (0..17).map(|i| (Fr::ONE, i % 3)).collect(),
        ];
        let p = PackedMatrix::new(&SparseMatrix::from_rows(3, rows.iter().map(Vec::as_slice)).unwrap(), 16).unwrap();
        let l = p.layout;
        assert_eq!((l.coefficients, l.starts, l.long_count), (2, 16, 1), "{l:?}");
        assert_eq!(&p.words[l.starts as usize..l.entries as usize], &[0, 2, 5, 22], "the zero entry is left out");
        assert_eq!(&p.words[l.entries as usize..][..4], &[0, SLOT_ONE, 1, SLOT_MINUS_ONE]);
        assert_eq!(&p.words[l.entries as usize + 4..][..6], &[0, 0, 2, 0, 1, 1], "5 shares slot 0");
        assert_eq!(&p.words[l.long_rows as usize..], &[2]);
        assert_eq!(fr_from_words(&p.words[8..16]), f(7));
    }
}
