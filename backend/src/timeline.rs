//! The timeline's recorder: one clock, one event model, shared by every layer of a proof,
//! from the engine down to the backends' device spans.
//!
//! Why it exists: two timers that look alike can measure different regions. A host-side
//! "GPU busy" span of 3.7 s held only 1.8 s of kernels; the rest was orchestration that
//! no timer named. Here every span knows its parent and device timestamps are mapped onto the
//! host clock; the library's report (`g16::timeline`) names the time no child accounts for.
//!
//! - [`now_ns`] is the one clock: nanoseconds since a process-wide monotonic epoch.
//! - [`Timeline`] records [`Event`]s (Begin/End/Instant) from any thread into one store.
//! - [`DeviceSpan`] + [`ClockCalibration`] bring GPU timestamps onto that clock.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

// ---------------------------------------------------------------------------------------
// The clock
// ---------------------------------------------------------------------------------------

static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Nanoseconds since a process-wide monotonic epoch (set on first use).
///
/// Every host timestamp in the timeline comes from here, so spans recorded by different
/// threads, crates and backends are directly comparable.
pub fn now_ns() -> u64 {
    let epoch = *EPOCH.get_or_init(Instant::now);
    // u64 nanoseconds last 584 years; saturate rather than wrap if that is ever exceeded.
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

// ---------------------------------------------------------------------------------------
// The event model
// ---------------------------------------------------------------------------------------

/// Which layer of the stack emitted an event. Ordered from the outside in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// The pipeline engine: synthesis workers, channels, device workers, finalizer.
    Engine,
    /// The Groth16 prover: per-proof steps (H, MSMs, assembly).
    Prover,
    /// A backend's host side: staging, launches, synchronisation.
    Backend,
    /// Work measured by the device itself (kernels), mapped onto the host clock.
    Device,
}

impl Layer {
    /// Every layer, outermost first.
    pub const ALL: [Layer; 4] = [Layer::Engine, Layer::Prover, Layer::Backend, Layer::Device];

    /// The lowercase name used by `Display`, `FromStr` and both file formats.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Engine => "engine",
            Layer::Prover => "prover",
            Layer::Backend => "backend",
            Layer::Device => "device",
        }
    }
}

named_choice!(Layer, as_str, UnknownLayer, |s: &str| UnknownLayer(s.to_string()));

/// A span identifier, unique within the process. `0` is never issued: it is what a
/// disabled [`Timeline`] hands out, and it is treated as "no parent" everywhere.
pub type SpanId = u64;

static NEXT_SPAN_ID: AtomicU64 = AtomicU64::new(1);

fn next_span_id() -> SpanId {
    // Relaxed is enough: only uniqueness matters, not ordering with other memory.
    NEXT_SPAN_ID.fetch_add(1, Ordering::Relaxed)
}

/// Drops the "no span" id so a parent taken from a disabled guard never dangles.
fn real_parent(parent: Option<SpanId>) -> Option<SpanId> {
    parent.filter(|&p| p != 0)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    Begin,
    End,
    Instant,
}

/// One timeline event. An End repeats its Begin's span id, name, layer, parent and labels
/// (so each event is self-describing) and carries an empty `detail`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Event {
    pub ts_ns: u64,
    pub kind: EventKind,
    pub span: SpanId,
    pub parent: Option<SpanId>,
    pub layer: Layer,
    pub name: String,
    pub job: u64,
    pub partition: u32,
    pub detail: String,
}

/// A span measured by a device (GPU kernels; the CPU backend's compute), already on the
/// host clock (see [`ClockCalibration::to_host_ns`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceSpan {
    pub name: String,
    /// The host span that enqueued the work (usually [`current_span`] at enqueue time).
    pub parent: Option<SpanId>,
    pub start_ns: u64,
    pub end_ns: u64,
    /// How far `start_ns`/`end_ns` may be from the true host-clock time (from calibration).
    pub error_bound_ns: u64,
    /// The device's name, e.g. `cuda:0`; device spans get one trace lane per device.
    pub device: String,
}

