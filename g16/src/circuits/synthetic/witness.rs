//! The synthetic circuit's assignment, computed natively and in parallel: the values synthesis
//! allocates, in its order, without a constraint system (tested equal to arkworks'
//! witness-only synthesis).
//!
//! Synthesis draws from one ChaCha20 stream and runs a chain x′ = (x + b₀)(y + b₁) + b₂, both
//! sequential as written. Neither has to be:
//! - ChaCha20 is seekable, so stretches of its words are generated in parallel at their
//!   offsets; only the scan that cuts them into draws runs in order, because a field draw is
//!   redrawn when it is ≥ r and the draws do not sit at fixed offsets. The scan compares, it
//!   does no arithmetic.
//! - Each step is an affine map x ↦ m·x + c, so the chain is a prefix of map compositions:
//!   each stretch of groups composes its maps in parallel, the stretches' starting values
//!   follow in order (one multiplication each), and each stretch then runs its own steps.
//!
//! At 2^22 constraints synthesis in prove mode took 250 ms on one H200 host thread, so a
//! whole proof took 2.5× its 180 ms device section; this takes a few ms a thread.

use ark_ff::{AdditiveGroup, BigInt, Field, PrimeField};
use rand::RngCore;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use super::{bit, Group, Witness};
use crate::circuits::NUM_INSTANCE_VARIABLES;
use ark_bls12_381::Fr;

/// Words one task generates.
const STRETCH_WORDS: usize = 1 << 16;

/// Groups one task of the chain composes and runs.
const CHAIN_STRETCH: usize = 1 << 12;

/// Variables a group allocates: b₀, b₁, b₂, y, x′.
const GROUP_VARIABLES: usize = 5;

/// The assignment z = `[1, x₀, out]`, then b₀, b₁, b₂, y, x′ per group, then the final
/// multiplier: exactly what synthesis of `groups` groups from `seed` allocates.
pub(in crate::circuits) fn assignment(groups: usize, seed: u64) -> Vec<Fr> {
    assignment_of(groups, seed, false)
}

/// Groups of the mostly-bits assignment that keep their drawn multiplier y: those whose y's
/// low 5 bits are 0, 1 in 32.
const KEPT_Y_MASK: u64 = 31;

/// Another satisfying assignment of the same circuit whose values are mostly bits, like a
/// Filecoin PoRep partition's witness (docs/perf/filecoin.md: about half zeros, half ones, under
/// 5 % other values): in 31 groups of 32 (by y's low bits) y = 0 and b₁ = 0, so
/// x′ = (x + b₀)·0 + b₂ = b₂. About 69 % of the values are then 0, 30 % are 1, and 1.1 % (the
/// other groups' y and x′, and the ends) are field elements. Its public inputs are z[1..3].
pub(in crate::circuits) fn assignment_mostly_bits(groups: usize, seed: u64) -> Vec<Fr> {
    assignment_of(groups, seed, true)
}

