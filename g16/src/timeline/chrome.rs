//! The Chrome trace JSON sink and its reader (the format Perfetto and chrome://tracing load).
//!
//! Layout:
//! - `{"traceEvents": [...], "displayTimeUnit": "ms"}`; `ts` and `dur` in microseconds as
//!   floats, so nanoseconds survive (exactly, for traces shorter than about 100 days).
//! - A span is one complete event (`ph: "X"`); an instant is `ph: "i"` with `s: "t"`.
//! - `pid` = job. `tid` = a lane per (partition, layer); device spans get lanes per device
//!   instead. Within a lane, a span that would overlap a sibling without nesting (two
//!   kernels on two streams, say) moves to an extra lane (`#2`, `#3`, ...), because the
//!   viewers draw a lane as one properly nested stack.
//! - `ph: "M"` metadata names each process (`job <n>`) and lane, and orders the lanes.
//! - `args`: `{id, parent, layer, partition, detail}`; a span whose End is missing is drawn
//!   up to the last event's time with `args.unclosed = true`, and read back without an End.
//!
//! Fidelity: reading a written trace gives back every Begin and Instant exactly and every
//! End with its Begin's labels and an empty detail (the recorder's convention). Events
//! come back sorted by time; at equal timestamps, Ends come first (innermost first), then
//! Instants, then Begins (outermost first), which is the order a recorder produces for
//! properly nested spans. An End whose Begin is missing cannot be drawn and is dropped.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{parse_device_detail, Event, EventKind, Layer, SpanId, TimelineError, UnknownLayer};

/// Writes the events as a Chrome trace.
pub fn write_chrome(events: &[Event], w: &mut impl Write) -> Result<(), TimelineError> {
    let items = collect_items(events);
    let lanes = assign_lanes(&items);
    let mut trace_events = lanes.metadata();
    trace_events.extend(items.iter().zip(&lanes.tid_of).map(|(item, &tid)| item.to_json(tid)));
    let trace = TraceOut { trace_events, display_time_unit: "ms" };
    serde_json::to_writer(&mut *w, &trace)?;
    w.flush()?;
    Ok(())
}

/// Reads a Chrome trace written by [`write_chrome`] back into Begin/End/Instant events.
/// Metadata and event types this module does not write are skipped.
pub fn read_chrome(r: impl Read) -> Result<Vec<Event>, TimelineError> {
    let trace: TraceIn = serde_json::from_reader(r)?;
    let mut keyed = Vec::new();
    for (index, raw) in trace.trace_events.into_iter().enumerate() {
        let err = |msg: String| TimelineError::TraceEvent { index, msg };
        match raw.ph.as_str() {
            "X" => keyed.extend(span_events(raw, index).map_err(err)?),
            "i" | "I" => keyed.push(instant_event(raw, index).map_err(err)?),
            _ => {}
        }
    }
    keyed.sort_by_key(|k| k.key);
    Ok(keyed.into_iter().map(|k| k.event).collect())
}

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------

#[derive(Serialize)]
struct TraceOut {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<Value>,
    #[serde(rename = "displayTimeUnit")]
    display_time_unit: &'static str,
}

/// A drawable thing: a span (from its Begin, with its resolved end) or an instant.
struct Item<'a> {
    event: &'a Event,
    /// `Some` for spans.
    end_ns: Option<u64>,
    unclosed: bool,
}

fn collect_items(events: &[Event]) -> Vec<Item<'_>> {
    let last_ns = events.iter().map(|e| e.ts_ns).max().unwrap_or(0);
    let mut ends: HashMap<SpanId, u64> = HashMap::new();
    for e in events.iter().filter(|e| e.kind == EventKind::End) {
        ends.entry(e.span).or_insert(e.ts_ns);
    }
    events
        .iter()
        .filter_map(|event| match event.kind {
            EventKind::Begin => {
                let end = ends.get(&event.span).copied();
                Some(Item { event, end_ns: Some(end.unwrap_or(last_ns).max(event.ts_ns)), unclosed: end.is_none() })
            }
            EventKind::Instant => Some(Item { event, end_ns: None, unclosed: false }),
            EventKind::End => None,
        })
        .collect()
}

