//! A module's storage arrays, declared once here and turned into both sides of the binding:
//! the WGSL declarations and accessors ([`declarations`]) and, on the host, the bind-group
//! layout and the check of what is bound (pipelines.rs), so the two agree by construction.
//!
//! A split array (`Shape::Split`) is [`SPLIT_SLOTS`] storage bindings of 2^`<name>_log`
//! elements each, the log an override constant set at pipeline creation from the adapter's
//! binding limit; its generated accessors pick the binding from the index's high bits.
//! Points never become WGSL values: their accessors move limbs straight between storage and
//! the curve interpreter's registers (`<name>_to_vm`, `<name>_from_vm`), because a 96-word
//! value live across loops and branches is what makes a driver's compiler slow.

use crate::buffers::{Elem, SPLIT_SLOTS};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    ReadWrite,
    /// `array<atomic<u32>>`
    Atomic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One binding; must fit in one (the host checks).
    Plain,
    /// [`SPLIT_SLOTS`] bindings of 2^`<name>_log` elements each.
    Split,
}

/// One storage array of a module (binding 0 is always the `params` uniform).
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    pub name: &'static str,
    pub elem: Elem,
    pub access: Access,
    pub shape: Shape,
}

impl Binding {
    /// Storage bindings it takes.
    pub fn slots(&self) -> usize {
        match self.shape {
            Shape::Plain => 1,
            Shape::Split => SPLIT_SLOTS,
        }
    }
}

pub(crate) const fn bind(name: &'static str, elem: Elem, access: Access, shape: Shape) -> Binding {
    Binding { name, elem, access, shape }
}

fn wgsl_type(elem: Elem) -> &'static str {
    match elem {
        Elem::U32 => "u32",
        Elem::Fr => "fr",
        Elem::G1Affine => "g1_affine",
        Elem::G2Affine => "g2_affine",
        Elem::G1Xyzz => "g1_xyzz",
        Elem::G2Xyzz => "g2_xyzz",
    }
}

/// The element's limb arrays: (path inside the WGSL value, words), in memory order.
fn limb_arrays(elem: Elem) -> Vec<(String, usize)> {
    let coords: &[&str] = match elem {
        Elem::U32 | Elem::Fr => return vec![(String::new(), elem.words())],
        Elem::G1Affine | Elem::G2Affine => &["x", "y"],
        Elem::G1Xyzz | Elem::G2Xyzz => &["x", "y", "zz", "zzz"],
    };
    let g2 = matches!(elem, Elem::G2Affine | Elem::G2Xyzz);
    coords
        .iter()
        .flat_map(|c| {
            if g2 {
                vec![(format!(".{c}.c0"), 12), (format!(".{c}.c1"), 12)]
            } else {
                vec![(format!(".{c}"), 12)]
            }
        })
        .collect()
}

fn is_point(elem: Elem) -> bool {
    matches!(elem, Elem::G1Affine | Elem::G2Affine | Elem::G1Xyzz | Elem::G2Xyzz)
}

/// WGSL declarations of `bindings` (from binding 1; 0 is the params uniform) and their
/// accessors.
pub(crate) fn declarations(bindings: &[Binding]) -> String {
    let mut s = String::new();
    let mut slot = 1;
    for b in bindings {
        let mode = match b.access {
            Access::Read => "read",
            Access::ReadWrite | Access::Atomic => "read_write",
        };
        let ty = if b.access == Access::Atomic { "array<atomic<u32>>" } else { "array<u32>" };
        match b.shape {
            Shape::Plain => {
                s.push_str(&format!("@group(0) @binding({slot}) var<storage, {mode}> {}: {ty};\n", b.name));
                slot += 1;
                if b.elem != Elem::U32 {
                    s.push_str(&accessors(b, &[b.name.to_string()], false));
                }
            }
            Shape::Split => {
                let names: Vec<String> = (0..SPLIT_SLOTS).map(|k| format!("{}_{k}", b.name)).collect();
                for n in &names {
                    s.push_str(&format!("@group(0) @binding({slot}) var<storage, {mode}> {n}: {ty};\n"));
                    slot += 1;
                }
                s.push_str(&format!("override {}_log: u32;\n", b.name));
                s.push_str(&accessors(b, &names, true));
            }
        }
    }
    s
}

/// Element i of binding `b` over `arrays` (its bindings): `<name>_load`/`_store` for words and
/// field elements, `<name>_to_vm`/`_from_vm` (limb array k to register `reg + k`) for points.
fn accessors(b: &Binding, arrays: &[String], split: bool) -> String {
    let (name, w) = (b.name, b.elem.words());
    let layout = limb_arrays(b.elem);
    let locate = if split {
        format!("    let chunk = i >> {name}_log;\n    let base = (i & ((1u << {name}_log) - 1u)) * {w}u;\n")
    } else {
        format!("    let base = i * {w}u;\n")
    };
    // One copy statement per limb array, from storage (`load`) or into it.
    let copy = |array: &str, load: bool| -> String {
        if b.elem == Elem::U32 {
            let (lhs, rhs) = if load {
                ("r".to_string(), format!("{array}[base]"))
            } else {
                (format!("{array}[base]"), "r".to_string())
            };
            return format!("        {lhs} = {rhs};\n");
        }
        let mut off = 0;
        let mut out = String::new();
        for (k, (path, words)) in layout.iter().enumerate() {
            let value = if is_point(b.elem) { format!("vm[reg + {k}u][k]") } else { format!("r{path}[k]") };
            let stored = format!("{array}[base + {off}u + k]");
            let (lhs, rhs) = if load { (value, stored) } else { (stored, value) };
            out.push_str(&format!("        for (var k = 0u; k < {words}u; k++) {{ {lhs} = {rhs}; }}\n"));
            off += words;
        }
        out
    };
    let body = |load: bool| -> String {
        if !split {
            return copy(&arrays[0], load);
        }
        let mut out = String::from("    switch chunk {\n");
        for (k, a) in arrays.iter().enumerate() {
            let label = if k + 1 == arrays.len() { "default".to_string() } else { format!("case {k}u") };
            out.push_str(&format!("      {label}: {{\n{}      }}\n", copy(a, load)));
        }
        out.push_str("    }\n");
        out
    };
    let writable = b.access == Access::ReadWrite;
    if is_point(b.elem) {
        let mut s = format!("fn {name}_to_vm(i: u32, reg: u32) {{\n{locate}{}}}\n", body(true));
        if writable {
            s.push_str(&format!("fn {name}_from_vm(i: u32, reg: u32) {{\n{locate}{}}}\n", body(false)));
        }
        return s;
    }
    let ty = wgsl_type(b.elem);
    let mut s =
        format!("fn {name}_load(i: u32) -> {ty} {{\n    var r: {ty};\n{locate}{}    return r;\n}}\n", body(true));
    if writable {
        s.push_str(&format!("fn {name}_store(i: u32, v: {ty}) {{\n    var r = v;\n{locate}{}}}\n", body(false)));
    }
    s
}
