//! `g16 plan`: the device memory a built-in circuit's proofs need, item by item, and whether a
//! device of this machine (or a card of a given size) holds it. Nothing is generated or
//! uploaded: the sizes are counted from the circuit's shape.

use g16::backends;
use g16::settings::Settings;
use g16::backend::{Backend, BackendKind};
use g16::circuits::{BuiltinCircuit, CircuitKind};
use g16::key_store::KeyStoreError;
use g16::compiled::{KeyShape, MatrixSize};
use g16::prover::memory::{MemoryPlan, Residence};

use crate::cli::CliError;

pub fn run(
    settings: &Settings,
    circuit: CircuitKind,
    size: u32,
    backend: BackendKind,
    memory_gib: Option<f64>,
) -> Result<(), CliError> {
    let (shape, matrices) = BuiltinCircuit::new(circuit, size, 0)?.planned_size().map_err(KeyStoreError::from)?;
    println!("{circuit} 2^{size}: {} variables, domain 2^{}", shape.num_variables, size);
    print_plan(settings, &shape, matrices, backend, memory_gib)
}

/// Prints the plan of proofs with a key of `shape` and a compiled circuit of `matrices`, item
/// by item, and whether the device of `backend` (or a card of `memory_gib`) holds it.
pub fn print_plan(
    settings: &Settings,
    shape: &KeyShape,
    matrices: MatrixSize,
    backend: BackendKind,
    memory_gib: Option<f64>,
) -> Result<(), CliError> {
    let plan = MemoryPlan::new(shape, Some(matrices));
    let (device, capacity) = match memory_gib {
        Some(gib) if gib.is_finite() && gib > 0.0 => (format!("a {gib} GiB card"), (gib * (1u64 << 30) as f64) as u64),
        Some(gib) => return Err(CliError::Usage(format!("--memory-gib {gib}: expected a positive size"))),
        None => {
            let info = backends::open(backend, settings)?.info();
            let memory = info.memory_bytes.ok_or_else(|| {
                CliError::Usage(format!("{} does not say how much memory it has: give --memory-gib", info.device))
            })?;
            (info.device, memory)
        }
    };
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    for item in &plan.items {
        let when = match item.residence {
            Residence::Resident => "resident",
            Residence::PerProof => "per proof",
        };
        println!("  {:<28} {:>9.2} GiB  {when}", item.what, gib(item.bytes));
    }
    println!(
        "  {:<28} {:>9.2} GiB  (resident {:.2}, per proof {:.2}; headroom {:.2})",
        "needed",
        gib(plan.needed()),
        gib(plan.of(Residence::Resident)),
        gib(plan.of(Residence::PerProof)),
        gib(MemoryPlan::headroom(capacity))
    );
    match plan.check(&device, capacity) {
        Ok(()) => {
            println!("fits {device} ({:.1} GiB)", gib(capacity));
            Ok(())
        }
        Err(e) => Err(g16::ProveError::from(e).into()),
    }
}
