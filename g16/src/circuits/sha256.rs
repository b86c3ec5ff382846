//! SHA-256 over a long seed-derived preimage: a chain of SHA-256 compressions.
//!
//! The preimage is seed-derived witness bytes, exactly long enough to fill `blocks`
//! SHA-256 message blocks together with SHA-256's own padding: 64·blocks − 9 bytes (the
//! padding is a 0x80 byte and the 8-byte bit length). They go through the
//! `ark-crypto-primitives` SHA-256 gadget 64 bytes at a time (`Sha256Gadget::update`), so
//! block i's compression takes block i−1's output state as its chaining value: a strictly
//! sequential chain of `blocks` compressions, like the long labelling hashes of Filecoin's
//! PoRep. `finalize` pads and runs the last compression, so the result is the standard
//! SHA-256 digest of the preimage and any SHA-256 tool can check it. Sizing the preimage so
//! that the padding fits in the last data block avoids a whole extra compression over a
//! constant padding block (~33k constraints of mostly wasted work).
//!
//! Nearly every witness value is a bit (the gadget works on `Boolean`s), which is what
//! makes this circuit the bit-heavy benchmark.
//!
//! Public inputs: the digest's 256 bits packed into two field elements of 128 bits each:
//! digest bytes 0..16 and 16..32, each read as a little-endian integer (the order of
//! `Boolean::le_bits_to_fp` over `UInt8::to_bits_le`).

use ark_bls12_381::Fr;
use ark_crypto_primitives::crh::sha256::{constraints::Sha256Gadget, digest::Digest, Sha256};
use ark_r1cs_std::{fields::fp::FpVar, prelude::*};
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use rand::RngCore;

/// Bytes in one SHA-256 message block.
const BLOCK_BYTES: usize = 64;

/// Bytes of SHA-256 padding that share the last block with the data: the 0x80 marker
/// and the 64-bit message length.
const PADDING_BYTES: usize = 9;

/// Constraints added by one more 64-byte message block: 512 booleanity constraints for
/// its witness bits plus one compression. Measured once from the gadget; the
/// `unit_costs_match_the_gadget` test re-measures it.
pub(super) const CONSTRAINTS_PER_BLOCK: usize = 41_392;

/// Constraints of the one-block circuit: the last block, whose 9 padding bytes are
/// constants (no booleanity constraints for them, and a partly constant message
/// schedule), plus the two equalities binding the packed digest to the public inputs.
pub(super) const CONSTRAINTS_ONE_BLOCK: usize = 40_269;

/// Seed domain, so the same seed gives unrelated witnesses in different circuits.
const DOMAIN: [u8; 16] = *b"g16.sha256.wit.1";

/// Constraints of a circuit with `blocks` ≥ 1 message blocks.
pub(super) const fn constraints_for_blocks(blocks: usize) -> usize {
    CONSTRAINTS_ONE_BLOCK + blocks.saturating_sub(1) * CONSTRAINTS_PER_BLOCK
}

/// The most message blocks whose constraints plus instance variables fit in `rows`
/// (0 if not even one fits).
pub(super) const fn blocks_for(rows: usize) -> usize {
    let first = CONSTRAINTS_ONE_BLOCK + super::NUM_INSTANCE_VARIABLES;
    if rows < first {
        0
    } else {
        1 + (rows - first) / CONSTRAINTS_PER_BLOCK
    }
}

/// The smallest size that holds one message block.
pub(super) const MIN_SIZE: u32 = {
    let mut size = 0;
    while blocks_for(1usize << size) == 0 {
        size += 1;
    }
    size
};

/// The seed-derived preimage: 64·`blocks` − 9 bytes, so that SHA-256's padding completes
/// the last block.
fn preimage(blocks: usize, seed: u64) -> Vec<u8> {
    let mut bytes = vec![0u8; (blocks * BLOCK_BYTES).saturating_sub(PADDING_BYTES)];
    super::witness_rng(&DOMAIN, seed).fill_bytes(&mut bytes);
    bytes
}

/// Packs a digest into the two public inputs (bytes 0..16 and 16..32, little-endian),
/// exactly as the circuit packs its digest bits.
fn pack_digest(digest: &[u8; 32]) -> [Fr; 2] {
    let mut halves = [[0u8; 16]; 2];
    halves[0].copy_from_slice(&digest[..16]);
    halves[1].copy_from_slice(&digest[16..]);
    halves.map(|half| Fr::from(u128::from_le_bytes(half)))
}

/// The public inputs, computed natively with the RustCrypto SHA-256 that
/// `ark-crypto-primitives` re-exports.
pub(super) fn public_inputs(blocks: usize, seed: u64) -> [Fr; 2] {
    let digest: [u8; 32] = Sha256::digest(preimage(blocks, seed)).into();
    pack_digest(&digest)
}

