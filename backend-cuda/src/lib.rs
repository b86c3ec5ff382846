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
//! - Layers depend downward only, in one order shared by both GPU crates:
//!   `backend` → `ntt`, `msm`, `fixed_base`, `sparse` (and here `subgroup`) → `staging` →
//!   `compile`, `timing` → `buffers` → `device` → `options`, `error`. Modules of one level do
//!   not use each other.
//!   `compile` turns the kernel sources into what the device runs and checks every launch
//!   against its table of kernels; `timing` maps the device's clock onto the timeline's.
//!   The device holds only its own state; each layer above owns its caches, in its own
//!   struct, which holds the layers below it.
//! - Here, `compile`'s table is of kernel parameters: [`compile::Kernel`]'s parameters, against
//!   which every launch's arguments are checked (a host test holds the table to the sources).
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
mod options;
mod sparse;
mod staging;
mod subgroup;
mod timing;

#[cfg(test)]
#[path = "../tests/common/cxx.rs"]
mod cxx;

pub use backend::{device_count, CudaBackend};
pub use error::CudaError;
pub use options::{
    CudaOptions, FusedY, MsmAccumulation, MsmScatter, NttBlock, NttTwiddles, TableBuild, DEFAULT_G2_TABLES_MAX,
    DEFAULT_TABLES, DEFAULT_TABLE_SHIFTS, MAX_MSM_ENTRIES, SCATTER_BY_WINDOW_ABOVE,
};
