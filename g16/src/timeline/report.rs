//! The report: where the time went, and where no one can say.
//!
//! The reason this exists: a host "GPU busy" span of 3.7 s held only 1.8 s of kernels, and
//! the other 1.9 s stayed invisible until both layers were put side by side. So, per span,
//! the report gives the share its children cover and the unattributed rest; over the run,
//! the device-busy fraction; and the largest gaps, each with the two boundaries around it.
//!
//! Rules:
//! - Spans come from Begin events; an End sets the end (the first End per id counts). A
//!   span without an End ends at the last event's time. Instants are ignored.
//! - Children are matched by `parent` id, never by time overlap: device spans recorded
//!   late still nest under the host span that enqueued them. A child's interval is clipped
//!   to its parent, since device clocks can stick out by their error bound. A span whose
//!   parent is missing from the events is a root.
//! - `covered_ns` is the union of the children's clipped intervals (overlap counts once).
//! - A host span that enqueues device work may also wait for work queued before it: a
//!   partition's first MSM waits for the NTTs its `h` span queued, a first NTT for another
//!   partition's upload. `queued_ns` is the time, inside such a span and outside its
//!   children, when its device lanes (those of its device children) ran other spans' work.
//! - `unattributed_ns` is the rest of the span, for spans with children. A leaf's time is
//!   its own work: it has no unattributed time and no gaps.
//! - A gap is a maximal interval of a span with children that no child (nor queued device
//!   work) covers; gaps under
//!   [`MIN_GAP_NS`] are left out of the list (they still count as unattributed).
//! - wall = latest end − earliest begin over all spans; device busy = union of all
//!   Device-layer spans over wall.

mod jobs;
mod warnings;

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Event, EventKind, Layer, SpanId};

pub use jobs::{Bottleneck, DeviceBusy, JobStats, StageTime, BUSY_TARGET};
pub use warnings::{GapWarning, DEFAULT_GAP_WARN, MIN_WARN_NS};

/// The names of the engine's spans and events, which the per-job section of the report
/// reads. Per partition (all under its `prove` span, under the job's `job` span):
/// `SYNTH_WAIT` (queued for a synthesis worker) → `SYNTH` → `BACKPRESSURE` (waiting for
/// room in the channel; ends at `CHAN_SEND`) → `CHANNEL` (until `GPU_PICKUP`) →
/// `LOCK_WAIT` → `GPU` (the device section: `GPU_START`/`GPU_END`, with `LOCK_HELD` and
/// further `LOCK_WAIT` spans, then the prover's steps, inside) → `FINALIZE` (`assemble`,
/// `verify`, then `PROOF_DONE`).
pub mod names {
    pub const JOB: &str = "job";
    /// One partition, from submission to its proof (or failure).
    pub const PARTITION: &str = "prove";
    pub const SYNTH_WAIT: &str = "SYNTH_WAIT";
    pub const SYNTH: &str = "SYNTH";
    pub const BACKPRESSURE: &str = "BACKPRESSURE";
    pub const CHANNEL: &str = "CHANNEL";
    pub const LOCK_WAIT: &str = "LOCK_WAIT";
    pub const LOCK_HELD: &str = "LOCK_HELD";
    /// Its detail starts `device=<label> `: the device the partition ran on.
    pub const GPU: &str = "GPU";
    pub const FINALIZE: &str = "FINALIZE";
    pub const VERIFY: &str = "verify";
    // Instants.
    pub const CHAN_SEND: &str = "CHAN_SEND";
    pub const GPU_PICKUP: &str = "GPU_PICKUP";
    pub const PROOF_DONE: &str = "PROOF_DONE";
    pub const PARTITION_FAILED: &str = "PARTITION_FAILED";
    pub const LOCK_DEGRADED: &str = "LOCK_DEGRADED";
    /// A key prepared on a device (its bases, and its circuit's matrices, uploaded).
    pub const PREPARE_KEY: &str = "prepare_key";
    /// The stages a partition passes through, in order, for per-stage times.
    pub const STAGES: [&str; 7] = [SYNTH_WAIT, SYNTH, BACKPRESSURE, CHANNEL, LOCK_WAIT, GPU, FINALIZE];
}

/// How many gaps [`Report::from_events`] keeps.
pub const DEFAULT_TOP_GAPS: usize = 10;

/// Gaps shorter than this (1 µs) are noise between back-to-back calls, not findings.
pub const MIN_GAP_NS: u64 = 1_000;

/// One span's place in the tree and how much of it its children explain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpanStats {
    pub id: SpanId,
    pub parent: Option<SpanId>,
    pub name: String,
    pub layer: Layer,
    pub job: u64,
    pub partition: u32,
    /// 0 for roots.
    pub depth: usize,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Direct children, including any clipped away entirely.
    pub children: usize,
    /// Union of the children's intervals, clipped to this span.
    pub covered_ns: u64,
    /// Time outside the children when this span's device lanes ran work queued before it
    /// (module docs); 0 for spans without device children.
    #[serde(default)]
    pub queued_ns: u64,
    /// `dur - covered - queued` for spans with children; 0 for leaves.
    pub unattributed_ns: u64,
    /// The Begin event's detail.
    pub detail: String,
    /// This span's largest gap (of at least [`MIN_GAP_NS`]), if any.
    pub largest_gap: Option<Gap>,
}

impl SpanStats {
    pub fn dur_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }

    /// `covered / dur`, in 0..=1; 0 for a span without duration.
    pub fn covered_share(&self) -> f64 {
        match self.dur_ns() {
            0 => 0.0,
            dur => self.covered_ns as f64 / dur as f64,
        }
    }

    /// `(covered + queued) / dur`: the share the report explains.
    pub fn explained_share(&self) -> f64 {
        match self.dur_ns() {
            0 => 0.0,
            dur => (self.covered_ns + self.queued_ns) as f64 / dur as f64,
        }
    }
}

/// Time inside a span that none of its children covers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    pub span: SpanId,
    pub span_name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The boundary where the gap begins: `end of <child>` or `start of <span>`.
    pub before: String,
    /// The boundary where it ends: `start of <child>` or `end of <span>`.
    pub after: String,
}

impl Gap {
    pub fn dur_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Tree order: each parent before its children, siblings (and roots) by start.
    pub spans: Vec<SpanStats>,
    pub wall_ns: u64,
    /// Union of all Device-layer span intervals.
    pub device_busy_ns: u64,
    /// `device_busy_ns / wall_ns`; `None` when there are no Device spans.
    pub device_busy: Option<f64>,
    /// Sum of `unattributed_ns` over spans that have children.
    pub unattributed_ns: u64,
    /// Largest first (ties: earlier first).
    pub gaps: Vec<Gap>,
    /// Per device, over the run's wall time (see [`DeviceBusy`]).
    pub devices: Vec<DeviceBusy>,
    /// One per engine job (`job` span), in order.
    pub jobs: Vec<JobStats>,
}

