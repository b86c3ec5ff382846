//! WGSL modules: composed from the sources in `shaders/` (embedded with `include_str!`) and
//! from binding declarations generated here, so the host and the shader agree on every
//! binding by construction.
//!
//! - The arithmetic path is chosen by the `mac` primitive the module starts with:
//!   `wide_int64.wgsl` (SHADER_INT64) or `wide_u32.wgsl` (32-bit only). Everything above it
//!   is shared.
//! - Fields are instantiated from one template (`field.wgsl`) with arkworks' constants.
//! - Large arrays are *split bindings*: [`SPLIT_SLOTS`] storage bindings, each holding
//!   2^`<name>_log` elements (an override constant set at pipeline creation from the
//!   adapter's `max_storage_buffer_binding_size`), behind generated `<name>_load` /
//!   `<name>_store` accessors.

use ark_ff::{BigInteger, PrimeField};

/// How a module multiplies 32-bit limbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arith {
    /// 64-bit integer products (`SHADER_INT64`).
    Int64,
    /// 32-bit integers only: 16-bit partial products.
    U32,
}

impl Arith {
    pub fn name(self) -> &'static str {
        match self {
            Arith::Int64 => "int64",
            Arith::U32 => "u32",
        }
    }
}

/// How the curve formulas of the MSM bucket kernels are compiled: the choice is made when
/// the device opens, so every pipeline of one device takes the same path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Formulas {
    /// Programs run by an interpreter in the shader (formulas.rs, vm.wgsl): small modules
    /// that compile in about a second, one Montgomery product per kernel, registers in
    /// private memory.
    Interpreted,
    /// Straight-line WGSL (curve_plain.wgsl, msm_bucket_plain.wgsl): every formula inlined,
    /// points as values. Measured slower on the H200 (NVIDIA Vulkan 580: MSM G1 2^20 in
    /// 550 ms against 215 ms interpreted; G1's module 14 s to compile, G2's over 45 s) and
    /// minutes to compile on llvmpipe, so it is opt-in (`G16_WGPU_FORMULAS=plain`), kept for
    /// drivers where inlining pays and as the baseline of that comparison.
    Plain,
    /// The interpreter with lazy Fq2 products in G2 (vm_lazy.wgsl; formulas.rs,
    /// `Builder::mul`): a Karatsuba product keeps its three Fq products double-width and
    /// makes two Montgomery reductions instead of three. G1's module is the same text as
    /// `Interpreted`'s. Opt-in (`G16_WGPU_FQ2_LAZY=1`): on the H200 it was slower (G2 2^20
    /// device 71.1 against 66.3 ms, session 6; the double-width accumulator carried through
    /// the interpreter loop is the suspect), so it stays for drivers where it may pay. NOTES.md
    /// has the count, the prediction and the measurement.
    InterpretedLazy,
}

impl Formulas {
    /// What a device takes unless told otherwise: the interpreter, faster on every adapter
    /// measured so far (lavapipe and the H200).
    pub const DEFAULT: Formulas = Formulas::Interpreted;

    pub fn name(self) -> &'static str {
        match self {
            Formulas::Interpreted => "interpreted",
            Formulas::Plain => "plain",
            Formulas::InterpretedLazy => "interpreted, lazy Fq2",
        }
    }

    /// `G16_WGPU_FORMULAS=plain|interpreted` (`vm` also names the interpreter) and
    /// `G16_WGPU_FQ2_LAZY=1` (lazy Fq2 products in the interpreter; the plain path has no
    /// lazy variant and ignores it), if set.
    pub fn from_env() -> Option<Formulas> {
        let lazy = std::env::var(FQ2_LAZY_ENV).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "on" | "yes"));
        let interpreted = if lazy { Formulas::InterpretedLazy } else { Formulas::Interpreted };
        match std::env::var(FORMULAS_ENV).map(|v| v.to_ascii_lowercase()).as_deref() {
            Ok("plain") => Some(Formulas::Plain),
            Ok("interpreted" | "vm") => Some(interpreted),
            _ => lazy.then_some(interpreted),
        }
    }

    /// Whether G2's interpreter takes the lazy Fq2 product.
    pub fn fq2_lazy(self) -> bool {
        self == Formulas::InterpretedLazy
    }
}

