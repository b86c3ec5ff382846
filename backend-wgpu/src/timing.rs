//! Device timing: timestamp queries around each pass group, resolved after the work, mapped
//! onto the host clock.
//!
//! Each operation is one command encoder ([`Op`]); each of its phases is one compute pass
//! whose beginning and end write timestamps (`TIMESTAMP_QUERY`). The timestamps are resolved
//! into a buffer that is read when spans are drained, so timing never waits on the device.
//! Ticks become nanoseconds through `Queue::get_timestamp_period`, and nanoseconds become
//! host time through a calibration taken at open: one timestamp written by an otherwise empty
//! pass, bracketed by host reads before its submission and after its completion — the device
//! instant lies in that window, so its midpoint is the estimate and half its width the error
//! bound every span carries.
//!
//! Without timestamp queries an operation waits for its own completion and its spans are
//! the host's window around it (error bound: that window, as the work lies somewhere in it).

use std::sync::Mutex;

use crate::device::{lock, WgpuDevice};
use crate::WgpuError;

/// Phases one operation may time.
const MAX_PHASES: u32 = 8;

/// A span of device work on the host clock.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanRecord {
    pub name: String,
    /// What the caller passed with the operation (g16 passes the current host span).
    pub tag: Option<u64>,
    pub start_ns: u64,
    pub end_ns: u64,
    pub error_bound_ns: u64,
}

#[derive(Clone, Copy, Debug)]
struct Calibration {
    host_ns: u64,
    device_ns: u64,
    error_bound_ns: u64,
}

impl Calibration {
    fn to_host(self, device_ns: u64) -> u64 {
        let t = i128::from(self.host_ns) + i128::from(device_ns) - i128::from(self.device_ns);
        u64::try_from(t.max(0)).unwrap_or(u64::MAX)
    }
}

struct Pending {
    readback: wgpu::Buffer,
    names: Vec<String>,
    whole: Option<String>,
    tag: Option<u64>,
}

pub(crate) struct Timing {
    enabled: bool,
    clock: fn() -> u64,
    period_ns: f64,
    calibration: Mutex<Option<Calibration>>,
    pending: Mutex<Vec<Pending>>,
    done: Mutex<Vec<SpanRecord>>,
}

fn ticks_to_ns(ticks: u64, period: f64) -> u64 {
    (ticks as f64 * period) as u64
}