impl Report {
    /// The report, keeping the [`DEFAULT_TOP_GAPS`] largest gaps.
    pub fn from_events(events: &[Event]) -> Report {
        Report::with_top_gaps(events, DEFAULT_TOP_GAPS)
    }

    /// The report, keeping the `n` largest gaps. Events may be in any order.
    pub fn with_top_gaps(events: &[Event], n: usize) -> Report {
        let nodes = collect_nodes(events);
        let tree = Tree::build(&nodes);
        let lanes = Lanes::of(&nodes);
        let mut spans = Vec::with_capacity(nodes.len());
        let mut gaps = Vec::new();
        for &(i, depth) in &tree.order {
            let node = &nodes[i];
            let kids: Vec<&Node> = tree.children[i].iter().map(|&c| &nodes[c]).collect();
            let queued = lanes.queued_under(node, &kids, &nodes);
            let covered_ns = runs(node, &kids).iter().map(|r| r.hi - r.lo).sum();
            let mut own = Vec::new();
            let explained_ns = cover(node, &[kids.as_slice(), queued.as_slice()].concat(), &mut own);
            let unattributed_ns = if kids.is_empty() { 0 } else { node.dur_ns() - explained_ns };
            let largest =
                own.iter().min_by(|a, b| b.dur_ns().cmp(&a.dur_ns()).then(a.start_ns.cmp(&b.start_ns))).cloned();
            gaps.extend(own);
            let times = Times { covered_ns, queued_ns: explained_ns - covered_ns, unattributed_ns };
            spans.push(node.stats(depth, kids.len(), times, largest));
        }
        gaps.sort_by(|a, b| b.dur_ns().cmp(&a.dur_ns()).then(a.start_ns.cmp(&b.start_ns)).then(a.span.cmp(&b.span)));
        gaps.truncate(n);

        let wall_ns = wall(&nodes);
        let device_busy_ns =
            union_len(nodes.iter().filter(|n| n.layer == Layer::Device).map(|n| (n.start, n.end)).collect());
        let has_device = nodes.iter().any(|n| n.layer == Layer::Device);
        let device_busy = has_device.then(|| match wall_ns {
            0 => 0.0,
            wall => device_busy_ns as f64 / wall as f64,
        });
        let unattributed_ns = spans.iter().filter(|s| s.children > 0).map(|s| s.unattributed_ns).sum();
        let devices = jobs::run_devices(&spans, wall_ns);
        let jobs = jobs::jobs(&spans, events);
        Report { spans, wall_ns, device_busy_ns, device_busy, unattributed_ns, gaps, devices, jobs }
    }

    /// Span groups (by layer and name) whose unattributed share is above `threshold`
    /// (0.10 for 10 %); see [`GapWarning`].
    pub fn gap_warnings(&self, threshold: f64) -> Vec<GapWarning> {
        warnings::gap_warnings(&self.spans, threshold)
    }

    /// Every group of spans with children (by layer and name) with its unattributed time,
    /// largest first: the first is the largest unattributed span.
    pub fn unattributed_groups(&self) -> Vec<GapWarning> {
        warnings::groups(&self.spans)
    }

    /// The report as text, warning about gaps above `gap_warn` (a share); `Display` uses
    /// [`DEFAULT_GAP_WARN`].
    pub fn render(&self, gap_warn: f64) -> Rendered<'_> {
        Rendered { report: self, gap_warn }
    }

    pub fn job(&self, job: u64) -> Option<&JobStats> {
        self.jobs.iter().find(|j| j.job == job)
    }

    /// Unattributed time per layer, over spans with children, in layer order; only layers
    /// that have such spans appear.
    pub fn unattributed_by_layer(&self) -> Vec<(Layer, u64)> {
        Layer::ALL
            .into_iter()
            .filter_map(|layer| {
                let mut parents = self.spans.iter().filter(|s| s.layer == layer && s.children > 0).peekable();
                parents.peek()?;
                Some((layer, parents.map(|s| s.unattributed_ns).sum()))
            })
            .collect()
    }

    /// The first span (in tree order) with this name.
    pub fn span_by_name(&self, name: &str) -> Option<&SpanStats> {
        self.spans.iter().find(|s| s.name == name)
    }
}

// ---------------------------------------------------------------------------------------
// Spans and their tree
// ---------------------------------------------------------------------------------------

/// A span with its end resolved.
struct Node {
    id: SpanId,
    parent: Option<SpanId>,
    name: String,
    layer: Layer,
    job: u64,
    partition: u32,
    start: u64,
    end: u64,
    detail: String,
}

impl Node {
    fn dur_ns(&self) -> u64 {
        self.end - self.start
    }

    /// The device lane of a Device-layer span (from its detail); None for others.
    fn lane(&self) -> Option<&str> {
        if self.layer != Layer::Device {
            return None;
        }
        super::parse_device_detail(&self.detail).map(|(device, _)| device)
    }

    fn stats(&self, depth: usize, children: usize, times: Times, largest_gap: Option<Gap>) -> SpanStats {
        let Times { covered_ns, queued_ns, unattributed_ns } = times;
        SpanStats {
            id: self.id,
            parent: self.parent,
            name: self.name.clone(),
            layer: self.layer,
            job: self.job,
            partition: self.partition,
            depth,
            start_ns: self.start,
            end_ns: self.end,
            children,
            covered_ns,
            queued_ns,
            unattributed_ns,
            detail: self.detail.clone(),
            largest_gap,
        }
    }
}

/// A span's time split three ways (see [`SpanStats`]).
struct Times {
    covered_ns: u64,
    queued_ns: u64,
    unattributed_ns: u64,
}

/// One lane's spans as (start, node index) by start, and the longest span's length.
type LaneSpans = (Vec<(u64, usize)>, u64);

/// The Device-layer spans of each device lane, by start, for finding the queued work a host
/// span waited on.
struct Lanes<'a> {
    by_lane: HashMap<&'a str, LaneSpans>,
}

impl<'a> Lanes<'a> {
    fn of(nodes: &'a [Node]) -> Lanes<'a> {
        let mut by_lane: HashMap<&'a str, LaneSpans> = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            if let Some(lane) = n.lane() {
                let (spans, longest) = by_lane.entry(lane).or_default();
                spans.push((n.start, i));
                *longest = (*longest).max(n.dur_ns());
            }
        }
        for (spans, _) in by_lane.values_mut() {
            spans.sort_unstable();
        }
        Lanes { by_lane }
    }

    /// The device spans on the lanes of `node`'s device children that overlap `node` and are
    /// not its children: the work queued before it that ran while it waited. Only a host span
    /// with device children waits on its lane; others get none.
    fn queued_under<'n>(&self, node: &Node, kids: &[&Node], nodes: &'n [Node]) -> Vec<&'n Node> {
        if node.layer == Layer::Device {
            return Vec::new();
        }
        let mut lanes: Vec<&str> = kids.iter().filter_map(|k| k.lane()).collect();
        lanes.sort_unstable();
        lanes.dedup();
        let mut queued = Vec::new();
        for lane in lanes {
            let Some((spans, longest)) = self.by_lane.get(lane) else { continue };
            // Spans that start before `node.start − longest` end before `node` begins.
            let from = spans.partition_point(|&(start, _)| start < node.start.saturating_sub(*longest));
            for &(start, i) in &spans[from..] {
                if start >= node.end {
                    break;
                }
                let n = &nodes[i];
                if n.end > node.start && n.parent != Some(node.id) {
                    queued.push(n);
                }
            }
        }
        queued
    }
}