/// The variable that overrides the formula path chosen for the adapter.
pub const FORMULAS_ENV: &str = "G16_WGPU_FORMULAS";

/// The variable that turns on the lazy Fq2 product (`Formulas::InterpretedLazy`), read when
/// the device opens (its pipelines are created for one choice).
pub const FQ2_LAZY_ENV: &str = "G16_WGPU_FQ2_LAZY";

/// Storage bindings per split array: its elements may span up to this many buffers.
pub const SPLIT_SLOTS: usize = 4;

/// What a storage array holds, element by element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    U32,
    Fr,
    G1Affine,
    G2Affine,
    G1Xyzz,
    G2Xyzz,
}

impl Elem {
    /// 32-bit words per element.
    pub const fn words(self) -> usize {
        match self {
            Elem::U32 => 1,
            Elem::Fr => 8,
            Elem::G1Affine => 24,
            Elem::G2Affine => 48,
            Elem::G1Xyzz => 48,
            Elem::G2Xyzz => 96,
        }
    }

    pub const fn bytes(self) -> u64 {
        self.words() as u64 * 4
    }

    fn wgsl_type(self) -> &'static str {
        match self {
            Elem::U32 => "u32",
            Elem::Fr => "fr",
            Elem::G1Affine => "g1_affine",
            Elem::G2Affine => "g2_affine",
            Elem::G1Xyzz => "g1_xyzz",
            Elem::G2Xyzz => "g2_xyzz",
        }
    }

    /// The element's limb arrays: (path inside the WGSL value, words), in memory order.
    fn layout(self) -> Vec<(String, usize)> {
        let coords: &[&str] = match self {
            Elem::U32 | Elem::Fr => return vec![(String::new(), self.words())],
            Elem::G1Affine | Elem::G2Affine => &["x", "y"],
            Elem::G1Xyzz | Elem::G2Xyzz => &["x", "y", "zz", "zzz"],
        };
        let g2 = matches!(self, Elem::G2Affine | Elem::G2Xyzz);
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
}

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
    pub fn slots(&self) -> usize {
        match self.shape {
            Shape::Plain => 1,
            Shape::Split => SPLIT_SLOTS,
        }
    }
}

const fn bind(name: &'static str, elem: Elem, access: Access, shape: Shape) -> Binding {
    Binding { name, elem, access, shape }
}

/// Which group a curve module is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Curve {
    G1,
    G2,
}

impl Curve {
    pub fn prefix(self) -> &'static str {
        match self {
            Curve::G1 => "g1",
            Curve::G2 => "g2",
        }
    }
    pub fn affine(self) -> Elem {
        match self {
            Curve::G1 => Elem::G1Affine,
            Curve::G2 => Elem::G2Affine,
        }
    }
    pub fn xyzz(self) -> Elem {
        match self {
            Curve::G1 => Elem::G1Xyzz,
            Curve::G2 => Elem::G2Xyzz,
        }
    }
}

/// The kernel modules. Each is one small WGSL module (compiled separately and lazily, so an
/// NTT never waits for G2's pipelines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Module {
    Ntt,
    Pointwise,
    MsmSort,
    Scan,
    MsmBucket(Curve),
    /// Shifted bases for the MSM's shared layout (msm_table.wgsl), built once per uploaded
    /// base vector.
    MsmTable(Curve),
}

impl Module {
    pub const ALL: [Module; 8] = [
        Module::Ntt,
        Module::Pointwise,
        Module::MsmSort,
        Module::Scan,
        Module::MsmBucket(Curve::G1),
        Module::MsmBucket(Curve::G2),
        Module::MsmTable(Curve::G1),
        Module::MsmTable(Curve::G2),
    ];

    pub fn name(self) -> String {
        match self {
            Module::Ntt => "ntt".into(),
            Module::Pointwise => "pointwise".into(),
            Module::MsmSort => "msm_sort".into(),
            Module::Scan => "scan".into(),
            Module::MsmBucket(c) => format!("msm_bucket_{}", c.prefix()),
            Module::MsmTable(c) => format!("msm_table_{}", c.prefix()),
        }
    }