/// Nanoseconds to the format's float microseconds.
fn us(ns: u64) -> f64 {
    ns as f64 / 1_000.0
}

impl Item<'_> {
    fn to_json(&self, tid: u64) -> Value {
        let e = self.event;
        let mut args = json!({
            "id": e.span,
            "parent": e.parent,
            "layer": e.layer.as_str(),
            "partition": e.partition,
            "detail": e.detail,
        });
        if self.unclosed {
            args["unclosed"] = Value::Bool(true);
        }
        let mut out = json!({
            "name": e.name,
            "cat": e.layer.as_str(),
            "ts": us(e.ts_ns),
            "pid": e.job,
            "tid": tid,
            "args": args,
        });
        match self.end_ns {
            Some(end_ns) => {
                out["ph"] = json!("X");
                out["dur"] = json!(us(end_ns - e.ts_ns));
            }
            None => {
                out["ph"] = json!("i");
                out["s"] = json!("t");
            }
        }
        out
    }
}

/// What groups events into one lane (before splitting for nesting), within a job.
/// Ordered so that the viewer shows each partition's layers outside-in, then the devices.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum LaneKey {
    Host { partition: u32, layer: Layer },
    Device { device: String },
}

impl LaneKey {
    fn of(e: &Event) -> LaneKey {
        match (e.layer, parse_device_detail(&e.detail)) {
            (Layer::Device, Some((device, _))) => LaneKey::Device { device: device.to_string() },
            _ => LaneKey::Host { partition: e.partition, layer: e.layer },
        }
    }

    fn name(&self, sub: usize) -> String {
        let base = match self {
            LaneKey::Host { partition, layer } => format!("{layer} p{partition}"),
            LaneKey::Device { device } => format!("device {device}"),
        };
        if sub == 0 {
            base
        } else {
            format!("{base} #{}", sub + 1)
        }
    }
}

/// One drawn lane: the ends of the spans currently open on it, outermost first.
struct SubLane {
    tid: u64,
    open_ends: Vec<u64>,
}

impl SubLane {
    /// Places [start, end] here if it nests inside (or follows) what is open.
    fn try_place(&mut self, start: u64, end: u64) -> bool {
        // Spans are placed in start order, so anything ending by `start` is over for good.
        while self.open_ends.last().is_some_and(|&e| e <= start) {
            self.open_ends.pop();
        }
        if self.open_ends.last().is_some_and(|&e| e < end) {
            return false;
        }
        self.open_ends.push(end);
        true
    }
}

struct Lanes {
    by_key: BTreeMap<(u64, LaneKey), Vec<SubLane>>,
    /// The tid of each item, in item order.
    tid_of: Vec<u64>,
    next_tid: u64,
}

impl Lanes {
    fn sub_lane(&mut self, pid: u64, key: &LaneKey, sub: usize) -> &mut SubLane {
        let subs = self.by_key.entry((pid, key.clone())).or_default();
        while subs.len() <= sub {
            subs.push(SubLane { tid: self.next_tid, open_ends: Vec::new() });
            self.next_tid += 1;
        }
        &mut subs[sub]
    }

    /// Process names, lane names and lane order, for every lane in use.
    fn metadata(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut last_pid = None;
        for (sort_index, ((pid, key), subs)) in self.by_key.iter().enumerate() {
            if last_pid != Some(*pid) {
                out.push(meta("process_name", *pid, 0, json!({ "name": format!("job {pid}") })));
                last_pid = Some(*pid);
            }
            for (sub, lane) in subs.iter().enumerate() {
                out.push(meta("thread_name", *pid, lane.tid, json!({ "name": key.name(sub) })));
                let index = sort_index * 1_000 + sub;
                out.push(meta("thread_sort_index", *pid, lane.tid, json!({ "sort_index": index })));
            }
        }
        out
    }
}

