//! The kernel modules: what each binds, its entry points, and its full WGSL text.

use super::bindings::{self, bind, Access, Binding, Shape};
use super::field;
use crate::buffers::Curve;
use crate::device::Arith;
use crate::formulas;

/// The kernel modules. Each is one small WGSL module, compiled separately and lazily.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Module {
    Ntt,
    Pointwise,
    MsmSort,
    /// The batched subgroup check's deal: points into random buckets, as the MSM's keys.
    MsmDeal,
    Scan,
    MsmBucket(Curve),
    /// Shifted bases for the MSM's shared layout, built once per uploaded base vector.
    MsmTable(Curve),
    /// Fixed-base scalar multiplication over a host-built table (key generation).
    FixedBase(Curve),
    /// A sparse matrix times a vector: a compiled circuit's A·z, B·z, C·z.
    Spmv,
    /// The R1CS check a·b = c, row by row.
    R1csCheck,
}

impl Module {
    pub const ALL: [Module; 13] = [
        Module::Ntt,
        Module::Pointwise,
        Module::Spmv,
        Module::R1csCheck,
        Module::MsmSort,
        Module::MsmDeal,
        Module::Scan,
        Module::MsmBucket(Curve::G1),
        Module::MsmBucket(Curve::G2),
        Module::MsmTable(Curve::G1),
        Module::MsmTable(Curve::G2),
        Module::FixedBase(Curve::G1),
        Module::FixedBase(Curve::G2),
    ];

    pub fn name(self) -> String {
        match self {
            Module::Ntt => "ntt".into(),
            Module::Pointwise => "pointwise".into(),
            Module::MsmSort => "msm_sort".into(),
            Module::MsmDeal => "msm_deal".into(),
            Module::Scan => "scan".into(),
            Module::MsmBucket(c) => format!("msm_bucket_{}", c.prefix()),
            Module::MsmTable(c) => format!("msm_table_{}", c.prefix()),
            Module::FixedBase(c) => format!("fixed_base_{}", c.prefix()),
            Module::Spmv => "spmv".into(),
            Module::R1csCheck => "r1cs_check".into(),
        }
    }

    pub fn entry_points(self) -> &'static [&'static str] {
        match self {
            Module::Ntt => &["ntt_pass"],
            Module::Pointwise => &["mul", "sub", "scale", "quotient"],
            Module::MsmSort => &["digits", "scatter"],
            Module::MsmDeal => &["deal"],
            Module::Scan => &["scan_blocks", "scan_tops", "scan_add"],
            Module::MsmBucket(_) => &["accumulate", "reduce"],
            Module::MsmTable(_) => &["shift_bases"],
            Module::FixedBase(_) => &["fixed_base"],
            Module::Spmv => &["rows", "long_rows"],
            Module::R1csCheck => &["check"],
        }
    }

    /// The storage arrays, in binding order after the uniform.
    pub(crate) fn bindings(self) -> Vec<Binding> {
        use crate::buffers::Elem::*;
        use Access::*;
        use Shape::*;
        match self {
            Module::Ntt => {
                vec![bind("src", Fr, Read, Split), bind("dst", Fr, ReadWrite, Split), bind("tw", Fr, Read, Split)]
            }
            Module::Pointwise => {
                vec![bind("a", Fr, ReadWrite, Split), bind("b", Fr, Read, Split), bind("c", Fr, Read, Split)]
            }
            Module::MsmSort => vec![
                bind("scalars", Fr, Read, Split),
                bind("keys", U32, ReadWrite, Plain),
                bind("counts", U32, Atomic, Plain),
                bind("offsets", U32, Read, Plain),
                bind("sorted", U32, ReadWrite, Plain),
            ],
            Module::MsmDeal => vec![
                bind("stream", U32, Read, Plain),
                bind("keys", U32, ReadWrite, Plain),
                bind("counts", U32, Atomic, Plain),
            ],
            Module::Scan => vec![
                bind("src", U32, Read, Plain),
                bind("dst", U32, ReadWrite, Plain),
                bind("blocks", U32, ReadWrite, Plain),
            ],
            Module::MsmBucket(c) => vec![
                bind("bases", c.affine(), Read, Split),
                bind("sorted", U32, Read, Plain),
                bind("offsets", U32, Read, Plain),
                bind("tasks", U32, Read, Plain),
                bind("pin", c.xyzz(), Read, Plain),
                bind("pout", c.xyzz(), ReadWrite, Plain),
                bind("prog", U32, Read, Plain),
            ],
            Module::MsmTable(c) => vec![
                bind("bases", c.affine(), Read, Split),
                bind("table", c.affine(), ReadWrite, Split),
                bind("multiples", c.xyzz(), ReadWrite, Plain),
                bind("prog", U32, Read, Plain),
            ],
            // One launch's scalars, points and sums are each one binding (the host sizes a
            // launch so); the table, up to 2^16 points a window, may need several.
            Module::FixedBase(c) => vec![
                bind("scalars", U32, Read, Plain),
                bind("table", c.affine(), Read, Split),
                bind("out", c.affine(), ReadWrite, Plain),
                bind("multiples", c.xyzz(), ReadWrite, Plain),
                bind("prog", U32, Read, Plain),
            ],
            // The matrix is one array of words (g16_backend's packed layout), so that the three
            // arrays a product reads and writes fit the twelve storage bindings adapters have.
            Module::Spmv => {
                vec![bind("out", Fr, ReadWrite, Split), bind("z", Fr, Read, Split), bind("m", U32, Read, Split)]
            }
            // One chunk of each vector a dispatch (their chunks cover the same rows), so a, b, c
            // and the answer take four bindings, not thirteen.
            Module::R1csCheck => vec![
                bind("a", Fr, Read, Plain),
                bind("b", Fr, Read, Plain),
                bind("c", Fr, Read, Plain),
                bind("first", U32, Atomic, Plain),
            ],
        }
    }

    /// The group whose curve arithmetic the module runs, if any.
    fn curve(self) -> Option<Curve> {
        match self {
            Module::MsmBucket(c) | Module::MsmTable(c) | Module::FixedBase(c) => Some(c),
            _ => None,
        }
    }
}

