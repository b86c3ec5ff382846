//! Device spans: CUDA events recorded around each group of launches, resolved later (never a
//! synchronising timer), and mapped onto the timeline's host clock as
//! [`DeviceSpan`]s of this device's lane (`cuda:N`).
//!
//! The mapping ([`ClockCalibration`]): at a synchronisation point with the stream idle, the
//! host reads its clock (h0), records an event and waits for it, and reads the clock again
//! (h1). That event is device time 0 of a reference, and happened within [h0, h1]; the error
//! bound is half that window plus the events' own resolution. Each span is timed against the
//! reference that was current when it was queued, so offsets stay short and non-negative; a
//! new reference is taken at a drain that finds the device idle.

use std::sync::{Arc, Mutex};

use cudarc::driver::{sys::CUevent_flags, CudaContext, CudaEvent, CudaStream};
use g16_backend::timeline::{now_ns, ClockCalibration, DeviceSpan, SpanId};

use crate::device::{lock, CudaDevice};
use crate::error::{during, CudaError};

/// Half the documented resolution of cuEventElapsedTime (about 0.5 µs), rounded up.
const EVENT_RESOLUTION_NS: u64 = 500;

/// One device's timing: the spans of the work queued on it, and the reference they are
/// timed against.
pub(crate) struct Timing {
    dev: Arc<CudaDevice>,
    spans: Mutex<Spans>,
}

impl Timing {
    /// Timing for `dev`, its spans on the trace lane `lane` (`cuda:N`).
    pub fn new(dev: Arc<CudaDevice>, lane: String) -> Timing {
        Timing { dev, spans: Mutex::new(Spans::new(lane)) }
    }

    /// Runs `work` (a group of launches) between two events, as the device span `name`.
    pub fn span<R>(
        &self,
        name: &str,
        parent: Option<SpanId>,
        work: impl FnOnce() -> Result<R, CudaError>,
    ) -> Result<R, CudaError> {
        self.span_on(self.dev.stream(), name, parent, work)
    }

    /// `span` for work queued on `stream` (the compute stream or the copy stream).
    pub fn span_on<R>(
        &self,
        stream: &CudaStream,
        name: &str,
        parent: Option<SpanId>,
        work: impl FnOnce() -> Result<R, CudaError>,
    ) -> Result<R, CudaError> {
        let ctx = self.dev.ctx();
        let begun = lock(&self.spans).begin(ctx, stream)?;
        let out = work();
        // The span is closed even when the work failed, so the timeline shows how far it got.
        lock(&self.spans).end(ctx, stream, name, parent, begun)?;
        out
    }

    /// Every device span finished so far, on the host clock; spans still running stay for a
    /// later drain. It waits for nothing: a drain that synchronised the stream under the
    /// operation lock held back the other worker's launches until this worker's queued
    /// kernels had run out. The clock reference is renewed only where that costs no wait: the
    /// lock free and the stream idle.
    pub fn drain(&self) -> Result<Vec<DeviceSpan>, CudaError> {
        let dev = &self.dev;
        let idle = dev.try_op().filter(|_| dev.stream_idle());
        let spans = lock(&self.spans).drain(dev.ctx(), dev.stream(), idle.is_some());
        drop(idle);
        spans
    }
}

/// A reference event and where it lies on the host clock.
struct Reference {
    event: CudaEvent,
    clock: ClockCalibration,
}

struct Pending {
    name: String,
    parent: Option<SpanId>,
    reference: Arc<Reference>,
    start: CudaEvent,
    end: CudaEvent,
}

/// The spans not drained yet, and the current reference.
struct Spans {
    /// The trace lane of this device's spans.
    lane: String,
    reference: Option<Arc<Reference>>,
    pending: Vec<Pending>,
    done: Vec<DeviceSpan>,
}

impl Spans {
    fn new(lane: String) -> Self {
        Spans { lane, reference: None, pending: Vec::new(), done: Vec::new() }
    }

    /// A fresh reference; the caller has synchronised the stream.
    fn calibrate(&mut self, ctx: &Arc<CudaContext>, stream: &CudaStream) -> Result<Arc<Reference>, CudaError> {
        let event = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(during("creating an event"))?;
        let h0 = now_ns();
        event.record(stream).map_err(during("recording the reference event"))?;
        event.synchronize().map_err(during("waiting for the reference event"))?;
        let mut clock = ClockCalibration::from_window(h0, 0, now_ns());
        clock.error_bound_ns += EVENT_RESOLUTION_NS;
        let reference = Arc::new(Reference { event, clock });
        self.reference = Some(reference.clone());
        Ok(reference)
    }

    /// Records a start event now; `end` closes the span after the group's launches.
    fn begin(&mut self, ctx: &Arc<CudaContext>, stream: &CudaStream) -> Result<(Arc<Reference>, CudaEvent), CudaError> {
        let reference = match &self.reference {
            Some(r) => r.clone(),
            None => {
                stream.synchronize().map_err(during("synchronising before calibration"))?;
                self.calibrate(ctx, stream)?
            }
        };
        let start = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(during("creating an event"))?;
        start.record(stream).map_err(during("recording a span's start"))?;
        Ok((reference, start))
    }

    fn end(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &CudaStream,
        name: &str,
        parent: Option<SpanId>,
        begun: (Arc<Reference>, CudaEvent),
    ) -> Result<(), CudaError> {
        let end = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(during("creating an event"))?;
        end.record(stream).map_err(during("recording a span's end"))?;
        let (reference, start) = begun;
        self.pending.push(Pending { name: name.to_string(), parent, reference, start, end });
        Ok(())
    }

    /// Resolves every pending span whose end has been reached (the others stay pending), then,
    /// if `idle` (the caller holds the operation lock and `stream` has nothing queued), takes a
    /// new reference for the spans to come; returns all spans finished so far.
    fn drain(&mut self, ctx: &Arc<CudaContext>, stream: &CudaStream, idle: bool) -> Result<Vec<DeviceSpan>, CudaError> {
        let (finished, running): (Vec<Pending>, Vec<Pending>) =
            std::mem::take(&mut self.pending).into_iter().partition(|p| p.end.try_is_complete().unwrap_or(true));
        self.pending = running;
        for p in finished {
            let at = |e: &CudaEvent| -> Result<u64, CudaError> {
                let ms = p.reference.event.elapsed_ms(e).map_err(during("reading event times"))?;
                Ok(p.reference.clock.to_host_ns((f64::from(ms.max(0.0)) * 1e6) as u64))
            };
            let (start_ns, end_ns) = (at(&p.start)?, at(&p.end)?);
            self.done.push(DeviceSpan {
                name: p.name,
                parent: p.parent,
                start_ns,
                end_ns: end_ns.max(start_ns),
                error_bound_ns: p.reference.clock.error_bound_ns,
                device: self.lane.clone(),
            });
        }
        if idle && self.reference.as_ref().is_some_and(|r| Arc::strong_count(r) == 1) {
            self.calibrate(ctx, stream)?;
        }
        Ok(std::mem::take(&mut self.done))
    }
}
