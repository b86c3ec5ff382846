//! g16-wgpu: g16's WGSL backend, on wgpu.
//!
//! Design rules:
//! - It implements `g16_backend`'s `Backend` trait ([`WgpuBackend`]) and depends on nothing of
//!   g16 but that contract; every setting is a field of [`WgpuOptions`], read once when the
//!   device opens.
//! - Layers only look down: `backend` uses `ntt`, `msm`, `fixed_base` and `sparse`, which use `timing`,
//!   `compile`, `staging` and `buffers`, all of which use `device`; `formulas` (the
//!   interpreter's programs, for `compile` and `msm`) and `error` sit beside them. Each layer's caches live
//!   in its own struct, which holds the layers below it: the device holds only itself.
//! - One WGSL source per job in `shaders/` (the same layout as the CUDA kernels), composed per
//!   arithmetic path (SHADER_INT64 or 32-bit limbs) and validated by naga in the tests;
//!   modules are small and compiled lazily; curve formulas are interpreted programs.
//! - No binding exceeds the adapter's limit: large arrays are split over several bindings,
//!   large MSMs over several launches; dispatches past 65535 workgroups use two dimensions.
//! - Every operation is timed by the device itself (timestamp queries), mapped onto the
//!   timeline's clock with an error bound, and tagged with the caller's span.
//! - Every failure is a typed [`WgpuError`]; wgpu's validation errors are captured, never
//!   turned into panics.
//!
//! Measurements behind the choices: docs/perf/wgpu.md.

mod backend;
mod buffers;
mod compile;
mod device;
mod error;
mod fixed_base;
mod formulas;
mod msm;
mod ntt;
mod sparse;
mod staging;
mod timing;

pub use backend::{device_count, hardware_device_count, WgpuBackend};
pub use buffers::{Bases, Elem, FrBuffer, G1Buffer, G2Buffer, Group, SPLIT_SLOTS};
pub use compile::{compose, Module, NttTile, Pipelines};
pub use device::{list_adapters, AdapterSummary, Arith, MemoryBlocks, NttTwiddles, WgpuDevice, WgpuOptions};
pub use error::WgpuError;
pub use msm::{TABLE_PER_BUCKET, WINDOW_PER_BUCKET};
pub use ntt::plan_passes;
