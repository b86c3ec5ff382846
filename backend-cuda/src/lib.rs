//! g16-cuda: g16's CUDA backend.
//!
//! Design rules:
//! - It implements `g16_core`'s `Backend` trait ([`CudaBackend`]) and depends on nothing of
//!   g16 but that contract.
//! - libcuda and libnvrtc are loaded at run time and checked before any call; every failure
//!   (no driver, no device, no NVRTC, a kernel that does not compile, out of memory) is a
//!   [`CudaError`], never a panic.
//! - Kernels (`kernels/*.cu`, embedded) are compiled by NVRTC for the device's own
//!   architecture and cached on disk by source hash, architecture and NVRTC version.
//! - Data stays on the device between operations; every kernel group is timed by CUDA events
//!   and reported as a [`SpanRecord`] on the caller's host clock.

mod backend;
pub mod compile;
mod device;
mod error;
pub mod kernels;
mod msm;
mod ntt;
mod timing;

pub use backend::{device_count, CudaBackend};
pub use device::{driver_present, CudaDevice, DeviceInfo, FrBuffer, G1Buffer, G2Buffer};
pub use error::CudaError;
pub use msm::{MsmPlan, ScalarsRef};
pub use ntt::{plan_passes, MAX_NTT_LOG2};
pub use timing::{Clock, SpanRecord};