/// Synthesizes SHA-256 of the preimage (`blocks` compressions) and binds the packed digest
/// to the two public inputs.
pub(super) fn synthesize(cs: ConstraintSystemRef<Fr>, blocks: usize, seed: u64) -> Result<(), SynthesisError> {
    let preimage = preimage(blocks, seed);
    let mut hasher = Sha256Gadget::<Fr>::default();
    for chunk in preimage.chunks(BLOCK_BYTES) {
        // Allocating block by block keeps the allocation order interleaved with the
        // compressions, as a streaming hash would produce it.
        let chunk = UInt8::new_witness_vec(cs.clone(), chunk)?;
        // A whole block with nothing pending is exactly one compression, chained on the
        // state the previous block left; the short last chunk is held as pending.
        hasher.update(&chunk)?;
    }
    // Pads the pending last chunk to a full block and compresses it.
    let digest = hasher.finalize()?;

    for half in digest.0.chunks(16) {
        let mut bits = Vec::with_capacity(128);
        for byte in half {
            bits.extend(byte.to_bits_le()?);
        }
        // 128 bits fit below the modulus, so packing is a linear combination: no constraint.
        let packed = Boolean::le_bits_to_fp(&bits)?;
        // The input's value is the in-circuit digest (only asked for when proving); the
        // tests check it equals the natively computed `public_inputs`.
        let input = FpVar::new_input(cs.clone(), || packed.value())?;
        packed.enforce_equal(&input)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{check_instance, check_shape_independence, synthesize as synth};
    use super::super::{BuiltinCircuit, CircuitKind};
    use super::*;
    use ark_relations::gr1cs::{ConstraintSystem, OptimizationGoal, SynthesisMode};

    /// Constraints of a `blocks`-block chain, counted in setup mode (shape only, fast).
    fn measure(blocks: usize) -> usize {
        let cs = ConstraintSystem::<Fr>::new_ref();
        cs.set_optimization_goal(OptimizationGoal::Constraints);
        cs.set_mode(SynthesisMode::Setup);
        synthesize(cs.clone(), blocks, 0).unwrap();
        cs.num_constraints()
    }

    #[test]
    fn unit_costs_match_the_gadget() {
        let (one, two) = (measure(1), measure(2));
        println!("sha256: 1 block {one}, 2 blocks {two} constraints; per block {}", two - one);
        assert_eq!(two - one, CONSTRAINTS_PER_BLOCK, "constraints per block");
        assert_eq!(one, CONSTRAINTS_ONE_BLOCK, "constraints of one block");
        assert_eq!(measure(3), constraints_for_blocks(3));
    }

    #[test]
    fn digest_packing_matches_known_vector() {
        // SHA-256("abc") (FIPS 180-2 test vector) = ba7816bf 8f01cfea 414140de 5dae2223
        // b00361a3 96177a9c b410ff61 f20015ad; each half is read little-endian.
        let digest: [u8; 32] = Sha256::digest(b"abc").into();
        let [lo, hi] = pack_digest(&digest);
        assert_eq!(lo, Fr::from(0x2322_ae5d_de40_4141_eacf_018f_bf16_78ba_u128));
        assert_eq!(hi, Fr::from(0xad15_00f2_61ff_10b4_9c7a_1796_a361_03b0_u128));
    }

    #[test]
    fn min_size_is_satisfied_and_fits() {
        let min = CircuitKind::Sha256.min_size();
        check_instance(CircuitKind::Sha256, min, 3, CONSTRAINTS_PER_BLOCK);
        assert_eq!(BuiltinCircuit::new(CircuitKind::Sha256, min, 3).unwrap().units(), 1);
        // One size below cannot hold a single block.
        assert_eq!(blocks_for(1 << (min - 1)), 0);
    }

    #[test]
    fn larger_size_is_satisfied_and_fits() {
        check_instance(CircuitKind::Sha256, CircuitKind::Sha256.min_size() + 1, 4, CONSTRAINTS_PER_BLOCK);
    }

    #[test]
    fn shape_does_not_depend_on_seed() {
        check_shape_independence(CircuitKind::Sha256, CircuitKind::Sha256.min_size());
    }

    #[test]
    fn witness_is_mostly_bits() {
        let cs = synth(BuiltinCircuit::new(CircuitKind::Sha256, CircuitKind::Sha256.min_size(), 5).unwrap());
        let witness = cs.witness_assignment().unwrap();
        let bits = witness.iter().filter(|w| **w == Fr::from(0u64) || **w == Fr::from(1u64)).count();
        println!("sha256: {bits} of {} witness values are 0/1", witness.len());
        assert!(bits * 10 >= witness.len() * 9, "{bits} of {} witness values are bits", witness.len());
    }
}
