//! What every part of a running server shares: the queue, the engine and its devices, the
//! circuits loaded, the witness budget, the metrics.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use g16::digest::FileDigest;
use g16::engine::{Engine, JobCanceller};
use g16::prover::PointChecks;
use g16::Backend;
use g16_client::proto::PackageKind;
use g16_queue::{JobId, JobStore};
use tokio::sync::Notify;
use tonic::Status;

use crate::budget::WitnessBudget;
use crate::config::ServeConfig;
use crate::error::store_status;
use crate::metrics::{Gauges, Metrics};
use crate::package::{self, Loaded, PackageError};

pub(crate) struct State<B: Backend + 'static> {
    pub config: ServeConfig,
    pub store: Arc<dyn JobStore>,
    /// Jobs go through a database other servers share (else this server's memory).
    pub fleet: bool,
    pub engine: Engine<B>,
    circuits: Mutex<HashMap<String, Arc<Loaded>>>,
    /// One load at a time: loading checks every point of a key, and two requests for one
    /// circuit must not load it twice.
    loading: tokio::sync::Mutex<()>,
    pub budget: WitnessBudget,
    pub metrics: Metrics,
    /// Cleared on shutdown: new jobs are refused.
    pub accepting: AtomicBool,
    /// Jobs this server holds, from the moment it takes them; with their canceller once they
    /// are in the engine.
    pub running: Mutex<HashMap<JobId, Option<JobCanceller>>>,
    /// A job was queued here, or one finished: the taker looks again.
    pub wake: Notify,
    /// Alone: jobs accepted here whose results no client has read yet. A draining server
    /// waits for them (within its grace period), since its results leave with it.
    pub unread: Mutex<std::collections::HashSet<JobId>>,
    /// Samples of each device's busy time, for the busy fraction over the last minute.
    busy: Mutex<VecDeque<(Instant, Vec<Duration>)>>,
}

impl<B: Backend + 'static> State<B> {
    pub fn new(config: ServeConfig, store: Arc<dyn JobStore>, fleet: bool, engine: Engine<B>) -> Self {
        State {
            budget: WitnessBudget::new(config.witness_budget),
            config,
            store,
            fleet,
            engine,
            circuits: Mutex::default(),
            loading: tokio::sync::Mutex::new(()),
            metrics: Metrics::default(),
            accepting: AtomicBool::new(true),
            running: Mutex::default(),
            wake: Notify::new(),
            unread: Mutex::default(),
            busy: Mutex::default(),
        }
    }

    pub fn running(&self) -> MutexGuard<'_, HashMap<JobId, Option<JobCanceller>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A client has read `job`'s result (or its error).
    pub fn read(&self, job: JobId) {
        self.unread.lock().unwrap_or_else(PoisonError::into_inner).remove(&job);
    }

    pub fn unread_count(&self) -> usize {
        self.unread.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    pub fn is_accepting(&self) -> bool {
        self.accepting.load(Ordering::Acquire)
    }

    /// The circuit named `name`, loaded from the store on first use.
    pub async fn circuit(&self, name: &str) -> Result<Arc<Loaded>, Status> {
        if let Some(loaded) = self.cached(name) {
            return Ok(loaded);
        }
        let _one = self.loading.lock().await;
        if let Some(loaded) = self.cached(name) {
            return Ok(loaded);
        }
        let record = self
            .store
            .circuit(name)
            .await
            .map_err(store_status)?
            .ok_or_else(|| Status::not_found(format!("unknown circuit '{name}'")))?;
        let owned = name.to_string();
        let config = self.config.clone();
        let loaded = tokio::task::spawn_blocking(move || {
            let digest = g16::key_store::digest_bytes(&record.package);
            load_stored(&owned, &record.package, &digest, &config)
        })
        .await
        .map_err(|e| Status::internal(format!("loading circuit '{name}': {e}")))?
        .map_err(|e| Status::failed_precondition(format!("circuit '{name}' cannot be loaded: {e}")))?;
        Ok(self.remember(Arc::new(loaded)))
    }

    fn cached(&self, name: &str) -> Option<Arc<Loaded>> {
        self.circuits.lock().unwrap_or_else(PoisonError::into_inner).get(name).cloned()
    }

    pub fn remember(&self, loaded: Arc<Loaded>) -> Arc<Loaded> {
        let mut circuits = self.circuits.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(circuits.entry(loaded.info.name.clone()).or_insert(loaded))
    }

    /// Records each device's busy time now; keeps a minute of samples.
    pub fn sample_busy(&self) {
        let now = Instant::now();
        let busy = self.engine.device_time().into_iter().map(|d| d.busy).collect();
        let mut samples = self.busy.lock().unwrap_or_else(PoisonError::into_inner);
        samples.push_back((now, busy));
        while samples.len() > 2 && now.duration_since(samples[1].0) >= Duration::from_secs(60) {
            samples.pop_front();
        }
    }

    /// Each device's busy fraction over the samples kept (up to a minute).
    pub fn busy_fraction(&self) -> Vec<f64> {
        let samples = self.busy.lock().unwrap_or_else(PoisonError::into_inner);
        match (samples.front(), samples.back()) {
            (Some((t0, b0)), Some((t1, b1))) if t1 > t0 => {
                let wall = t1.duration_since(*t0).as_secs_f64();
                b0.iter().zip(b1).map(|(a, b)| ((b.saturating_sub(*a)).as_secs_f64() / wall).min(1.0)).collect()
            }
            _ => Vec::new(),
        }
    }

    pub async fn gauges(&self) -> Gauges {
        Gauges {
            depth: self.store.depth().await.ok(),
            devices: self.engine.device_time(),
            resident: self.engine.resident(),
            witness_bytes: self.budget.in_flight(),
            witness_budget: self.budget.total(),
        }
    }
}

/// A package read back from the store (its points passed every check when it was registered:
/// their curve equations alone are checked again). A Filecoin package finds its parameter file
/// in this server's package directory.
fn load_stored(name: &str, stored: &[u8], digest: &FileDigest, config: &ServeConfig) -> Result<Loaded, PackageError> {
    let checks = PointChecks::CurveOnly;
    match package::kind_of(stored)? {
        #[cfg(feature = "filecoin")]
        PackageKind::FilecoinPorep => crate::filecoin::load(name, stored, digest, checks, config),
        #[cfg(not(feature = "filecoin"))]
        PackageKind::FilecoinPorep => {
            let _ = config;
            Err(PackageError::NoFilecoin)
        }
        _ => package::load(name, stored, digest, checks),
    }
}
