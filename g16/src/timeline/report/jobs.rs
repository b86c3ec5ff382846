//! The engine's view of a report: per job, the wall time, the time in each stage, lock
//! wait, each device's busy fraction, the unattributed time per layer, and which stage
//! holds the pipeline back. Everything is found through the span tree (parent ids), never
//! through labels or timing, so work that overlaps across jobs and devices is counted
//! where it belongs.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::super::{parse_device_detail, Event, EventKind, Layer};
use super::{names, union_len, SpanStats};

/// One stage's time over a job's partitions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageTime {
    pub stage: String,
    pub total_ns: u64,
    /// Spans of this stage (one per partition that reached it).
    pub count: usize,
}

/// How busy one device was: the union of its device-layer spans.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceBusy {
    /// The engine's label (`cuda:0`) where the spans ran under a labelled engine span,
    /// else the backend's device name.
    pub device: String,
    pub busy_ns: u64,
    /// `busy_ns` over the wall time it is measured against (the job's, or the run's).
    pub share: f64,
    /// `busy_ns` over the device's own window, from its first device span to its last:
    /// the steady-state figure, without the ramp before the first partition arrives.
    pub steady_share: f64,
    /// Device sections (`GPU` spans) that ran on it.
    pub sections: usize,
}

/// Which stage holds a job back, and the figures that say so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bottleneck {
    /// `synthesis`, `device` or `finalize`.
    pub stage: String,
    pub why: String,
}

/// One job's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobStats {
    pub job: u64,
    pub partitions: usize,
    /// Partitions that reached `PROOF_DONE`.
    pub proofs: usize,
    pub wall_ns: u64,
    /// In pipeline order ([`names::STAGES`]); stages no partition reached are left out.
    pub stages: Vec<StageTime>,
    /// Every `LOCK_WAIT` of the job, before and inside the device sections.
    pub lock_wait_ns: u64,
    pub lock_held_ns: u64,
    /// From the first device section's start to the last one's end: the job's steady
    /// state, without the ramp (synthesis of the first partitions) and the tail.
    pub gpu_window_ns: u64,
    /// Device sections (`GPU` spans) of the job.
    pub gpu_sections: usize,
    /// From the first synthesis's start to the last one's end.
    #[serde(default)]
    pub synth_window_ns: u64,
    pub devices: Vec<DeviceBusy>,
    /// Unattributed time of the job's spans that have children, per layer.
    pub unattributed_by_layer: Vec<(Layer, u64)>,
    /// `None` for a job of one partition: nothing overlaps, so no stage waits on another.
    pub bottleneck: Option<Bottleneck>,
}

impl JobStats {
    /// Proofs per minute over the job's wall time.
    pub fn proofs_per_min(&self) -> f64 {
        match self.wall_ns {
            0 => 0.0,
            wall => self.proofs as f64 * 60e9 / wall as f64,
        }
    }

    /// Device sections per minute over [`JobStats::gpu_window_ns`]: the throughput the
    /// devices sustain once work reaches them.
    pub fn steady_proofs_per_min(&self) -> f64 {
        match self.gpu_window_ns {
            0 => 0.0,
            window => self.gpu_sections as f64 * 60e9 / window as f64,
        }
    }

    pub fn stage_ns(&self, stage: &str) -> u64 {
        self.stages.iter().find(|s| s.stage == stage).map_or(0, |s| s.total_ns)
    }

    /// Mean time per partition in `stage` (over all partitions of the job).
    pub fn stage_mean_ns(&self, stage: &str) -> f64 {
        self.stage_ns(stage) as f64 / self.partitions.max(1) as f64
    }
}

/// Where each span sits: its job, and the device it ran on.
struct Placement {
    job: Vec<Option<usize>>,
    device: Vec<Option<String>>,
}

/// The device an engine span names in its detail (`device=<label> ...`).
fn labelled_device(s: &SpanStats) -> Option<&str> {
    if s.layer == Layer::Device {
        return None;
    }
    s.detail.strip_prefix("device=")?.split_whitespace().next()
}

fn place(spans: &[SpanStats]) -> Placement {
    let index: HashMap<u64, usize> = spans.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let mut job = vec![None; spans.len()];
    let mut device: Vec<Option<String>> = vec![None; spans.len()];
    // Tree order puts every parent before its children.
    for (i, s) in spans.iter().enumerate() {
        let parent = s.parent.and_then(|p| index.get(&p).copied()).filter(|&p| p != i);
        job[i] = if s.layer == Layer::Engine && s.name == names::JOB { Some(i) } else { parent.and_then(|p| job[p]) };
        device[i] = match labelled_device(s) {
            Some(label) => Some(label.to_string()),
            None => parent.and_then(|p| device[p].clone()),
        };
        if device[i].is_none() && s.layer == Layer::Device {
            device[i] = Some(parse_device_detail(&s.detail).map_or("device", |(d, _)| d).to_string());
        }
    }
    Placement { job, device }
}

