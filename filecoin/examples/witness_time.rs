//! How long a sealed sector's partition witnesses take on the host, each partition made RUNS
//! times in turn (the first run of a process pays for its page faults):
//!
//!     cargo run --release -p g16-filecoin --example witness_time -- C1_FILE [RUNS]
//!
//! One JSON line a run: the partition, its milliseconds and rayon's threads (set
//! `RAYON_NUM_THREADS=1` for the one-thread figure the challenges had before they were made
//! on every core: `filecoin/src/witness.rs`).
use std::path::PathBuf;
use std::time::Instant;

use g16_filecoin::{C1Output, PoRepCircuit};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().ok_or("usage: witness_time C1_FILE [RUNS]")?);
    let runs: usize = args.next().map(|r| r.parse()).transpose()?.unwrap_or(3);
    let c1 = C1Output::read(&path, None)?;
    let variables = PoRepCircuit::compile(c1.seal_proof())?.compiled().num_variables();
    for run in 0..runs {
        for partition in c1.partitions_for(c1.seal_proof(), variables)? {
            let index = partition.index;
            let start = Instant::now();
            let z = partition.witness()?;
            let ms = start.elapsed().as_secs_f64() * 1e3;
            println!(
                "{}",
                serde_json::json!({"op": "filecoin-witness", "proof": c1.seal_proof().to_string(), "partition": index,
                    "run": run, "ms": ms, "values": z.len(), "threads": rayon::current_num_threads()})
            );
        }
    }
    Ok(())
}
