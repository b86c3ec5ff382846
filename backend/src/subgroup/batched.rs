//! Subgroup checks of many points at once: each pass splits the points into random buckets and
//! checks each bucket's sum; a few hundred checks and one addition a point a pass stand in for
//! a check a point, which costs about a hundred additions. The sums are made in affine
//! coordinates, many additions sharing one inversion (`affine_sums`).
//!
//! Why it is sound. Let A be the group of the curve's points (E(Fq) for G1, E'(Fq²) for G2), G
//! its prime-order subgroup and π: A → A/G the quotient. A bucket's sum is in G exactly when
//! the π(Pᵢ) of its points add up to zero. Take any point j outside G (π(Pⱼ) ≠ 0) and fix every
//! other point's bucket: the pass misses only if no bucket's sum leaves G, so at most one
//! bucket may hold a non-zero sum of the others' π, and Pⱼ must fall in exactly that one (in an
//! all-zero bucket it would leave π(Pⱼ) there). That is one choice of `m`, so a pass misses a
//! key with any number of bad points, however they were chosen to cancel, with probability at
//! most 1/m, and `passes` independent passes with at most m^-passes ≤ 2^-[`SOUNDNESS_BITS`].
//! Nothing depends on the cofactor's factors: a random linear combination Σ cᵢ·Pᵢ instead
//! misses a G1 point whose outside part has order 3 a third of the time.
//!
//! The buckets are drawn from the operating system's generator after the points are read, so
//! the author of a key cannot aim at them. A bucket whose sum leaves G holds a bad point: the
//! points of failing buckets are then checked one by one and the lowest bad index returned,
//! which is the first bad point of all unless every pass hid that one (at most m^-passes).

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::CurveGroup;
use ark_ff::Zero;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

mod affine_sums;

/// A key with a point outside the subgroup passes with probability at most 2^-SOUNDNESS_BITS.
pub const SOUNDNESS_BITS: u32 = 128;

/// At most 2^16 buckets a pass: more only pays for inputs far larger than a key's queries.
const MAX_BUCKET_BITS: u32 = 16;

/// How the points are checked: `passes` random partitions into `2^bucket_bits` buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub bucket_bits: u32,
    pub passes: u32,
}

