//! Device timing: timestamp queries around each phase of an operation, resolved after the
//! work, mapped onto the timeline's host clock.
//!
//! Each operation is one command encoder ([`Op`]); each of its phases is one compute pass
//! whose beginning and end write timestamps (`TIMESTAMP_QUERY`). The timestamps are resolved
//! into a buffer that is read when spans are drained, so timing never waits on the device.
//! Ticks become nanoseconds through `Queue::get_timestamp_period`, and nanoseconds become
//! host time through one [`ClockCalibration`] taken when the device opens: a timestamp
//! written by an otherwise empty pass, bracketed by host reads before its submission and
//! after its completion.
//!
//! Without timestamp queries an operation waits for its own completion and its spans are the
//! host's window around it (error bound: that window, as the work lies somewhere in it).
//!
//! Spans belong to the backend instance that queued the work ([`Tag::owner`]): instances that
//! share a device each drain their own.

use std::sync::{Arc, Mutex};

use g16_backend::BackendId;
use g16_backend::timeline::{now_ns, ClockCalibration, DeviceSpan, SpanId};

use crate::device::{lock, WgpuDevice};
use crate::error::WgpuError;

/// Phases one operation may time.
const MAX_PHASES: u32 = 8;

/// Who queued an operation: the backend instance, and the host span its device spans
/// belong under.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tag {
    pub owner: BackendId,
    pub parent: Option<SpanId>,
}

/// An operation's timestamps, resolved but not read yet.
struct Pending {
    tag: Tag,
    readback: wgpu::Buffer,
    names: Vec<String>,
    whole: Option<String>,
}

/// One device's timing: its calibration, and the spans not drained yet.
pub(crate) struct Timing {
    dev: Arc<WgpuDevice>,
    /// The device's name on the timeline (`wgpu:0`).
    lane: String,
    period_ns: f64,
    /// `None` without timestamp queries.
    calibration: Option<ClockCalibration>,
    pending: Mutex<Vec<Pending>>,
    done: Mutex<Vec<(BackendId, DeviceSpan)>>,
}

fn ticks_to_ns(ticks: u64, period: f64) -> u64 {
    (ticks as f64 * period) as u64
}

impl Timing {
    /// Timing for `dev`, calibrated now where it has timestamp queries.
    pub(crate) fn new(dev: Arc<WgpuDevice>, lane: String) -> Result<Timing, WgpuError> {
        let period_ns = f64::from(dev.queue().get_timestamp_period());
        let calibration = if dev.has_timestamps() { Some(calibrate(&dev, period_ns)?) } else { None };
        Ok(Timing { dev, lane, period_ns, calibration, pending: Mutex::default(), done: Mutex::default() })
    }

    /// The spans of `owner`'s work finished or queued so far (waits for the queued work), in
    /// order of start.
    pub(crate) fn drain(&self, owner: BackendId) -> Result<Vec<DeviceSpan>, WgpuError> {
        let mine: Vec<Pending> = {
            let mut pending = lock(&self.pending);
            let (mine, others) = std::mem::take(&mut *pending).into_iter().partition(|p| p.tag.owner == owner);
            *pending = others;
            mine
        };
        let mut out = Vec::new();
        for p in mine {
            let ticks = read_u64s(&self.dev, &p.readback, p.names.len() as u64 * 2)?;
            let Some(cal) = self.calibration else { continue };
            let span = |name: String, start_ns: u64, end_ns: u64| DeviceSpan {
                name,
                parent: p.tag.parent,
                start_ns,
                end_ns,
                error_bound_ns: cal.error_bound_ns,
                device: self.lane.clone(),
            };
            let (mut first, mut last) = (u64::MAX, 0);
            for (i, name) in p.names.iter().enumerate() {
                let start = cal.to_host_ns(ticks_to_ns(ticks[2 * i], self.period_ns));
                let end = cal.to_host_ns(ticks_to_ns(ticks[2 * i + 1], self.period_ns)).max(start);
                first = first.min(start);
                last = last.max(end);
                out.push(span(name.clone(), start, end));
            }
            if let Some(whole) = p.whole {
                if first <= last {
                    out.push(span(whole, first, last));
                }
            }
        }
        {
            let mut done = lock(&self.done);
            let (mine, others): (Vec<_>, Vec<_>) = std::mem::take(&mut *done).into_iter().partition(|d| d.0 == owner);
            *done = others;
            out.extend(mine.into_iter().map(|(_, s)| s));
        }
        out.sort_by_key(|s| s.start_ns);
        Ok(out)
    }

    /// Drops `owner`'s spans without reading them (its backend instance is gone).
    pub(crate) fn discard(&self, owner: BackendId) {
        lock(&self.pending).retain(|p| p.tag.owner != owner);
        lock(&self.done).retain(|d| d.0 != owner);
    }
}