fn assignment_of(groups: usize, seed: u64, mostly_bits: bool) -> Vec<Fr> {
    // A field draw takes 8 words and is redrawn with probability 1 − r/2^255 ≈ 0.094, so a
    // group takes ≈ 9.8 words; the margin makes running out (handled) rare.
    let expected = 16 + groups * 10;
    let mut draws = Draws::new(Witness::new(seed).0, expected + expected / 16 + 1024);
    let start = draws.field();
    let mut drawn: Vec<Group> = (0..groups).map(|_| draws.group()).collect();
    let y = draws.field();
    if mostly_bits {
        drawn.par_iter_mut().filter(|g| g.y.into_bigint().0[0] & KEPT_Y_MASK != 0).for_each(|g| {
            g.y = Fr::ZERO;
            g.bits[1] = false;
        });
    }

    // Each stretch's maps composed: x ↦ M·x + C over the whole stretch.
    let composed: Vec<(Fr, Fr)> = drawn
        .par_chunks(CHAIN_STRETCH)
        .map(|stretch| {
            stretch.iter().fold((Fr::ONE, Fr::ZERO), |(big_m, big_c), g| {
                let (m, c) = g.affine();
                (m * big_m, m * big_c + c)
            })
        })
        .collect();
    let mut starts = Vec::with_capacity(composed.len());
    let mut x = start;
    for (big_m, big_c) in &composed {
        starts.push(x);
        x = *big_m * x + big_c;
    }
    let last_bit = drawn.last().is_some_and(|g| g.bits[2]);
    let out = x * y + bit(last_bit);

    let len = NUM_INSTANCE_VARIABLES + GROUP_VARIABLES * groups + 1;
    let mut z = Vec::with_capacity(len);
    z.par_extend(rayon::iter::repeat_n(Fr::ZERO, len));
    z[..NUM_INSTANCE_VARIABLES].copy_from_slice(&[Fr::ONE, start, out]);
    z[len - 1] = y;
    z[NUM_INSTANCE_VARIABLES..len - 1]
        .par_chunks_mut(GROUP_VARIABLES * CHAIN_STRETCH)
        .zip(drawn.par_chunks(CHAIN_STRETCH))
        .zip(starts.par_iter())
        .for_each(|((slots, stretch), &start)| {
            let mut x = start;
            for (slot, g) in slots.chunks_exact_mut(GROUP_VARIABLES).zip(stretch) {
                let (m, c) = g.affine();
                x = m * x + c;
                slot.copy_from_slice(&[bit(g.bits[0]), bit(g.bits[1]), bit(g.bits[2]), g.y, x]);
            }
        });
    z
}

/// `count` words of `stream` (positioned at word 0) from word `from`, generated in parallel.
fn words(stream: &ChaCha20Rng, from: usize, count: usize) -> Vec<u32> {
    let mut out = vec![0u32; count];
    out.par_chunks_mut(STRETCH_WORDS).enumerate().for_each(|(k, chunk)| {
        let mut rng = stream.clone();
        rng.set_word_pos((from + k * STRETCH_WORDS) as u128);
        // The byte stream is the words in little-endian order.
        rng.fill_bytes(bytemuck::cast_slice_mut(chunk));
        for w in chunk.iter_mut() {
            *w = u32::from_le(*w);
        }
    });
    out
}

/// The stream's words read in the order [`Witness`] draws them: a word for a group's bits,
/// eight for a field element (four u64, low word first, as rand's `next_u64` reads them).
struct Draws {
    stream: ChaCha20Rng,
    words: Vec<u32>,
    pos: usize,
}

impl Draws {
    /// Draws from `stream` (at word 0), `prefetch` words generated ahead.
    fn new(stream: ChaCha20Rng, prefetch: usize) -> Draws {
        let words = words(&stream, 0, prefetch);
        Draws { stream, words, pos: 0 }
    }

    fn word(&mut self) -> u32 {
        if self.pos == self.words.len() {
            let more = words(&self.stream, self.words.len(), 1024 + self.words.len() / 8);
            self.words.extend(more);
        }
        self.pos += 1;
        self.words[self.pos - 1]
    }

    /// What `Fr::rand` draws: 256 random bits as the Montgomery form, the bits above r's
    /// width masked, redrawn while ≥ r.
    fn field(&mut self) -> Fr {
        loop {
            let mut limbs = [0u64; 4];
            for limb in &mut limbs {
                let lo = self.word();
                *limb = u64::from(self.word()) << 32 | u64::from(lo);
            }
            limbs[3] &= u64::MAX >> (256 - Fr::MODULUS_BIT_SIZE);
            let candidate = BigInt(limbs);
            if candidate < Fr::MODULUS {
                return Fr::new_unchecked(candidate);
            }
        }
    }

    fn group(&mut self) -> Group {
        let word = self.word();
        Group::new(word, self.field())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading from no prefetched words at all (every word generated on demand) gives
    /// `Witness`'s draws, redraws included.
    #[test]
    fn draws_follow_the_sequential_stream() {
        let mut sequential = Witness::new(9);
        let mut draws = Draws::new(Witness::new(9).0, 0);
        assert_eq!(draws.field(), sequential.field());
        for _ in 0..20_000 {
            let (a, b) = (draws.group(), sequential.group());
            assert_eq!((a.bits, a.y), (b.bits, b.y));
        }
    }
}
