//! bellperson's proof bytes: A (G1), B (G2), C (G1), each compressed in the zcash encoding,
//! 192 bytes — arkworks' compressed encoding of the same proof, point for point. Filecoin's C2
//! output is such proofs, one per partition, end to end.

use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Validate};
use g16::Proof;

use crate::BellpersonError;

/// The length of one proof's bytes.
pub const PROOF_BYTES: usize = 192;

/// A proof as bellperson's `Proof::write` writes it.
pub fn to_bytes(proof: &Proof) -> [u8; PROOF_BYTES] {
    let mut out = [0u8; PROOF_BYTES];
    proof
        .serialize_with_mode(&mut out[..], Compress::Yes)
        .expect("a proof's compressed encoding is 192 bytes");
    out
}

/// A proof from bellperson's bytes, each point checked on the curve and in its subgroup.
pub fn from_bytes(bytes: &[u8]) -> Result<Proof, BellpersonError> {
    if bytes.len() != PROOF_BYTES {
        return Err(BellpersonError::Proof(format!("{} bytes, a proof has {PROOF_BYTES}", bytes.len())));
    }
    Proof::deserialize_with_mode(bytes, Compress::Yes, Validate::Yes).map_err(|e| BellpersonError::Proof(e.to_string()))
}
