//! How a sealed sector's PoRep witnesses split into zeros, ones and other values, by MSM
//! query: what the CUDA MSM's 0/1 split and zero skipping leave to the buckets, and what a
//! synthetic witness must match to stand in for a partition at sizes no sector here reaches.
//!
//!     cargo run --release -p g16-filecoin --example witness_classes -- C1_FILE [PROOF]
//!
//! Per partition: each query's scalars (A and B: the variables with an entry in that matrix,
//! as bellperson's densities keep them; L: the aux variables) counted as 0, 1 and other. The
//! last line is JSON.
use std::path::PathBuf;

use g16::Fr;
use g16_filecoin::{C1Output, PoRepCircuit, SealProof};

/// Zeros, ones and the rest among the scalars of one query.
#[derive(Default, Clone, Copy)]
struct Classes {
    zeros: usize,
    ones: usize,
    other: usize,
}

impl Classes {
    fn of<'a>(values: impl Iterator<Item = &'a Fr>) -> Classes {
        let (zero, one) = (Fr::from(0u64), Fr::from(1u64));
        let mut c = Classes::default();
        for v in values {
            match v {
                v if *v == zero => c.zeros += 1,
                v if *v == one => c.ones += 1,
                _ => c.other += 1,
            }
        }
        c
    }
    fn total(&self) -> usize {
        self.zeros + self.ones + self.other
    }
    fn json(&self) -> serde_json::Value {
        serde_json::json!({"zeros": self.zeros, "ones": self.ones, "other": self.other})
    }
    fn line(&self, name: &str) -> String {
        let pct = |x: usize| 100.0 * x as f64 / self.total().max(1) as f64;
        format!(
            "{name:>3}: {:>11} scalars, {:5.1} % zero, {:5.1} % one, {:5.1} % other",
            self.total(),
            pct(self.zeros),
            pct(self.ones),
            pct(self.other)
        )
    }
}

/// Which columns of a matrix hold at least one entry.
fn present(columns: &[u32], width: usize) -> Vec<bool> {
    let mut used = vec![false; width];
    for &c in columns {
        used[c as usize] = true;
    }
    used
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().ok_or("usage: witness_classes C1_FILE [PROOF]")?);
    let asked: Option<SealProof> = args.next().map(|p| p.parse()).transpose()?;
    let c1 = C1Output::read(&path, asked)?;
    let circuit = PoRepCircuit::compile(c1.seal_proof())?;
    let compiled = circuit.compiled();
    let (a, b, _) = compiled.matrices();
    let width = compiled.num_variables();
    let (in_a, in_b) = (present(a.parts().1, width), present(b.parts().1, width));
    let inputs = compiled.num_instance();
    let mut lines = Vec::new();
    for partition in c1.partitions(&circuit)? {
        let index = partition.index;
        let z = partition.witness()?;
        let query = |keep: &[bool]| Classes::of(z.iter().zip(keep).filter(|(_, k)| **k).map(|(v, _)| v));
        let (qa, qb, ql) = (query(&in_a), query(&in_b), Classes::of(z[inputs..].iter()));
        println!("{} partition {index}:", c1.seal_proof());
        for (name, c) in [("A", qa), ("B", qb), ("L", ql)] {
            println!("  {}", c.line(name));
        }
        lines.push(serde_json::json!({"partition": index, "a": qa.json(), "b": qb.json(), "l": ql.json()}));
    }
    println!("{}", serde_json::json!({"proof": c1.seal_proof().to_string(), "variables": width, "partitions": lines}));
    Ok(())
}
