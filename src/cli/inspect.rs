//! `g16 inspect FILE`: what a file holds. The format is told by its first bytes: a snarkjs
//! `.zkey`, a circom `.wtns` or `.r1cs`, a compiled circuit (`g16circ`), else an arkworks
//! proving key. Printed: the format, the curve, the sizes, the file's SHA-256 and, for a key,
//! whether every point is on the curve and in the prime-order subgroup.

use std::path::Path;

use g16::circom::zkey::read_unchecked;
use g16::circom::{read_wtns, CircomError, FileKind, R1cs};
use g16::compiled::file::{CircuitFile, MAGIC as CIRCUIT_MAGIC};
use g16::compiled::CompiledCircuit;
use g16::prover::{CheckedKey, KeyError, KeyShape, Qap};
use sha2::{Digest, Sha256};

use crate::cli::{io_err, CliError};

/// One line of the description: a name and its value.
pub type Line = (&'static str, String);

pub fn run(path: &Path) -> Result<(), CliError> {
    let bytes = std::fs::read(path).map_err(io_err(format!("cannot read {}", path.display())))?;
    println!("{}", path.display());
    let print = |lines: &[Line]| lines.iter().for_each(|(name, value)| println!("  {name:<15} {value}"));
    // Size and checksum first: they describe even a file that cannot be read further.
    print(&[("size", format!("{} bytes", bytes.len())), ("sha256", hex(&Sha256::digest(&bytes)))]);
    let lines = describe(&bytes)?;
    print(&lines);
    // A key whose points failed is described in full, then refused: the exit status says so.
    match lines.iter().find(|(name, value)| *name == "points" && value.starts_with("FAILED")) {
        Some((_, failed)) => Err(CliError::FailedCheck { file: path.display().to_string(), what: failed.clone() }),
        None => Ok(()),
    }
}

/// What `bytes` hold, line by line. A file that cannot be read as the format its first bytes
/// name is an error; a key whose points fail their checks is described, with the failure.
pub fn describe(bytes: &[u8]) -> Result<Vec<Line>, CliError> {
    let mut lines = Vec::new();
    match FileKind::detect(bytes) {
        Some(FileKind::Zkey) => zkey(bytes, &mut lines)?,
        Some(FileKind::Wtns) => {
            let z = read_wtns(bytes)?;
            lines.push(("format", "circom witness (.wtns, version 2)".into()));
            lines.push(("curve", "bls12381 (scalar field)".into()));
            lines.push((
                "values",
                format!("{} (z[0] = {})", z.len(), z.first().map(|v| v.to_string()).unwrap_or_default()),
            ));
        }
        Some(FileKind::R1cs) => {
            let r1cs = R1cs::from_bytes(bytes)?;
            lines.push(("format", "circom constraint system (.r1cs, version 1)".into()));
            lines.push(("curve", "bls12381 (scalar field)".into()));
            lines.push(("wires", r1cs.num_wires.to_string()));
            lines.push((
                "signals",
                format!(
                    "{} public outputs, {} public inputs, {} private inputs, {} labels",
                    r1cs.num_outputs, r1cs.num_public_inputs, r1cs.num_private_inputs, r1cs.num_labels
                ),
            ));
            lines.push(("constraints", r1cs.num_constraints().to_string()));
            lines.push(("nonzeros", format!("A {}, B {}, C {}", r1cs.a.entries(), r1cs.b.entries(), r1cs.c.entries())));
            let rows = r1cs.num_constraints() + r1cs.num_instance();
            lines.push((
                "domain",
                format!(
                    "{} (constraints and the {} input rows)",
                    domain(rows.next_power_of_two()),
                    r1cs.num_instance()
                ),
            ));
        }
        None if bytes.starts_with(CIRCUIT_MAGIC) => {
            let file = CircuitFile::from_bytes(bytes).map_err(CircomError::from)?;
            lines.push(("format", format!("g16 compiled circuit (version {})", g16::compiled::file::VERSION)));
            lines.push(("curve", "bls12381".into()));
            circuit(&file.circuit, &mut lines);
            let digest = file.key_digest.map(|d| hex(&d)).unwrap_or_else(|| "none".into());
            lines.push(("key digest", digest));
        }
        None => arkworks_key(bytes, &mut lines)?,
    }
    Ok(lines)
}

fn zkey(bytes: &[u8], lines: &mut Vec<Line>) -> Result<(), CliError> {
    let z = read_unchecked(bytes)?;
    lines.push(("format", "snarkjs Groth16 proving key (.zkey, version 1)".into()));
    lines.push(("curve", "bls12381".into()));
    lines.push(("public signals", z.header.num_public.to_string()));
    circuit(&z.circuit, lines);
    let (a, b, _) = z.circuit.matrices();
    lines.push(("nonzeros", format!("A {} (with the input rows), B {}", a.entries(), b.entries())));
    lines.push(("points", points(z.key.h_query.len(), CheckedKey::with_qap(z.key, Qap::Snarkjs))));
    Ok(())
}

fn arkworks_key(bytes: &[u8], lines: &mut Vec<Line>) -> Result<(), CliError> {
    lines.push(("format", "arkworks Groth16 proving key (ark-groth16 ProvingKey)".into()));
    lines.push(("curve", "bls12381".into()));
    match CheckedKey::read(bytes) {
        Ok(key) => {
            shape(&key.shape(), lines);
            lines.push(("points", points(key.proving_key().h_query.len(), Ok(key))));
        }
        // The encoding was read and a point failed: say which, as a description.
        Err(e @ KeyError::InvalidPoint { .. }) => lines.push(("points", points(0, Err(e)))),
        Err(e) => return Err(CliError::Usage(format!("not a file g16 knows (zkey, wtns, r1cs, g16circ, key): {e}"))),
    }
    Ok(())
}

fn shape(s: &KeyShape, lines: &mut Vec<Line>) {
    lines.push(("variables", s.num_variables.to_string()));
    lines.push(("public inputs", (s.num_instance - 1).to_string()));
    lines.push(("domain", domain(s.domain_size)));
    lines.push(("qap", qap(s.qap)));
}

fn circuit(c: &CompiledCircuit, lines: &mut Vec<Line>) {
    lines.push(("instance", format!("{} (the constant 1 and {} public)", c.num_instance(), c.num_instance() - 1)));
    lines.push(("variables", c.num_variables().to_string()));
    lines.push(("constraints", c.num_constraints().to_string()));
    lines.push(("domain", domain(c.domain_size())));
    lines.push(("qap", qap(c.qap())));
}

fn points(h_points: usize, checked: Result<CheckedKey, KeyError>) -> String {
    match checked {
        Ok(_) => format!("every point on the curve and in the subgroup ({h_points} H points)"),
        Err(e) => format!("FAILED: {e}"),
    }
}

fn domain(n: usize) -> String {
    format!("{n} (2^{})", n.trailing_zeros())
}

fn qap(q: Qap) -> String {
    match q {
        Qap::Libsnark => "libsnark (arkworks): H on the coset of the multiplicative generator".into(),
        Qap::Snarkjs => "snarkjs: H on the odd 2n-th roots of unity".into(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
