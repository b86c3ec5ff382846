//! Every WGSL module, composed as the device composes it, parses and validates with naga for
//! both arithmetic paths — with the capabilities each path may assume, and no GPU.

use g16_wgpu::shader::{compose, Arith, Loops, Module, Variant};
use naga::valid::{Capabilities, ValidationFlags, Validator};

fn validate(module: Module, variant: Variant, caps: Capabilities) -> Result<(), String> {
    let src = compose(module, variant);
    let parsed = naga::front::wgsl::parse_str(&src).map_err(|e| e.emit_to_string(&src))?;
    Validator::new(ValidationFlags::all(), caps)
        .validate(&parsed)
        .map(|_| ())
        .map_err(|e| e.emit_to_string(&src))
}

#[test]
fn every_module_validates_on_both_arithmetic_paths() {
    for module in Module::ALL {
        for variant in Variant::ALL {
            // The 32-bit path must not need 64-bit integers at all.
            let caps = match variant.arith {
                Arith::Int64 => Capabilities::SHADER_INT64,
                Arith::U32 => Capabilities::empty(),
            };
            validate(module, variant, caps).unwrap_or_else(|e| panic!("{} ({variant:?}): {e}", module.name()));
        }
    }
}

#[test]
fn the_int64_path_really_needs_shader_int64() {
    // Guards the test above: a validator without the capability must refuse 64-bit code,
    // or the u32 check would prove nothing.
    let int64 = Variant { arith: Arith::Int64, loops: Loops::Unrolled };
    assert!(validate(Module::Pointwise, int64, Capabilities::empty()).is_err());
}