/// The device-to-host calibration (see the module docs).
fn calibrate(dev: &WgpuDevice, period_ns: f64) -> Result<ClockCalibration, WgpuError> {
    let device = dev.wgpu();
    let qs = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("calibration"),
        ty: wgpu::QueryType::Timestamp,
        count: 2,
    });
    let resolve = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("calibration resolve"),
        size: 16,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("calibration readback"),
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let _pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("calibration"),
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &qs,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            }),
        });
    }
    encoder.resolve_query_set(&qs, 0..2, &resolve, 0);
    encoder.copy_buffer_to_buffer(&resolve, 0, &readback, 0, 16);
    // Let earlier work drain first, so the window holds only this submission.
    dev.wait()?;
    let before = now_ns();
    dev.queue().submit([encoder.finish()]);
    dev.wait()?;
    let after = now_ns();
    let ticks = read_u64s(dev, &readback, 2)?;
    Ok(ClockCalibration::from_window(before, ticks_to_ns(ticks[0], period_ns), after))
}

/// `count` u64 values from a mappable buffer.
fn read_u64s(dev: &WgpuDevice, buf: &wgpu::Buffer, count: u64) -> Result<Vec<u64>, WgpuError> {
    let words = dev.map_read(buf, count * 8)?;
    Ok(words.chunks_exact(2).map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32)).collect())
}

/// One operation: a command encoder whose phases are timed compute passes.
pub(crate) struct Op<'t> {
    timing: &'t Timing,
    pub(crate) encoder: wgpu::CommandEncoder,
    queries: Option<wgpu::QuerySet>,
    names: Vec<String>,
    whole: Option<String>,
    tag: Tag,
}

impl<'t> Op<'t> {
    /// `whole`: a span covering every phase (e.g. `msm_g1` over its four phases).
    pub(crate) fn new(timing: &'t Timing, tag: Tag, whole: Option<&str>) -> Op<'t> {
        let device = timing.dev.wgpu();
        let queries = timing.calibration.is_some().then(|| {
            device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("phases"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * MAX_PHASES,
            })
        });
        Op {
            timing,
            encoder: device.create_command_encoder(&Default::default()),
            queries,
            names: Vec::new(),
            whole: whole.map(str::to_string),
            tag,
        }
    }

    /// Begins the compute pass of phase `name`.
    pub(crate) fn pass(&mut self, name: &str) -> wgpu::ComputePass<'_> {
        let index = self.names.len() as u32;
        self.names.push(name.to_string());
        let timestamp_writes = match &self.queries {
            Some(qs) if index < MAX_PHASES => Some(wgpu::ComputePassTimestampWrites {
                query_set: qs,
                beginning_of_pass_write_index: Some(2 * index),
                end_of_pass_write_index: Some(2 * index + 1),
            }),
            _ => None,
        };
        self.encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(name), timestamp_writes })
    }

    /// Submits the work; with timestamps, queues their resolution for a later drain,
    /// without, waits and records the host window.
    pub(crate) fn submit(self) -> Result<(), WgpuError> {
        let Op { timing, mut encoder, queries, mut names, whole, tag } = self;
        let dev = &timing.dev;
        match queries {
            Some(qs) => {
                names.truncate(MAX_PHASES as usize);
                let bytes = names.len() as u64 * 16;
                let readback = if bytes > 0 {
                    let resolve = dev.wgpu().create_buffer(&wgpu::BufferDescriptor {
                        label: Some("timestamps"),
                        size: bytes,
                        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                        mapped_at_creation: false,
                    });
                    let readback = dev.wgpu().create_buffer(&wgpu::BufferDescriptor {
                        label: Some("timestamps readback"),
                        size: bytes,
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    });
                    encoder.resolve_query_set(&qs, 0..2 * names.len() as u32, &resolve, 0);
                    encoder.copy_buffer_to_buffer(&resolve, 0, &readback, 0, bytes);
                    Some(readback)
                } else {
                    None
                };
                dev.queue().submit([encoder.finish()]);
                if let Some(readback) = readback {
                    lock(&timing.pending).push(Pending { tag, readback, names, whole });
                }
            }
            None => {
                let start = now_ns();
                dev.queue().submit([encoder.finish()]);
                dev.wait()?;
                let end = now_ns();
                let mut done = lock(&timing.done);
                for name in names.into_iter().chain(whole) {
                    let span = DeviceSpan {
                        name,
                        parent: tag.parent,
                        start_ns: start,
                        end_ns: end,
                        error_bound_ns: end - start,
                        device: timing.lane.clone(),
                    };
                    done.push((tag.owner, span));
                }
            }
        }
        dev.check_errors("submitting work")
    }
}