/// Busy figures per device, over the spans `select` picks, against `wall_ns`.
fn devices_busy(
    spans: &[SpanStats],
    placement: &Placement,
    wall_ns: u64,
    select: impl Fn(usize) -> bool,
) -> Vec<DeviceBusy> {
    let mut intervals: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
    let mut sections: HashMap<&str, usize> = HashMap::new();
    for (i, s) in spans.iter().enumerate().filter(|(i, _)| select(*i)) {
        let Some(device) = placement.device[i].as_deref() else { continue };
        if s.layer == Layer::Device {
            intervals.entry(device).or_default().push((s.start_ns, s.end_ns));
        } else if s.name == names::GPU && s.layer == Layer::Engine {
            *sections.entry(device).or_default() += 1;
        }
    }
    intervals
        .into_iter()
        .map(|(device, list)| {
            let first = list.iter().map(|iv| iv.0).min().unwrap_or(0);
            let last = list.iter().map(|iv| iv.1).max().unwrap_or(0);
            let busy_ns = union_len(list);
            let share = |over: u64| if over == 0 { 0.0 } else { busy_ns as f64 / over as f64 };
            DeviceBusy {
                device: device.to_string(),
                busy_ns,
                share: share(wall_ns),
                steady_share: share(last - first),
                sections: sections.get(device).copied().unwrap_or(0),
            }
        })
        .collect()
}

/// Per device over the whole run.
pub(super) fn run_devices(spans: &[SpanStats], wall_ns: u64) -> Vec<DeviceBusy> {
    let placement = place(spans);
    devices_busy(spans, &placement, wall_ns, |_| true)
}

/// One [`JobStats`] per `job` span, in tree order.
pub(super) fn jobs(spans: &[SpanStats], events: &[Event]) -> Vec<JobStats> {
    let placement = place(spans);
    let index: HashMap<u64, usize> = spans.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let mut proofs_done: HashMap<u64, usize> = HashMap::new();
    for e in events.iter().filter(|e| e.kind == EventKind::Instant && e.name == names::PROOF_DONE) {
        *proofs_done.entry(e.job).or_default() += 1;
    }
    let in_job = |i: usize, j: usize| placement.job[i] == Some(j);
    let parent_is_partition =
        |s: &SpanStats| s.parent.and_then(|p| index.get(&p)).is_some_and(|&p| spans[p].name == names::PARTITION);

    let mut out = Vec::new();
    for (j, job) in spans.iter().enumerate().filter(|(_, s)| s.layer == Layer::Engine && s.name == names::JOB) {
        let mine: Vec<usize> = (0..spans.len()).filter(|&i| in_job(i, j)).collect();
        let engine_named = |name: &'static str| {
            mine.iter().map(|&i| &spans[i]).filter(move |s| s.layer == Layer::Engine && s.name == name)
        };
        let partitions =
            mine.iter().filter(|&&i| spans[i].parent == Some(job.id) && spans[i].name == names::PARTITION).count();
        let stages: Vec<StageTime> = names::STAGES
            .iter()
            .filter_map(|&stage| {
                let list: Vec<&SpanStats> = engine_named(stage).filter(|s| parent_is_partition(s)).collect();
                (!list.is_empty()).then(|| StageTime {
                    stage: stage.to_string(),
                    total_ns: list.iter().map(|s| s.dur_ns()).sum(),
                    count: list.len(),
                })
            })
            .collect();
        let unattributed_by_layer = Layer::ALL
            .into_iter()
            .filter_map(|layer| {
                let mut parents =
                    mine.iter().map(|&i| &spans[i]).filter(|s| s.layer == layer && s.children > 0).peekable();
                parents.peek()?;
                Some((layer, parents.map(|s| s.unattributed_ns).sum()))
            })
            .collect();
        let gpu: Vec<&SpanStats> = engine_named(names::GPU).collect();
        let gpu_window_ns = match (gpu.iter().map(|s| s.start_ns).min(), gpu.iter().map(|s| s.end_ns).max()) {
            (Some(first), Some(last)) => last - first,
            _ => 0,
        };
        let synth: Vec<&SpanStats> = engine_named(names::SYNTH).collect();
        let synth_window_ns = match (synth.iter().map(|s| s.start_ns).min(), synth.iter().map(|s| s.end_ns).max()) {
            (Some(first), Some(last)) => last - first,
            _ => 0,
        };
        let mut stats = JobStats {
            job: job.job,
            partitions,
            proofs: proofs_done.get(&job.job).copied().unwrap_or(0),
            wall_ns: job.dur_ns(),
            stages,
            lock_wait_ns: engine_named(names::LOCK_WAIT).map(SpanStats::dur_ns).sum(),
            lock_held_ns: engine_named(names::LOCK_HELD).map(SpanStats::dur_ns).sum(),
            gpu_window_ns,
            gpu_sections: gpu.len(),
            synth_window_ns,
            devices: devices_busy(spans, &placement, job.dur_ns(), |i| in_job(i, j)),
            unattributed_by_layer,
            bottleneck: None,
        };
        stats.bottleneck = bottleneck(&stats);
        out.push(stats);
    }
    out
}

