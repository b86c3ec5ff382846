//! Gap warnings: spans whose children leave too much of them unexplained.
//!
//! Spans are grouped by layer and name (a job of 300 partitions has 300 `GPU` spans, and
//! their gaps matter together, not one by one). A group is flagged when its unattributed
//! share (unattributed over duration, summed over the group's spans that have children)
//! is above the threshold and its unattributed time is at least [`MIN_WARN_NS`]; the
//! warning names the group's largest single gap, its span and the two boundaries around it.
//! This is the check that catches a host "GPU busy" span twice as long as its kernels.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::super::Layer;
use super::{Gap, SpanStats};

/// The `--gap-warn` default: 10 %.
pub const DEFAULT_GAP_WARN: f64 = 0.10;

/// Groups with less unattributed time than this (1 ms) are not worth a warning.
pub const MIN_WARN_NS: u64 = 1_000_000;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GapWarning {
    pub name: String,
    pub layer: Layer,
    /// Spans of this layer and name that have children.
    pub spans: usize,
    pub dur_ns: u64,
    pub unattributed_ns: u64,
    /// The largest gap in any of them, and that span's job and partition.
    pub largest: Option<Gap>,
    pub job: u64,
    pub partition: u32,
}

impl GapWarning {
    pub fn share(&self) -> f64 {
        match self.dur_ns {
            0 => 0.0,
            dur => self.unattributed_ns as f64 / dur as f64,
        }
    }
}

/// The warnings for `threshold` (a share, 0.10 for 10 %), largest unattributed time first.
pub(super) fn gap_warnings(spans: &[SpanStats], threshold: f64) -> Vec<GapWarning> {
    let mut out = groups(spans);
    out.retain(|w| w.unattributed_ns >= MIN_WARN_NS && w.share() > threshold);
    out
}

/// Every group of spans with children (by layer and name), largest unattributed time first.
pub(super) fn groups(spans: &[SpanStats]) -> Vec<GapWarning> {
    let mut groups: HashMap<(Layer, &str), GapWarning> = HashMap::new();
    for s in spans.iter().filter(|s| s.children > 0) {
        let w = groups.entry((s.layer, s.name.as_str())).or_insert_with(|| GapWarning {
            name: s.name.clone(),
            layer: s.layer,
            spans: 0,
            dur_ns: 0,
            unattributed_ns: 0,
            largest: None,
            job: s.job,
            partition: s.partition,
        });
        w.spans += 1;
        w.dur_ns += s.dur_ns();
        w.unattributed_ns += s.unattributed_ns;
        if let Some(gap) = &s.largest_gap {
            if w.largest.as_ref().is_none_or(|g| gap.dur_ns() > g.dur_ns()) {
                w.largest = Some(gap.clone());
                (w.job, w.partition) = (s.job, s.partition);
            }
        }
    }
    let mut out: Vec<GapWarning> = groups.into_values().collect();
    out.sort_by(|a, b| b.unattributed_ns.cmp(&a.unattributed_ns).then_with(|| a.name.cmp(&b.name)));
    out
}
