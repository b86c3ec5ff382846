//! Every WGSL module, composed as the device composes it, parses and validates with naga on
//! both arithmetic paths, with the capabilities each path may assume, and no GPU.

use g16_wgpu::compile::{compose, Arith, Module};
use naga::valid::{Capabilities, ValidationFlags, Validator};

fn validate(module: Module, arith: Arith, caps: Capabilities) -> Result<(), String> {
    let src = compose(module, arith);
    let parsed = naga::front::wgsl::parse_str(&src).map_err(|e| e.emit_to_string(&src))?;
    Validator::new(ValidationFlags::all(), caps).validate(&parsed).map(|_| ()).map_err(|e| e.emit_to_string(&src))
}

#[test]
fn every_module_validates_on_the_int64_path() {
    for module in Module::ALL {
        validate(module, Arith::Int64, Capabilities::SHADER_INT64)
            .unwrap_or_else(|e| panic!("{} (int64 path): {e}", module.name()));
    }
}

#[test]
fn every_module_validates_on_the_32_bit_path_without_int64() {
    for module in Module::ALL {
        validate(module, Arith::U32, Capabilities::empty())
            .unwrap_or_else(|e| panic!("{} (u32 path): {e}", module.name()));
    }
}

#[test]
fn the_int64_path_really_needs_shader_int64() {
    // Guards the test above: a validator without the capability must refuse 64-bit code,
    // or the 32-bit check would prove nothing.
    assert!(validate(Module::Pointwise, Arith::Int64, Capabilities::empty()).is_err());
}