/// One node per span id (the first Begin wins), ends resolved (`end >= start` always).
fn collect_nodes(events: &[Event]) -> Vec<Node> {
    let last_ns = events.iter().map(|e| e.ts_ns).max().unwrap_or(0);
    let mut index: HashMap<SpanId, usize> = HashMap::new();
    let mut nodes: Vec<Node> = Vec::new();
    for e in events.iter().filter(|e| e.kind == EventKind::Begin) {
        index.entry(e.span).or_insert_with(|| {
            nodes.push(Node {
                id: e.span,
                parent: e.parent,
                name: e.name.clone(),
                layer: e.layer,
                job: e.job,
                partition: e.partition,
                start: e.ts_ns,
                end: last_ns,
                detail: e.detail.clone(),
            });
            nodes.len() - 1
        });
    }
    // Ends may precede their Begin in an unsorted slice, hence a second pass.
    let mut ended = vec![false; nodes.len()];
    for e in events.iter().filter(|e| e.kind == EventKind::End) {
        if let Some(&i) = index.get(&e.span) {
            if !ended[i] {
                ended[i] = true;
                nodes[i].end = e.ts_ns;
            }
        }
    }
    for node in &mut nodes {
        node.end = node.end.max(node.start);
    }
    nodes
}

struct Tree {
    /// Children of each node, by (start, id).
    children: Vec<Vec<usize>>,
    /// Pre-order (node, depth).
    order: Vec<(usize, usize)>,
}

impl Tree {
    fn build(nodes: &[Node]) -> Tree {
        let index: HashMap<SpanId, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        let mut children = vec![Vec::new(); nodes.len()];
        let mut roots = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            match node.parent.filter(|&p| p != node.id).and_then(|p| index.get(&p)) {
                Some(&p) => children[p].push(i),
                None => roots.push(i),
            }
        }
        let by_start = |&i: &usize| (nodes[i].start, nodes[i].id);
        roots.sort_by_key(by_start);
        for list in &mut children {
            list.sort_by_key(by_start);
        }
        // Nodes caught in a parent cycle (only in corrupt input) are unreachable from the
        // roots; visiting every node afterwards turns each cycle into a root instead of
        // losing it.
        let mut all: Vec<usize> = (0..nodes.len()).collect();
        all.sort_by_key(by_start);
        let mut tree = Tree { children, order: Vec::with_capacity(nodes.len()) };
        let mut visited = vec![false; nodes.len()];
        for start in roots.into_iter().chain(all) {
            tree.visit(start, &mut visited);
        }
        tree
    }

    /// Appends the subtree under `root` in pre-order (iteratively: traces can be deep).
    fn visit(&mut self, root: usize, visited: &mut [bool]) {
        let mut stack = vec![(root, 0)];
        while let Some((i, depth)) = stack.pop() {
            if std::mem::replace(&mut visited[i], true) {
                continue;
            }
            self.order.push((i, depth));
            stack.extend(self.children[i].iter().rev().filter(|&&c| !visited[c]).map(|&c| (c, depth + 1)));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Coverage and gaps
// ---------------------------------------------------------------------------------------

/// A maximal run of overlapping child intervals.
struct Run<'a> {
    lo: u64,
    hi: u64,
    /// The child whose start opens the run, and the one whose end closes it.
    first: &'a str,
    last: &'a str,
}

/// One side of a gap: where a span starts or ends.
enum Edge<'a> {
    StartOf(&'a str),
    EndOf(&'a str),
}

impl fmt::Display for Edge<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Edge::StartOf(name) => write!(f, "start of {name}"),
            Edge::EndOf(name) => write!(f, "end of {name}"),
        }
    }
}

/// Returns the union of the children's intervals clipped to `node`, and appends the
/// gaps of at least [`MIN_GAP_NS`] between them to `gaps`.
fn cover(node: &Node, kids: &[&Node], gaps: &mut Vec<Gap>) -> u64 {
    if kids.is_empty() {
        return 0;
    }
    let runs = runs(node, kids);
    let mut push_gap = |start_ns: u64, end_ns: u64, before: &Edge<'_>, after: Edge<'_>| {
        // Strings are built only for gaps that make the list.
        if end_ns - start_ns >= MIN_GAP_NS {
            gaps.push(Gap {
                span: node.id,
                span_name: node.name.clone(),
                start_ns,
                end_ns,
                before: before.to_string(),
                after: after.to_string(),
            });
        }
    };
    // Walk the runs left to right; `cursor` is where uncovered time would begin.
    let mut cursor = (node.start, Edge::StartOf(&node.name));
    for run in &runs {
        if run.lo > cursor.0 {
            push_gap(cursor.0, run.lo, &cursor.1, Edge::StartOf(run.first));
        }
        cursor = (run.hi, Edge::EndOf(run.last));
    }
    if node.end > cursor.0 {
        push_gap(cursor.0, node.end, &cursor.1, Edge::EndOf(&node.name));
    }
    runs.iter().map(|r| r.hi - r.lo).sum()
}

/// The children's intervals clipped to `node`, merged into runs (touching ones merge).
fn runs<'a>(node: &Node, kids: &[&'a Node]) -> Vec<Run<'a>> {
    let mut clipped: Vec<(u64, u64, &'a str)> = kids
        .iter()
        .map(|k| (k.start.max(node.start), k.end.min(node.end), k.name.as_str()))
        .filter(|&(lo, hi, _)| lo < hi)
        .collect();
    // Earliest start first; on ties the longest, so it names the run's opening boundary.
    clipped.sort_by_key(|&(lo, hi, _)| (lo, std::cmp::Reverse(hi)));
    let mut runs: Vec<Run<'a>> = Vec::new();
    for (lo, hi, name) in clipped {
        match runs.last_mut() {
            Some(run) if lo <= run.hi => {
                if hi > run.hi {
                    run.hi = hi;
                    run.last = name;
                }
            }
            _ => runs.push(Run { lo, hi, first: name, last: name }),
        }
    }
    runs
}

/// Total length of the union of intervals.
fn union_len(mut intervals: Vec<(u64, u64)>) -> u64 {
    intervals.sort_unstable();
    let mut total = 0;
    let mut current: Option<(u64, u64)> = None;
    for (lo, hi) in intervals {
        current = match current {
            Some((clo, chi)) if lo <= chi => Some((clo, chi.max(hi))),
            Some((clo, chi)) => {
                total += chi - clo;
                Some((lo, hi))
            }
            None => Some((lo, hi)),
        };
    }
    total + current.map_or(0, |(lo, hi)| hi - lo)
}

