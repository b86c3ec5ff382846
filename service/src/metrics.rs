//! What `/metrics` says, in Prometheus's text format, and `/healthz`.
//!
//! Counters and histograms live here; gauges (queue depth, devices, keys resident, witnesses
//! in flight) are read when scraped.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use g16::engine::DeviceTime;
use g16_queue::{Depth, JobState, Priority};

/// Proof latency buckets, seconds: submission to settled.
const BUCKETS: [f64; 14] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Default)]
struct Inner {
    /// Jobs this server settled, by final state.
    settled: BTreeMap<&'static str, u64>,
    /// Requests refused, by gRPC code name.
    refused: BTreeMap<String, u64>,
    latency: BTreeMap<String, Histogram>,
    /// Seconds spent in each engine stage, summed over this server's jobs.
    stages: BTreeMap<String, f64>,
    accepted: u64,
}

#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

/// What the gauges read at a scrape.
pub struct Gauges {
    pub depth: Option<Depth>,
    pub devices: Vec<DeviceTime>,
    pub resident: Vec<(String, Vec<(String, u64)>)>,
    pub witness_bytes: u64,
    pub witness_budget: u64,
}

impl Metrics {
    /// Counts are plain numbers updated whole: a panic elsewhere cannot leave them torn.
    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn accepted(&self) {
        self.inner().accepted += 1;
    }

    pub fn refused(&self, code: tonic::Code) {
        *self.inner().refused.entry(format!("{code:?}")).or_default() += 1;
    }

    pub fn settled(&self, state: JobState, circuit: &str, latency: Option<Duration>) {
        let mut inner = self.inner();
        *inner.settled.entry(state.name()).or_default() += 1;
        if let (JobState::Succeeded, Some(latency)) = (state, latency) {
            let h = inner.latency.entry(circuit.to_string()).or_default();
            let secs = latency.as_secs_f64();
            for (count, bound) in h.counts.iter_mut().zip(BUCKETS) {
                if secs <= bound {
                    *count += 1;
                }
            }
            h.count += 1;
            h.sum += secs;
        }
    }

    pub fn stage(&self, stage: &str, seconds: f64) {
        *self.inner().stages.entry(stage.to_string()).or_default() += seconds;
    }

    pub fn render(&self, gauges: &Gauges) -> String {
        let inner = self.inner();
        let mut out = String::new();
        let o = &mut out;
        header(o, "g16_jobs_accepted_total", "counter", "Jobs this server accepted.");
        let _ = writeln!(o, "g16_jobs_accepted_total {}", inner.accepted);
        header(o, "g16_jobs_settled_total", "counter", "Jobs this server settled, by final state.");
        for state in JobState::ALL.into_iter().filter(|s| s.is_final()) {
            let n = inner.settled.get(state.name()).copied().unwrap_or(0);
            let _ = writeln!(o, "g16_jobs_settled_total{{state=\"{}\"}} {n}", state.name());
        }
        header(o, "g16_requests_refused_total", "counter", "Requests refused, by gRPC status code.");
        for (code, n) in &inner.refused {
            let _ = writeln!(o, "g16_requests_refused_total{{code=\"{code}\"}} {n}");
        }
        if let Some(depth) = &gauges.depth {
            header(o, "g16_jobs", "gauge", "Jobs queued (by priority) and running, in the queue this server uses.");
            for p in Priority::ALL {
                let _ =
                    writeln!(o, "g16_jobs{{state=\"queued\",priority=\"{}\"}} {}", p.name(), depth.queued[p as usize]);
            }
            let _ = writeln!(o, "g16_jobs{{state=\"running\"}} {}", depth.running);
        }
        header(o, "g16_proof_latency_seconds", "histogram", "Submission to proof, by circuit.");
        for (circuit, h) in &inner.latency {
            for (count, bound) in h.counts.iter().zip(BUCKETS) {
                let _ = writeln!(o, "g16_proof_latency_seconds_bucket{{circuit=\"{circuit}\",le=\"{bound}\"}} {count}");
            }
            let _ = writeln!(o, "g16_proof_latency_seconds_bucket{{circuit=\"{circuit}\",le=\"+Inf\"}} {}", h.count);
            let _ = writeln!(o, "g16_proof_latency_seconds_sum{{circuit=\"{circuit}\"}} {}", h.sum);
            let _ = writeln!(o, "g16_proof_latency_seconds_count{{circuit=\"{circuit}\"}} {}", h.count);
        }
        header(o, "g16_stage_seconds_total", "counter", "Time jobs spent in each engine stage.");
        for (stage, secs) in &inner.stages {
            let _ = writeln!(o, "g16_stage_seconds_total{{stage=\"{stage}\"}} {secs}");
        }
        header(o, "g16_device_busy_seconds_total", "counter", "Time each device's compute lock was held.");
        for d in &gauges.devices {
            let _ = writeln!(o, "g16_device_busy_seconds_total{{device=\"{}\"}} {}", d.label, d.busy.as_secs_f64());
        }
        header(o, "g16_device_memory_bytes", "gauge", "Each device's memory, where the backend reports it.");
        for d in &gauges.devices {
            if let Some(m) = d.memory_bytes {
                let _ = writeln!(o, "g16_device_memory_bytes{{device=\"{}\"}} {m}", d.label);
            }
        }
        header(o, "g16_resident_bytes", "gauge", "Device memory the resident keys take.");
        header(o, "g16_resident_keys", "gauge", "Keys resident on each device.");
        for (device, keys) in &gauges.resident {
            let bytes: u64 = keys.iter().map(|(_, b)| b).sum();
            let _ = writeln!(o, "g16_resident_bytes{{device=\"{device}\"}} {bytes}");
            let _ = writeln!(o, "g16_resident_keys{{device=\"{device}\"}} {}", keys.len());
        }
        header(o, "g16_witness_bytes", "gauge", "Witness bytes this server holds in flight.");
        let _ = writeln!(o, "g16_witness_bytes {}", gauges.witness_bytes);
        header(o, "g16_witness_budget_bytes", "gauge", "The host-memory budget for witnesses in flight.");
        let _ = writeln!(o, "g16_witness_budget_bytes {}", gauges.witness_budget);
        out
    }
}

fn header(o: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}");
}