    pub fn entry_points(self) -> &'static [&'static str] {
        match self {
            Module::Ntt => &["stockham_pass"],
            Module::Pointwise => &["mul", "sub", "scale", "quotient"],
            Module::MsmSort => &["digits", "scatter"],
            Module::Scan => &["scan_blocks", "scan_tops", "scan_add"],
            Module::MsmBucket(_) => &["accumulate", "reduce"],
            Module::MsmTable(_) => &["shift_bases"],
        }
    }

    /// The storage arrays, in binding order after the uniform.
    pub fn bindings(self) -> Vec<Binding> {
        use Access::*;
        use Elem::*;
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
        }
    }

    /// The names of the override constants (one per split binding).
    pub fn overrides(self) -> Vec<String> {
        self.bindings().iter().filter(|b| b.shape == Shape::Split).map(|b| format!("{}_log", b.name)).collect()
    }

    fn needs_fq(self) -> Option<Curve> {
        match self {
            Module::MsmBucket(c) | Module::MsmTable(c) => Some(c),
            _ => None,
        }
    }

    fn kernel_source(self, formulas: Formulas) -> &'static str {
        match self {
            Module::Ntt => include_str!("../../shaders/ntt.wgsl"),
            Module::Pointwise => include_str!("../../shaders/pointwise.wgsl"),
            Module::MsmSort => include_str!("../../shaders/msm_sort.wgsl"),
            Module::Scan => include_str!("../../shaders/scan.wgsl"),
            Module::MsmBucket(_) => match formulas {
                Formulas::Interpreted | Formulas::InterpretedLazy => include_str!("../../shaders/msm_bucket.wgsl"),
                Formulas::Plain => include_str!("../../shaders/msm_bucket_plain.wgsl"),
            },
            Module::MsmTable(_) => include_str!("../../shaders/msm_table.wgsl"),
        }
    }
}

/// The full WGSL text of `module` on arithmetic path `arith`, with the curve formulas
/// compiled as `formulas` says (only the MSM bucket modules have any).
pub fn compose(module: Module, arith: Arith, formulas: Formulas) -> String {
    // The tables' kernel runs the curve programs (the device's program buffer, lazy or not)
    // through the interpreter even where the bucket kernels take the plain formulas.
    let formulas = match (module, formulas) {
        (Module::MsmTable(_), Formulas::Plain) => Formulas::Interpreted,
        _ => formulas,
    };
    let mut s = String::new();
    s.push_str(match arith {
        Arith::Int64 => include_str!("../../shaders/wide_int64.wgsl"),
        Arith::U32 => include_str!("../../shaders/wide_u32.wgsl"),
    });
    s.push_str(&field_source::<ark_bls12_381::Fr>("fr"));
    s.push_str(include_str!("../../shaders/util.wgsl"));
    if let Some(curve) = module.needs_fq() {
        s.push_str(&field_source::<ark_bls12_381::Fq>("fq"));
        match formulas {
            Formulas::Interpreted | Formulas::InterpretedLazy => {
                let lazy = formulas.fq2_lazy() && curve == Curve::G2;
                s.push_str(&crate::formulas::wgsl(curve, lazy));
                s.push_str(include_str!("../../shaders/vm_registers.wgsl"));
                if lazy {
                    s.push_str(&lazy_field_source::<ark_bls12_381::Fq>("fq"));
                    s.push_str(include_str!("../../shaders/vm_lazy.wgsl"));
                } else {
                    s.push_str(include_str!("../../shaders/vm.wgsl"));
                }
                s.push_str(&instantiate_curve(include_str!("../../shaders/curve.wgsl"), curve.prefix(), ""));
            }
            Formulas::Plain => {
                let field = match curve {
                    Curve::G1 => "fq",
                    Curve::G2 => {
                        s.push_str(include_str!("../../shaders/fq2.wgsl"));
                        "fq2"
                    }
                };
                s.push_str(&instantiate_curve(include_str!("../../shaders/curve_plain.wgsl"), curve.prefix(), field));
                s.push_str(&crate::formulas::plain_wgsl(curve));
            }
        }
    }
    let plain_points = formulas == Formulas::Plain;
    s.push_str(&bindings_source(&module.bindings(), plain_points));
    let kernel = module.kernel_source(formulas);
    match module {
        Module::MsmBucket(curve) => {
            s.push_str(include_str!("../../shaders/msm_tasks.wgsl"));
            s.push_str(&instantiate_curve(kernel, curve.prefix(), ""));
        }
        Module::MsmTable(curve) => s.push_str(&instantiate_curve(kernel, curve.prefix(), "")),
        _ => s.push_str(kernel),
    }
    s
}

