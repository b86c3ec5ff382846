//! A curve's programs, built and laid out in one word array, and the WGSL declarations that
//! tell the kernels where each program starts and ends.

use super::builder::{Builder, FIXED};
use super::curve;
use super::table::{self, TABLE_INV, TABLE_NORM, TABLE_PREFIX, TABLE_PREV};
use crate::buffers::Curve;

/// A curve's programs: the instruction words, each program's range, the registers needed.
pub struct Programs {
    pub words: Vec<u32>,
    pub ranges: Vec<(&'static str, u32, u32)>,
    pub registers: u16,
    /// Registers per coordinate (1 for G1, 2 for G2).
    pub w: u16,
}

type Build = fn(&mut Builder);

/// The six formulas, by name: the order of [`Programs::ranges`].
const FORMULAS: [(&str, Build); 6] = [
    ("MADD_HEAD", curve::madd_head),
    ("MADD_TAIL", curve::madd_tail),
    ("MDBL", curve::mdbl),
    ("ADD_HEAD", curve::add_head),
    ("ADD_TAIL", curve::add_tail),
    ("DBL", curve::dbl),
];

/// The shifted-bases kernel's programs (after FORMULAS in the words).
const TABLE_PROGRAMS: [(&str, Build); 4] = [
    ("TABLE_FWD", table::table_fwd),
    ("TABLE_NORM", table::table_norm),
    ("TABLE_INV", table::table_inv),
    ("TABLE_BWD", table::table_bwd),
];

fn width(curve: Curve) -> u16 {
    match curve {
        Curve::G1 => 1,
        Curve::G2 => 2,
    }
}

/// The interpreter's programs for `curve`.
pub fn programs(curve: Curve) -> Programs {
    let w = width(curve);
    let mut words = Vec::new();
    let mut ranges = Vec::new();
    let mut registers = FIXED * w;
    for &(name, build) in FORMULAS.iter().chain(&TABLE_PROGRAMS) {
        let mut b = Builder::new(w);
        build(&mut b);
        b.fold_stores();
        let (prog, high) = b.allocate();
        registers = registers.max(high);
        let start = words.len() as u32;
        words.extend(prog);
        ranges.push((name, start, words.len() as u32));
    }
    Programs { words, ranges, registers, w }
}

/// WGSL declarations of a curve's program ranges, register file size and table slots.
pub fn wgsl(curve: Curve) -> String {
    let p = programs(curve);
    let mut s = format!("const VM_REGISTERS: u32 = {}u;\nconst CURVE_W: u32 = {}u;\n", p.registers, p.w);
    for (name, start, end) in &p.ranges {
        s.push_str(&format!("const CURVE_{name} = vec2<u32>({start}u, {end}u);\n"));
    }
    for (name, slot) in [("PREFIX", TABLE_PREFIX), ("INV", TABLE_INV), ("PREV", TABLE_PREV), ("NORM", TABLE_NORM)] {
        s.push_str(&format!("const TABLE_{name}: u32 = {slot}u;\n"));
    }
    // The interpreter (vm.wgsl) is not per curve: it reads the width as VM_W.
    s.replace("CURVE", curve.prefix()) + &format!("const VM_W: u32 = {}u;\n", p.w)
}
