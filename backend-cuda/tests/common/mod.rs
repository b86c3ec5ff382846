//! Code shared by this crate's tests.

pub mod cxx;