fn instantiate_curve(src: &str, prefix: &str, field: &str) -> String {
    let s = src.replace("CURVE", prefix);
    if field.is_empty() {
        s
    } else {
        replace_word(&s.replace("FLD_", &format!("{field}_")), "FLD", field)
    }
}

/// Replaces whole-word occurrences of `word` (identifier boundaries).
fn replace_word(src: &str, word: &str, with: &str) -> String {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(pos) = rest.find(word) {
        let before = rest[..pos].chars().next_back();
        let after = rest[pos + word.len()..].chars().next();
        out.push_str(&rest[..pos]);
        if before.is_some_and(is_ident) || after.is_some_and(is_ident) {
            out.push_str(word);
        } else {
            out.push_str(with);
        }
        rest = &rest[pos + word.len()..];
    }
    out.push_str(rest);
    out
}

/// 32-bit little-endian limbs of a big integer.
pub fn limbs32<B: BigInteger>(b: &B) -> Vec<u32> {
    b.as_ref().iter().flat_map(|w| [*w as u32, (*w >> 32) as u32]).collect()
}

fn wgsl_u32_list(v: &[u32]) -> String {
    v.iter().map(|w| format!("0x{w:08x}u")).collect::<Vec<_>>().join(", ")
}

/// `field.wgsl` instantiated for `F` under `prefix`.
fn field_source<F: PrimeField + MontgomeryRepr>(prefix: &str) -> String {
    let modulus = limbs32(&F::MODULUS);
    let limbs = modulus.len();
    let one = limbs32(&F::ONE.into_bigint_montgomery());
    let neg_inv = neg_inv(modulus[0]);
    let src = include_str!("../../shaders/field.wgsl")
        .replace("NLIMBS", &format!("{limbs}u"))
        .replace("MONT_ONE", &wgsl_u32_list(&one))
        .replace("MODULUS", &wgsl_u32_list(&modulus))
        .replace("INV_WORD", &format!("0x{neg_inv:08x}u"));
    let mut out = replace_word(&src.replace("FIELD_", &format!("{prefix}_")), "FIELD", prefix);
    out.push_str(&crate::field_wgsl::straight_line(prefix, &modulus, neg_inv));
    out
}

/// The lazy product's double-width functions for `F` under `prefix` (field_wgsl.rs).
fn lazy_field_source<F: PrimeField>(prefix: &str) -> String {
    let modulus = limbs32(&F::MODULUS);
    crate::field_wgsl::lazy_wide(prefix, &modulus, neg_inv(modulus[0]))
}

/// -p^-1 mod 2^32 by Newton's iteration (p is odd).
fn neg_inv(p0: u32) -> u32 {
    let mut inv = 1u32;
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u32.wrapping_sub(p0.wrapping_mul(inv)));
    }
    inv.wrapping_neg()
}

/// The Montgomery form of a field element (arkworks keeps it internally).
trait MontgomeryRepr: PrimeField {
    fn into_bigint_montgomery(self) -> Self::BigInt;
}

impl<P: ark_ff::FpConfig<N>, const N: usize> MontgomeryRepr for ark_ff::Fp<P, N> {
    fn into_bigint_montgomery(self) -> Self::BigInt {
        self.0
    }
}

