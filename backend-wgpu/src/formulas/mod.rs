//! Curve arithmetic as straight-line programs over Fq registers, run by a small interpreter
//! in WGSL (`vm_run`, shaders/vm/vm.wgsl).
//!
//! Why: drivers inline every use of a WGSL function. Written as plain WGSL, one XYZZ addition
//! is a dozen inlined Montgomery products, and a bucket module holds ~150 of them: drivers
//! then spend seconds (the H200's) to minutes (llvmpipe's) compiling one module, and the code
//! is slower too (docs/perf/wgpu.md, "Interpreter for the curve formulas"). As programs, every
//! kernel holds a handful of interpreter loops, each with one product, one sum and one
//! difference, whatever the formula.
//!
//! Register slots (w = 1 for G1, 2 for G2: an Fq2 is two consecutive Fq registers):
//! P (X, Y, ZZ, ZZZ) at 0..4w — inputs and outputs; Q at 4w..8w (an affine point uses X, Y);
//! PP at 8w, R at 9w, U1 at 10w, S1 at 11w — what a head program leaves for its tail and for
//! the zero tests between them; two spare points at 12w..20w for the kernels; temporaries
//! above, allocated by liveness ([`builder`]).

mod builder;
mod curve;
mod programs;
mod table;
#[cfg(test)]
mod tests;

pub use programs::{programs, wgsl};