/// The full WGSL text of `module` on arithmetic path `arith`.
pub fn compose(module: Module, arith: Arith) -> String {
    let mut s = String::new();
    s.push_str(match arith {
        Arith::Int64 => include_str!("../../../shaders/field/wide_int64.wgsl"),
        Arith::U32 => include_str!("../../../shaders/field/wide_u32.wgsl"),
    });
    s.push_str(&field::source::<ark_bls12_381::Fr>("fr"));
    s.push_str(include_str!("../../../shaders/util/dispatch.wgsl"));
    let per_curve = |src: &str, curve: Curve| src.replace("CURVE", curve.prefix());
    if let Some(curve) = module.curve() {
        s.push_str(&field::source::<ark_bls12_381::Fq>("fq"));
        s.push_str(&formulas::wgsl(curve));
        s.push_str(include_str!("../../../shaders/vm/registers.wgsl"));
        s.push_str(include_str!("../../../shaders/vm/vm.wgsl"));
        s.push_str(&per_curve(include_str!("../../../shaders/curve/xyzz.wgsl"), curve));
    }
    s.push_str(&bindings::declarations(&module.bindings()));
    match module {
        Module::Ntt => s.push_str(include_str!("../../../shaders/ntt/ntt.wgsl")),
        Module::Pointwise => s.push_str(include_str!("../../../shaders/ntt/pointwise.wgsl")),
        Module::MsmSort => s.push_str(include_str!("../../../shaders/msm/sort.wgsl")),
        Module::MsmDeal => s.push_str(include_str!("../../../shaders/msm/deal.wgsl")),
        Module::Scan => s.push_str(include_str!("../../../shaders/util/scan.wgsl")),
        Module::MsmBucket(curve) => {
            s.push_str(include_str!("../../../shaders/msm/tasks.wgsl"));
            s.push_str(&per_curve(include_str!("../../../shaders/msm/bucket.wgsl"), curve));
        }
        Module::MsmTable(curve) => {
            s.push_str(&per_curve(include_str!("../../../shaders/field/fq_inverse.wgsl"), curve));
            s.push_str(&per_curve(include_str!("../../../shaders/msm/table.wgsl"), curve));
        }
        Module::FixedBase(curve) => {
            s.push_str(&per_curve(include_str!("../../../shaders/field/fq_inverse.wgsl"), curve));
            s.push_str(&per_curve(include_str!("../../../shaders/msm/fixed_base.wgsl"), curve));
        }
        Module::Spmv => s.push_str(include_str!("../../../shaders/r1cs/spmv.wgsl")),
        Module::R1csCheck => s.push_str(include_str!("../../../shaders/r1cs/check.wgsl")),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::STORAGE_BUFFERS_NEEDED;

    #[test]
    fn the_largest_module_binds_what_adapters_are_required_to_have() {
        let most = Module::ALL.iter().map(|m| m.bindings().iter().map(Binding::slots).sum::<usize>()).max();
        assert_eq!(most, Some(STORAGE_BUFFERS_NEEDED as usize));
    }

    #[test]
    fn only_the_curve_modules_hold_the_interpreter() {
        for m in Module::ALL {
            let src = compose(m, Arith::U32);
            assert_eq!(src.contains("fn vm_run"), m.curve().is_some(), "{}", m.name());
            assert!(!src.contains("CURVE") && !src.contains("FIELD"), "{}: a placeholder left", m.name());
        }
    }
}
