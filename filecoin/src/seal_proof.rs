//! The registered seal proofs g16 proves: which sector size, API version and features a C1
//! output was made for, named as filecoin-proofs-api (and lotus, curio) name them; their
//! filecoin-proofs configuration and public parameters, and the dispatch from a sector size to
//! its Merkle tree type (`with_shape!`) that the generic code below goes through.

use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::{
    DefaultPieceHasher, PoRepConfig, SECTOR_SIZE_2_KIB, SECTOR_SIZE_32_GIB, SECTOR_SIZE_512_MIB, SECTOR_SIZE_64_GIB,
    SECTOR_SIZE_8_MIB,
};
use storage_proofs_core::api_version::{ApiFeature, ApiVersion};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_porep::stacked::{self, StackedCompound, StackedDrg};

use crate::FilecoinError;

/// Runs the generic function `$f::<Tree>` for the Merkle tree shape of `$sector`.
macro_rules! with_shape {
    ($sector:expr, $f:ident $(, $arg:expr)* $(,)?) => {
        match $sector {
            $crate::seal_proof::SectorSize::S2KiB => $f::<filecoin_proofs::SectorShape2KiB>($($arg),*),
            $crate::seal_proof::SectorSize::S8MiB => $f::<filecoin_proofs::SectorShape8MiB>($($arg),*),
            $crate::seal_proof::SectorSize::S512MiB => $f::<filecoin_proofs::SectorShape512MiB>($($arg),*),
            $crate::seal_proof::SectorSize::S32GiB => $f::<filecoin_proofs::SectorShape32GiB>($($arg),*),
            $crate::seal_proof::SectorSize::S64GiB => $f::<filecoin_proofs::SectorShape64GiB>($($arg),*),
        }
    };
}
pub(crate) use with_shape;

pub(crate) type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;
type VanillaParams<Tree> = stacked::PublicParams<Tree>;

/// A sector size Filecoin seals, with its Merkle tree shape (`filecoin_proofs::SectorShape…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectorSize {
    S2KiB,
    S8MiB,
    S512MiB,
    S32GiB,
    S64GiB,
}

impl SectorSize {
    pub fn bytes(self) -> u64 {
        match self {
            SectorSize::S2KiB => SECTOR_SIZE_2_KIB,
            SectorSize::S8MiB => SECTOR_SIZE_8_MIB,
            SectorSize::S512MiB => SECTOR_SIZE_512_MIB,
            SectorSize::S32GiB => SECTOR_SIZE_32_GIB,
            SectorSize::S64GiB => SECTOR_SIZE_64_GIB,
        }
    }

    fn name(self) -> &'static str {
        match self {
            SectorSize::S2KiB => "2KiB",
            SectorSize::S8MiB => "8MiB",
            SectorSize::S512MiB => "512MiB",
            SectorSize::S32GiB => "32GiB",
            SectorSize::S64GiB => "64GiB",
        }
    }

    const ALL: [SectorSize; 5] =
        [SectorSize::S2KiB, SectorSize::S8MiB, SectorSize::S512MiB, SectorSize::S32GiB, SectorSize::S64GiB];
}

/// The interactive PoRep's versions. (`V1_2` with non-interactive PoRep aggregates its
/// partitions' proofs with SnarkPack, whose SRS is a download of its own: not proven here.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V1,
    V1_1,
    V1_1Synthetic,
}

impl Version {
    fn suffix(self) -> &'static str {
        match self {
            Version::V1 => "V1",
            Version::V1_1 => "V1_1",
            Version::V1_1Synthetic => "V1_1_Feat_SyntheticPoRep",
        }
    }

    /// The first registered-proof number of the version; the sector sizes follow in order.
    fn first_id(self) -> u64 {
        match self {
            Version::V1 => 0,
            Version::V1_1 => 5,
            Version::V1_1Synthetic => 10,
        }
    }

    const ALL: [Version; 3] = [Version::V1, Version::V1_1, Version::V1_1Synthetic];
}

/// A registered seal proof (filecoin-proofs-api's `RegisteredSealProof`, e.g.
/// `StackedDrg32GiBV1_1`): a sector size and a version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealProof {
    pub sector: SectorSize,
    pub version: Version,
}

