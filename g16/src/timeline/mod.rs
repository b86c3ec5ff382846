//! The uniform timeline: one clock, one event model, shared by every layer of a proof.
//!
//! Why it exists: two timers that look alike can measure different regions. A host-side
//! "GPU busy" span of 3.7 s held only 1.8 s of kernels; the rest was orchestration that
//! no timer named. Here every span knows its parent, device timestamps are mapped onto the
//! host clock, and [`Report`] names the time that no child accounts for.
//!
//! - The recorder ([`Timeline`], [`now_ns`], [`DeviceSpan`], [`ClockCalibration`]) is the
//!   contract's (`g16_backend::timeline`), re-exported here: the backends record into it.
//! - Sinks and readers: [`text`] (`TIMELINE,...` lines) and [`chrome`] (Perfetto JSON).
//! - [`report`] turns events into per-span coverage, device-busy fraction and largest gaps.

use std::path::Path;

pub mod chrome;
pub mod report;
pub mod text;

pub use g16_backend::timeline::*;
pub use report::{Gap, Report, SpanStats};

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    #[error("timeline I/O: {0}")]
    Io(#[from] std::io::Error),
    /// A malformed `TIMELINE,` line; `line` is 1-based.
    #[error("line {line}: {msg}")]
    Parse { line: usize, msg: String },
    /// The Chrome trace is not JSON, or not shaped like `{"traceEvents": [...]}`.
    #[error("trace JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A Chrome trace event that parses as JSON but cannot be a timeline event;
    /// `index` is its position in `traceEvents`.
    #[error("trace event {index}: {msg}")]
    TraceEvent { index: usize, msg: String },
    #[error(transparent)]
    UnknownLayer(#[from] UnknownLayer),
}

// ---------------------------------------------------------------------------------------
// Reading files
// ---------------------------------------------------------------------------------------

/// Reads a timeline file in either format: a JSON object (Chrome trace) or `TIMELINE,`
/// lines (anything else; other lines are ignored, so a whole program log works too).
pub fn read_file(path: &Path) -> Result<Vec<Event>, TimelineError> {
    let bytes = std::fs::read(path)?;
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'{') {
        chrome::read_chrome(bytes.as_slice())
    } else {
        text::read_text(bytes.as_slice())
    }
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

/// Builders for hand-made traces, shared by the submodules' tests.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{Event, EventKind, Layer, SpanId};

    pub const MS: u64 = 1_000_000;

    /// A Begin/End pair following the recorder's conventions (End mirrors the Begin).
    pub fn span(
        id: SpanId,
        parent: Option<SpanId>,
        layer: Layer,
        name: &str,
        start_ns: u64,
        end_ns: u64,
    ) -> [Event; 2] {
        let begin = Event {
            ts_ns: start_ns,
            kind: EventKind::Begin,
            span: id,
            parent,
            layer,
            name: name.to_string(),
            job: 0,
            partition: 0,
            detail: String::new(),
        };
        let end = Event { ts_ns: end_ns, kind: EventKind::End, ..begin.clone() };
        [begin, end]
    }

    /// Sorts events the way `Timeline::events` does.
    pub fn sorted(mut events: Vec<Event>) -> Vec<Event> {
        events.sort_by_key(|e| e.ts_ns);
        events
    }

    /// Flattens spans into one sorted event list.
    pub fn trace(spans: &[[Event; 2]]) -> Vec<Event> {
        sorted(spans.iter().flat_map(|s| s.iter().cloned()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Device spans recorded under a host span are its children in the report.
    #[test]
    fn device_spans_are_children_in_the_report() {
        let tl = Timeline::new();
        let host = tl.span(Layer::Backend, "GPU_BUSY");
        let parent = current_span();
        let spans: Vec<DeviceSpan> = [("ntt", 10, 400_000), ("msm", 500_000, 900_000)]
            .into_iter()
            .map(|(name, start_ns, end_ns)| DeviceSpan {
                name: name.into(),
                parent,
                start_ns: now_ns() + start_ns,
                end_ns: now_ns() + end_ns,
                error_bound_ns: 0,
                device: "test".into(),
            })
            .collect();
        tl.record_device_spans(&spans);
        let host_id = host.id();
        drop(host);
        let report = Report::from_events(&tl.events());
        let ntt = report.span_by_name("ntt").expect("ntt in report");
        assert_eq!((ntt.parent, ntt.depth), (Some(host_id), 1));
        assert_eq!(report.span_by_name("GPU_BUSY").map(|s| s.children), Some(2));
    }

    #[test]
    fn read_file_detects_both_formats() -> Result<(), TimelineError> {
        let events = test_support::trace(&[
            test_support::span(1, None, Layer::Prover, "prove", 0, 5_000_000),
            test_support::span(2, Some(1), Layer::Backend, "msm", 1_000_000, 4_000_000),
        ]);
        let dir = std::env::temp_dir();
        let stem = format!("g16-timeline-{}-{}", std::process::id(), now_ns());
        let text_path = dir.join(format!("{stem}.log"));
        let json_path = dir.join(format!("{stem}.json"));

        let mut text = b"some other log line\n".to_vec();
        text::write_text(&events, &mut text)?;
        std::fs::write(&text_path, &text)?;
        let mut json = b"  \n".to_vec();
        chrome::write_chrome(&events, &mut json)?;
        std::fs::write(&json_path, &json)?;

        let from_text = read_file(&text_path);
        let from_json = read_file(&json_path);
        let _ = std::fs::remove_file(&text_path);
        let _ = std::fs::remove_file(&json_path);
        assert_eq!(from_text?, events);
        assert_eq!(from_json?, events);
        Ok(())
    }
}