impl Plan {
    /// The cheapest plan for `n` points when one point's check costs `check_cost` additions (a
    /// pass costs n additions and 2^bits checks), or None when checking each point costs less.
    pub fn for_points(n: usize, check_cost: u32) -> Option<Plan> {
        let per_point = n as f64 * f64::from(check_cost);
        (1..=MAX_BUCKET_BITS)
            .map(|bucket_bits| {
                let plan = Plan { bucket_bits, passes: SOUNDNESS_BITS.div_ceil(bucket_bits) };
                (plan.cost(n, check_cost), plan)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .filter(|(cost, _)| *cost < per_point)
            .map(|(_, plan)| plan)
    }

    /// In additions.
    fn cost(&self, n: usize, check_cost: u32) -> f64 {
        f64::from(self.passes) * (n as f64 + (1u64 << self.bucket_bits) as f64 * f64::from(check_cost))
    }

    pub fn buckets(&self) -> usize {
        1 << self.bucket_bits
    }

    /// Passes whose buckets one 64-bit word of the deal holds.
    pub fn passes_per_word(&self) -> u32 {
        64 / self.bucket_bits
    }
}

/// Each point's bucket in each pass, drawn from one seed so that any stretch of points can be
/// dealt again (to find the members of a failing bucket) without storing the deal.
///
/// The layout of the stream, which a device reading [`Deal::keystream`] follows: point i takes
/// the 64-bit words `i·words..(i + 1)·words` of ChaCha20's stream; pass p's bucket is bits
/// `(p mod per_word)·bucket_bits..` of word `p / per_word`, where `per_word = 64 / bucket_bits`
/// (a pass's bits never straddle two words).
pub struct Deal {
    seed: [u8; 32],
    plan: Plan,
    /// 64-bit words of the stream a point takes.
    words: u32,
}

impl Deal {
    /// A deal from a seed drawn from the operating system's generator.
    pub fn new(plan: Plan) -> Deal {
        let mut seed = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut seed);
        Deal { seed, plan, words: plan.passes.div_ceil(plan.passes_per_word()) }
    }

    pub fn plan(&self) -> Plan {
        self.plan
    }

    /// 64-bit words of the stream each point takes.
    pub fn words_per_point(&self) -> u32 {
        self.words
    }

    /// The stream of points `start..start + out.len() / words`, as 32-bit words (each 64-bit
    /// word low half first), made on rayon's pool.
    pub fn keystream(&self, start: usize, out: &mut [u32]) {
        const PIECE: usize = 1 << 16;
        out.par_chunks_mut(PIECE).enumerate().for_each(|(k, piece)| {
            let mut rng = ChaCha20Rng::from_seed(self.seed);
            rng.set_word_pos(start as u128 * u128::from(self.words) * 2 + (k * PIECE) as u128);
            for w in piece.iter_mut() {
                *w = rng.next_u32();
            }
        });
    }

    /// Calls `f(i, pass, bucket)` for points `start..start + len`.
    pub(crate) fn deal(&self, start: usize, len: usize, mut f: impl FnMut(usize, usize, usize)) {
        let mut rng = ChaCha20Rng::from_seed(self.seed);
        // The stream's position counts 32-bit words.
        rng.set_word_pos(start as u128 * u128::from(self.words) * 2);
        let mask = (1u64 << self.plan.bucket_bits) - 1;
        for i in start..start + len {
            let (mut bits, mut left, mut drawn) = (0u64, 0u32, 0u32);
            for pass in 0..self.plan.passes as usize {
                if left < self.plan.bucket_bits {
                    // A pass's bits never straddle two words: the rest of a word is dropped.
                    bits = rng.next_u64();
                    left = 64;
                    drawn += 1;
                }
                f(i, pass, (bits & mask) as usize);
                bits >>= self.plan.bucket_bits;
                left -= self.plan.bucket_bits;
            }
            // Keep every point at its own fixed offset in the stream.
            for _ in drawn..self.words {
                rng.next_u64();
            }
        }
    }
}

/// The index of the first point outside the prime-order subgroup (see the module's text for
/// how first), or None; every point must be on the curve. `check_cost`: one point's check in
/// mixed additions, which decides whether batching pays.
pub fn first_outside<C: SWCurveConfig>(points: &[Affine<C>], check_cost: u32) -> Option<usize> {
    first_outside_among(&[points], check_cost).map(|(_, i)| i)
}

/// [`first_outside`] for several vectors checked as one batch (a key's queries: one batch of a
/// few hundred bucket checks instead of one a query), the first bad point named by its vector
/// and its index there.
pub fn first_outside_among<C: SWCurveConfig>(vectors: &[&[Affine<C>]], check_cost: u32) -> Option<(usize, usize)> {
    let n = vectors.iter().map(|v| v.len()).sum();
    match Plan::for_points(n, check_cost) {
        Some(plan) => first_outside_among_with(vectors, plan),
        None => vectors.iter().enumerate().find_map(|(k, v)| Some((k, each_first_outside(v)?))),
    }
}

/// Point by point.
pub fn each_first_outside<C: SWCurveConfig>(points: &[Affine<C>]) -> Option<usize> {
    points.par_iter().position_first(|p| !p.is_in_correct_subgroup_assuming_on_curve())
}

/// [`first_outside`] with a given plan.
pub fn first_outside_with<C: SWCurveConfig>(points: &[Affine<C>], plan: Plan) -> Option<usize> {
    first_outside_among_with(&[points], plan).map(|(_, i)| i)
}

/// Vectors read as one, by a global index.
struct Joined<'a, C: SWCurveConfig> {
    vectors: &'a [&'a [Affine<C>]],
    starts: Vec<usize>,
    len: usize,
}

