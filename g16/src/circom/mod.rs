//! circom's and snarkjs's files, in and out: a circuit's `.r1cs`, a witness's `.wtns`, a
//! Groth16 `.zkey` made by `snarkjs groth16 setup` for BLS12-381, and the `proof.json` and
//! `public.json` that `snarkjs groth16 verify` reads.
//!
//! - [`binfile`]: the iden3 binary container the three binary formats share.
//! - [`r1cs`]: a circuit's constraints, into a [`CompiledCircuit`](crate::compiled::CompiledCircuit).
//! - [`wtns`]: an assignment z = [1, outputs, public inputs, private…].
//! - [`zkey`]: a proving key (checked like any other) and the A and B matrices it carries.
//! - [`json`]: proofs and public signals written as snarkjs writes them.
//! - [`setup`]: a key made here for a circuit, written as a `.zkey` snarkjs proves with.
//!
//! Every reader works on bytes already in memory and checks each count against the bytes
//! that are left before it allocates for it, so a truncated, flipped or hostile file is a
//! [`CircomError`] that names the section and byte offset, never a panic or an allocation of
//! what a header only claims.

pub mod binfile;
mod field;
pub mod json;
pub mod r1cs;
pub mod roots;
pub mod setup;
pub mod wtns;
pub mod zkey;

use crate::compiled::CompileError;
use crate::digest::FileDigest;
use crate::prover::KeyError;

pub use binfile::{At, FileKind};
pub use field::{
    curve_of_base_prime, curve_of_scalar_prime, first_non_canonical, values_from_le, values_to_le, VALUE_BYTES,
};
pub use r1cs::R1cs;
pub use setup::write_new_zkey;
pub use wtns::{read_wtns, write_wtns, wtns_values};
pub use zkey::{Zkey, ZkeyHeader};

/// What is wrong with a circom or snarkjs file.
#[derive(Debug, thiserror::Error)]
pub enum CircomError {
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("not a {kind} file: it starts with {found:?}, not {:?}", kind.magic_str())]
    Magic { kind: FileKind, found: String },
    #[error("{kind} format version {version}; g16 reads version {supported}")]
    Version { kind: FileKind, version: u32, supported: u32 },
    #[error("{at}: the file is truncated: {what} needs {needed} bytes, {left} are left")]
    Truncated { at: At, what: &'static str, needed: u64, left: usize },
    #[error("{kind}: section {section} ({name}) is missing")]
    MissingSection { kind: FileKind, section: u32, name: &'static str },
    #[error("{kind}: section {section} ({name}) appears {count} times")]
    DuplicateSection { kind: FileKind, section: u32, name: &'static str, count: usize },
    #[error("{at}: {extra} bytes after {what}")]
    TrailingBytes { at: At, what: &'static str, extra: usize },
    #[error("{at}: {what} is the prime of {}; g16 proves over BLS12-381 only", curve.unwrap_or("an unknown field"))]
    WrongField { at: At, what: &'static str, curve: Option<&'static str>, prime: String },
    #[error("{at}: {what} is not below the field's prime")]
    NotCanonical { at: At, what: &'static str },
    #[error("{at}: {detail}")]
    Malformed { at: At, detail: String },
    #[error("the zkey is for {name} (protocol {id}); g16 proves Groth16 (protocol 1) only")]
    Protocol { id: u32, name: &'static str },
    #[error("the circuit uses custom gates (sections 4 and 5), which only PLONK proves")]
    CustomGates,
    #[error("the witness has {got} values, the circuit {expected} variables")]
    WitnessLength { expected: usize, got: usize },
    #[error("the zkey: {0}")]
    Key(#[from] KeyError),
    #[error(transparent)]
    Circuit(#[from] CompileError),
}

/// Reads a whole file for one of the readers ([`crate::whole_file::read`]), naming it in the
/// error.
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>, CircomError> {
    crate::whole_file::read(path).map_err(|source| CircomError::Io { path: path.display().to_string(), source })
}

/// [`read_file`] with the file's digest ([`crate::whole_file::read_digested`]).
pub fn read_file_digested(path: &std::path::Path) -> Result<(Vec<u8>, FileDigest), CircomError> {
    crate::whole_file::read_digested(path)
        .map_err(|source| CircomError::Io { path: path.display().to_string(), source })
}

#[cfg(test)]
mod tests {
    /// A file that is not there is an error that names it.
    #[test]
    fn missing_files_are_named() {
        let missing = std::env::temp_dir().join(format!("g16-missing-{}.zkey", std::process::id()));
        let name = missing.file_name().unwrap().to_string_lossy().to_string();
        let err = super::read_file(&missing).unwrap_err().to_string();
        assert!(err.contains(&name), "{err}");
        let err = super::read_file_digested(&missing).unwrap_err().to_string();
        assert!(err.contains(&name), "{err}");
    }
}
