//! The server's side of the queue: it takes jobs when its engine has room, proves them,
//! settles them, and keeps its leases alive while it works.
//!
//! - The taker asks for as many jobs as the engine can hold at once (devices × workers, plus
//!   the channel and the witness workers), preferring circuits resident on its devices.
//! - Each job runs as one engine job with its own timeline; the engine's witness workers turn
//!   the stored witness back into field elements (a Filecoin job's C1 output into each
//!   partition's witness, one engine partition per Filecoin partition), its device workers
//!   prove, its finalizer verifies.
//! - The heartbeat renews this server's leases every third of a lease; a job the store no longer
//!   lists (cancelled, or its lease taken by another server) is cancelled in the engine.
//! - Settling retries while the database is unreachable; completion is idempotent, so a retry,
//!   or a server that lost its lease, changes nothing a second time.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use ark_serialize::CanonicalSerialize;
use g16::compiled::ShapeMismatch;
use g16::engine::{EngineError, JobOutput, Partition};
use g16::timeline::report::{names, Report};
use g16::timeline::text::write_text;
use g16::timeline::Timeline;
use g16::{Backend, ProveError};
use g16_queue::{JobState, Lease, Outcome, StoreError};

use crate::error::reason;
use crate::package::Witnesses;
use crate::state::State;
use crate::witness;

/// Jobs this server's engine holds at once.
pub(crate) fn capacity<B: Backend>(state: &State<B>) -> usize {
    let config = state.engine.config();
    let devices = state.engine.device_time().len();
    devices * config.workers_per_device + config.channel_bound + config.synthesis_workers
}

/// Takes jobs until told to stop (`stop` returns true).
pub(crate) async fn take_jobs<B: Backend + 'static>(state: Arc<State<B>>, stop: impl Fn() -> bool) {
    let limit = capacity(&state);
    let mut backoff = Duration::from_millis(50);
    while !stop() {
        let free = limit.saturating_sub(state.running().len());
        if free == 0 {
            let _ = tokio::time::timeout(state.config.poll, state.wake.notified()).await;
            continue;
        }
        let mut prefer: Vec<String> =
            state.engine.resident().into_iter().flat_map(|(_, keys)| keys.into_iter().map(|(name, _)| name)).collect();
        prefer.sort();
        prefer.dedup();
        let leases = match state.store.take(&state.config.worker, &prefer, state.config.lease, free).await {
            Ok(leases) => {
                backoff = Duration::from_millis(50);
                leases
            }
            Err(_) => {
                // The database is away: try again, more slowly, until it is back.
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            }
        };
        if leases.is_empty() {
            let _ = tokio::time::timeout(state.config.poll, state.wake.notified()).await;
            continue;
        }
        for lease in leases {
            // Held from now: counted against the engine's room, and renewed by the heartbeat
            // while its circuit loads.
            state.running().insert(lease.job, None);
            let state = Arc::clone(&state);
            tokio::spawn(async move { run_job(state, lease).await });
        }
    }
}

/// Renews this server's leases until told to stop; cancels in the engine what it lost.
pub(crate) async fn heartbeat<B: Backend + 'static>(state: Arc<State<B>>, stop: impl Fn() -> bool) {
    let every = state.config.lease / 3;
    while !stop() {
        tokio::time::sleep(every).await;
        let held: Vec<_> = state.running().keys().copied().collect();
        if held.is_empty() {
            continue;
        }
        let Ok(still) = state.store.renew(&state.config.worker, &held, state.config.lease).await else {
            continue;
        };
        let running = state.running();
        for job in held.iter().filter(|j| !still.contains(j)) {
            if let Some(Some(canceller)) = running.get(job) {
                canceller.cancel("cancelled, or its lease was taken by another server");
            }
        }
    }
}

async fn run_job<B: Backend + 'static>(state: Arc<State<B>>, lease: Lease) {
    let (job, circuit) = (lease.job, lease.circuit.clone());
    // A database that is away is waited for (the heartbeat keeps the lease meanwhile): only a
    // package that cannot be used fails the job.
    let mut wait = Duration::from_millis(50);
    let loaded = loop {
        match state.circuit(&circuit).await {
            Err(status) if status.code() == tonic::Code::Unavailable => {
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(2));
            }
            other => break other,
        }
    };
    let outcome = match loaded {
        Ok(loaded) => prove(&state, lease, loaded).await,
        Err(status) => Outcome::Failed { code: reason::PACKAGE.into(), message: status.message().to_string() },
    };
    let settled_as = match &outcome {
        Outcome::Proved { .. } => JobState::Succeeded,
        Outcome::Failed { code, .. } if code == reason::CANCELLED => JobState::Cancelled,
        Outcome::Failed { .. } => JobState::Failed,
    };
    let won = settle(&state, job, outcome).await;
    state.running().remove(&job);
    state.budget.release(job);
    state.wake.notify_one();
    if won {
        let latency = match state.store.job(job).await {
            Ok(Some(record)) => SystemTime::now().duration_since(record.submitted).ok(),
            _ => None,
        };
        state.metrics.settled(settled_as, &circuit, latency);
    }
}

/// Completes `job`, retrying while the database is unreachable (for up to ten leases: by
/// then another server has taken the job again). Whether this settled it.
async fn settle<B: Backend + 'static>(state: &State<B>, job: g16_queue::JobId, outcome: Outcome) -> bool {
    let give_up = Instant::now() + state.config.lease * 10;
    let mut wait = Duration::from_millis(50);
    loop {
        match state.store.complete(&state.config.worker, job, outcome.clone()).await {
            Ok(won) => return won,
            Err(StoreError::Unavailable(_)) if Instant::now() < give_up => {
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(2));
            }
            Err(_) => return false,
        }
    }
}