fn wall(nodes: &[Node]) -> u64 {
    let first = nodes.iter().map(|n| n.start).min();
    let last = nodes.iter().map(|n| n.end).max();
    match (first, last) {
        (Some(first), Some(last)) => last - first,
        _ => 0,
    }
}

// ---------------------------------------------------------------------------------------
// Display
// ---------------------------------------------------------------------------------------

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn percent(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

/// A [`Report`] as text, with its gap-warning threshold.
pub struct Rendered<'a> {
    report: &'a Report,
    gap_warn: f64,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(DEFAULT_GAP_WARN).fmt(f)
    }
}

/// One row of the table: the spans that share a path of names from the root (the same
/// step of every partition), summed.
struct Row<'a> {
    name: &'a str,
    layer: Layer,
    depth: usize,
    count: usize,
    dur_ns: u64,
    covered_ns: u64,
    queued_ns: u64,
    unattributed_ns: u64,
    with_children: bool,
    rows: Vec<usize>,
}

/// Rows in tree order: spans grouped by (parent row, name, layer).
fn rows(spans: &[SpanStats]) -> (Vec<Row<'_>>, Vec<usize>) {
    let mut rows: Vec<Row<'_>> = Vec::new();
    let mut roots = Vec::new();
    let mut row_of_span: HashMap<SpanId, usize> = HashMap::new();
    let mut keyed: HashMap<(Option<usize>, &str, Layer), usize> = HashMap::new();
    for s in spans {
        let parent_row = s.parent.and_then(|p| row_of_span.get(&p).copied());
        let key = (parent_row, s.name.as_str(), s.layer);
        let r = *keyed.entry(key).or_insert_with(|| {
            rows.push(Row {
                name: &s.name,
                layer: s.layer,
                depth: parent_row.map_or(0, |p| rows[p].depth + 1),
                count: 0,
                dur_ns: 0,
                covered_ns: 0,
                queued_ns: 0,
                unattributed_ns: 0,
                with_children: false,
                rows: Vec::new(),
            });
            let r = rows.len() - 1;
            match parent_row {
                Some(p) => rows[p].rows.push(r),
                None => roots.push(r),
            }
            r
        });
        row_of_span.insert(s.id, r);
        let row = &mut rows[r];
        row.count += 1;
        row.dur_ns += s.dur_ns();
        if s.children > 0 {
            row.with_children = true;
            row.covered_ns += s.covered_ns;
            row.queued_ns += s.queued_ns;
            row.unattributed_ns += s.unattributed_ns;
        }
    }
    let mut order = Vec::with_capacity(rows.len());
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(r) = stack.pop() {
        order.push(r);
        stack.extend(rows[r].rows.iter().rev());
    }
    (rows, order)
}

/// The line under a span for the queued device work it waited on.
const QUEUED_ROW: &str = "(queued before, waited on)";

fn ms_f(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let report = self.report;
        let (rows, order) = rows(&report.spans);
        let label = |r: &Row<'_>| {
            let count = if r.count > 1 { format!(" ×{}", r.count) } else { String::new() };
            format!("{}{}{count}", "  ".repeat(r.depth), r.name)
        };
        let queued_width =
            |r: &Row<'_>| if r.queued_ns > 0 { 2 * (r.depth + 1) + QUEUED_ROW.chars().count() } else { 0 };
        let width = order
            .iter()
            .map(|&r| label(&rows[r]).chars().count().max(queued_width(&rows[r])))
            .max()
            .unwrap_or(0)
            .max(4);
        writeln!(f, "{:<width$}  {:<7}  {:>12}  {:>8}  {:>12}", "span", "layer", "ms", "covered", "unattr ms")?;
        for &r in &order {
            let row = &rows[r];
            // A leaf's time is its own work: coverage does not apply. The covered share counts
            // the queued device work the span waited on, which has a line of its own.
            let (covered, unattributed) = if row.with_children {
                let explained = row.covered_ns + row.queued_ns;
                let share = if row.dur_ns == 0 { 0.0 } else { explained as f64 / row.dur_ns as f64 };
                (percent(share), ms(row.unattributed_ns))
            } else {
                ("-".to_string(), "-".to_string())
            };
            writeln!(
                f,
                "{:<width$}  {:<7}  {:>12}  {:>8}  {:>12}",
                label(row),
                row.layer,
                ms(row.dur_ns),
                covered,
                unattributed
            )?;
            if row.queued_ns > 0 {
                let name = format!("{}{QUEUED_ROW}", "  ".repeat(row.depth + 1));
                writeln!(
                    f,
                    "{name:<width$}  {:<7}  {:>12}  {:>8}  {:>12}",
                    Layer::Device,
                    ms(row.queued_ns),
                    "-",
                    "-"
                )?;
            }
        }
        match report.device_busy {
            Some(share) => writeln!(f, "device busy: {} ({} ms)", percent(share), ms(report.device_busy_ns))?,
            None => writeln!(f, "device busy: - (no device spans)")?,
        }
        if report.devices.len() > 1 || !report.jobs.is_empty() {
            for d in &report.devices {
                writeln!(f, "  {}", device_line(d, "the run"))?;
            }
        }
        writeln!(f, "wall: {} ms", ms(report.wall_ns))?;
        writeln!(f, "unattributed: {} ms (in spans with children)", ms(report.unattributed_ns))?;
        if !report.gaps.is_empty() {
            writeln!(f, "largest gaps:")?;
        }
        for g in &report.gaps {
            writeln!(f, "  {} ms in {} between {} and {}", ms(g.dur_ns()), g.span_name, g.before, g.after)?;
        }
        for job in &report.jobs {
            write_job(f, job)?;
        }
        for w in report.gap_warnings(self.gap_warn) {
            write!(
                f,
                "warning: {} ({}) is {} unattributed ({} ms of {} ms over {} span{}, above {})",
                w.name,
                w.layer,
                percent(w.share()),
                ms(w.unattributed_ns),
                ms(w.dur_ns),
                w.spans,
                if w.spans == 1 { "" } else { "s" },
                percent(self.gap_warn)
            )?;
            match &w.largest {
                Some(g) => writeln!(
                    f,
                    "; largest gap: {} ms in job {} partition {}, between {} and {}",
                    ms(g.dur_ns()),
                    w.job,
                    w.partition,
                    g.before,
                    g.after
                )?,
                None => writeln!(f)?,
            }
        }
        Ok(())
    }
}

fn device_line(d: &DeviceBusy, over: &str) -> String {
    format!(
        "device {}: busy {} of {over} ({} ms), {} steady (first to last device span), {} device section{}",
        d.device,
        percent(d.share),
        ms(d.busy_ns),
        percent(d.steady_share),
        d.sections,
        if d.sections == 1 { "" } else { "s" }
    )
}

