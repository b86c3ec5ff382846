//! `first-proof` and `first-proof-trusted`: from a proving-key file on disk (page cache warm)
//! to the first verified proof on one backend, phase by phase. The key is the synthetic
//! circuit's at 2^size, written uncompressed to the temporary directory outside the timing;
//! the compiled circuit and the assignment are made outside it too.
//!
//! Phases (`phases_ms`, medians over the runs), each timed on the host's clock:
//! - `read_decode`: the file streamed, decoded on every core and digested;
//! - `checks`: every point on the curve, and (`first-proof` only) in its subgroup, on the
//!   backend (its device where it has one, the device spans as `checks.<span>`);
//!   `first-proof-trusted` checks no point, as a key whose digest was recorded after a full
//!   check (its curve equations are not run as it decodes either);
//! - `prepare_key`: the bases made resident and the warm-up proof (`Prover::prepare`), with
//!   the device spans inside it as `prepare_key.<span>`;
//! - `prepare_circuit`: the compiled circuit's matrices made resident;
//! - `proof`: the first proof from the assignment, and its verification.
//!
//! Each run opens a backend of its own with the production settings (the other ops wait for
//! CUDA's shifted bases before timing; a first proof does not), outside the timing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use g16::backend::{Backend, BackendInfo};
use g16::circuits::BuiltinCircuit;
use g16::key_store::KeyStore;
use g16::prover::{DecodedKey, OnBackend, PointChecks, Prover};
use g16::timeline::Timeline;
use g16::backends;
use g16::settings::Settings;
use g16::AnyBackend;
use rand_chacha::ChaCha20Rng;
use rand::SeedableRng;

use super::measurement::{measurement, median_phases, Measurement};
use super::{circuit_for, key_for, span_totals, BenchArgs};
use crate::cli::CliError;

pub const FIRST_PROOF_INCLUDES: &str = "from a proving-key file (synthetic circuit, uncompressed arkworks encoding, page cache warm) to the first verified proof in this process: streamed read, parallel decode and digest, every point on the curve and in its subgroup (on the backend's device where it has one), the bases made resident with the warm-up proof, the compiled circuit made resident, one proof from an assignment in host memory and its verification; the key's file, compiled circuit and assignment made outside the timing";
pub const TRUSTED_INCLUDES: &str = "the same with the key's digest known (checked before): no point checked";

/// Both ops' measurements for one backend and size.
pub fn measure(
    settings: &Settings,
    info: &BackendInfo,
    size: u32,
    args: &BenchArgs,
    store: &KeyStore,
) -> Result<Vec<Measurement>, CliError> {
    let key_file = key_file(store, &backends::open(info.kind, settings)?, args, size)?;
    let compiled = circuit_for(store, args, size)?;
    let circuit = BuiltinCircuit::new(args.circuit, size, 1)?;
    let (z, public) = (circuit.assignment()?, circuit.public_inputs());
    let mut out = Vec::new();
    for trusted in [false, true] {
        let mut totals = Vec::new();
        let mut phases: Vec<BTreeMap<String, f64>> = Vec::new();
        for _ in 0..args.warmup + args.runs {
            let backend = &backends::open(info.kind, settings)?;
            let mut phase = BTreeMap::new();
            let mut timed = |name: &str, t: Instant| phase.insert(name.to_string(), t.elapsed().as_secs_f64() * 1e3);
            let start = Instant::now();
            let t = Instant::now();
            let decoded =
                if trusted { DecodedKey::read_expecting_trust(&key_file)? } else { DecodedKey::read(&key_file)? };
            timed("read_decode", t);
            let t = Instant::now();
            let checker = OnBackend(backend);
            let checks = if trusted { PointChecks::Trusted } else { PointChecks::FullOn(&checker) };
            let key = decoded.check(checks)?;
            timed("checks", t);
            let checked = span_totals(backend);
            let prover = Prover::new(backend);
            let t = Instant::now();
            let prepared = prover.prepare(&key)?;
            timed("prepare_key", t);
            drop(key);
            for (span, ms) in checked {
                phase.insert(format!("checks.{span}"), ms);
            }
            for (span, ms) in span_totals(backend) {
                phase.insert(format!("prepare_key.{span}"), ms);
            }
            let mut timed = |name: &str, t: Instant| phase.insert(name.to_string(), t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let resident = prover.prepare_circuit(&compiled)?;
            timed("prepare_circuit", t);
            let t = Instant::now();
            let proof = prover.prove_assignment(
                &prepared,
                &resident,
                &z,
                &mut ChaCha20Rng::from_entropy(),
                &Timeline::disabled(),
            )?;
            if !g16::prover::verify(&prepared, &proof, &public)? {
                return Err(CliError::Usage(format!("first-proof 2^{size} on {}: the proof does not verify", info.kind)));
            }
            timed("proof", t);
            totals.push(start.elapsed().as_secs_f64() * 1e3);
            phases.push(phase);
            backend.drain_device_spans();
        }
        let (op, includes) =
            if trusted { ("first-proof-trusted", TRUSTED_INCLUDES) } else { ("first-proof", FIRST_PROOF_INCLUDES) };
        let mut m = measurement(info, op, includes, size, &totals[args.warmup..]);
        m.phases_ms = median_phases(&phases[args.warmup..]);
        out.push(m);
    }
    let _ = std::fs::remove_file(&key_file);
    Ok(out)
}

/// The key of the case written to a file of its own (outside the timing).
fn key_file(store: &KeyStore, backend: &AnyBackend, args: &BenchArgs, size: u32) -> Result<PathBuf, CliError> {
    let key = key_for(store, backend, args, size)?;
    let path = std::env::temp_dir().join(format!("g16-first-proof-{}-{size}-{}.key", args.circuit, std::process::id()));
    key.write(&path, false)?;
    Ok(path)
}
