//! g16-wgpu: g16's WGSL backend, on wgpu.
//!
//! Design rules:
//! - It implements `g16_backend`'s `Backend` trait ([`WgpuBackend`]) and depends on nothing of
//!   g16 but that contract; every setting is a field of [`WgpuOptions`], read once when the
//!   device opens.
//! - Layers depend downward only, in one order shared by both GPU crates:
//!   `backend` → `ntt`, `msm`, `fixed_base`, `sparse` (and here `subgroup`) → `staging` →
//!   `compile`, `timing` → `buffers` → `device` → `options`, `error`. Modules of one level do
//!   not use each other, but for `subgroup`, which sums its buckets with `msm`'s kernels.
//!   `compile` turns the kernel sources into what the device runs and checks every launch
//!   against its table of kernels; `timing` maps the device's clock onto the timeline's.
//!   The device holds only its own state; each layer above owns its caches, in its own
//!   struct, which holds the layers below it.
//! - Here, `compile`'s table is of bindings: [`compile::Module`]'s bindings, against which
//!   every bind group is checked. `formulas` (the curve interpreter's programs, which only
//!   `compile` uses) sits between `compile` and `buffers`.
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
pub mod compile;
mod device;
mod error;
mod fixed_base;
mod formulas;
mod msm;
mod ntt;
mod options;
mod sparse;
mod staging;
mod subgroup;
mod timing;

pub use backend::{device_count, hardware_device_count, WgpuBackend};
pub use buffers::{Elem, G1Buffer, G2Buffer, SPLIT_SLOTS};
pub use error::WgpuError;
pub use ntt::plan_passes;
pub use options::WgpuOptions;