/// Maps device timestamps onto the host clock.
///
/// Taken at a synchronisation point: the host reads its clock (`h0`), reads the device's
/// timestamp for the same instant (`device_ns`, e.g. a CUDA event recorded and synchronised,
/// or a resolved wgpu timestamp query), and reads its clock again (`h1`). The device
/// instant lies somewhere in `[h0, h1]`, so the best estimate is the midpoint
/// `host_ns = (h0 + h1) / 2`, and `error_bound_ns = (h1 - h0) / 2` is half that read
/// window: every mapped timestamp may be off by up to that much (plus clock drift since the
/// sync, which is not modelled; recalibrate per batch to keep it negligible).
///
/// Both clocks are taken to tick in nanoseconds; convert device ticks before calling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockCalibration {
    pub host_ns: u64,
    pub device_ns: u64,
    pub error_bound_ns: u64,
}

impl ClockCalibration {
    /// For devices that already stamp with [`now_ns`] (e.g. the CPU backend): no offset,
    /// no error.
    pub fn identity() -> Self {
        ClockCalibration { host_ns: 0, device_ns: 0, error_bound_ns: 0 }
    }

    /// Builds a calibration from the host reads taken just before and just after the
    /// device timestamp was read (see the type's documentation).
    pub fn from_window(host_before_ns: u64, device_ns: u64, host_after_ns: u64) -> Self {
        let (lo, hi) = if host_before_ns <= host_after_ns {
            (host_before_ns, host_after_ns)
        } else {
            (host_after_ns, host_before_ns)
        };
        let half = (hi - lo) / 2;
        ClockCalibration { host_ns: lo + half, device_ns, error_bound_ns: half }
    }

    /// The host-clock time of a device timestamp: `host_ns + (device_ns' - device_ns)`,
    /// saturating at 0 and `u64::MAX` (device time before the host epoch clamps to 0).
    pub fn to_host_ns(&self, device_ns: u64) -> u64 {
        let mapped = i128::from(self.host_ns) + i128::from(device_ns) - i128::from(self.device_ns);
        u64::try_from(mapped.max(0)).unwrap_or(u64::MAX)
    }
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// A layer name that is none of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown layer {0:?} (expected engine, prover, backend or device)")]
pub struct UnknownLayer(pub String);

// ---------------------------------------------------------------------------------------
// The recorder
// ---------------------------------------------------------------------------------------

/// The shared event store.
#[derive(Default)]
struct Store {
    events: Vec<Event>,
    /// Open spans: id → index of their Begin in `events`, so `end` can copy its labels.
    open: HashMap<SpanId, usize>,
    /// Every span's (job, partition), so device spans take their parent's labels.
    labels: HashMap<SpanId, (u64, u32)>,
}

/// The recorder. Cheap to clone and shared by every thread of a run; each clone carries
/// its own (job, partition) labels but writes into the same store.
#[derive(Clone)]
pub struct Timeline {
    /// `None` when disabled: every method then returns before doing any work.
    store: Option<Arc<Mutex<Store>>>,
    job: u64,
    partition: u32,
}

/// Locks the store, recovering from poisoning: the store is append-only, so a thread that
/// panicked mid-record cannot have left it inconsistent, and a timeline must never turn one
/// panic into many (guards record their End while unwinding).
fn lock(store: &Mutex<Store>) -> MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline::new()
    }
}

impl fmt::Debug for Timeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timeline")
            .field("enabled", &self.store.is_some())
            .field("job", &self.job)
            .field("partition", &self.partition)
            .field("events", &self.len())
            .finish()
    }
}

impl Timeline {
    /// A recording timeline labelled job 0, partition 0.
    pub fn new() -> Self {
        Timeline { store: Some(Arc::default()), job: 0, partition: 0 }
    }