impl Timing {
    pub(crate) fn new(_device: &wgpu::Device, queue: &wgpu::Queue, enabled: bool, clock: fn() -> u64) -> Timing {
        Timing {
            enabled,
            clock,
            period_ns: f64::from(queue.get_timestamp_period()),
            calibration: Mutex::new(None),
            pending: Mutex::default(),
            done: Mutex::default(),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    pub(crate) fn now(&self) -> u64 {
        (self.clock)()
    }

    /// Takes the device-to-host calibration (see the module docs).
    pub(crate) fn calibrate(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(), WgpuError> {
        if !self.enabled {
            return Ok(());
        }
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
        wait(device)?;
        let before = self.now();
        queue.submit([encoder.finish()]);
        wait(device)?;
        let after = self.now();
        let ticks = read_u64s(device, &readback, 2)?;
        let device_ns = ticks_to_ns(ticks[0], self.period_ns);
        let half = after.saturating_sub(before) / 2;
        *lock(&self.calibration) = Some(Calibration { host_ns: before + half, device_ns, error_bound_ns: half });
        Ok(())
    }

    /// Turns every finished operation's timestamps into spans, and returns all spans so far.
    pub(crate) fn drain(&self, dev: &WgpuDevice) -> Result<Vec<SpanRecord>, WgpuError> {
        let pending = std::mem::take(&mut *lock(&self.pending));
        let calibration = *lock(&self.calibration);
        let mut out = Vec::new();
        for p in pending {
            let count = p.names.len() as u64 * 2;
            let ticks = read_u64s(&dev.device, &p.readback, count)?;
            let Some(cal) = calibration else { continue };
            let mut first = u64::MAX;
            let mut last = 0;
            for (i, name) in p.names.iter().enumerate() {
                let start = cal.to_host(ticks_to_ns(ticks[2 * i], self.period_ns));
                let end = cal.to_host(ticks_to_ns(ticks[2 * i + 1], self.period_ns)).max(start);
                first = first.min(start);
                last = last.max(end);
                out.push(SpanRecord {
                    name: name.clone(),
                    tag: p.tag,
                    start_ns: start,
                    end_ns: end,
                    error_bound_ns: cal.error_bound_ns,
                });
            }
            if let Some(whole) = p.whole {
                if first <= last {
                    out.push(SpanRecord {
                        name: whole,
                        tag: p.tag,
                        start_ns: first,
                        end_ns: last,
                        error_bound_ns: cal.error_bound_ns,
                    });
                }
            }
        }
        let mut done = std::mem::take(&mut *lock(&self.done));
        done.extend(out);
        done.sort_by_key(|s| s.start_ns);
        Ok(done)
    }
}

fn wait(device: &wgpu::Device) -> Result<(), WgpuError> {
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map(|_| ())
        .map_err(|e| WgpuError::Device(format!("waiting for the device: {e}")))
}

fn read_u64s(device: &wgpu::Device, buf: &wgpu::Buffer, count: u64) -> Result<Vec<u64>, WgpuError> {
    let (tx, rx) = std::sync::mpsc::channel();
    buf.map_async(wgpu::MapMode::Read, 0..count * 8, move |r| {
        let _ = tx.send(r);
    });
    wait(device)?;
    rx.recv()
        .map_err(|_| WgpuError::Device("timestamp mapping never completed".into()))?
        .map_err(|e| WgpuError::Device(format!("mapping timestamps: {e}")))?;
    let view = buf.get_mapped_range(0..count * 8).map_err(|e| WgpuError::Device(format!("timestamps: {e}")))?;
    let out = bytemuck::cast_slice::<u8, u64>(&view).to_vec();
    drop(view);
    buf.unmap();
    Ok(out)
}

/// One operation: a command encoder whose phases are timed compute passes.
pub(crate) struct Op<'d> {
    dev: &'d WgpuDevice,
    pub(crate) encoder: wgpu::CommandEncoder,
    queries: Option<wgpu::QuerySet>,
    names: Vec<String>,
    whole: Option<String>,
    tag: Option<u64>,
}

impl<'d> Op<'d> {
    /// `whole`: a span covering every phase (e.g. `msm_g1` over its four phases).
    pub(crate) fn new(dev: &'d WgpuDevice, tag: Option<u64>, whole: Option<&str>) -> Op<'d> {
        let queries = dev.timing.enabled.then(|| {
            dev.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("phases"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * MAX_PHASES,
            })
        });
        Op {
            dev,
            encoder: dev.device.create_command_encoder(&Default::default()),
            queries,
            names: Vec::new(),
            whole: whole.map(str::to_string),
            tag,
        }
    }

    /// Begins the compute pass of phase `name`.
    pub(crate) fn pass(&mut self, name: &str) -> wgpu::ComputePass<'_> {
        let index = self.names.len() as u32;
        let timestamp_writes = match &self.queries {
            Some(qs) if index < MAX_PHASES => {
                self.names.push(name.to_string());
                Some(wgpu::ComputePassTimestampWrites {
                    query_set: qs,
                    beginning_of_pass_write_index: Some(2 * index),
                    end_of_pass_write_index: Some(2 * index + 1),
                })
            }
            _ => {
                self.names.push(name.to_string());
                None
            }
        };
        self.encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(name), timestamp_writes })
    }

    /// Submits the work; with timestamps, queues their resolution for a later drain,
    /// without, waits and records the host window.
    pub(crate) fn submit(self) -> Result<(), WgpuError> {
        let Op { dev, mut encoder, queries, mut names, whole, tag } = self;
        let timing = &dev.timing;
        match queries {
            Some(qs) => {
                names.truncate(MAX_PHASES as usize);
                let bytes = names.len() as u64 * 16;
                let readback = if bytes > 0 {
                    let resolve = dev.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("timestamps"),
                        size: bytes,
                        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                        mapped_at_creation: false,
                    });
                    let readback = dev.device.create_buffer(&wgpu::BufferDescriptor {
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
                dev.queue.submit([encoder.finish()]);
                if let Some(readback) = readback {
                    lock(&timing.pending).push(Pending { readback, names, whole, tag });
                }
            }
            None => {
                let start = timing.now();
                dev.queue.submit([encoder.finish()]);
                dev.wait()?;
                let end = timing.now();
                let mut done = lock(&timing.done);
                for name in names.into_iter().chain(whole) {
                    done.push(SpanRecord { name, tag, start_ns: start, end_ns: end, error_bound_ns: end - start });
                }
            }
        }
        dev.check_errors("submitting work")
    }
}
