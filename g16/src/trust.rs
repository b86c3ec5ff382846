//! The record of key files whose every point g16 checked on this machine, by digest, so that
//! loading the same bytes again costs reading them: the digest is computed while the file
//! streams in, and a match skips the point checks (equal bytes decode to the same points,
//! which passed every check here). A changed byte changes the digest, and the file is checked
//! in full again.
//!
//! What this trusts: that nobody who could not already replace g16 itself writes into the
//! record's directory (the user's cache directory, like the key store's digests), and
//! SHA-256's collision resistance. A record that cannot be written costs only the next
//! load's checks.

use std::path::{Path, PathBuf};

use crate::circom::zkey::Zkey;
use crate::circom::CircomError;
use crate::digest::{to_hex, FileDigest};
use crate::prover::key::{CheckedKey, DecodedKey, KeyError, PointChecks, SubgroupCheck};

/// A directory of empty files named by the digests of checked key files.
#[derive(Clone, Debug)]
pub struct CheckedFiles {
    dir: PathBuf,
}

/// Whether a load ran every check or trusted its digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    /// Every point was checked now (and the digest recorded).
    Now,
    /// The digest matched a file checked before: no point was checked again.
    Before,
}

impl CheckedFiles {
    pub fn new(dir: impl Into<PathBuf>) -> CheckedFiles {
        CheckedFiles { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry(&self, digest: &FileDigest) -> PathBuf {
        self.dir.join(to_hex(digest))
    }

    pub fn contains(&self, digest: &FileDigest) -> bool {
        self.entry(digest).is_file()
    }

    /// Records a digest of bytes that passed every check.
    pub fn record(&self, digest: &FileDigest) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        std::fs::write(self.entry(digest), b"")
    }

    /// The checks a file of this digest needs: none of its points if it was checked before.
    pub fn checks<'a>(&self, digest: &FileDigest, checker: &'a dyn SubgroupCheck) -> (PointChecks<'a>, Checked) {
        if self.contains(digest) {
            (PointChecks::Trusted, Checked::Before)
        } else {
            (PointChecks::FullOn(checker), Checked::Now)
        }
    }

    /// An arkworks key file, streamed; its subgroup checks on `checker` unless its digest
    /// is recorded, and recorded once they pass.
    pub fn load_key(&self, path: &Path, checker: &dyn SubgroupCheck) -> Result<(CheckedKey, Checked), KeyError> {
        // The digest is known only once the file is read: the curve equations wait for it (a
        // pass of their own, beside the subgroup checks' far longer ones, for a new file).
        let decoded = DecodedKey::read_expecting_trust(path)?;
        let digest = decoded.digest();
        let (checks, checked) = self.checks(&digest, checker);
        let key = decoded.check(checks)?;
        if checked == Checked::Now {
            let _ = self.record(&digest);
        }
        Ok((key, checked))
    }

    /// A snarkjs zkey, likewise.
    pub fn load_zkey(&self, path: &Path, checker: &dyn SubgroupCheck) -> Result<(Zkey, Checked), CircomError> {
        let (bytes, digest) = crate::circom::read_file_digested(path)?;
        let (checks, checked) = self.checks(&digest, checker);
        let zkey = Zkey::from_bytes_with(&bytes, checks)?;
        if checked == Checked::Now {
            let _ = self.record(&digest);
        }
        Ok((zkey, checked))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prover::key::OnHost;
    use crate::prover::PointProblem;
    use ark_ec::AffineRepr;
    use g16_backend::sample::g1_outside_subgroup;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("g16-trust-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn key() -> CheckedKey {
        let circuit = crate::circuits::BuiltinCircuit::new(crate::circuits::CircuitKind::Synthetic, 4, 0).unwrap();
        CheckedKey::generate(circuit, &mut g16_backend::sample::test_rng("trust")).unwrap()
    }

    #[test]
    fn a_checked_file_reloads_trusted_and_a_changed_byte_is_checked_again() {
        let dir = scratch("reload");
        let record = CheckedFiles::new(dir.join("checked"));
        let path = dir.join("k.key");
        let key = key();
        key.write(&path, false).unwrap();
        let (first, how) = record.load_key(&path, &OnHost).unwrap();
        assert_eq!((first == key, how), (true, Checked::Now));
        let (again, how) = record.load_key(&path, &OnHost).unwrap();
        assert_eq!((again == key, how), (true, Checked::Before));
        // The last h point replaced by one on the curve, outside the subgroup: the curve
        // checks alone would pass it, so only a digest mismatch can catch it.
        let mut pk = key.into_inner();
        let last = pk.h_query.len() - 1;
        pk.h_query[last] = g1_outside_subgroup();
        let mut bytes = Vec::new();
        ark_serialize::CanonicalSerialize::serialize_uncompressed(&pk, &mut bytes).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        match record.load_key(&path, &OnHost) {
            Err(KeyError::InvalidPoint { query: "h_query", index, .. }) => assert_eq!(index, last),
            other => panic!("expected h_query[{last}] refused, got {:?}", other.map(|(_, how)| how)),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A file read for trust whose digest is not recorded: its curve equations run as a pass
    /// of their own (the decode left them), and an off-curve point is named by query and
    /// index, before any subgroup check; the same bytes once recorded are not checked again.
    #[test]
    fn an_untrusted_file_read_for_trust_still_has_its_curve_checked() {
        let dir = scratch("curve");
        let record = CheckedFiles::new(dir.join("checked"));
        let path = dir.join("k.key");
        let mut pk = key().into_inner();
        let i = pk.a_query.iter().rposition(|p| !p.is_zero()).expect("a point that is not the identity");
        pk.a_query[i] = crate::curve::G1Affine::new_unchecked(pk.a_query[i].x, pk.a_query[i].y + pk.a_query[i].y);
        assert!(!pk.a_query[i].is_on_curve());
        let mut bytes = Vec::new();
        ark_serialize::CanonicalSerialize::serialize_uncompressed(&pk, &mut bytes).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        match record.load_key(&path, &OnHost) {
            Err(KeyError::InvalidPoint { query: "a_query", index, problem: PointProblem::NotOnCurve }) => {
                assert_eq!(index, i)
            }
            other => panic!("expected a_query[{i}] off the curve, got {:?}", other.map(|(_, how)| how)),
        }
        // What the record trusts is bytes it was told passed: recorded by hand here, these
        // load with no point checked (a record that lies is the trust boundary's to keep).
        record.record(&crate::digest::digest_bytes(&bytes)).unwrap();
        assert_eq!(record.load_key(&path, &OnHost).map(|(_, how)| how).unwrap(), Checked::Before);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn one_flipped_byte_anywhere_is_a_full_check() {
        let dir = scratch("flip");
        let record = CheckedFiles::new(dir.join("checked"));
        let path = dir.join("k.key");
        let key = key();
        let bytes = key.write(&path, false).unwrap();
        record.load_key(&path, &OnHost).unwrap();
        for at in [bytes.len() / 3, bytes.len() - 1] {
            let mut flipped = bytes.clone();
            flipped[at] ^= 1;
            std::fs::write(&path, &flipped).unwrap();
            // Whatever the flip does to the point (off the curve, out of range, another point),
            // the load is not the trusted one.
            if let Ok((_, how)) = record.load_key(&path, &OnHost) {
                assert_eq!(how, Checked::Now, "flip at {at}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