    /// A timeline that records nothing; every method is near-free (no clock read, no lock,
    /// no allocation), and every span id it hands out is 0.
    pub fn disabled() -> Self {
        Timeline { store: None, job: 0, partition: 0 }
    }

    /// Whether this timeline records anything.
    pub fn is_enabled(&self) -> bool {
        self.store.is_some()
    }

    /// The same store under other labels: what a worker uses for one partition of a job.
    pub fn for_partition(&self, job: u64, partition: u32) -> Timeline {
        Timeline { store: self.store.clone(), job, partition }
    }

    pub fn job(&self) -> u64 {
        self.job
    }

    pub fn partition(&self) -> u32 {
        self.partition
    }

    /// Begins a span now; it ends when the guard drops. Its parent is this thread's
    /// current span, and while the guard lives it is the current span.
    pub fn span(&self, layer: Layer, name: impl Into<String>) -> SpanGuard {
        self.span_detail(layer, name, String::new())
    }

    /// [`Timeline::span`] with a free-form detail on the Begin event.
    pub fn span_detail(&self, layer: Layer, name: impl Into<String>, detail: impl Into<String>) -> SpanGuard {
        self.span_under(layer, name, current_span(), detail)
    }

    /// [`Timeline::span`] under an explicit parent, for a thread that continues work whose
    /// parent span was begun on another thread (the engine's workers); while the guard
    /// lives it is this thread's current span, so spans begun beneath it nest under it.
    pub fn span_under(
        &self,
        layer: Layer,
        name: impl Into<String>,
        parent: Option<SpanId>,
        detail: impl Into<String>,
    ) -> SpanGuard {
        if self.store.is_none() {
            return SpanGuard::inert();
        }
        let id = self.begin(layer, name, parent, detail);
        push_current(id);
        SpanGuard { timeline: self.clone(), id, _thread_bound: PhantomData }
    }

    /// Begins a span that is not on the thread-local stack, for spans that begin on one
    /// thread and end on another; end it with [`Timeline::end`]. Returns 0 when disabled.
    pub fn begin(
        &self,
        layer: Layer,
        name: impl Into<String>,
        parent: Option<SpanId>,
        detail: impl Into<String>,
    ) -> SpanId {
        let Some(store) = &self.store else { return 0 };
        let ts_ns = now_ns();
        let id = next_span_id();
        let event = Event {
            ts_ns,
            kind: EventKind::Begin,
            span: id,
            parent: real_parent(parent),
            layer,
            name: name.into(),
            job: self.job,
            partition: self.partition,
            detail: detail.into(),
        };
        let mut store = lock(store);
        let index = store.events.len();
        store.labels.insert(id, (event.job, event.partition));
        store.events.push(event);
        store.open.insert(id, index);
        id
    }

    /// Ends a span begun by [`Timeline::begin`] (or a guard), from any thread and any clone
    /// of the timeline. The End copies the Begin's name, layer, parent and labels. Ending
    /// an unknown or already-ended span records nothing: a double end is a caller bug,
    /// but not one worth corrupting the trace for.
    pub fn end(&self, span: SpanId) {
        let Some(store) = &self.store else { return };
        let ts_ns = now_ns();
        let mut store = lock(store);
        let Some(index) = store.open.remove(&span) else {
            return;
        };
        let begin = &store.events[index];
        let event = Event {
            ts_ns,
            kind: EventKind::End,
            span,
            parent: begin.parent,
            layer: begin.layer,
            name: begin.name.clone(),
            job: begin.job,
            partition: begin.partition,
            detail: String::new(),
        };
        store.events.push(event);
    }

    /// Records a point event whose parent is this thread's current span.
    pub fn instant(&self, layer: Layer, name: impl Into<String>, detail: impl Into<String>) {
        let Some(store) = &self.store else { return };
        let event = Event {
            ts_ns: now_ns(),
            kind: EventKind::Instant,
            // Instants get their own id so every event is addressable in a trace viewer.
            span: next_span_id(),
            parent: current_span(),
            layer,
            name: name.into(),
            job: self.job,
            partition: self.partition,
            detail: detail.into(),
        };
        lock(store).events.push(event);
    }

