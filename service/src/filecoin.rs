//! Filecoin's PoRep C2 as a resident circuit: a registered seal proof's partition circuit and
//! its parameter file, C1 outputs in as jobs' witnesses, C2 outputs out.
//!
//! What the store keeps for such a package is its reference, not its bytes: the seal proof's
//! name, the parameter file's path inside the package directory, and the file's digest. A
//! parameter file is 1 GB (2 KiB sectors) to tens of GB (32 and 64 GiB), and the store is one
//! byte string per package in a database every server of a fleet shares: held there, each load
//! would pull that much out of PostgreSQL, while the hosts that prove PoRep keep the files on
//! disk already (filecoin-proofs' parameter directory, which `--package-dir` can be). The
//! digest makes the reference as strong as the bytes: a server that loads the package from the
//! store reads its own copy and refuses one whose digest is not the registered file's, so its
//! points were fully checked at registration and only their curve equations are checked again
//! (as for the packages the store holds whole). The circuit is not stored either: it is
//! recorded from storage-proofs' blank circuit, a function of the seal proof, and cached on
//! disk.
//!
//! Stored body (after the package header): the parameter file's digest (32 bytes), the seal
//! proof's name (1 byte of length, then the name), then the parameter file's path relative to
//! the package directory (UTF-8, the rest).

use std::path::{Path, PathBuf};

use g16::digest::FileDigest;
use g16::engine::Partition;
use g16::prover::PointChecks;
use g16_bellperson::DecodedParams;
use g16_client::proto::PackageKind;
use g16_filecoin::{C1Output, FilecoinError, PoRepCircuit, SealProof};

use crate::package::{self, Loaded, PackageError, Witnesses};

/// The largest C1 output a job may carry. A 32 GiB sector's JSON is tens of MB.
pub const MAX_C1_BYTES: u64 = 1 << 30;

/// A Filecoin package as the store keeps it (see the module's documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoRepPackage {
    pub proof: SealProof,
    /// Relative to the package directory.
    pub params: PathBuf,
    pub params_digest: FileDigest,
}

impl PoRepPackage {
    pub fn encode(&self) -> Result<Vec<u8>, PackageError> {
        let name = self.proof.to_string();
        let path = self.params.to_str().ok_or_else(|| PackageError::ParamsPath(self.params.display().to_string()))?;
        let mut body = Vec::with_capacity(32 + 1 + name.len() + path.len());
        body.extend_from_slice(&self.params_digest);
        body.push(u8::try_from(name.len()).expect("a seal proof's name is short"));
        body.extend_from_slice(name.as_bytes());
        body.extend_from_slice(path.as_bytes());
        Ok(package::encode(PackageKind::FilecoinPorep, 0, &body))
    }

    /// The body of a stored package (after its header).
    pub fn decode(body: &[u8]) -> Result<PoRepPackage, PackageError> {
        let truncated = || PackageError::Truncated("the Filecoin package's reference");
        let params_digest: FileDigest = body.get(..32).ok_or_else(truncated)?.try_into().expect("32 bytes");
        let len = usize::from(*body.get(32).ok_or_else(truncated)?);
        let name = body.get(33..33 + len).ok_or_else(truncated)?;
        let name = std::str::from_utf8(name).map_err(|_| truncated())?;
        let path = std::str::from_utf8(&body[33 + len..]).map_err(|_| truncated())?;
        if path.is_empty() {
            return Err(truncated());
        }
        Ok(PoRepPackage { proof: name.parse()?, params: PathBuf::from(path), params_digest })
    }
}

/// The seal proof's circuit (from `cache` where it was recorded before) and its parameter file
/// at `params`, decoded against it and not yet checked.
pub fn open(
    proof: SealProof,
    params: &Path,
    cache: Option<&Path>,
) -> Result<(PoRepCircuit, DecodedParams), PackageError> {
    let circuit = match cache {
        Some(dir) => {
            let (circuit, not_cached) = PoRepCircuit::cached(proof, dir)?;
            if let Some(e) = not_cached {
                eprintln!("g16 serve: the {proof} circuit was not cached in {}: {e}", dir.display());
            }
            circuit
        }
        None => PoRepCircuit::compile(proof)?,
    };
    let decoded = DecodedParams::read(params, circuit.compiled()).map_err(FilecoinError::from)?;
    Ok((circuit, decoded))
}

/// The loaded package: the parameters' points checked (`checks`) and held against the circuit.
/// `stored` and `digest`: the package as the store keeps it, and its digest.
pub fn loaded(
    name: &str,
    stored: &[u8],
    digest: &FileDigest,
    circuit: PoRepCircuit,
    decoded: DecodedParams,
    checks: PointChecks,
) -> Result<Loaded, PackageError> {
    let proof = circuit.seal_proof();
    let key = decoded.check(checks, circuit.compiled()).map_err(FilecoinError::from)?;
    let circuit = circuit.into_compiled();
    Loaded::new(name, PackageKind::FilecoinPorep, digest, stored.len(), key, circuit, Witnesses::FilecoinC1(proof))
}

/// A package read back from the store: its parameter file read from this server's package
/// directory and held to the registered digest.
pub fn load(
    name: &str,
    stored: &[u8],
    digest: &FileDigest,
    checks: PointChecks,
    config: &crate::ServeConfig,
) -> Result<Loaded, PackageError> {
    let package = PoRepPackage::decode(&stored[package::HEADER_BYTES..])?;
    let path = package::inside(config.package_dir.as_deref(), &package.params)?;
    let (circuit, decoded) = open(package.proof, &path, config.circuit_cache.as_deref())?;
    if decoded.digest() != package.params_digest {
        return Err(PackageError::ParamsDigest { path: path.display().to_string() });
    }
    loaded(name, stored, digest, circuit, decoded, checks)
}

/// The checks a C1 output passes before its job is queued: it reads as `proof`'s (the file's
/// own proof, sector size, partitions and challenges a partition, nonzero commitments), and
/// the public inputs of its partitions derive from its commitments and seed. Each partition's
/// witness, and whether its public inputs are those, is made when the job runs.
pub fn check_c1(bytes: &[u8], proof: SealProof, variables: usize) -> Result<(), FilecoinError> {
    C1Output::from_bytes(bytes, Some(proof))?.partitions_for(proof, variables).map(drop)
}

/// The engine's partitions of a stored C1 output, each partition's witness made when a
/// synthesis worker takes it.
pub fn partitions(bytes: &[u8], proof: SealProof, variables: usize) -> Result<Vec<Partition>, FilecoinError> {
    let partitions = C1Output::from_bytes(bytes, Some(proof))?.partitions_for(proof, variables)?;
    Ok(partitions.into_iter().map(|p| p.into_engine_partition()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_reference_reads_back_and_a_cut_one_is_refused() {
        let package = PoRepPackage {
            proof: "StackedDrg32GiBV1_1".parse().unwrap(),
            params: PathBuf::from("v28/stacked.params"),
            params_digest: [7; 32],
        };
        let stored = package.encode().unwrap();
        assert_eq!(stored[0], PackageKind::FilecoinPorep as u8);
        let body = &stored[package::HEADER_BYTES..];
        assert_eq!(PoRepPackage::decode(body).unwrap(), package);
        for cut in [0, 31, 33, 40, body.len() - "stacked.params".len() - 4] {
            assert!(PoRepPackage::decode(&body[..cut]).is_err(), "cut at {cut}");
        }
    }
}
