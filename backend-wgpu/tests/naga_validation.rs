//! Every WGSL module, composed as the device composes it, parses and validates with naga for
//! both arithmetic paths — with the capabilities each path may assume, and no GPU.

use g16_wgpu::shader::{compose, Arith, Formulas, Module};
use naga::valid::{Capabilities, ValidationFlags, Validator};

fn validate(module: Module, arith: Arith, formulas: Formulas, caps: Capabilities) -> Result<(), String> {
    let src = compose(module, arith, formulas);
    let parsed = naga::front::wgsl::parse_str(&src).map_err(|e| e.emit_to_string(&src))?;
    Validator::new(ValidationFlags::all(), caps).validate(&parsed).map(|_| ()).map_err(|e| e.emit_to_string(&src))
}

#[test]
fn every_module_validates_on_both_arithmetic_paths_and_every_formula_path() {
    for formulas in [Formulas::Interpreted, Formulas::Plain, Formulas::InterpretedLazy] {
        let f = formulas.name();
        for module in Module::ALL {
            validate(module, Arith::Int64, formulas, Capabilities::SHADER_INT64)
                .unwrap_or_else(|e| panic!("{} (int64 path, {f} formulas): {e}", module.name()));
            // The 32-bit path must not need 64-bit integers at all.
            validate(module, Arith::U32, formulas, Capabilities::empty())
                .unwrap_or_else(|e| panic!("{} (u32 path, {f} formulas): {e}", module.name()));
        }
    }
}

#[test]
fn the_formula_paths_differ_only_in_the_bucket_modules() {
    // Guards the test above: the plain path really has no interpreter, and the modules
    // without curve arithmetic are the same text on both paths.
    for module in Module::ALL {
        let (vm, plain) =
            (compose(module, Arith::Int64, Formulas::Interpreted), compose(module, Arith::Int64, Formulas::Plain));
        match module {
            Module::MsmBucket(_) => {
                assert!(vm.contains("fn vm_run") && !plain.contains("vm_run"), "{}", module.name());
                assert!(plain.contains("_madd_tail(p:"), "{}", module.name());
            }
            _ => assert_eq!(vm, plain, "{}", module.name()),
        }
    }
}

#[test]
fn the_lazy_fq2_product_changes_only_g2s_bucket_module() {
    // Guards the validation above: the lazy variant really compiles the lazy interpreter and
    // its double-width functions into G2's modules (buckets, and the shifted bases', which run
    // the same program buffer), on both arithmetic paths, and changes no other module (G1's
    // have no Fq2 product).
    for arith in [Arith::Int64, Arith::U32] {
        for module in Module::ALL {
            let (vm, lazy) =
                (compose(module, arith, Formulas::Interpreted), compose(module, arith, Formulas::InterpretedLazy));
            let g2 = g16_wgpu::shader::Curve::G2;
            if module == Module::MsmBucket(g2) || module == Module::MsmTable(g2) {
                for f in [
                    "fn fq_mul_wide(",
                    "fn fq_redc(",
                    "fn fq_wide_sub_mod(",
                    "fn fq_wide_add(",
                    "fn fq_add_raw(",
                    "var wa: fq_wide;",
                ] {
                    assert!(lazy.contains(f) && !vm.contains(f), "{f} ({arith:?})");
                }
            } else {
                assert_eq!(vm, lazy, "{} ({arith:?})", module.name());
            }
        }
    }
}

#[test]
fn the_int64_path_really_needs_shader_int64() {
    // Guards the test above: a validator without the capability must refuse 64-bit code,
    // or the u32 check would prove nothing.
    assert!(validate(Module::Pointwise, Arith::Int64, Formulas::Plain, Capabilities::empty()).is_err());
}