impl SealProof {
    /// Its registered-proof number: the chain's, and the first eight bytes of its porep id.
    pub fn id(self) -> u64 {
        let index = SectorSize::ALL.iter().position(|&s| s == self.sector).expect("every size is listed");
        self.version.first_id() + index as u64
    }

    /// The porep id: the registered-proof number (little-endian) and a zero nonce. It seeds the
    /// sector's graph, so a C1 output proves only under its own.
    pub fn porep_id(self) -> [u8; 32] {
        let mut id = [0u8; 32];
        id[..8].copy_from_slice(&self.id().to_le_bytes());
        id
    }

    /// filecoin-proofs' configuration of the proof: sector size, partitions, porep id, version.
    pub fn porep_config(self) -> PoRepConfig {
        let version = match self.version {
            Version::V1 => ApiVersion::V1_0_0,
            Version::V1_1 | Version::V1_1Synthetic => ApiVersion::V1_1_0,
        };
        let features = match self.version {
            Version::V1_1Synthetic => vec![ApiFeature::SyntheticPoRep],
            _ => vec![],
        };
        PoRepConfig::new_groth16_with_features(self.sector.bytes(), self.porep_id(), version, features)
            .expect("one feature conflicts with none")
    }

    /// How many challenges a partition answers (each is one vanilla proof).
    pub(crate) fn challenges_per_partition(self) -> Result<usize, FilecoinError> {
        with_shape!(self.sector, challenges_of, self)
    }

    /// The name of the vanilla proofs' variant in filecoin-proofs-api's JSON, which every
    /// version of a sector size shares (`StackedDrg2KiBV1`).
    pub(crate) fn vanilla_variant(self) -> String {
        format!("StackedDrg{}V1", self.sector.name())
    }
}

/// filecoin-proofs' public parameters of the proof, as its C2 sets them up.
pub(crate) fn public_params<Tree: 'static + MerkleTreeTrait>(proof: SealProof) -> Result<VanillaParams<Tree>, FilecoinError> {
    let config = proof.porep_config();
    let setup = compound_proof::SetupParams {
        vanilla_params: setup_params(&config).map_err(FilecoinError::filecoin)?,
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    };
    let params = <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::setup(&setup)
        .map_err(FilecoinError::filecoin)?;
    Ok(params.vanilla_params)
}

fn challenges_of<Tree: 'static + MerkleTreeTrait>(proof: SealProof) -> Result<usize, FilecoinError> {
    Ok(public_params::<Tree>(proof)?.challenges.num_challenges_per_partition())
}


impl std::fmt::Display for SealProof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StackedDrg{}{}", self.sector.name(), self.version.suffix())
    }
}

impl std::str::FromStr for SealProof {
    type Err = FilecoinError;

    fn from_str(name: &str) -> Result<SealProof, FilecoinError> {
        for sector in SectorSize::ALL {
            for version in Version::ALL {
                let proof = SealProof { sector, version };
                if proof.to_string() == name {
                    return Ok(proof);
                }
            }
        }
        Err(FilecoinError::UnsupportedSealProof(name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_are_filecoins() {
        // The numbers are the chain's (go-state-types' RegisteredSealProof).
        for (name, id) in [
            ("StackedDrg2KiBV1", 0),
            ("StackedDrg64GiBV1", 4),
            ("StackedDrg2KiBV1_1", 5),
            ("StackedDrg32GiBV1_1", 8),
            ("StackedDrg512MiBV1_1_Feat_SyntheticPoRep", 12),
        ] {
            let proof: SealProof = name.parse().unwrap();
            assert_eq!(proof.id(), id, "{name}");
            assert_eq!(proof.to_string(), name);
            assert_eq!(u64::from_le_bytes(proof.porep_id()[..8].try_into().unwrap()), id);
            assert!(proof.porep_id()[8..].iter().all(|&b| b == 0));
        }
        assert!(matches!(
            "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep".parse::<SealProof>(),
            Err(FilecoinError::UnsupportedSealProof(_))
        ));
        let config = "StackedDrg2KiBV1_1".parse::<SealProof>().unwrap().porep_config();
        assert_eq!(u64::from(config.sector_size), 2048);
        assert_eq!(usize::from(config.partitions), 1);
        assert_eq!(usize::from("StackedDrg32GiBV1_1".parse::<SealProof>().unwrap().porep_config().partitions), 10);
    }
}
