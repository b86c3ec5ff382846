//! The curve interpreter's programs on the device: one small buffer a curve, uploaded once and
//! shared by every kernel that runs curve arithmetic (the MSM's, the fixed-base one's).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use wgpu::util::DeviceExt;

use crate::buffers::Curve;
use crate::device::{lock, WgpuDevice};
use crate::formulas;

#[derive(Default)]
pub(crate) struct CurvePrograms {
    uploaded: Mutex<HashMap<Curve, Arc<wgpu::Buffer>>>,
}

impl CurvePrograms {
    /// `curve`'s programs (formulas/) on `dev`, uploaded on first use.
    pub(crate) fn get(&self, dev: &WgpuDevice, curve: Curve) -> Arc<wgpu::Buffer> {
        lock(&self.uploaded)
            .entry(curve)
            .or_insert_with(|| {
                let words = formulas::programs(curve).words;
                Arc::new(dev.wgpu().create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("curve programs"),
                    contents: bytemuck::cast_slice(&words),
                    usage: wgpu::BufferUsages::STORAGE,
                }))
            })
            .clone()
    }
}
