//! g16-cuda: g16's CUDA backend.
//!
//! Design rules:
//! - It implements `g16_backend`'s `Backend` trait ([`CudaBackend`]) and depends on nothing of
//!   g16 but that contract. Its settings are one [`CudaOptions`], read when a device opens;
//!   it reads no environment.
//! - libcuda and libnvrtc are loaded at run time and checked before first use; every failure
//!   (no driver, no device, no NVRTC, a kernel that does not compile, out of memory) is a
//!   [`CudaError`], never a panic.
//! - Kernels (`kernels/`, embedded) are compiled by NVRTC for the device's own architecture
//!   and cached on disk by source hash, architecture and NVRTC version ([`compile`]).
//! - Layers depend downward only: `backend` → `ntt`, `msm`, `fixed_base`, `sparse` → `staging` → `buffers` →
//!   `device` → `compile`, `timing`, `error`. The device holds the device's own state; each layer above
//!   owns its caches (pinned slots, NTT tables, the MSM's workspace).
//! - Data stays on the device between operations; every group of launches is timed by CUDA
//!   events and reported as a `DeviceSpan` on the timeline's host clock.

mod backend;
mod buffers;
pub mod compile;
mod device;
mod error;
mod fixed_base;
mod msm;
mod ntt;
mod sparse;
mod staging;
mod timing;

#[cfg(test)]
#[path = "../tests/common/cxx.rs"]
mod cxx;

pub use backend::{device_count, CudaBackend, CudaOptions};
pub use error::CudaError;