/// Declarations and accessors for a module's bindings. Points move through the
/// interpreter's registers, or, with `plain_points`, as WGSL values.
fn bindings_source(bindings: &[Binding], plain_points: bool) -> String {
    let mut s = String::new();
    let mut slot = 1; // 0 is the params uniform
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
                    s.push_str(&accessors(b, &[b.name.to_string()], false, plain_points));
                }
            }
            Shape::Split => {
                let names: Vec<String> = (0..SPLIT_SLOTS).map(|k| format!("{}_{k}", b.name)).collect();
                for n in &names {
                    s.push_str(&format!("@group(0) @binding({slot}) var<storage, {mode}> {n}: {ty};\n"));
                    slot += 1;
                }
                s.push_str(&format!("override {}_log: u32;\n", b.name));
                s.push_str(&accessors(b, &names, true, plain_points));
            }
        }
    }
    s
}

fn accessors(b: &Binding, arrays: &[String], split: bool, plain_points: bool) -> String {
    let (name, ty, w) = (b.name, b.elem.wgsl_type(), b.elem.words());
    let layout = b.elem.layout();
    let locate = if split {
        format!("    let chunk = i >> {name}_log;\n    let base = (i & ((1u << {name}_log) - 1u)) * {w}u;\n")
    } else {
        format!("    let base = i * {w}u;\n")
    };
    let copy = |array: &str, load: bool| -> String {
        let mut off = 0;
        let mut out = String::new();
        for (path, words) in &layout {
            let (lhs, rhs) = if load {
                (format!("r{path}[k]"), format!("{array}[base + {off}u + k]"))
            } else {
                (format!("{array}[base + {off}u + k]"), format!("r{path}[k]"))
            };
            out.push_str(&format!("        for (var k = 0u; k < {words}u; k++) {{ {lhs} = {rhs}; }}\n"));
            off += words;
        }
        out
    };
    let dispatch = |load: bool| -> String {
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
    // Points move between storage and the curve interpreter's registers (vm.wgsl) without
    // ever being a WGSL value (a 96-word value live across loops and branches is what makes
    // a driver's compiler slow): limb array k of the element goes to register `reg + k`.
    if !plain_points && matches!(b.elem, Elem::G1Affine | Elem::G2Affine | Elem::G1Xyzz | Elem::G2Xyzz) {
        let moves = |array: &str, load: bool| -> String {
            let mut off = 0;
            let mut out = String::new();
            for (k, (_, words)) in layout.iter().enumerate() {
                let (lhs, rhs) = if load {
                    (format!("vm[reg + {k}u][k]"), format!("{array}[base + {off}u + k]"))
                } else {
                    (format!("{array}[base + {off}u + k]"), format!("vm[reg + {k}u][k]"))
                };
                out.push_str(&format!("        for (var k = 0u; k < {words}u; k++) {{ {lhs} = {rhs}; }}\n"));
                off += words;
            }
            out
        };
        let wrap = |load: bool| -> String {
            if !split {
                return moves(&arrays[0], load);
            }
            let mut out = String::from("    switch chunk {\n");
            for (k, a) in arrays.iter().enumerate() {
                let label = if k + 1 == arrays.len() { "default".to_string() } else { format!("case {k}u") };
                out.push_str(&format!("      {label}: {{\n{}      }}\n", moves(a, load)));
            }
            out.push_str("    }\n");
            out
        };
        let mut s = format!("fn {name}_to_vm(i: u32, reg: u32) {{\n{locate}{}}}\n", wrap(true));
        if b.access == Access::ReadWrite {
            s.push_str(&format!("fn {name}_from_vm(i: u32, reg: u32) {{\n{locate}{}}}\n", wrap(false)));
        }
        return s;
    }
    let mut s =
        format!("fn {name}_load(i: u32) -> {ty} {{\n    var r: {ty};\n{locate}{}    return r;\n}}\n", dispatch(true));
    if b.access == Access::ReadWrite {
        s.push_str(&format!("fn {name}_store(i: u32, v: {ty}) {{\n    var r = v;\n{locate}{}}}\n", dispatch(false)));
    }
    s
}