/// A metadata event; it carries `ts` too so that every event has ph/ts/pid/tid.
fn meta(name: &str, pid: u64, tid: u64, args: Value) -> Value {
    json!({ "name": name, "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": args })
}

/// Gives every item a lane: spans by start (outermost first on ties) into the first
/// sub-lane where they nest, instants onto their key's first sub-lane.
fn assign_lanes(items: &[Item<'_>]) -> Lanes {
    let mut lanes = Lanes { by_key: BTreeMap::new(), tid_of: vec![0; items.len()], next_tid: 1 };
    let mut spans: Vec<(usize, u64, u64)> =
        items.iter().enumerate().filter_map(|(i, item)| item.end_ns.map(|end| (i, item.event.ts_ns, end))).collect();
    spans.sort_by_key(|&(i, start, end)| (start, std::cmp::Reverse(end), i));
    for (i, start, end) in spans {
        let e = items[i].event;
        let key = LaneKey::of(e);
        let mut sub = 0;
        loop {
            let lane = lanes.sub_lane(e.job, &key, sub);
            if lane.try_place(start, end) {
                let tid = lane.tid;
                lanes.tid_of[i] = tid;
                break;
            }
            sub += 1;
        }
    }
    for (i, item) in items.iter().enumerate().filter(|(_, item)| item.end_ns.is_none()) {
        lanes.tid_of[i] = lanes.sub_lane(item.event.job, &LaneKey::of(item.event), 0).tid;
    }
    lanes
}

// ---------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct TraceIn {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<RawEvent>,
}

#[derive(Deserialize)]
struct RawEvent {
    ph: String,
    #[serde(default)]
    name: String,
    ts: Option<f64>,
    dur: Option<f64>,
    pid: Option<u64>,
    #[serde(default)]
    args: Value,
}

#[derive(Deserialize)]
struct RawArgs {
    id: SpanId,
    #[serde(default)]
    parent: Option<SpanId>,
    layer: String,
    #[serde(default)]
    partition: u32,
    #[serde(default)]
    detail: String,
    #[serde(default)]
    unclosed: bool,
}

/// An event with its position in the restored order (see the module documentation).
struct Keyed {
    key: (u64, u8, u64),
    event: Event,
}

// Ranks at equal timestamps.
const RANK_END: u8 = 0;
const RANK_INSTANT: u8 = 1;
const RANK_BEGIN: u8 = 2;
/// A zero-length span's End must still follow its own Begin.
const RANK_EMPTY_END: u8 = 3;

/// Microseconds (float) to nanoseconds, rejecting what no timeline can hold.
fn ns(us: f64, what: &str) -> Result<u64, String> {
    let ns = (us * 1_000.0).round();
    if !ns.is_finite() || ns < 0.0 || ns >= u64::MAX as f64 {
        return Err(format!("{what} {us} is not a valid time"));
    }
    Ok(ns as u64)
}

/// The fields shared by spans and instants.
fn base_event(raw: RawEvent, kind: EventKind) -> Result<(Event, bool), String> {
    let ts_ns = ns(raw.ts.ok_or("missing ts")?, "ts")?;
    let job = raw.pid.ok_or("missing pid")?;
    let args: RawArgs = serde_json::from_value(raw.args).map_err(|e| format!("args are not timeline args: {e}"))?;
    let layer = args.layer.parse().map_err(|e: UnknownLayer| e.to_string())?;
    let event = Event {
        ts_ns,
        kind,
        span: args.id,
        parent: args.parent,
        layer,
        name: raw.name,
        job,
        partition: args.partition,
        detail: args.detail,
    };
    Ok((event, args.unclosed))
}