/// Steady-state device busy at or above this is the target state: the device is the
/// bottleneck, as it should be.
pub const BUSY_TARGET: f64 = 0.90;

/// Synthesis counts as close behind the devices when it supplies less than this many times
/// the partitions they prove (the two-H200 runs at 2^20: 12 a second against 11).
const SYNTH_CLOSE: f64 = 1.15;

/// Which stage the others wait for. A partition that finds the devices busy waits in the
/// channel, on a full channel (backpressure) or for a device lock; one that finds them
/// idle waits for nothing. So: if partitions wait (on average) less than a tenth of a
/// device section for the device, the devices are starved and synthesis is the
/// bottleneck. With several device workers a partition also waits at the lock for its
/// turn while the device is idle part of the time, so a second test compares rates: if the
/// channel never filled (synthesis was never held back), partitions hardly waited in it, the
/// devices stayed under the busy target and synthesis delivered partitions more slowly than
/// the devices finish them while busy, synthesis is the bottleneck too.
/// Otherwise the devices are, unless finalizing takes longer than a device section.
fn bottleneck(job: &JobStats) -> Option<Bottleneck> {
    if job.partitions < 2 {
        return None;
    }
    let ms = |ns: f64| ns / 1e6;
    let gpu = job.stage_mean_ns(names::GPU);
    let finalize = job.stage_mean_ns(names::FINALIZE);
    let synth = job.stage_mean_ns(names::SYNTH);
    let channel = job.stage_mean_ns(names::CHANNEL);
    let backpressure = job.stage_mean_ns(names::BACKPRESSURE);
    let lock_wait = job.lock_wait_ns as f64 / job.partitions as f64;
    let queued = channel + backpressure + lock_wait;
    let busiest =
        job.devices.iter().map(|d| d.steady_share).fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))));
    let per_s = |count: f64, ns: f64| if ns > 0.0 { count * 1e9 / ns } else { 0.0 };
    let supply = per_s(job.partitions as f64, job.synth_window_ns as f64);
    let capacity: f64 = job.devices.iter().map(|d| per_s(d.sections as f64, d.busy_ns as f64)).sum();
    let starved = backpressure < 0.01 * gpu
        && channel < 0.25 * gpu
        && busiest.is_some_and(|b| b < BUSY_TARGET)
        && supply > 0.0
        && supply < capacity;
    let (stage, why) = if finalize > gpu && finalize > synth {
        (
            "finalize",
            format!(
                "assembling and verifying takes {:.3} ms a partition, a device section {:.3} ms",
                ms(finalize),
                ms(gpu)
            ),
        )
    } else if queued < 0.1 * gpu {
        (
            "synthesis",
            format!(
                "the devices wait for work: a partition waits {:.3} ms for a device (channel, backpressure, locks) \
                 against {:.3} ms of device section, and synthesis takes {:.3} ms; add synthesis workers",
                ms(queued),
                ms(gpu),
                ms(synth)
            ),
        )
    } else if starved {
        (
            "synthesis",
            format!(
                "synthesis delivered {supply:.2} partitions/s ({:.3} ms each) and the channel never filled, while the \
                 devices finish {capacity:.2}/s when busy; add synthesis workers",
                ms(synth)
            ),
        )
    } else {
        let busy = match busiest {
            Some(b) if b >= BUSY_TARGET => format!("; the busiest device is {:.1} % busy (steady state)", b * 100.0),
            Some(b) => format!(
                "; but the busiest device is only {:.1} % busy (steady state): the device sections hold time no \
                 device span accounts for (see the warnings)",
                b * 100.0
            ),
            None => String::new(),
        };
        // The devices set the pace, but a faster device section would soon meet the next limit.
        let proven = per_s(job.gpu_sections as f64, job.gpu_window_ns as f64);
        let close = if supply > 0.0 && supply < SYNTH_CLOSE * proven {
            format!("; synthesis is close behind: it delivered {supply:.2} partitions/s against {proven:.2}/s proven")
        } else {
            String::new()
        };
        (
            "device",
            format!(
                "partitions queue for the devices: {:.3} ms in the channel, {:.3} ms blocked on a full channel and \
                 {:.3} ms in lock waits per partition, against {:.3} ms of device section{busy}{close}",
                ms(channel),
                ms(backpressure),
                ms(lock_wait),
                ms(gpu)
            ),
        )
    };
    Some(Bottleneck { stage: stage.to_string(), why })
}