fn write_job(f: &mut fmt::Formatter<'_>, job: &JobStats) -> fmt::Result {
    writeln!(
        f,
        "job {}: {} partition{}, {} proof{}, wall {} ms ({:.1} proofs/min; {:.1} steady, over the {} ms from \
         the first device section to the last)",
        job.job,
        job.partitions,
        if job.partitions == 1 { "" } else { "s" },
        job.proofs,
        if job.proofs == 1 { "" } else { "s" },
        ms(job.wall_ns),
        job.proofs_per_min(),
        job.steady_proofs_per_min(),
        ms(job.gpu_window_ns)
    )?;
    let stages: Vec<String> =
        job.stages.iter().map(|s| format!("{} {}", s.stage, ms_f(job.stage_mean_ns(&s.stage)))).collect();
    writeln!(f, "  stages (ms, mean per partition): {}", stages.join(" · "))?;
    writeln!(f, "  lock wait: {} ms, lock held: {} ms", ms(job.lock_wait_ns), ms(job.lock_held_ns))?;
    for d in &job.devices {
        writeln!(f, "  {}", device_line(d, "the job"))?;
    }
    let layers: Vec<String> = job.unattributed_by_layer.iter().map(|(l, ns)| format!("{l} {}", ms(*ns))).collect();
    writeln!(f, "  unattributed (ms): {}", layers.join(" · "))?;
    match &job.bottleneck {
        Some(b) => writeln!(f, "  bottleneck: {}: {}", b.stage, b.why),
        None => writeln!(f, "  bottleneck: - (one partition: nothing overlaps)"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{span, trace, MS};
    use super::*;

    /// `prove` 0–100 ms with `a` 0–30 and `b` 50–100.
    fn known_gap() -> Vec<Event> {
        trace(&[
            span(1, None, Layer::Prover, "prove", 0, 100 * MS),
            span(2, Some(1), Layer::Backend, "a", 0, 30 * MS),
            span(3, Some(1), Layer::Backend, "b", 50 * MS, 100 * MS),
        ])
    }

    fn stats<'a>(r: &'a Report, name: &str) -> &'a SpanStats {
        r.span_by_name(name).unwrap_or_else(|| panic!("{name} missing from\n{r}"))
    }

    #[test]
    fn finds_the_known_gap() {
        let r = Report::from_events(&known_gap());
        assert_eq!(
            r.gaps,
            vec![Gap {
                span: 1,
                span_name: "prove".into(),
                start_ns: 30 * MS,
                end_ns: 50 * MS,
                before: "end of a".into(),
                after: "start of b".into(),
            }]
        );
        let prove = stats(&r, "prove");
        assert_eq!((prove.children, prove.covered_ns, prove.unattributed_ns), (2, 80 * MS, 20 * MS));
        assert!((prove.covered_share() - 0.8).abs() < 1e-12);
        let a = stats(&r, "a");
        assert_eq!((a.children, a.covered_ns, a.unattributed_ns, a.depth), (0, 0, 0, 1));
        assert!(r.gaps.iter().all(|g| g.span == 1), "a leaf reports no gaps");
        assert_eq!((r.wall_ns, r.unattributed_ns, r.device_busy), (100 * MS, 20 * MS, None));
        let names: Vec<&str> = r.spans.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["prove", "a", "b"]);
    }

    /// A device span on `lane`, with the detail the recorder writes.
    fn on_lane(id: SpanId, parent: SpanId, name: &str, lane: &str, start_ns: u64, end_ns: u64) -> [Event; 2] {
        let mut pair = span(id, Some(parent), Layer::Device, name, start_ns, end_ns);
        pair[0].detail = crate::timeline::device_detail(lane, 0);
        pair
    }

    /// A first MSM that waits for the NTTs queued before it: the device time on its lane
    /// explains the wait; another lane's work does not.
    #[test]
    fn a_span_waiting_on_queued_device_work_is_explained_by_it() {
        let r = Report::from_events(&trace(&[
            span(1, None, Layer::Prover, "h", 0, 2 * MS),
            span(2, Some(1), Layer::Prover, "ntt_a", 0, MS),
            on_lane(3, 2, "ntt", "cuda:0", MS, 11 * MS),
            span(4, Some(1), Layer::Prover, "ntt_b", MS, 2 * MS),
            on_lane(5, 4, "ntt", "cuda:0", 12 * MS, 21 * MS),
            span(6, None, Layer::Prover, "msm", 2 * MS, 40 * MS),
            on_lane(7, 6, "msm_g1", "cuda:0", 21 * MS, 40 * MS),
            span(8, None, Layer::Prover, "other", 0, 40 * MS),
            on_lane(9, 8, "upload", "cuda:1", 0, 40 * MS),
        ]));
        let msm = stats(&r, "msm");
        assert_eq!((msm.covered_ns, msm.queued_ns, msm.unattributed_ns), (19 * MS, 18 * MS, MS));
        assert!((msm.explained_share() - 37.0 / 38.0).abs() < 1e-12);
        let gap = msm.largest_gap.as_ref().expect("the millisecond between the NTTs");
        assert_eq!((gap.start_ns, gap.end_ns), (11 * MS, 12 * MS));
        assert_eq!((gap.before.as_str(), gap.after.as_str()), ("end of ntt", "start of ntt"));
        // ntt_b's launch ran while the device worked on ntt_a's NTT; ntt_a's, on an idle device,
        // stays unattributed: host time in the launch.
        let (ntt_a, ntt_b) = (stats(&r, "ntt_a"), stats(&r, "ntt_b"));
        assert_eq!((ntt_b.covered_ns, ntt_b.queued_ns, ntt_b.unattributed_ns), (0, MS, 0));
        assert_eq!((ntt_a.covered_ns, ntt_a.queued_ns, ntt_a.unattributed_ns), (0, 0, MS));
        assert_eq!(stats(&r, "h").queued_ns, 0, "no device children: h waits on nothing itself");
        let text = r.to_string();
        assert!(text.contains(QUEUED_ROW), "{text}");
    }

    #[test]
    fn gaps_at_the_parent_edges_name_the_parent() {
        let r = Report::from_events(&trace(&[
            span(1, None, Layer::Engine, "job", 0, 100 * MS),
            span(2, Some(1), Layer::Prover, "late", 10 * MS, 70 * MS),
        ]));
        assert_eq!(r.gaps.len(), 2);
        let (big, small) = (&r.gaps[0], &r.gaps[1]);
        assert_eq!((big.start_ns, big.end_ns), (70 * MS, 100 * MS));
        assert_eq!((big.before.as_str(), big.after.as_str()), ("end of late", "end of job"));
        assert_eq!((small.start_ns, small.end_ns), (0, 10 * MS));
        assert_eq!((small.before.as_str(), small.after.as_str()), ("start of job", "start of late"));
    }

    #[test]
    fn overlapping_children_count_once() {
        let r = Report::from_events(&trace(&[
            span(1, None, Layer::Backend, "GPU_BUSY", 0, 100 * MS),
            span(2, Some(1), Layer::Backend, "x", 10 * MS, 50 * MS),
            span(3, Some(1), Layer::Backend, "y", 20 * MS, 60 * MS),
            span(4, Some(1), Layer::Backend, "z", 30 * MS, 40 * MS),
        ]));
        let busy = stats(&r, "GPU_BUSY");
        assert_eq!(busy.covered_ns, 50 * MS, "union 10–60, not the sum 90");
        assert_eq!(busy.unattributed_ns, 50 * MS);
        let bounds: Vec<(&str, &str)> = r.gaps.iter().map(|g| (g.before.as_str(), g.after.as_str())).collect();
        assert_eq!(bounds, [("end of y", "end of GPU_BUSY"), ("start of GPU_BUSY", "start of x")]);
    }

    #[test]
    fn device_spans_outside_the_parent_are_clipped() {
        // Device spans recorded after the host span ended, sticking out on both sides.
        let r = Report::from_events(&trace(&[
            span(1, None, Layer::Backend, "GPU_BUSY", 10 * MS, 50 * MS),
            span(2, Some(1), Layer::Device, "ntt", 5 * MS, 20 * MS),
            span(3, Some(1), Layer::Device, "msm", 40 * MS, 60 * MS),
            span(4, Some(1), Layer::Device, "outside", 70 * MS, 80 * MS),
        ]));
        let busy = stats(&r, "GPU_BUSY");
        assert_eq!((busy.children, busy.covered_ns, busy.unattributed_ns), (3, 20 * MS, 20 * MS));
        assert_eq!(r.gaps.len(), 1);
        assert_eq!((r.gaps[0].start_ns, r.gaps[0].end_ns), (20 * MS, 40 * MS));
        assert_eq!(stats(&r, "msm").depth, 1, "nested by parent id, not by time");
        assert_eq!(r.wall_ns, 75 * MS);
        assert_eq!(r.device_busy_ns, 15 * MS + 20 * MS + 10 * MS);
    }

    #[test]
    fn device_busy_is_the_union_over_wall() {
        let r = Report::from_events(&trace(&[
            span(1, None, Layer::Prover, "prove", 0, 100 * MS),
            span(2, Some(1), Layer::Device, "k1", 10 * MS, 20 * MS),
            span(3, Some(1), Layer::Device, "k2", 15 * MS, 40 * MS),
        ]));
        assert_eq!(r.device_busy_ns, 30 * MS);
        let busy = r.device_busy.expect("device spans present");
        assert!((busy - 0.30).abs() < 1e-12, "{busy}");
        assert_eq!(r.unattributed_by_layer(), [(Layer::Prover, 70 * MS)]);
    }

    #[test]
    fn orphans_become_roots_and_open_spans_end_at_the_last_event() {
        let [open, _] = span(2, Some(1), Layer::Prover, "open", 10 * MS, 0);
        let mut events = trace(&[
            span(5, Some(99), Layer::Engine, "orphan", 0, 30 * MS),
            span(6, Some(2), Layer::Backend, "inside", 20 * MS, 30 * MS),
        ]);
        events.push(open);
        events.push(Event {
            ts_ns: 60 * MS,
            kind: EventKind::Instant,
            span: 7,
            parent: None,
            layer: Layer::Engine,
            name: "late".into(),
            job: 0,
            partition: 0,
            detail: String::new(),
        });
        let r = Report::from_events(&events);
        let open = stats(&r, "open");
        assert_eq!((open.depth, open.start_ns, open.end_ns), (0, 10 * MS, 60 * MS));
        assert_eq!(stats(&r, "orphan").depth, 0);
        assert_eq!(stats(&r, "inside").depth, 1);
        assert_eq!(r.wall_ns, 60 * MS);
        let names: Vec<&str> = r.spans.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["orphan", "open", "inside"], "roots by start, children after parents");
    }

    #[test]
    fn gaps_are_ranked_truncated_and_sub_microsecond_ones_ignored() {
        let r = Report::with_top_gaps(
            &trace(&[
                span(1, None, Layer::Prover, "p", 0, 100 * MS),
                span(2, Some(1), Layer::Backend, "c1", 0, 10 * MS),
                span(3, Some(1), Layer::Backend, "c2", 10 * MS + 999, 20 * MS), // 999 ns gap
                span(4, Some(1), Layer::Backend, "c3", 25 * MS, 40 * MS),       // 5 ms gap
                span(5, Some(1), Layer::Backend, "c4", 50 * MS, 99 * MS),       // 10 ms, then 1 ms
            ]),
            2,
        );
        let durs: Vec<u64> = r.gaps.iter().map(Gap::dur_ns).collect();
        assert_eq!(durs, [10 * MS, 5 * MS]);
        let all = Report::from_events(&trace(&[
            span(1, None, Layer::Prover, "p", 0, 10 * MS),
            span(2, Some(1), Layer::Backend, "c1", 0, 5 * MS),
            span(3, Some(1), Layer::Backend, "c2", 5 * MS + 999, 10 * MS),
        ]));
        assert!(all.gaps.is_empty());
        assert_eq!(stats(&all, "p").unattributed_ns, 999, "still unattributed");
        assert!(Report::from_events(&known_gap()).gaps.len() <= DEFAULT_TOP_GAPS);
    }

    #[test]
    fn corrupt_parent_cycles_do_not_hang() {
        let r = Report::from_events(&trace(&[
            span(1, Some(2), Layer::Prover, "x", 0, 10 * MS),
            span(2, Some(1), Layer::Prover, "y", MS, 5 * MS),
            span(3, Some(3), Layer::Prover, "self", 0, MS),
        ]));
        assert_eq!(r.spans.len(), 3);
        assert_eq!(stats(&r, "self").depth, 0);
    }

    #[test]
    fn empty_input_gives_an_empty_report() {
        let r = Report::from_events(&[]);
        assert!(r.spans.is_empty() && r.gaps.is_empty());
        assert_eq!((r.wall_ns, r.device_busy, r.unattributed_ns), (0, None, 0));
        assert!(r.to_string().contains("wall: 0.000 ms"));
    }

    #[test]
    fn display_shows_table_busy_and_gaps() {
        let mut events = known_gap();
        events.extend(trace(&[span(4, Some(2), Layer::Device, "kernel", 5 * MS, 20 * MS)]));
        let text = Report::from_events(&events).to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("span"), "{text}");
        assert!(
            lines[1].starts_with("prove ") && lines[1].contains("100.000") && lines[1].contains("80.0 %"),
            "{text}"
        );
        assert!(lines[1].trim_end().ends_with("20.000"), "{text}");
        assert!(lines[2].starts_with("  a ") && lines[2].contains("50.0 %"), "{text}");
        assert!(lines[3].starts_with("    kernel ") && lines[3].contains("device"), "{text}");
        assert!(lines[3].trim_end().ends_with('-'), "a leaf shows no coverage: {text}");
        assert!(text.contains("device busy: 15.0 % (15.000 ms)"), "{text}");
        assert!(text.contains("wall: 100.000 ms"), "{text}");
        assert!(text.contains("largest gaps:\n  20.000 ms in prove between end of a and start of b\n"), "{text}");
    }

    /// A span with labels and a detail (the engine's spans carry both).
    fn labelled(mut pair: [Event; 2], job: u64, partition: u32, detail: &str) -> [Event; 2] {
        for e in &mut pair {
            (e.job, e.partition) = (job, partition);
        }
        pair[0].detail = detail.to_string();
        pair
    }

    fn instant(name: &str, job: u64, partition: u32, ts_ns: u64) -> Event {
        Event {
            ts_ns,
            kind: EventKind::Instant,
            span: 1_000 + ts_ns,
            parent: None,
            layer: Layer::Engine,
            name: name.into(),
            job,
            partition,
            detail: String::new(),
        }
    }

    /// Job 1: partition 0 on gpu:0, partition 1 on gpu:1. `channel_ms` is how long
    /// partition 1 waits in the channel (0: the devices wait for synthesis).
    fn engine_trace(channel_ms: u64) -> Vec<Event> {
        let e = Layer::Engine;
        let c = channel_ms * MS;
        let mut spans = vec![
            labelled(span(1, None, e, names::JOB, 0, 100 * MS + c), 1, 0, "partitions=2"),
            labelled(span(2, Some(1), e, names::PARTITION, 0, 60 * MS), 1, 0, ""),
            labelled(span(3, Some(2), e, names::SYNTH, 0, 10 * MS), 1, 0, ""),
            labelled(span(4, Some(2), e, names::CHANNEL, 10 * MS, 12 * MS), 1, 0, ""),
            labelled(span(5, Some(2), e, names::GPU, 12 * MS, 50 * MS), 1, 0, "device=gpu:0 worker=0 lock=single"),
            labelled(span(6, Some(5), e, names::LOCK_HELD, 12 * MS, 50 * MS), 1, 0, "lock=device"),
            labelled(span(7, Some(6), Layer::Device, "k", 15 * MS, 45 * MS), 1, 0, "device=NVIDIA H200 err_ns=0"),
            labelled(span(8, Some(2), e, names::FINALIZE, 50 * MS, 60 * MS), 1, 0, ""),
            labelled(span(12, Some(1), e, names::PARTITION, 0, 100 * MS + c), 1, 1, ""),
            labelled(span(13, Some(12), e, names::SYNTH, 0, 40 * MS), 1, 1, ""),
            labelled(span(14, Some(12), e, names::CHANNEL, 40 * MS, 40 * MS + c), 1, 1, ""),
            labelled(
                span(15, Some(12), e, names::GPU, 40 * MS + c, 90 * MS + c),
                1,
                1,
                "device=gpu:1 worker=0 lock=single",
            ),
            labelled(span(16, Some(15), e, names::LOCK_HELD, 40 * MS + c, 90 * MS + c), 1, 1, "lock=device"),
            labelled(
                span(17, Some(16), Layer::Device, "k", 40 * MS + c, 90 * MS + c),
                1,
                1,
                "device=NVIDIA H200 err_ns=0",
            ),
            labelled(span(18, Some(12), e, names::FINALIZE, 90 * MS + c, 100 * MS + c), 1, 1, ""),
        ];
        spans.push(span(30, None, e, "prepare_key", 0, MS)); // outside any job
        let mut events = trace(&spans);
        events.push(instant(names::PROOF_DONE, 1, 0, 60 * MS));
        events.push(instant(names::PROOF_DONE, 1, 1, 100 * MS + c));
        events
    }

    #[test]
    fn job_section_from_an_engine_trace() {
        let r = Report::from_events(&engine_trace(20));
        assert_eq!(r.jobs.len(), 1);
        let job = r.job(1).expect("job 1");
        assert_eq!((job.partitions, job.proofs, job.wall_ns), (2, 2, 120 * MS));
        assert!((job.proofs_per_min() - 2.0 * 60.0 / 0.12).abs() < 1e-6);
        let stages: Vec<(&str, u64, usize)> =
            job.stages.iter().map(|s| (s.stage.as_str(), s.total_ns, s.count)).collect();
        assert_eq!(
            stages,
            [
                (names::SYNTH, 50 * MS, 2),
                (names::CHANNEL, 22 * MS, 2),
                (names::GPU, 88 * MS, 2),
                (names::FINALIZE, 20 * MS, 2)
            ]
        );
        assert_eq!((job.lock_wait_ns, job.lock_held_ns), (0, 88 * MS));
        // Devices are named by the engine's GPU span, not the backend's device name.
        let devices: Vec<(&str, u64, usize)> =
            job.devices.iter().map(|d| (d.device.as_str(), d.busy_ns, d.sections)).collect();
        assert_eq!(devices, [("gpu:0", 30 * MS, 1), ("gpu:1", 50 * MS, 1)]);
        assert!((job.devices[0].share - 0.25).abs() < 1e-9 && (job.devices[0].steady_share - 1.0).abs() < 1e-9);
        assert_eq!(job.unattributed_by_layer, [(Layer::Engine, 8 * MS)], "GPU 12–15 and 45–50 of partition 0");
        let b = job.bottleneck.as_ref().expect("two partitions");
        assert_eq!(b.stage, "device", "{}", b.why);
        // The run-wide figures see every device span, job or not.
        assert_eq!(r.devices.iter().map(|d| d.device.as_str()).collect::<Vec<_>>(), ["gpu:0", "gpu:1"]);

        let text = r.to_string();
        assert_eq!((job.gpu_sections, job.gpu_window_ns), (2, 98 * MS), "12 ms to 110 ms");
        assert!(
            text.contains("job 1: 2 partitions, 2 proofs, wall 120.000 ms (1000.0 proofs/min; 1224.5 steady"),
            "{text}"
        );
        assert!(text.contains("  device gpu:1: busy 41.7 % of the job (50.000 ms), 100.0 % steady"), "{text}");
        assert!(text.contains("  bottleneck: device: "), "{text}");
        assert!(text.contains("\n  prove ×2 "), "partitions grouped into one row: {text}");
        assert!(text.contains("\n      LOCK_HELD ×2 "), "{text}");
    }

    #[test]
    fn bottleneck_is_synthesis_when_the_devices_wait_and_none_for_one_partition() {
        let r = Report::from_events(&engine_trace(0));
        let b = r.jobs[0].bottleneck.as_ref().expect("two partitions");
        // Partition 0 waited 2 ms in the channel, partition 1 none: 1 ms against 44 ms of GPU.
        assert_eq!(b.stage, "synthesis", "{}", b.why);
        assert!(b.why.contains("add synthesis workers"), "{}", b.why);

        let one: Vec<Event> = engine_trace(0).into_iter().filter(|e| e.partition == 0).collect();
        let r = Report::from_events(&one);
        assert_eq!(r.jobs[0].partitions, 1);
        assert_eq!(r.jobs[0].bottleneck, None);
        assert!(r.to_string().contains("bottleneck: - (one partition"), "{r}");
    }

    /// One device, two workers: partitions 1 and 2 wait at the lock while the device idles
    /// between short kernels, because synthesis (30 ms apart) cannot keep up.
    #[test]
    fn bottleneck_is_synthesis_when_lock_waits_hide_idle_devices() {
        let e = Layer::Engine;
        let d = "device=gpu:0 worker=0 lock=split";
        let mut spans = vec![labelled(span(1, None, e, names::JOB, 0, 140 * MS), 1, 0, "partitions=3")];
        // (partition, synthesis end, device section start, lock taken, kernel start, section end)
        for (p, synth, gpu, held, kernel, end) in
            [(0u64, 30, 30, 30, 30, 60), (1, 60, 61, 75, 75, 110), (2, 90, 91, 110, 110, 140)]
        {
            let id = 10 + 10 * p;
            spans.extend([
                labelled(span(id, Some(1), e, names::PARTITION, 0, end * MS), 1, p as u32, ""),
                labelled(span(id + 1, Some(id), e, names::SYNTH, 0, synth * MS), 1, p as u32, ""),
                labelled(span(id + 2, Some(id), e, names::CHANNEL, synth * MS, gpu * MS), 1, p as u32, ""),
                labelled(span(id + 3, Some(id), e, names::GPU, gpu * MS, end * MS), 1, p as u32, d),
                labelled(span(id + 4, Some(id + 3), e, names::LOCK_WAIT, gpu * MS, held * MS), 1, p as u32, ""),
                labelled(span(id + 5, Some(id + 3), e, names::LOCK_HELD, held * MS, end * MS), 1, p as u32, ""),
                labelled(
                    span(id + 6, Some(id + 5), Layer::Device, "k", kernel * MS, (kernel + 20) * MS),
                    1,
                    p as u32,
                    "device=NVIDIA H200 err_ns=0",
                ),
            ]);
        }
        let r = Report::from_events(&trace(&spans));
        let job = &r.jobs[0];
        assert_eq!(job.synth_window_ns, 90 * MS);
        assert!(job.lock_wait_ns > 0 && job.devices[0].steady_share < 0.9, "{job:?}");
        let b = job.bottleneck.as_ref().expect("three partitions");
        assert_eq!(b.stage, "synthesis", "{}", b.why);
        assert!(b.why.contains("the channel never filled"), "{}", b.why);
    }

    /// One device, three partitions each waiting 10 ms in the channel for a device section of
    /// 30 ms with 20 ms of kernels: the device is the bottleneck (and not busy enough), and
    /// synthesis (one partition every 30 ms) supplies exactly what the device proves.
    #[test]
    fn bottleneck_names_synthesis_close_behind_the_devices() {
        let e = Layer::Engine;
        let d = "device=gpu:0 worker=0 lock=single";
        let mut spans = vec![labelled(span(1, None, e, names::JOB, 0, 130 * MS), 1, 0, "partitions=3")];
        for (p, synth, gpu) in [(0u64, 30, 40), (1, 60, 70), (2, 90, 100)] {
            let id = 10 + 10 * p;
            spans.extend([
                labelled(span(id, Some(1), e, names::PARTITION, 0, (gpu + 30) * MS), 1, p as u32, ""),
                labelled(span(id + 1, Some(id), e, names::SYNTH, (synth - 30) * MS, synth * MS), 1, p as u32, ""),
                labelled(span(id + 2, Some(id), e, names::CHANNEL, synth * MS, gpu * MS), 1, p as u32, ""),
                labelled(span(id + 3, Some(id), e, names::GPU, gpu * MS, (gpu + 30) * MS), 1, p as u32, d),
                labelled(
                    span(id + 4, Some(id + 3), Layer::Device, "k", gpu * MS, (gpu + 20) * MS),
                    1,
                    p as u32,
                    "device=NVIDIA H200 err_ns=0",
                ),
            ]);
        }
        let r = Report::from_events(&trace(&spans));
        let b = r.jobs[0].bottleneck.as_ref().expect("three partitions");
        assert_eq!(b.stage, "device", "{}", b.why);
        assert!(b.why.contains("only 75.0 % busy"), "60 ms of kernels from 40 to 120 ms: {}", b.why);
        assert!(
            b.why.contains("synthesis is close behind: it delivered 33.33 partitions/s against 33.33/s"),
            "{}",
            b.why
        );
        // engine_trace's synthesis is far ahead of its devices: no such clause there.
        let r = Report::from_events(&engine_trace(20));
        assert!(!r.jobs[0].bottleneck.as_ref().expect("two").why.contains("close behind"));
    }

    #[test]
    fn gap_warnings_group_spans_and_name_the_largest_gap() {
        // Three GPU spans of 10 ms, each with 8 ms covered: 20 % unattributed, 6 ms in all;
        // the largest gap (2 ms) is in the second. One tiny span group stays below 1 ms.
        let e = Layer::Engine;
        let mut spans = Vec::new();
        for (i, (lo, gap_at_start)) in [(0, MS), (100, 2 * MS), (200, MS / 2)].into_iter().enumerate() {
            let id = 10 * (i as u64 + 1);
            let lo = lo * MS;
            spans.push(labelled(span(id, None, e, names::GPU, lo, lo + 10 * MS), 1, i as u32, ""));
            let start = lo + gap_at_start;
            spans.push(labelled(span(id + 1, Some(id), Layer::Prover, "step", start, start + 8 * MS), 1, i as u32, ""));
        }
        spans.push(span(90, None, e, "tiny", 400 * MS, 400 * MS + 100_000));
        spans.push(span(91, Some(90), e, "inner", 400 * MS, 400 * MS + 10_000));
        let r = Report::from_events(&trace(&spans));
        let warnings = r.gap_warnings(0.10);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let w = &warnings[0];
        assert_eq!(
            (w.name.as_str(), w.layer, w.spans, w.unattributed_ns, w.dur_ns),
            (names::GPU, e, 3, 6 * MS, 30 * MS)
        );
        assert!((w.share() - 0.2).abs() < 1e-12);
        let gap = w.largest.as_ref().expect("largest gap");
        assert_eq!((gap.dur_ns(), gap.before.as_str(), gap.after.as_str()), (2 * MS, "start of GPU", "start of step"));
        assert_eq!((w.job, w.partition), (1, 1));
        assert!(r.gap_warnings(0.25).is_empty(), "20 % is below a 25 % threshold");
        assert_eq!(r.unattributed_groups()[0].name, names::GPU, "the largest unattributed group");
        assert!(r.unattributed_groups().iter().any(|g| g.name == "tiny"), "below the floor, still listed");

        let text = r.render(0.10).to_string();
        assert!(
            text.contains(
                "warning: GPU (engine) is 20.0 % unattributed (6.000 ms of 30.000 ms over 3 spans, above 10.0 %); \
                 largest gap: 2.000 ms in job 1 partition 1, between start of GPU and start of step"
            ),
            "{text}"
        );
        assert!(!r.render(0.5).to_string().contains("warning:"));
    }
}
