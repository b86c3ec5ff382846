//! The compiled path against arkworks' own synthesis, and the file format's checks.

use super::file::{CircuitFile, FileError};
use super::*;
use crate::circuits::{BuiltinCircuit, CircuitKind};
use crate::prover::synthesize;

#[test]
fn compiled_products_and_witnesses_equal_full_synthesis() {
    for (kind, size) in [(CircuitKind::Synthetic, 8), (CircuitKind::Poseidon, 9), (CircuitKind::Sha256, 16)] {
        let circuit = BuiltinCircuit::new(kind, size, 7).unwrap();
        let compiled = compile(circuit.clone()).unwrap();
        let z = witness(circuit.clone()).unwrap();
        let syn = synthesize(circuit).unwrap();
        assert_eq!(z, syn.assignment, "{kind}: the witness alone is the full assignment");
        assert_eq!(compiled.domain_size(), syn.domain_size(), "{kind}");
        let [a, b, c] = compiled.evaluate(&z);
        assert!(a == syn.a && b == syn.b && c == syn.c, "{kind}: A·z, B·z, C·z are synthesis's rows");
        compiled.check_assignment(&z).unwrap();
    }
}

#[test]
fn files_round_trip_and_damage_is_a_typed_error() {
    let circuit = BuiltinCircuit::new(CircuitKind::Poseidon, 9, 1).unwrap();
    let file = CircuitFile { circuit: compile(circuit).unwrap(), key_digest: Some([7; 32]) };
    let bytes = file.to_bytes();
    assert_eq!(CircuitFile::from_bytes(&bytes).unwrap(), file);
    let no_digest = CircuitFile { key_digest: None, ..file.clone() };
    assert_eq!(CircuitFile::from_bytes(&no_digest.to_bytes()).unwrap(), no_digest);
    for cut in [0, 7, 12, 40, bytes.len() / 2, bytes.len() - 1] {
        assert!(CircuitFile::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 3] ^= 0x10;
    assert!(matches!(CircuitFile::from_bytes(&flipped), Err(CompileError::File(FileError::Checksum))));
    let mut magic = bytes.clone();
    magic[0] = b'x';
    assert!(matches!(CircuitFile::from_bytes(&magic), Err(CompileError::File(FileError::Magic))));
    let mut version = bytes;
    version[8] = 9;
    assert!(matches!(CircuitFile::from_bytes(&version), Err(CompileError::File(FileError::Version(9)))));
}

/// A coefficient that is not below r, in a file whose checksum is right, is refused naming its
/// matrix and the first such coefficient by position (the coefficients decode on every core).
#[test]
fn a_coefficient_not_below_r_is_named_by_its_first_position() {
    use sha2::{Digest, Sha256};
    let circuit = BuiltinCircuit::new(CircuitKind::Synthetic, 6, 1).unwrap();
    let file = CircuitFile { circuit: compile(circuit).unwrap(), key_digest: None };
    let mut bytes = file.to_bytes();
    let (a, _, _) = file.circuit.matrices();
    let (rows, entries) = (a.rows(), a.parts().1.len());
    assert!(entries > 9);
    // magic, version, flags, three counts; then A's rows, entries, starts and columns.
    let coefficients = 8 + 4 + 4 + 3 * 8 + 8 + 8 + 4 * (rows + 1) + 4 * entries;
    for i in [9, 3] {
        bytes[coefficients + 32 * i..coefficients + 32 * (i + 1)].fill(0xff);
    }
    let body = bytes.len() - 32;
    let sum = Sha256::digest(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum);
    match CircuitFile::from_bytes(&bytes) {
        Err(CompileError::File(FileError::Malformed(detail))) => {
            assert_eq!(detail, "matrix A: coefficient 3 is not below r")
        }
        other => panic!("expected coefficient 3 of A refused, got {other:?}"),
    }
}