async fn prove<B: Backend + 'static>(
    state: &Arc<State<B>>,
    lease: Lease,
    loaded: Arc<crate::package::Loaded>,
) -> Outcome {
    let job = lease.job;
    let raw = lease.witness;
    let partitions = match loaded.witnesses {
        // The API stored only a witness it had checked (whole elements, each below the modulus,
        // the circuit's count, the constant 1 first): one that fails to parse now was changed
        // in the store, which is this server's fault, not the client's. The proof's (r, s) is
        // drawn from the OS as the partition is made.
        Witnesses::Assignment => vec![Partition::assignment_from(move || {
            witness::from_raw(&raw).map_err(|e| ProveError::Internal(format!("the stored witness: {e}")))
        })],
        // Likewise a C1 output, which the API read and checked before storing it.
        #[cfg(feature = "filecoin")]
        Witnesses::FilecoinC1(proof) => {
            let variables = loaded.num_variables();
            match tokio::task::spawn_blocking(move || crate::filecoin::partitions(&raw, proof, variables)).await {
                Ok(Ok(partitions)) => partitions,
                Ok(Err(e)) => {
                    eprintln!("g16 serve: job {job}: its stored C1 output: {e}");
                    return Outcome::Failed {
                        code: reason::INTERNAL.into(),
                        message: format!("the stored C1 output: {e}"),
                    };
                }
                Err(e) => {
                    return Outcome::Failed {
                        code: reason::DEVICE.into(),
                        message: format!("reading the C1 output: {e}"),
                    }
                }
            }
        }
    };
    let witnesses = loaded.witnesses;
    let tl = Timeline::new();
    let handle = match state.engine.submit_with(partitions, Some(Arc::clone(&loaded.key)), Some(&tl)) {
        Ok(handle) => handle,
        Err(e) => return Outcome::Failed { code: reason::DEVICE.into(), message: e.to_string() },
    };
    state.running().insert(lease.job, Some(handle.canceller()));
    let result = tokio::task::spawn_blocking(move || handle.wait()).await;
    let events = tl.events();
    let report = Report::from_events(&events);
    for stage in names::STAGES {
        if let Some(span) = report.span_by_name(stage) {
            state.metrics.stage(stage, span.dur_ns() as f64 * 1e-9);
        }
    }
    match result {
        Ok(Ok(output)) => proved(output, witnesses, &events),
        Ok(Err(e)) => failed(job, e),
        Err(e) => Outcome::Failed { code: reason::DEVICE.into(), message: format!("the proving task failed: {e}") },
    }
}

fn proved(output: JobOutput, witnesses: Witnesses, events: &[g16::timeline::Event]) -> Outcome {
    let mut timeline = Vec::new();
    let _ = write_text(events, &mut timeline);
    match witnesses {
        Witnesses::Assignment => {
            let Some(first) = output.proofs.into_iter().next() else {
                return Outcome::Failed { code: reason::DEVICE.into(), message: "the engine returned no proof".into() };
            };
            let mut proof = Vec::new();
            if let Err(e) = first.proof.serialize_compressed(&mut proof) {
                return Outcome::Failed { code: reason::DEVICE.into(), message: format!("encoding the proof: {e}") };
            }
            Outcome::Proved { proof, public_inputs: witness::to_raw(&first.public_inputs), timeline }
        }
        // The C2 output, as `seal_commit_phase2` returns it; the partitions' public inputs in turn.
        #[cfg(feature = "filecoin")]
        Witnesses::FilecoinC1(_) => {
            let proofs: Vec<g16::Proof> = output.proofs.iter().map(|p| p.proof.clone()).collect();
            let public: Vec<g16::Fr> = output.proofs.iter().flat_map(|p| p.public_inputs.iter().copied()).collect();
            let c2 = g16_filecoin::c2_output(&proofs);
            Outcome::Proved {
                proof: crate::stored_proof::filecoin_c2(&c2),
                public_inputs: witness::to_raw(&public),
                timeline,
            }
        }
    }
}

fn failed(job: g16_queue::JobId, e: EngineError) -> Outcome {
    let code = reason_of(&e);
    let message = match &e {
        EngineError::NotVerified { .. } => {
            "the proof does not verify: the witness does not satisfy the circuit".to_string()
        }
        EngineError::Partition { source, .. } => source.to_string(),
        other => other.to_string(),
    };
    // The server's own faults are for whoever runs it to fix, not only for the client that
    // waited on the job.
    if code == reason::INTERNAL || code == reason::DEVICE {
        eprintln!("g16 serve: job {job} failed ({code}): {e}");
    }
    Outcome::Failed { code: code.into(), message }
}

/// Whose fault a failed job is, as the reason stored with it.
fn reason_of(e: &EngineError) -> &'static str {
    match e {
        EngineError::Partition { source: ProveError::Unsatisfied { .. }, .. } | EngineError::NotVerified { .. } => {
            reason::UNSATISFIED
        }
        // The API refused every witness of the wrong shape before queueing it (see `prove`):
        // a shape the engine rejects now was broken after acceptance, like a bug in the prover.
        EngineError::Partition {
            source:
                ProveError::Internal(_)
                | ProveError::Shape(ShapeMismatch::WitnessLength { .. } | ShapeMismatch::WitnessConstant),
            ..
        } => reason::INTERNAL,
        // A witness the partition's own source could not make from the client's input (a C1
        // output whose vanilla proofs are not its commitments' and seed's): the client's fault.
        EngineError::Partition { source: ProveError::Witness(_), .. } => reason::INVALID_WITNESS,
        EngineError::Cancelled { .. } => reason::CANCELLED,
        _ => reason::DEVICE,
    }
}