impl<'a, C: SWCurveConfig> Joined<'a, C> {
    fn new(vectors: &'a [&'a [Affine<C>]]) -> Self {
        let mut starts = Vec::with_capacity(vectors.len());
        let mut len = 0;
        for v in vectors {
            starts.push(len);
            len += v.len();
        }
        Joined { vectors, starts, len }
    }

    /// (vector, index in it) of global index `i < len`: the last vector starting at or before
    /// `i` (empty vectors start where the next one does, so they are never it).
    fn locate(&self, i: usize) -> (usize, usize) {
        let k = self.starts.partition_point(|&s| s <= i) - 1;
        (k, i - self.starts[k])
    }

    /// Points `start..start + len`, in order.
    fn range(&self, start: usize, len: usize) -> impl Iterator<Item = Affine<C>> + Clone + 'a {
        let (k, j) = self.locate(start);
        self.vectors[k..].iter().flat_map(|v| v.iter()).skip(j).take(len).copied()
    }

    fn get(&self, i: usize) -> &'a Affine<C> {
        let (k, j) = self.locate(i);
        &self.vectors[k][j]
    }
}

/// [`first_outside_among`] with a given plan.
pub fn first_outside_among_with<C: SWCurveConfig>(vectors: &[&[Affine<C>]], plan: Plan) -> Option<(usize, usize)> {
    let points = Joined::new(vectors);
    let deal = Deal::new(plan);
    let (m, passes) = (plan.buckets(), plan.passes as usize);
    let stretch = stretch_len(points.len);
    let stretches = points.len.div_ceil(stretch);
    // A few tasks a thread, each summing a run of stretches into its own buckets.
    let tasks = (rayon::current_num_threads() * 2).min(stretches);
    let sums = (0..tasks)
        .into_par_iter()
        .map(|t| {
            let mut sums = vec![Projective::<C>::zero(); passes * m];
            let mut scratch = affine_sums::Scratch::new();
            let mut dealt = Vec::new();
            for k in (t * stretches / tasks)..((t + 1) * stretches / tasks) {
                let (start, len) = (k * stretch, stretch.min(points.len - k * stretch));
                dealt.clear();
                dealt.resize(len * passes, 0u16);
                deal.deal(start, len, |i, pass, bucket| dealt[(i - start) * passes + pass] = bucket as u16);
                for (pass, sums) in sums.chunks_mut(m).enumerate() {
                    let buckets = dealt[pass..].iter().step_by(passes).map(|&b| usize::from(b));
                    affine_sums::add_into_buckets(points.range(start, len), buckets, sums, &mut scratch);
                }
            }
            sums
        })
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
            a
        })?;
    let sums = Projective::normalize_batch(&sums);
    let failing: Vec<bool> = sums.par_iter().map(|s| !s.is_in_correct_subgroup_assuming_on_curve()).collect();
    if !failing.contains(&true) {
        return None;
    }
    // The members of failing buckets, checked one by one in index order.
    (0..stretches)
        .into_par_iter()
        .find_map_first(|k| {
            let (start, len) = (k * stretch, stretch.min(points.len - k * stretch));
            let mut suspects = Vec::new();
            deal.deal(start, len, |i, pass, bucket| {
                if failing[pass * m + bucket] && suspects.last() != Some(&i) {
                    suspects.push(i);
                }
            });
            suspects.into_iter().find(|&i| !points.get(i).is_in_correct_subgroup_assuming_on_curve())
        })
        .map(|i| points.locate(i))
}

/// Points summed at a time: a few stretches a task, each small enough that its sorted copy
/// stays in cache.
fn stretch_len(n: usize) -> usize {
    n.div_ceil(rayon::current_num_threads() * 4).clamp(1 << 10, 1 << 15)
}
