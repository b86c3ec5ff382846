//! The kernels: WGSL modules composed from the sources in `shaders/` (embedded with
//! `include_str!`) and from text generated here, then compiled into pipelines on first use.
//!
//! - The arithmetic path is chosen by the `mac` primitive a module starts with:
//!   field/wide_int64.wgsl (SHADER_INT64) or field/wide_u32.wgsl (32-bit only). Everything
//!   above it is shared.
//! - Fields are instantiated from one template, field/fp.wgsl, with arkworks' constants, and
//!   their per-limb functions are generated straight-line ([`field`]).
//! - Curve arithmetic is programs (formulas/) run by an interpreter (vm/vm.wgsl), so each
//!   module holds one inlined field product however many formulas it runs.
//! - Bindings are declared once per module ([`Module::bindings`]); the WGSL declarations and
//!   accessors and the host's bind-group layouts are both generated from that ([`bindings`]).
//! - Each module is small and compiled on its own, lazily ([`pipelines`]).
//! - The NTT's tile comes from the device's workgroup storage ([`tile`]) and reaches the
//!   shader as override constants.

mod bindings;
mod cache;
mod field;
mod module;
mod pipelines;
mod programs;
mod tile;

pub use crate::device::Arith;
pub use module::{compose, Module};
pub(crate) use pipelines::{Kernel, ParamBlock, Pipelines, Res};
pub(crate) use programs::CurvePrograms;
pub use tile::NttTile;
