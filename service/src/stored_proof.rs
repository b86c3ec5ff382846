//! A proven job's proof as the store keeps it. The queue holds proofs as bytes and knows
//! nothing of them; a Groth16 proof is arkworks' compressed encoding, always 192 bytes. A
//! Filecoin job's C2 output is 192 bytes a partition, so it is stored behind a tag that a proof
//! never starts with at that length: results stay readable by any server of a fleet without
//! loading the job's circuit or changing the store's schema, and proofs stored before read as
//! they did.

/// Before a stored C2 output.
const FILECOIN_C2: &[u8] = b"g16 filecoin c2\0";

/// A stored proof, read.
#[derive(Debug, PartialEq, Eq)]
pub enum StoredProof<'a> {
    /// One Groth16 proof (arkworks' compressed encoding).
    Groth16(&'a [u8]),
    /// A Filecoin C2 output (bellperson's encoding, 192 bytes a partition).
    FilecoinC2(&'a [u8]),
}

/// The stored form of a C2 output.
#[cfg_attr(not(feature = "filecoin"), allow(dead_code))] // reason: only a Filecoin job makes one
pub fn filecoin_c2(c2: &[u8]) -> Vec<u8> {
    [FILECOIN_C2, c2].concat()
}

pub fn read(stored: &[u8]) -> StoredProof<'_> {
    match stored.strip_prefix(FILECOIN_C2) {
        Some(c2) if stored.len() != GROTH16_BYTES => StoredProof::FilecoinC2(c2),
        _ => StoredProof::Groth16(stored),
    }
}

/// An arkworks compressed BLS12-381 proof: G1, G2, G1.
const GROTH16_BYTES: usize = 48 + 96 + 48;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_c2_output_and_a_proof_are_told_apart() {
        let c2 = vec![5u8; 192 * 2];
        assert_eq!(read(&filecoin_c2(&c2)), StoredProof::FilecoinC2(&c2));
        assert_eq!(read(&filecoin_c2(&c2[..192])), StoredProof::FilecoinC2(&c2[..192]));
        // A proof whose bytes happen to start like the tag is still a proof.
        let mut proof = vec![0u8; 192];
        proof[..FILECOIN_C2.len()].copy_from_slice(FILECOIN_C2);
        assert_eq!(read(&proof), StoredProof::Groth16(&proof));
    }
}