    /// Records device-measured spans as Begin/End pairs at their own (host-clock) times,
    /// layer Device, under the parent each span names, with detail
    /// `device=<device> err_ns=<error bound>`. A span whose end precedes its start is
    /// recorded with zero length. Each span takes the (job, partition) labels of its parent
    /// where the parent is in this store (a backend shared by several workers hands any of
    /// them every worker's spans), else this timeline's.
    pub fn record_device_spans(&self, spans: &[DeviceSpan]) {
        let Some(store) = &self.store else { return };
        let mut store = lock(store);
        for span in spans {
            let id = next_span_id();
            let parent = real_parent(span.parent);
            let (job, partition) =
                parent.and_then(|p| store.labels.get(&p).copied()).unwrap_or((self.job, self.partition));
            let begin = Event {
                ts_ns: span.start_ns,
                kind: EventKind::Begin,
                span: id,
                parent,
                layer: Layer::Device,
                name: span.name.clone(),
                job,
                partition,
                detail: device_detail(&span.device, span.error_bound_ns),
            };
            let end = Event {
                ts_ns: span.end_ns.max(span.start_ns),
                kind: EventKind::End,
                detail: String::new(),
                ..begin.clone()
            };
            store.events.push(begin);
            store.events.push(end);
        }
    }

    /// A snapshot of every event so far, sorted by `ts_ns`; events with equal timestamps
    /// keep their recording order (the sort is stable).
    pub fn events(&self) -> Vec<Event> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        let mut events = lock(store).events.clone();
        events.sort_by_key(|e| e.ts_ns);
        events
    }

    pub fn len(&self) -> usize {
        self.store.as_ref().map_or(0, |s| lock(s).events.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The detail string of a device span's Begin event.
pub fn device_detail(device: &str, error_bound_ns: u64) -> String {
    format!("device={device} err_ns={error_bound_ns}")
}

/// Splits a device span's detail back into (device, error bound). The device name may
/// contain spaces (`NVIDIA H200`), so the error bound is taken from the right.
pub fn parse_device_detail(detail: &str) -> Option<(&str, u64)> {
    let rest = detail.strip_prefix("device=")?;
    let (device, err) = rest.rsplit_once(" err_ns=")?;
    Some((device, err.parse().ok()?))
}

// ---------------------------------------------------------------------------------------
// The thread-local span stack
// ---------------------------------------------------------------------------------------

thread_local! {
    /// Ids of this thread's live guards, innermost last.
    static CURRENT: RefCell<Vec<SpanId>> = const { RefCell::new(Vec::new()) };
}

/// The id of the innermost live [`SpanGuard`] on this thread, if any. Backends call this
/// when they enqueue device work, to parent its device spans.
pub fn current_span() -> Option<SpanId> {
    // `try_with`: guards may drop during thread-local teardown; then there is no stack.
    CURRENT.try_with(|s| s.borrow().last().copied()).ok().flatten()
}

fn push_current(id: SpanId) {
    let _ = CURRENT.try_with(|s| s.borrow_mut().push(id));
}

/// Removes `id` from this thread's stack. Guards usually drop innermost first, but
/// `drop(outer)` before `inner` is legal Rust, so remove by id rather than popping blindly.
fn remove_current(id: SpanId) {
    let _ = CURRENT.try_with(|s| {
        let mut stack = s.borrow_mut();
        if let Some(pos) = stack.iter().rposition(|&x| x == id) {
            stack.remove(pos);
        }
    });
}

/// Ends its span when dropped. Bound to the thread that created it (it is `!Send`),
/// because it lives on that thread's span stack; use [`Timeline::begin`]/[`Timeline::end`]
/// for spans that cross threads.
#[must_use = "the span ends as soon as the guard is dropped; bind it: `let _span = ...`"]
pub struct SpanGuard {
    timeline: Timeline,
    /// 0 for a guard from a disabled timeline: nothing to end, nothing on the stack.
    id: SpanId,
    _thread_bound: PhantomData<*const ()>,
}

impl SpanGuard {
    fn inert() -> Self {
        SpanGuard { timeline: Timeline::disabled(), id: 0, _thread_bound: PhantomData }
    }

    /// This span's id (0 when the timeline is disabled).
    pub fn id(&self) -> SpanId {
        self.id
    }
}

impl Drop for SpanGuard {
    fn drop(&mut self) {
        if self.id != 0 {
            self.timeline.end(self.id);
            remove_current(self.id);
        }
    }
}

impl fmt::Debug for SpanGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpanGuard").field("id", &self.id).finish()
    }
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(events: &'a [Event], name: &str, kind: EventKind) -> &'a Event {
        events
            .iter()
            .find(|e| e.name == name && e.kind == kind)
            .unwrap_or_else(|| panic!("no {kind:?} event named {name}"))
    }

    #[test]
    fn clock_is_monotonic() {
        let a = now_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = now_ns();
        assert!(b >= a + 2_000_000, "{a} -> {b}");
    }

    #[test]
    fn layer_display_and_from_str_round_trip() {
        for layer in Layer::ALL {
            assert_eq!(layer.to_string().parse::<Layer>().ok(), Some(layer));
        }
        assert_eq!(Layer::Backend.to_string(), "backend");
        assert_eq!("DEVICE".parse::<Layer>().ok(), Some(Layer::Device));
        assert!(matches!("gpu".parse::<Layer>(), Err(UnknownLayer(s)) if s == "gpu"));
        // serde uses the same lowercase names.
        assert_eq!(serde_json::to_string(&Layer::Prover).ok().as_deref(), Some("\"prover\""));
    }

    #[test]
    fn calibration_maps_offsets_and_saturates() {
        assert_eq!(ClockCalibration::identity().to_host_ns(12_345), 12_345);
        let cal = ClockCalibration { host_ns: 1_000, device_ns: 50_000, error_bound_ns: 7 };
        assert_eq!(cal.to_host_ns(50_000), 1_000);
        assert_eq!(cal.to_host_ns(50_500), 1_500);
        assert_eq!(cal.to_host_ns(10), 0, "before the epoch clamps to 0");
        let ahead = ClockCalibration { host_ns: u64::MAX - 5, device_ns: 0, error_bound_ns: 0 };
        assert_eq!(ahead.to_host_ns(100), u64::MAX);

        let cal = ClockCalibration::from_window(1_000, 9_999_999, 1_400);
        assert_eq!(cal, ClockCalibration { host_ns: 1_200, device_ns: 9_999_999, error_bound_ns: 200 });
    }

    #[test]
    fn nested_guards_set_parents() {
        let tl = Timeline::new();
        assert_eq!(current_span(), None);
        let (outer_id, inner_id);
        {
            let outer = tl.span(Layer::Prover, "prove");
            outer_id = outer.id();
            assert_eq!(current_span(), Some(outer_id));
            {
                let inner = tl.span_detail(Layer::Backend, "ntt", "n=1024");
                inner_id = inner.id();
                assert_eq!(current_span(), Some(inner_id));
                tl.instant(Layer::Backend, "launch", "k=1");
            }
            assert_eq!(current_span(), Some(outer_id));
        }
        assert_eq!(current_span(), None);

        let events = tl.events();
        assert_eq!(events.len(), 5);
        let outer = find(&events, "prove", EventKind::Begin);
        let inner = find(&events, "ntt", EventKind::Begin);
        let inner_end = find(&events, "ntt", EventKind::End);
        let launch = find(&events, "launch", EventKind::Instant);
        assert_eq!((outer.span, outer.parent), (outer_id, None));
        assert_eq!((inner.span, inner.parent), (inner_id, Some(outer_id)));
        assert_eq!(inner.detail, "n=1024");
        assert_eq!(launch.parent, Some(inner_id));
        assert_eq!((inner_end.span, inner_end.parent, inner_end.layer), (inner_id, Some(outer_id), Layer::Backend));
        assert!(inner.ts_ns >= outer.ts_ns && inner_end.ts_ns >= inner.ts_ns);
        assert!(events.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns), "events() is sorted");
    }

    #[test]
    fn guards_dropped_out_of_order_keep_the_stack_consistent() {
        let tl = Timeline::new();
        let outer = tl.span(Layer::Engine, "outer");
        let inner = tl.span(Layer::Engine, "inner");
        let inner_id = inner.id();
        drop(outer);
        assert_eq!(current_span(), Some(inner_id));
        drop(inner);
        assert_eq!(current_span(), None);
        assert_eq!(tl.len(), 4);
    }

    #[test]
    fn threads_sharing_a_timeline_keep_their_own_stacks() {
        let tl = Timeline::new();
        let handles: Vec<_> = (0..2u32)
            .map(|p| {
                let tl = tl.for_partition(7, p);
                std::thread::spawn(move || {
                    let outer = tl.span(Layer::Engine, format!("worker{p}"));
                    // Give the other thread time to interleave its own spans.
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    let inner = tl.span(Layer::Prover, format!("step{p}"));
                    (outer.id(), inner.id())
                })
            })
            .collect();
        let ids: Vec<(SpanId, SpanId)> = handles.into_iter().map(|h| h.join().expect("worker")).collect();

        let events = tl.events();
        assert_eq!(events.len(), 8);
        for (p, (outer, inner)) in ids.into_iter().enumerate() {
            let step = find(&events, &format!("step{p}"), EventKind::Begin);
            assert_eq!(step.span, inner);
            assert_eq!(step.parent, Some(outer), "a thread's span nests under its own worker");
            assert_eq!((step.job, step.partition), (7, p as u32));
            assert_eq!(find(&events, &format!("worker{p}"), EventKind::Begin).parent, None);
        }
        assert_eq!(current_span(), None, "other threads' guards never touch this stack");
    }

    #[test]
    fn disabled_records_nothing() {
        let tl = Timeline::disabled();
        assert!(!tl.is_enabled());
        {
            let g = tl.span(Layer::Prover, "prove");
            assert_eq!(g.id(), 0);
            assert_eq!(current_span(), None, "a disabled guard is not on the stack");
            tl.instant(Layer::Prover, "tick", "");
            let id = tl.begin(Layer::Backend, "x", None, "");
            assert_eq!(id, 0);
            tl.end(id);
            tl.record_device_spans(&[DeviceSpan {
                name: "k".into(),
                parent: None,
                start_ns: 1,
                end_ns: 2,
                error_bound_ns: 0,
                device: "d".into(),
            }]);
        }
        assert!(tl.is_empty());
        assert!(tl.events().is_empty());
        assert!(!tl.for_partition(1, 1).is_enabled());
    }

    #[test]
    fn device_spans_nest_under_the_given_parent() {
        let tl = Timeline::new().for_partition(3, 2);
        let host = tl.span(Layer::Backend, "GPU_BUSY");
        let parent = current_span();
        assert_eq!(parent, Some(host.id()));
        let cal = ClockCalibration { host_ns: 1_000_000, device_ns: 0, error_bound_ns: 250 };
        let spans: Vec<DeviceSpan> = [("ntt", 0, 400_000), ("msm", 500_000, 900_000)]
            .into_iter()
            .map(|(name, s, e)| DeviceSpan {
                name: name.into(),
                parent,
                start_ns: cal.to_host_ns(s),
                end_ns: cal.to_host_ns(e),
                error_bound_ns: cal.error_bound_ns,
                device: "NVIDIA H200".into(),
            })
            .collect();
        tl.record_device_spans(&spans);
        let host_id = host.id();
        drop(host);

        let events = tl.events();
        let ntt = find(&events, "ntt", EventKind::Begin);
        let ntt_end = find(&events, "ntt", EventKind::End);
        assert_eq!((ntt.layer, ntt.parent), (Layer::Device, Some(host_id)));
        assert_eq!((ntt.ts_ns, ntt_end.ts_ns), (1_000_000, 1_400_000));
        assert_eq!((ntt.job, ntt.partition), (3, 2));
        assert_eq!(ntt.detail, "device=NVIDIA H200 err_ns=250");
        assert_eq!(parse_device_detail(&ntt.detail), Some(("NVIDIA H200", 250)));
        assert_eq!(ntt_end.span, ntt.span);
        assert_ne!(ntt.span, find(&events, "msm", EventKind::Begin).span);
    }

    #[test]
    fn begin_and_end_across_threads() {
        let tl = Timeline::new().for_partition(1, 4);
        let root = tl.span(Layer::Engine, "job");
        let id = tl.begin(Layer::Engine, "CHAN_WAIT", current_span(), "queued");
        assert_eq!(current_span(), Some(root.id()), "begin() does not touch the stack");
        // End from another thread through a clone with different labels: the End still
        // mirrors the Begin.
        let other = tl.for_partition(9, 9);
        std::thread::spawn(move || other.end(id)).join().expect("ender");
        tl.end(id); // a second end is ignored
        drop(root);

        let events = tl.events();
        let begin = find(&events, "CHAN_WAIT", EventKind::Begin);
        let end = find(&events, "CHAN_WAIT", EventKind::End);
        assert_eq!(events.iter().filter(|e| e.name == "CHAN_WAIT").count(), 2);
        assert_eq!(begin.parent, Some(find(&events, "job", EventKind::Begin).span));
        assert_eq!((end.span, end.layer, end.job, end.partition, end.parent), (id, Layer::Engine, 1, 4, begin.parent));
        assert_eq!(end.detail, "");
        tl.end(123_456_789); // unknown ids are ignored
        assert_eq!(tl.len(), 4);
    }

    #[test]
    fn span_under_nests_on_another_thread_and_device_spans_take_parent_labels() {
        let tl = Timeline::new();
        let job = tl.for_partition(2, 5);
        let root = job.begin(Layer::Engine, "prove", None, "");
        let (worker_span, step_span) = {
            let job = job.clone();
            std::thread::spawn(move || {
                let held = job.span_under(Layer::Engine, "GPU", Some(root), "");
                let step = job.span(Layer::Prover, "stage");
                assert_eq!(current_span(), Some(step.id()));
                (held.id(), step.id())
            })
            .join()
            .expect("worker")
        };
        job.end(root);
        assert_eq!(current_span(), None, "the worker's stack is its own");
        // Another worker (other labels) drains the device spans of this partition's step.
        let other = tl.for_partition(9, 1);
        let device = |name: &str, parent| DeviceSpan {
            name: name.into(),
            parent,
            start_ns: 1,
            end_ns: 2,
            error_bound_ns: 0,
            device: "cpu".into(),
        };
        other.record_device_spans(&[device("msm", Some(step_span)), device("orphan", Some(987_654_321))]);

        let events = tl.events();
        let gpu = find(&events, "GPU", EventKind::Begin);
        assert_eq!((gpu.span, gpu.parent), (worker_span, Some(root)));
        assert_eq!(find(&events, "stage", EventKind::Begin).parent, Some(worker_span));
        let msm = find(&events, "msm", EventKind::Begin);
        assert_eq!((msm.job, msm.partition), (2, 5), "labels of the parent's partition");
        let orphan = find(&events, "orphan", EventKind::End);
        assert_eq!((orphan.job, orphan.partition), (9, 1), "unknown parent: the recorder's labels");
        assert!(Timeline::disabled().span_under(Layer::Engine, "x", Some(1), "").id() == 0);
    }
}
