//! Device spans: CUDA events recorded around each kernel group, resolved later (never a
//! synchronising timer), and mapped onto the host clock.
//!
//! The mapping: at a synchronisation point with the stream idle, the host reads its clock
//! (h0), records an event and waits for it, and reads the clock again (h1). That event
//! happened within [h0, h1]; its host time is taken as the midpoint, with half the window as
//! the error bound (plus the events' own 0.5 µs resolution). Each span is timed against the
//! reference that was current when it was queued, so offsets stay short and non-negative;
//! a new reference is taken at every drain.

use std::sync::Arc;

use cudarc::driver::{sys::CUevent_flags, CudaContext, CudaEvent, CudaStream};

use crate::error::{during, CudaError};

/// The host clock the engine maps device time onto (`g16_core::timeline::now_ns`).
pub type Clock = fn() -> u64;

/// A span of device work on the host clock, parented by the tag its operation was given.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanRecord {
    pub name: String,
    pub tag: Option<u64>,
    pub start_ns: u64,
    pub end_ns: u64,
    pub error_bound_ns: u64,
}

pub(crate) struct Reference {
    event: CudaEvent,
    host_ns: u64,
    error_bound_ns: u64,
}

struct Pending {
    name: String,
    tag: Option<u64>,
    reference: Arc<Reference>,
    start: CudaEvent,
    end: CudaEvent,
}

/// Half the documented resolution of cuEventElapsedTime (about 0.5 µs), rounded up.
const EVENT_RESOLUTION_NS: u64 = 500;

pub(crate) struct Timing {
    clock: Clock,
    reference: Option<Arc<Reference>>,
    pending: Vec<Pending>,
    done: Vec<SpanRecord>,
}

impl Timing {
    pub fn new(clock: Clock) -> Self {
        Timing { clock, reference: None, pending: Vec::new(), done: Vec::new() }
    }

    /// A fresh reference; the caller has synchronised the stream.
    fn calibrate(&mut self, ctx: &Arc<CudaContext>, stream: &CudaStream) -> Result<Arc<Reference>, CudaError> {
        let event = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(during("creating an event"))?;
        let h0 = (self.clock)();
        event.record(stream).map_err(during("recording the reference event"))?;
        event.synchronize().map_err(during("waiting for the reference event"))?;
        let h1 = (self.clock)();
        let half = h1.saturating_sub(h0) / 2;
        let reference = Arc::new(Reference { event, host_ns: h0 + half, error_bound_ns: half + EVENT_RESOLUTION_NS });
        self.reference = Some(reference.clone());
        Ok(reference)
    }

    /// Records a start event now; `end` closes the span after the group's launches.
    pub fn begin(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &CudaStream,
    ) -> Result<(Arc<Reference>, CudaEvent), CudaError> {
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

    pub fn end(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &CudaStream,
        name: &str,
        tag: Option<u64>,
        begun: (Arc<Reference>, CudaEvent),
    ) -> Result<(), CudaError> {
        let end = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(during("creating an event"))?;
        end.record(stream).map_err(during("recording a span's end"))?;
        let (reference, start) = begun;
        self.pending.push(Pending { name: name.to_string(), tag, reference, start, end });
        Ok(())
    }

    /// Resolves every pending span whose end has been reached (the others stay pending), then,
    /// if `idle` (the caller holds the operation lock and `stream` has nothing queued), takes a
    /// new reference for the spans to come; returns all spans finished so far.
    pub fn drain(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &CudaStream,
        idle: bool,
    ) -> Result<Vec<SpanRecord>, CudaError> {
        let (finished, running): (Vec<Pending>, Vec<Pending>) =
            std::mem::take(&mut self.pending).into_iter().partition(|p| p.end.try_is_complete().unwrap_or(true));
        self.pending = running;
        for p in finished {
            let offset = |e: &CudaEvent| -> Result<u64, CudaError> {
                let ms = p.reference.event.elapsed_ms(e).map_err(during("reading event times"))?;
                Ok((f64::from(ms.max(0.0)) * 1e6) as u64)
            };
            let start_ns = p.reference.host_ns + offset(&p.start)?;
            let end_ns = p.reference.host_ns + offset(&p.end)?;
            self.done.push(SpanRecord {
                name: p.name,
                tag: p.tag,
                start_ns,
                end_ns: end_ns.max(start_ns),
                error_bound_ns: p.reference.error_bound_ns,
            });
        }
        if idle && self.reference.as_ref().is_some_and(|r| Arc::strong_count(r) == 1) {
            self.calibrate(ctx, stream)?;
        }
        Ok(std::mem::take(&mut self.done))
    }
}
