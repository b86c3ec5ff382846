//! `g16 devices`: every backend and device, available or why not.

use g16::backends;
use g16::settings::Settings;

use crate::cli::CliError;

pub fn run(settings: &Settings) -> Result<(), CliError> {
    for probe in backends::probe_all(settings) {
        let mark = if probe.preferred { "*" } else { " " };
        match &probe.status {
            Ok(info) => {
                let memory = info
                    .memory_bytes
                    .map(|b| format!(", {:.1} GiB", b as f64 / (1u64 << 30) as f64))
                    .unwrap_or_default();
                println!(
                    "{mark} {:<5} available: {} [{}{memory}; NTT up to 2^{}; {}]",
                    probe.kind.name(),
                    info.device,
                    info.driver,
                    info.max_ntt_log2,
                    info.capabilities.join(", ")
                );
            }
            Err(e) => println!("{mark} {:<5} unavailable: {}", probe.kind.name(), reason(e)),
        }
    }
    println!("(* = what --backend auto uses)");
    Ok(())
}

/// The reason alone, without the "<backend> backend unavailable:" prefix `devices` already shows.
fn reason(e: &g16::BackendError) -> String {
    match e {
        g16::BackendError::Unavailable { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}