fn span_events(raw: RawEvent, index: usize) -> Result<Vec<Keyed>, String> {
    let dur_ns = ns(raw.dur.ok_or("missing dur")?, "dur")?;
    let (begin, unclosed) = base_event(raw, EventKind::Begin)?;
    let end_ns = begin.ts_ns.checked_add(dur_ns).ok_or("ts + dur overflows")?;
    let order = index as u64;
    let mut out = Vec::with_capacity(2);
    if !unclosed {
        let end = Event { ts_ns: end_ns, kind: EventKind::End, detail: String::new(), ..begin.clone() };
        // Ends at one time: the latest-written (innermost) span closes first.
        let key = if dur_ns == 0 { (end_ns, RANK_EMPTY_END, order) } else { (end_ns, RANK_END, u64::MAX - order) };
        out.push(Keyed { key, event: end });
    }
    out.push(Keyed { key: (begin.ts_ns, RANK_BEGIN, order), event: begin });
    Ok(out)
}

fn instant_event(raw: RawEvent, index: usize) -> Result<Keyed, String> {
    let (event, _) = base_event(raw, EventKind::Instant)?;
    Ok(Keyed { key: (event.ts_ns, RANK_INSTANT, index as u64), event })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{self, MS};
    use super::super::{DeviceSpan, Report, Timeline};
    use super::*;

    fn write(events: &[Event]) -> Vec<u8> {
        let mut out = Vec::new();
        write_chrome(events, &mut out).expect("writing to a Vec cannot fail");
        out
    }

    fn trace_events(json: &[u8]) -> Vec<Value> {
        let v: Value = serde_json::from_slice(json).expect("the writer emits JSON");
        assert_eq!(v["displayTimeUnit"], "ms");
        v["traceEvents"].as_array().expect("traceEvents is an array").clone()
    }

    fn with_device(mut span: [Event; 2], device: &str) -> [Event; 2] {
        span[0].detail = format!("device={device} err_ns=120");
        span
    }

    /// A nested host trace with two overlapping kernels on one device, odd nanoseconds,
    /// labels and an instant.
    fn sample() -> Vec<Event> {
        let mut synth = test_support::span(2, Some(1), Layer::Engine, "SYNTH", MS + 1, 20 * MS + 999);
        for e in &mut synth {
            e.job = 3;
            e.partition = 2;
        }
        synth[0].detail = "rows=1,024 \"quoted\"".into();
        let instant = Event {
            ts_ns: 21 * MS + 7,
            kind: EventKind::Instant,
            span: 9,
            parent: Some(1),
            layer: Layer::Engine,
            name: "CHAN_SEND".into(),
            job: 0,
            partition: 0,
            detail: "queue=2".into(),
        };
        let mut events = test_support::trace(&[
            test_support::span(1, None, Layer::Prover, "prove", 0, 100 * MS),
            synth,
            test_support::span(3, Some(1), Layer::Backend, "GPU_BUSY", 25 * MS, 90 * MS),
            with_device(test_support::span(4, Some(3), Layer::Device, "ntt", 30 * MS, 60 * MS + 333), "cuda:0"),
            with_device(test_support::span(5, Some(3), Layer::Device, "msm", 50 * MS, 80 * MS), "cuda:0"),
        ]);
        events.push(instant);
        test_support::sorted(events)
    }

    #[test]
    fn json_is_a_loadable_chrome_trace() {
        let events = sample();
        let json = write(&events);
        let all = trace_events(&json);
        for e in &all {
            for field in ["ph", "ts", "pid", "tid"] {
                assert!(e.get(field).is_some(), "{field} missing in {e}");
            }
        }
        let spans: Vec<&Value> = all.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(spans.len(), 5);
        let synth = spans.iter().find(|e| e["name"] == "SYNTH").expect("SYNTH");
        assert_eq!(synth["ts"].as_f64(), Some(1000.001));
        assert_eq!(synth["dur"].as_f64(), Some(19_000.998));
        assert_eq!(synth["pid"], 3);
        assert_eq!(synth["args"]["parent"], 1);
        assert_eq!(synth["args"]["partition"], 2);
        assert_eq!(synth["args"]["layer"], "engine");
        assert_eq!(synth["args"]["detail"], "rows=1,024 \"quoted\"");
        let instant = all.iter().find(|e| e["ph"] == "i").expect("instant");
        assert_eq!((instant["s"].as_str(), instant["name"].as_str()), (Some("t"), Some("CHAN_SEND")));
        assert!(all.iter().all(|e| e["args"].get("unclosed").is_none()));
    }

    #[test]
    fn lanes_are_named_and_overlapping_kernels_split() {
        let all = trace_events(&write(&sample()));
        let lane_name = |tid: &Value, pid: &Value| {
            all.iter()
                .find(|e| e["ph"] == "M" && e["name"] == "thread_name" && &e["tid"] == tid && &e["pid"] == pid)
                .and_then(|e| e["args"]["name"].as_str())
                .map(str::to_string)
        };
        let span = |name: &str| all.iter().find(|e| e["name"] == name).expect("span present");
        let (ntt, msm) = (span("ntt"), span("msm"));
        assert_ne!(ntt["tid"], msm["tid"], "partially overlapping kernels need two lanes");
        assert_eq!(lane_name(&ntt["tid"], &ntt["pid"]).as_deref(), Some("device cuda:0"));
        assert_eq!(lane_name(&msm["tid"], &msm["pid"]).as_deref(), Some("device cuda:0 #2"));
        assert_eq!(lane_name(&span("prove")["tid"], &json!(0)).as_deref(), Some("prover p0"));
        assert_eq!(lane_name(&span("SYNTH")["tid"], &json!(3)).as_deref(), Some("engine p2"));
        assert_eq!(lane_name(&span("CHAN_SEND")["tid"], &json!(0)).as_deref(), Some("engine p0"));
        assert!(all.iter().any(|e| e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "job 3"));
    }

    #[test]
    fn round_trip_is_exact() -> Result<(), TimelineError> {
        let events = sample();
        let back = read_chrome(write(&events).as_slice())?;
        assert_eq!(back, events);
        assert_eq!(Report::from_events(&back), Report::from_events(&events));
        Ok(())
    }

    #[test]
    fn ties_come_back_in_recorder_order() -> Result<(), TimelineError> {
        // Outer and inner begin together and end together; a sibling starts as they end;
        // an empty span sits at the shared end.
        let events = test_support::trace(&[
            test_support::span(1, None, Layer::Prover, "outer", 0, 10 * MS),
            test_support::span(2, Some(1), Layer::Backend, "inner", 0, 10 * MS),
            test_support::span(3, None, Layer::Prover, "next", 10 * MS, 20 * MS),
            test_support::span(4, Some(3), Layer::Backend, "empty", 10 * MS, 10 * MS),
        ]);
        let mut expected = events.clone();
        // Recorder order at 10 ms: inner ends, outer ends, next begins, empty begins/ends.
        let order = |e: &Event| match (e.span, e.kind) {
            (2, EventKind::End) => 0,
            (1, EventKind::End) => 1,
            (3, EventKind::Begin) => 2,
            (4, EventKind::Begin) => 3,
            (4, EventKind::End) => 4,
            _ => 5,
        };
        expected.sort_by_key(|e| (e.ts_ns, order(e), e.span));
        assert_eq!(read_chrome(write(&expected).as_slice())?, expected);
        Ok(())
    }

    #[test]
    fn recorded_timeline_round_trips() -> Result<(), TimelineError> {
        let tl = Timeline::new().for_partition(2, 1);
        {
            let busy = tl.span(Layer::Backend, "GPU_BUSY");
            let t = super::super::now_ns();
            tl.record_device_spans(&[DeviceSpan {
                name: "kernel".into(),
                parent: Some(busy.id()),
                start_ns: t + 10,
                end_ns: t + 5_000,
                error_bound_ns: 3,
                device: "NVIDIA H200".into(),
            }]);
            tl.instant(Layer::Backend, "sync", "");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let events = tl.events();
        let back = read_chrome(write(&events).as_slice())?;
        assert_eq!(Report::from_events(&back), Report::from_events(&events));
        let mut a = back;
        let mut b = events;
        // Same events; only same-nanosecond ties could order differently.
        a.sort_by_key(|e| (e.ts_ns, e.span, e.kind as u8));
        b.sort_by_key(|e| (e.ts_ns, e.span, e.kind as u8));
        assert_eq!(a, b);
        Ok(())
    }

    #[test]
    fn unclosed_span_is_drawn_to_the_last_event_and_read_back_open() -> Result<(), TimelineError> {
        let [root_begin, root_end] = test_support::span(1, None, Layer::Prover, "prove", 0, 50 * MS);
        let [open_begin, _] = test_support::span(2, Some(1), Layer::Backend, "stuck", 10 * MS, 0);
        let events = vec![root_begin, open_begin, root_end];
        let json = write(&events);
        let all = trace_events(&json);
        let stuck = all.iter().find(|e| e["name"] == "stuck").expect("stuck drawn");
        assert_eq!(stuck["args"]["unclosed"], true);
        assert_eq!(stuck["dur"].as_f64(), Some(40_000.0));
        let back = read_chrome(json.as_slice())?;
        assert_eq!(back, events, "no End is invented for the unclosed span");
        Ok(())
    }

    #[test]
    fn orphan_ends_are_dropped() -> Result<(), TimelineError> {
        let [_, orphan_end] = test_support::span(7, None, Layer::Backend, "x", 0, 5);
        assert!(read_chrome(write(&[orphan_end]).as_slice())?.is_empty());
        assert!(read_chrome(write(&[]).as_slice())?.is_empty());
        Ok(())
    }

    #[test]
    fn broken_input_is_an_error_not_a_panic() {
        let json_errors = [
            "",
            "{",
            "{\"traceEvents\": [}",
            "[]",
            "{\"events\": []}",
            "{\"traceEvents\": [{\"name\": \"x\"}]}",
            "{\"traceEvents\": [{\"ph\": 5}]}",
        ];
        for bad in json_errors {
            assert!(matches!(read_chrome(bad.as_bytes()), Err(TimelineError::Json(_))), "{bad:?}");
        }
        let event_errors = [
            r#"{"ph":"X","ts":1,"dur":1,"pid":0,"tid":1}"#,
            r#"{"ph":"X","ts":1,"dur":1,"pid":0,"tid":1,"args":{"layer":"prover"}}"#,
            r#"{"ph":"X","ts":1,"dur":1,"pid":0,"tid":1,"args":{"id":1,"layer":"gpu"}}"#,
            r#"{"ph":"X","ts":-1,"dur":1,"pid":0,"tid":1,"args":{"id":1,"layer":"prover"}}"#,
            r#"{"ph":"X","ts":1,"dur":-1,"pid":0,"tid":1,"args":{"id":1,"layer":"prover"}}"#,
            r#"{"ph":"X","ts":1e300,"dur":1,"pid":0,"tid":1,"args":{"id":1,"layer":"prover"}}"#,
            r#"{"ph":"X","ts":1,"pid":0,"tid":1,"args":{"id":1,"layer":"prover"}}"#,
            r#"{"ph":"X","ts":1,"dur":1,"tid":1,"args":{"id":1,"layer":"prover"}}"#,
            r#"{"ph":"i","pid":0,"tid":1,"args":{"id":1,"layer":"prover"}}"#,
            r#"{"ph":"X","ts":18446744073709550,"dur":18446744073709550,"pid":0,"tid":1,"args":{"id":1,"layer":"prover"}}"#,
        ];
        for bad in event_errors {
            let input = format!(r#"{{"traceEvents":[{{"ph":"M","name":"thread_name","pid":0,"tid":1}},{bad}]}}"#);
            match read_chrome(input.as_bytes()) {
                Err(TimelineError::TraceEvent { index: 1, msg }) => assert!(!msg.is_empty()),
                other => panic!("{bad} gave {other:?}"),
            }
        }
    }
}
