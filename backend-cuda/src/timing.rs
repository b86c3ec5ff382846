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

use std::sync::Arc;

use cudarc::driver::{sys::CUevent_flags, CudaContext, CudaEvent, CudaStream};
use g16_backend::timeline::{now_ns, ClockCalibration, DeviceSpan, SpanId};

use crate::error::{during, CudaError};

/// Half the documented resolution of cuEventElapsedTime (about 0.5 µs), rounded up.
const EVENT_RESOLUTION_NS: u64 = 500;

/// A reference event and where it lies on the host clock.
pub(crate) struct Reference {
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

pub(crate) struct Timing {
    /// The trace lane of this device's spans.
    lane: String,
    reference: Option<Arc<Reference>>,
    pending: Vec<Pending>,
    done: Vec<DeviceSpan>,
}

impl Timing {
    pub fn new(lane: String) -> Self {
        Timing { lane, reference: None, pending: Vec::new(), done: Vec::new() }
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
    pub fn drain(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &CudaStream,
        idle: bool,
    ) -> Result<Vec<DeviceSpan>, CudaError> {
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
