//! Curve formulas as straight-line programs over Fq registers, run by a tiny interpreter in
//! WGSL (`vm_run` in shaders/vm.wgsl).
//!
//! Why: drivers inline every WGSL function call. Written as plain WGSL, one XYZZ addition is
//! a dozen inlined Montgomery products, and a bucket module holds ~150 of them: llvmpipe
//! (lavapipe, CI's GPU) then spends minutes in LLVM per module. As programs, every kernel
//! holds a handful of interpreter loops, each with one product, one sum and one difference,
//! whatever the formula; G2's Fq2 arithmetic (Karatsuba) is expanded into the same Fq
//! instructions here, so G1 and G2 share the interpreter.
//!
//! Register slots (w = 1 for G1, 2 for G2: an Fq2 is two consecutive Fq registers):
//! P (X, Y, ZZ, ZZZ) at 0..4w — inputs and outputs; Q at 4w..8w (an affine point uses X, Y);
//! PP at 8w, R at 9w, U1 at 10w, S1 at 11w — what a head program leaves for its tail and for
//! the zero tests between them; two spare points at 12w..20w for the kernels; temporaries
//! above, allocated by liveness.
//! Formulas: hyperelliptic.org EFD, g1p/short-w/xyzz (a = 0): madd-2008-s, mdbl-2008-s-1,
//! add-2008-s, dbl-2008-s-1.

use crate::shader::Curve;

pub const OP_MUL: u32 = 0;
pub const OP_ADD: u32 = 1;
pub const OP_SUB: u32 = 2;
pub const OP_COPY: u32 = 3;
/// px·(a + b) and px·(a − b), where px is the interpreter's one register kept out of memory
/// (vm.wgsl): Karatsuba's (a0 + a1)(b0 + b1) and a square's (a0 + a1)(a0 − a1) as one
/// product each, without storing the sums.
pub const OP_MUL_SUM: u32 = 4;
pub const OP_MUL_DIFF: u32 = 5;
/// The lazy Fq2 product's kinds (vm_lazy.wgsl; G2 with `Formulas::InterpretedLazy` only),
/// around one double-width accumulator wa: px = a +raw b (unreduced, < 2p: only ever a
/// product's operand); wa = a·b (double width, no register written); c0 = REDC(wa − a·b, plus
/// p·R where negative), then wa += a·b; c1 = REDC(px·(a +raw b) − wa).
pub const OP_ADD_RAW: u32 = 6;
pub const OP_WIDE: u32 = 7;
pub const OP_REDC_DIFF_ACC: u32 = 8;
pub const OP_REDC_SUM_MINUS: u32 = 9;
/// Flags over the kinds above: the left operand is px (a is unused), and the result goes to
/// px instead of register d.
pub const FROM_PX: u32 = 0x10;
pub const TO_PX: u32 = 0x20;
/// The destination of an instruction that writes px.
const NO_REG: u16 = u16::MAX;

/// Fixed slots (in coordinates; times w for registers).
const P: u16 = 0;
const Q: u16 = 4;
const PP: u16 = 8;
const R: u16 = 9;
const U1: u16 = 10;
const S1: u16 = 11;
/// Slots 12..20: two more points for the kernels. Programs address P and Q relative to bases
/// the kernel picks (vm_run's p and q), so a kernel adds any slot to any other without
/// copying points — on lavapipe every register access in a kernel costs compile time.
const FIXED: u16 = 20;

/// An element of the curve's field: one or two registers (virtual until allocation).
#[derive(Clone, Copy)]
struct E([u16; 2]);

struct Builder {
    w: u16,
    /// Whether Fq2 products may use px (the interpreter's programs; the plain path names
    /// every value instead).
    fused: bool,
    /// Lazy Fq2 products (implies `fused`): the kinds of vm_lazy.wgsl.
    lazy: bool,
    /// (op, dst, a, b) over virtual registers; virtual r < FIXED·w are the fixed slots.
    ins: Vec<(u32, u16, u16, u16)>,
    next: u16,
}

impl Builder {
    fn new(w: u16, fused: bool, lazy: bool) -> Builder {
        Builder { w, fused: fused || lazy, lazy, ins: Vec::new(), next: FIXED * w }
    }

    fn fixed(&self, coord: u16) -> E {
        E([coord * self.w, coord * self.w + 1])
    }

    fn temp(&mut self) -> u16 {
        self.next += 1;
        self.next - 1
    }

    fn op1(&mut self, op: u32, a: u16, b: u16) -> u16 {
        let d = self.temp();
        self.ins.push((op, d, a, b));
        d
    }

    fn add(&mut self, a: E, b: E) -> E {
        if self.w == 1 {
            E([self.op1(OP_ADD, a.0[0], b.0[0]), 0])
        } else {
            E([self.op1(OP_ADD, a.0[0], b.0[0]), self.op1(OP_ADD, a.0[1], b.0[1])])
        }
    }

    fn sub(&mut self, a: E, b: E) -> E {
        if self.w == 1 {
            E([self.op1(OP_SUB, a.0[0], b.0[0]), 0])
        } else {
            E([self.op1(OP_SUB, a.0[0], b.0[0]), self.op1(OP_SUB, a.0[1], b.0[1])])
        }
    }

    fn double(&mut self, a: E) -> E {
        self.add(a, a)
    }

    /// An instruction whose result goes to px.
    fn set_px(&mut self, op: u32, a: u16, b: u16) {
        self.ins.push((op | TO_PX, NO_REG, a, b));
    }

    /// Fq2 (u² = −1) by Karatsuba: three Fq products.
    fn mul(&mut self, a: E, b: E) -> E {
        if self.w == 1 {
            return E([self.op1(OP_MUL, a.0[0], b.0[0]), 0]);
        }
        if self.lazy {
            // px = a0 + a1 (unreduced); wa = a0·b0; c0 = REDC(wa − a1·b1), wa += a1·b1;
            // c1 = REDC(px·(b0 + b1) − wa): 3 double-width products and 2 reductions, 4
            // instructions and 2 stores (the fused sequence below: 3 reduced products, 7
            // instructions, 4 stores). Bounds, for inputs < p (every register holds a reduced
            // value): a0·b0, a1·b1 < p²; their difference is in (−p², p²), p·R added where
            // negative; (a0 + a1)(b0 + b1) − a0·b0 − a1·b1 = a0·b1 + a1·b0 is in [0, 2p²);
            // so both REDC arguments are below p·R (2p² < p·2^382) and each result is below
            // 2p before its final subtraction.
            // The last instruction reads b0 and b1 after c0 is written, so c0 cannot be
            // computed straight into b's slot (fold_stores); the products' outputs go to P's
            // slots, so b is the operand that is not a fixed slot where there is one.
            let fixed = |e: E| e.0[0] < FIXED * self.w;
            let (a, b) = if fixed(b) && !fixed(a) { (b, a) } else { (a, b) };
            let (a0, a1, b0, b1) = (a.0[0], a.0[1], b.0[0], b.0[1]);
            self.set_px(OP_ADD_RAW, a0, a1);
            self.ins.push((OP_WIDE, NO_REG, a0, b0));
            let c0 = self.op1(OP_REDC_DIFF_ACC, a1, b1);
            let c1 = self.op1(OP_REDC_SUM_MINUS, b0, b1);
            return E([c0, c1]);
        }
        let v0 = self.op1(OP_MUL, a.0[0], b.0[0]);
        let v1 = self.op1(OP_MUL, a.0[1], b.0[1]);
        if self.fused {
            // px = a0 + a1; px = px·(b0 + b1); px = px − v0; c1 = px − v1: 7 instructions and 4
            // stores where the plain sequence has 8 and 8.
            self.set_px(OP_ADD, a.0[0], a.0[1]);
            self.set_px(OP_MUL_SUM, b.0[0], b.0[1]);
            self.set_px(OP_SUB | FROM_PX, v0, v0);
            let c1 = self.op1(OP_SUB | FROM_PX, v1, v1);
            let c0 = self.op1(OP_SUB, v0, v1);
            return E([c0, c1]);
        }
        let sa = self.op1(OP_ADD, a.0[0], a.0[1]);
        let sb = self.op1(OP_ADD, b.0[0], b.0[1]);
        let s = self.op1(OP_MUL, sa, sb);
        let c0 = self.op1(OP_SUB, v0, v1);
        let t = self.op1(OP_SUB, s, v0);
        let c1 = self.op1(OP_SUB, t, v1);
        E([c0, c1])
    }

    /// Fq2: (a0 + a1)(a0 − a1) + 2·a0·a1·u, two Fq products.
    fn sqr(&mut self, a: E) -> E {
        if self.w == 1 {
            return self.mul(a, a);
        }
        if self.lazy {
            // c0 = (a0 +raw a1)·(a0 − a1), c1 = (a0 +raw a0)·a1: the doubling rides in px
            // unreduced (< 2p), so c1 needs no stored product and no sum: 4 instructions, 2
            // stores (the fused sequence: 4 and 3). Still 2 products and 2 reductions.
            self.set_px(OP_ADD_RAW, a.0[0], a.0[1]);
            let c0 = self.op1(OP_MUL_DIFF, a.0[0], a.0[1]);
            self.set_px(OP_ADD_RAW, a.0[0], a.0[0]);
            let c1 = self.op1(OP_MUL | FROM_PX, a.0[1], a.0[1]);
            return E([c0, c1]);
        }
        if self.fused {
            self.set_px(OP_ADD, a.0[0], a.0[1]);
            let c0 = self.op1(OP_MUL_DIFF, a.0[0], a.0[1]);
            let m = self.op1(OP_MUL, a.0[0], a.0[1]);
            let c1 = self.op1(OP_ADD, m, m);
            return E([c0, c1]);
        }
        let s = self.op1(OP_ADD, a.0[0], a.0[1]);
        let d = self.op1(OP_SUB, a.0[0], a.0[1]);
        let c0 = self.op1(OP_MUL, s, d);
        let m = self.op1(OP_MUL, a.0[0], a.0[1]);
        let c1 = self.op1(OP_ADD, m, m);
        E([c0, c1])
    }

    /// Copies results into fixed slots, after everything else has read the inputs.
    fn store(&mut self, outputs: &[(u16, E)]) {
        for &(coord, e) in outputs {
            let dst = self.fixed(coord);
            for k in 0..self.w as usize {
                self.ins.push((OP_COPY, dst.0[k], e.0[k], e.0[k]));
            }
        }
    }

    /// Drops the copies of `store` where the copied value can be computed straight into its
    /// slot: the instruction defining it writes the slot instead, and later readers read the
    /// slot. Allowed when nothing after that instruction reads the slot's old value (nor the
    /// same coordinate of the other point, which a kernel may alias: `CURVE_add(p, p)`).
    /// Why: the interpreter moves each register through memory, so a copy costs a third of a
    /// product's memory traffic; a mixed addition had 6 copies among its 23 instructions.
    /// Only the interpreter's programs use this: the plain path names every value.
    fn fold_stores(&mut self) {
        let fixed = FIXED * self.w;
        let point = 4 * self.w;
        let alias = |r: u16| match r {
            r if r < point => Some(r + point),
            r if r < 2 * point => Some(r - point),
            _ => None,
        };
        let mut i = 0;
        while i < self.ins.len() {
            let (op, slot, src, _) = self.ins[i];
            let def = self.ins.iter().position(|ins| ins.1 == src);
            let foldable = op == OP_COPY && slot < fixed && src >= fixed;
            let Some(def) = def.filter(|_| foldable) else {
                i += 1;
                continue;
            };
            let reads_old = self.ins[def + 1..].iter().enumerate().any(|(k, &(_, _, a, b))| {
                def + 1 + k != i && [a, b].iter().any(|&r| r == slot || Some(r) == alias(slot))
            });
            let stored_twice = self.ins.iter().filter(|ins| ins.0 == OP_COPY && ins.2 == src).count() > 1;
            if reads_old || stored_twice {
                i += 1;
                continue;
            }
            self.ins[def].1 = slot;
            self.ins.remove(i);
            for ins in &mut self.ins[def + 1..] {
                if ins.2 == src {
                    ins.2 = slot;
                }
                if ins.3 == src {
                    ins.3 = slot;
                }
            }
        }
    }

    /// Maps temporaries onto physical registers above the fixed slots, reusing a register
    /// once its value is dead (an instruction reads its operands before it writes).
    fn allocate(&self) -> (Vec<u32>, u16) {
        let fixed = FIXED * self.w;
        let mut last_use = vec![0usize; self.next as usize];
        for (i, &(_, _, a, b)) in self.ins.iter().enumerate() {
            last_use[a as usize] = i;
            last_use[b as usize] = i;
        }
        let mut phys = vec![u16::MAX; self.next as usize];
        for r in 0..fixed {
            phys[r as usize] = r;
        }
        let mut free: Vec<u16> = Vec::new();
        let mut high = fixed;
        let mut words = Vec::with_capacity(self.ins.len());
        for (i, &(op, d, a, b)) in self.ins.iter().enumerate() {
            let (pa, pb) = (phys[a as usize], phys[b as usize]);
            for src in [a, b] {
                if src >= fixed
                    && last_use[src as usize] == i
                    && phys[src as usize] != u16::MAX
                    && !free.contains(&phys[src as usize])
                {
                    free.push(phys[src as usize]);
                }
            }
            if d != NO_REG && d >= fixed {
                let r = free.pop().unwrap_or_else(|| {
                    high += 1;
                    high - 1
                });
                phys[d as usize] = r;
            }
            let pd = if d == NO_REG { 0 } else { phys[d as usize] };
            words.push(op | (u32::from(pd) << 8) | (u32::from(pa) << 16) | (u32::from(pb) << 24));
        }
        (words, high)
    }
}

/// madd-2008-s, first half: PP = X2·ZZ1 − X1, R = Y2·ZZZ1 − Y1 (affine (X2, Y2) in Q).
fn madd_head(b: &mut Builder) {
    let (px, py, pzz, pzzz) = (b.fixed(P), b.fixed(P + 1), b.fixed(P + 2), b.fixed(P + 3));
    let (qx, qy) = (b.fixed(Q), b.fixed(Q + 1));
    let u2 = b.mul(qx, pzz);
    let s2 = b.mul(qy, pzzz);
    let pp = b.sub(u2, px);
    let r = b.sub(s2, py);
    b.store(&[(PP, pp), (R, r)]);
}

/// madd-2008-s, second half (PP ≠ 0).
fn madd_tail(b: &mut Builder) {
    let (px, py, pzz, pzzz) = (b.fixed(P), b.fixed(P + 1), b.fixed(P + 2), b.fixed(P + 3));
    let (pp_, r) = (b.fixed(PP), b.fixed(R));
    let pp = b.sqr(pp_);
    let ppp = b.mul(pp_, pp);
    let q = b.mul(px, pp);
    let r2 = b.sqr(r);
    let t = b.sub(r2, ppp);
    let t = b.sub(t, q);
    let x3 = b.sub(t, q);
    let t = b.sub(q, x3);
    let t = b.mul(r, t);
    let u = b.mul(py, ppp);
    let y3 = b.sub(t, u);
    let zz3 = b.mul(pzz, pp);
    let zzz3 = b.mul(pzzz, ppp);
    b.store(&[(P, x3), (P + 1, y3), (P + 2, zz3), (P + 3, zzz3)]);
}

/// The doubling shared by mdbl-2008-s-1 (zz, zzz = None: affine) and dbl-2008-s-1.
fn double(b: &mut Builder, x: E, y: E, zz: Option<(E, E)>) {
    let u = b.double(y);
    let v = b.sqr(u);
    let w = b.mul(u, v);
    let s = b.mul(x, v);
    let x2 = b.sqr(x);
    let m = b.double(x2);
    let m = b.add(m, x2);
    let m2 = b.sqr(m);
    let t = b.sub(m2, s);
    let x3 = b.sub(t, s);
    let t = b.sub(s, x3);
    let t = b.mul(m, t);
    let wy = b.mul(w, y);
    let y3 = b.sub(t, wy);
    let (zz3, zzz3) = match zz {
        None => (v, w),
        Some((zz, zzz)) => (b.mul(v, zz), b.mul(w, zzz)),
    };
    b.store(&[(P, x3), (P + 1, y3), (P + 2, zz3), (P + 3, zzz3)]);
}

/// mdbl-2008-s-1: 2·(affine point in Q) into P.
fn mdbl(b: &mut Builder) {
    let (qx, qy) = (b.fixed(Q), b.fixed(Q + 1));
    double(b, qx, qy, None);
}

/// dbl-2008-s-1: 2·P into P.
fn dbl(b: &mut Builder) {
    let (px, py, pzz, pzzz) = (b.fixed(P), b.fixed(P + 1), b.fixed(P + 2), b.fixed(P + 3));
    double(b, px, py, Some((pzz, pzzz)));
}

/// add-2008-s, first half: U1, S1, PP = U2 − U1, R = S2 − S1.
fn add_head(b: &mut Builder) {
    let (px, py, pzz, pzzz) = (b.fixed(P), b.fixed(P + 1), b.fixed(P + 2), b.fixed(P + 3));
    let (qx, qy, qzz, qzzz) = (b.fixed(Q), b.fixed(Q + 1), b.fixed(Q + 2), b.fixed(Q + 3));
    let u1 = b.mul(px, qzz);
    let u2 = b.mul(qx, pzz);
    let s1 = b.mul(py, qzzz);
    let s2 = b.mul(qy, pzzz);
    let pp = b.sub(u2, u1);
    let r = b.sub(s2, s1);
    b.store(&[(PP, pp), (R, r), (U1, u1), (S1, s1)]);
}

/// add-2008-s, second half (PP ≠ 0).
fn add_tail(b: &mut Builder) {
    let (pzz, pzzz) = (b.fixed(P + 2), b.fixed(P + 3));
    let (qzz, qzzz) = (b.fixed(Q + 2), b.fixed(Q + 3));
    let (pp_, r, u1, s1) = (b.fixed(PP), b.fixed(R), b.fixed(U1), b.fixed(S1));
    let pp = b.sqr(pp_);
    let ppp = b.mul(pp_, pp);
    let qq = b.mul(u1, pp);
    let r2 = b.sqr(r);
    let t = b.sub(r2, ppp);
    let t = b.sub(t, qq);
    let x3 = b.sub(t, qq);
    let t = b.sub(qq, x3);
    let t = b.mul(r, t);
    let u = b.mul(s1, ppp);
    let y3 = b.sub(t, u);
    let t = b.mul(pzz, qzz);
    let zz3 = b.mul(t, pp);
    let t = b.mul(pzzz, qzzz);
    let zzz3 = b.mul(t, ppp);
    b.store(&[(P, x3), (P + 1, y3), (P + 2, zz3), (P + 3, zzz3)]);
}

/// Slots of the shifted-bases kernel's field values (msm_table.wgsl; the WGSL constants
/// `TABLE_*` are generated from these). PREFIX and PREV go to and come from the table as an
/// affine point's x, so the slot after each is the kernel's scratch; NORM's second register
/// holds zero when TABLE_INV runs (the kernel sets it).
const TABLE_PREFIX: u16 = 12;
const TABLE_INV: u16 = 15;
const TABLE_PREV: u16 = 16;
const TABLE_NORM: u16 = 18;

/// Shifted bases, forward, after P's doublings: PREFIX ·= ZZ·ZZZ (Montgomery's trick over
/// d = ZZ·ZZZ, whose inverse gives both 1/ZZ = ZZZ/d and 1/ZZZ = ZZ/d).
fn table_fwd(b: &mut Builder) {
    let (pzz, pzzz, prefix) = (b.fixed(P + 2), b.fixed(P + 3), b.fixed(TABLE_PREFIX));
    let d = b.mul(pzz, pzzz);
    let prefix2 = b.mul(prefix, d);
    b.store(&[(TABLE_PREFIX, prefix2)]);
}

/// NORM = PREFIX·conj(PREFIX), in Fq (a0² + a1² for G2; a² for G1): the one value the kernel
/// inverts (in NORM's first register).
fn table_norm(b: &mut Builder) {
    let a = b.fixed(TABLE_PREFIX).0;
    let n = if b.w == 1 {
        b.op1(OP_MUL, a[0], a[0])
    } else {
        let s0 = b.op1(OP_MUL, a[0], a[0]);
        let s1 = b.op1(OP_MUL, a[1], a[1]);
        b.op1(OP_ADD, s0, s1)
    };
    let dst = b.fixed(TABLE_NORM).0[0];
    b.ins.push((OP_COPY, dst, n, n));
}

/// INV = 1/PREFIX = conj(PREFIX)·(1/NORM), NORM's first register inverted by the kernel and
/// its second zero.
fn table_inv(b: &mut Builder) {
    let (a, n) = (b.fixed(TABLE_PREFIX).0, b.fixed(TABLE_NORM).0);
    let c0 = b.op1(OP_MUL, a[0], n[0]);
    let inv = if b.w == 1 {
        E([c0, 0])
    } else {
        let t = b.op1(OP_MUL, a[1], n[0]);
        E([c0, b.op1(OP_SUB, n[1], t)])
    };
    b.store(&[(TABLE_INV, inv)]);
}

/// Backward, window w: Q holds the multiple (XYZZ), INV = 1/prefix_w, PREV = prefix_{w−1}.
/// Q becomes affine (x = X·ZZZ/d, y = Y·ZZ/d with 1/d = INV·PREV) and INV = 1/prefix_{w−1}.
fn table_bwd(b: &mut Builder) {
    let (qx, qy, qzz, qzzz) = (b.fixed(Q), b.fixed(Q + 1), b.fixed(Q + 2), b.fixed(Q + 3));
    let (inv, prev) = (b.fixed(TABLE_INV), b.fixed(TABLE_PREV));
    let dinv = b.mul(inv, prev);
    let d = b.mul(qzz, qzzz);
    let inv2 = b.mul(inv, d);
    let izz = b.mul(dinv, qzzz);
    let x = b.mul(qx, izz);
    let izzz = b.mul(dinv, qzz);
    let y = b.mul(qy, izzz);
    b.store(&[(Q, x), (Q + 1, y), (TABLE_INV, inv2)]);
}

/// A curve's programs: the instruction words, each program's range, the registers needed.
pub struct Programs {
    pub words: Vec<u32>,
    pub ranges: Vec<(&'static str, u32, u32)>,
    pub registers: u16,
    /// Registers per coordinate (1 for G1, 2 for G2).
    pub w: u16,
}

/// The interpreter's programs for `curve`; `lazy`: with lazy Fq2 products (vm_lazy.wgsl's
/// kinds; G2 only: G1's programs have no Fq2 product and are the same either way).
pub fn programs(curve: Curve, lazy: bool) -> Programs {
    let w = width(curve);
    let mut words = Vec::new();
    let mut ranges = Vec::new();
    let mut registers = FIXED * w;
    for &(name, build) in FORMULAS.iter().chain(&TABLE_PROGRAMS) {
        let mut b = Builder::new(w, true, lazy);
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

type Build = fn(&mut Builder);

/// The shifted-bases kernel's programs (field arithmetic only; after FORMULAS in the words).
const TABLE_PROGRAMS: [(&str, Build); 4] =
    [("TABLE_FWD", table_fwd), ("TABLE_NORM", table_norm), ("TABLE_INV", table_inv), ("TABLE_BWD", table_bwd)];

/// The six formulas, by name: the order of [`Programs::ranges`].
const FORMULAS: [(&str, Build); 6] = [
    ("MADD_HEAD", madd_head),
    ("MADD_TAIL", madd_tail),
    ("MDBL", mdbl),
    ("ADD_HEAD", add_head),
    ("ADD_TAIL", add_tail),
    ("DBL", dbl),
];

fn width(curve: Curve) -> u16 {
    match curve {
        Curve::G1 => 1,
        Curve::G2 => 2,
    }
}

/// The plain path: the same formulas as straight-line WGSL functions over point values
/// (`<g>_affine`, `<g>_xyzz`, `<g>_head`: shaders/curve_plain.wgsl), one `let` per
/// instruction of the program before register allocation. Nothing is interpreted and no
/// register file lives in memory, so a GPU's compiler keeps every value in registers; the
/// price is compile time (every call site inlines the whole formula), which real GPUs'
/// compilers pay in milliseconds and llvmpipe in seconds.
///
/// Each function reads its inputs from parameters `p` (XYZZ), `q` (affine or XYZZ), `h`
/// (what the head left: PP, R, U1, S1) and returns its outputs in a fresh value.
pub fn plain_wgsl(curve: Curve) -> String {
    let w = width(curve);
    let g = curve.prefix();
    let fld = if w == 1 { "fq" } else { "fq2" };
    let (xyzz, affine, head) = (format!("{g}_xyzz"), format!("{g}_affine"), format!("{g}_head"));
    let mut s = format!("struct {head} {{\n    pp: {fld},\n    r: {fld},\n    u1: {fld},\n    s1: {fld},\n}}\n\n");
    for (name, build) in FORMULAS {
        let (params, ret) = match name {
            "MADD_HEAD" => (format!("p: {xyzz}, q: {affine}"), &head),
            "MADD_TAIL" => (format!("p: {xyzz}, h: {head}"), &xyzz),
            "MDBL" => (format!("q: {affine}"), &xyzz),
            "ADD_HEAD" => (format!("p: {xyzz}, q: {xyzz}"), &head),
            "ADD_TAIL" => (format!("p: {xyzz}, q: {xyzz}, h: {head}"), &xyzz),
            _ => (format!("p: {xyzz}"), &xyzz),
        };
        let mut b = Builder::new(w, false, false);
        build(&mut b);
        s.push_str(&format!("fn {g}_{}({params}) -> {ret} {{\n    var out: {ret};\n", name.to_lowercase()));
        let operand = |r: u16| if r < FIXED * w { fixed_path(r, w) } else { format!("t{r}") };
        for &(op, d, a, bb) in &b.ins {
            let value = match op {
                OP_MUL => format!("fq_mul({}, {})", operand(a), operand(bb)),
                OP_ADD => format!("fq_add({}, {})", operand(a), operand(bb)),
                OP_SUB => format!("fq_sub({}, {})", operand(a), operand(bb)),
                _ => operand(a),
            };
            if d >= FIXED * w {
                s.push_str(&format!("    let t{d} = {value};\n"));
            } else {
                // An output: the fixed slot's field of the returned value.
                let path = fixed_path(d, w);
                let field = path.split_once('.').map_or(path.as_str(), |(_, f)| f);
                s.push_str(&format!("    out.{field} = {value};\n"));
            }
        }
        s.push_str("    return out;\n}\n\n");
    }
    s
}

/// The WGSL path of fixed register `r`: P's coordinates in `p`, Q's in `q`, the head's
/// results in `h`; `.c0`/`.c1` for an Fq2's halves.
fn fixed_path(r: u16, w: u16) -> String {
    const COORDS: [&str; 4] = ["x", "y", "zz", "zzz"];
    let coord = r / w;
    let base = match coord {
        0..4 => format!("p.{}", COORDS[coord as usize]),
        4..8 => format!("q.{}", COORDS[coord as usize - 4]),
        PP => "h.pp".to_string(),
        R => "h.r".to_string(),
        U1 => "h.u1".to_string(),
        S1 => "h.s1".to_string(),
        _ => unreachable!("formulas only use slots below the kernels' spare points"),
    };
    if w == 2 {
        format!("{base}.c{}", r % w)
    } else {
        base
    }
}

/// WGSL declarations of a curve's program ranges and register file.
pub fn wgsl(curve: Curve, lazy: bool) -> String {
    let p = programs(curve, lazy);
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

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::{Fq, Fq2, Fr, G1Projective, G2Projective};
    use ark_ec::{CurveGroup, PrimeGroup};
    use ark_ff::{AdditiveGroup, Field, PrimeField, UniformRand};
    use std::collections::HashMap;

    const N: usize = 12;
    type Limbs = [u32; N];
    type Wide = [u32; 2 * N];

    fn modulus() -> Limbs {
        crate::shader::limbs32(&Fq::MODULUS).try_into().unwrap()
    }

    /// The field element whose Montgomery limbs are `l` (which must be reduced: a register
    /// never holds more than p − 1).
    fn from_limbs(l: Limbs, what: &str) -> Fq {
        assert!(lt(&l, &modulus()), "{what}: {l:08x?} is not reduced");
        let mut w = [0u64; 6];
        for (k, v) in w.iter_mut().enumerate() {
            *v = u64::from(l[2 * k]) | (u64::from(l[2 * k + 1]) << 32);
        }
        Fq::new_unchecked(ark_ff::BigInt::new(w))
    }

    fn to_limbs(x: Fq) -> Limbs {
        crate::shader::limbs32(&x.0).try_into().unwrap()
    }

    /// a < b, for limb strings of one length.
    fn lt(a: &[u32], b: &[u32]) -> bool {
        a.iter().rev().cmp(b.iter().rev()) == std::cmp::Ordering::Less
    }

    /// a + b over the limbs, and the carry out.
    fn add_limbs(a: &[u32], b: &[u32]) -> (Vec<u32>, bool) {
        let mut c = 0u64;
        let out = a.iter().zip(b).map(|(&x, &y)| {
            let s = u64::from(x) + u64::from(y) + c;
            c = s >> 32;
            s as u32
        });
        let out = out.collect();
        (out, c != 0)
    }

    /// a − b over the limbs, and whether it borrowed.
    fn sub_limbs(a: &[u32], b: &[u32]) -> (Vec<u32>, bool) {
        let mut borrow = 0i64;
        let out = a.iter().zip(b).map(|(&x, &y)| {
            let d = i64::from(x) - i64::from(y) - borrow;
            borrow = i64::from(d < 0);
            d as u32
        });
        let out = out.collect();
        (out, borrow != 0)
    }

    fn mul_wide(a: &Limbs, b: &Limbs) -> Wide {
        let mut t = [0u32; 2 * N];
        for i in 0..N {
            let mut c = 0u64;
            for j in 0..N {
                let s = u64::from(a[j]) * u64::from(b[i]) + u64::from(t[i + j]) + c;
                t[i + j] = s as u32;
                c = s >> 32;
            }
            t[i + N] = c as u32;
        }
        t
    }

    /// Montgomery reduction of t < p·R (asserted: the bound the lazy product relies on),
    /// fully reduced.
    fn redc(t: &Wide, what: &str) -> Limbs {
        let p = modulus();
        assert!(lt(&t[N..], &p), "{what}: REDC argument not below p·R");
        let mut inv = 1u32;
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u32.wrapping_sub(p[0].wrapping_mul(inv)));
        }
        let neg_inv = inv.wrapping_neg();
        let mut x = t.to_vec();
        x.push(0);
        for i in 0..N {
            let m = x[i].wrapping_mul(neg_inv);
            let mut c = 0u64;
            for j in 0..N {
                let s = u64::from(m) * u64::from(p[j]) + u64::from(x[i + j]) + c;
                x[i + j] = s as u32;
                c = s >> 32;
            }
            let mut k = i + N;
            while c != 0 {
                let s = u64::from(x[k]) + c;
                x[k] = s as u32;
                c = s >> 32;
                k += 1;
            }
        }
        assert_eq!(x[2 * N], 0, "{what}: REDC result above 2^384");
        let r: Limbs = x[N..2 * N].try_into().unwrap();
        let (d, borrow) = sub_limbs(&r, &p);
        if borrow {
            r
        } else {
            let d: Limbs = d.try_into().unwrap();
            assert!(lt(&d, &p), "{what}: REDC result not below 2p");
            d
        }
    }

    /// The interpreter of shaders/vm.wgsl (`lazy`: vm_lazy.wgsl), on the host, on the limbs:
    /// products as whole double-width values and Montgomery reductions (equal to vm.wgsl's
    /// CIOS product for reduced inputs), sums into px unreduced where vm_lazy.wgsl leaves
    /// them so. Asserts the bounds the WGSL relies on: every REDC argument below p·R, every
    /// register and every sum's operand reduced, no raw sum past the limbs, no wide
    /// difference below zero where none may be.
    fn run(p: &Programs, name: &str, regs: &mut [Fq], lazy: bool) {
        let &(_, start, end) = p.ranges.iter().find(|r| r.0 == name).unwrap();
        let mut px: Limbs = [0; N];
        let mut wa: Wide = [0; 2 * N];
        for (pc, &ins) in p.words[start as usize..end as usize].iter().enumerate() {
            let what = format!("{name}[{pc}]");
            let (op, d, a, b) = (ins & 0xff, (ins >> 8) & 0xff, (ins >> 16) & 0xff, ins >> 24);
            let (x, y) = (to_limbs(regs[a as usize]), to_limbs(regs[b as usize]));
            let l = if op & FROM_PX != 0 { px } else { x };
            let raw = |u: &Limbs, v: &Limbs| -> Limbs {
                let (s, carry) = add_limbs(u, v);
                assert!(!carry, "{what}: raw sum past the limbs");
                s.try_into().unwrap()
            };
            let field = |u: Limbs| from_limbs(u, &what);
            let product = |u: &Limbs, v: &Limbs| redc(&mul_wide(u, v), &what);
            let z: Limbs = match op & 0xf {
                OP_MUL => product(&l, &y),
                OP_ADD => to_limbs(field(l) + field(y)),
                OP_SUB => to_limbs(field(l) - field(y)),
                OP_MUL_SUM if lazy => product(&px, &raw(&x, &y)),
                OP_MUL_SUM => product(&px, &to_limbs(field(x) + field(y))),
                OP_MUL_DIFF => product(&px, &to_limbs(field(x) - field(y))),
                OP_ADD_RAW => raw(&l, &y),
                OP_WIDE => {
                    wa = mul_wide(&l, &y);
                    continue;
                }
                OP_REDC_DIFF_ACC => {
                    let t = mul_wide(&l, &y);
                    let (v, borrow) = sub_limbs(&wa, &t);
                    let v = if borrow {
                        let (hi, _) = add_limbs(&v[N..], &modulus());
                        [&v[..N], &hi[..]].concat()
                    } else {
                        v
                    };
                    let (sum, carry) = add_limbs(&wa, &t);
                    assert!(!carry, "{what}: wa + a·b past the limbs");
                    wa = sum.try_into().unwrap();
                    redc(&v.try_into().unwrap(), &what)
                }
                OP_REDC_SUM_MINUS => {
                    let v = mul_wide(&px, &raw(&x, &y));
                    let (v, borrow) = sub_limbs(&v, &wa);
                    assert!(!borrow, "{what}: v2 − wa below zero");
                    redc(&v.try_into().unwrap(), &what)
                }
                OP_COPY => l,
                other => panic!("{what}: unknown kind {other}"),
            };
            if op & TO_PX != 0 {
                px = z;
            } else {
                regs[d as usize] = field(z);
            }
        }
    }

    /// XYZZ coordinates of an affine point (x, y) with a random Z.
    fn xyzz<F: Field>(x: F, y: F, z: F) -> [F; 4] {
        let zz = z.square();
        let zzz = zz * z;
        [x * zz, y * zzz, zz, zzz]
    }

    fn put<F: Copy>(regs: &mut [Fq], w: usize, coord: usize, v: F, split: fn(F) -> [Fq; 2]) {
        let parts = split(v);
        for k in 0..w {
            regs[coord * w + k] = parts[k];
        }
    }

    fn get<F>(regs: &[Fq], w: usize, coord: usize, join: fn([Fq; 2]) -> F) -> F {
        join([regs[coord * w], if w == 2 { regs[coord * w + 1] } else { Fq::ZERO }])
    }

    fn check<F: Field, G: CurveGroup<BaseField = F> + PrimeGroup<ScalarField = Fr>>(
        curve: Curve,
        lazy: bool,
        split: fn(F) -> [Fq; 2],
        join: fn([Fq; 2]) -> F,
        affine_xy: fn(&G::Affine) -> (F, F),
    ) {
        let mut rng = ark_std::test_rng();
        let p = programs(curve, lazy);
        let run = |p: &Programs, name: &str, regs: &mut [Fq]| run(p, name, regs, lazy);
        let w = p.w as usize;
        for _ in 0..4 {
            let a = (G::generator() * Fr::rand(&mut rng)).into_affine();
            let b = (G::generator() * Fr::rand(&mut rng)).into_affine();
            let (ax, ay) = affine_xy(&a);
            let (bx, by) = affine_xy(&b);
            let coords = |regs: &[Fq]| -> (F, F) {
                let c: Vec<F> = (0..4).map(|k| get(regs, w, k, join)).collect();
                (c[0] / c[2], c[1] / c[3])
            };
            let mut regs = vec![Fq::ZERO; p.registers as usize];
            // P + Q, both XYZZ.
            for (k, v) in xyzz(ax, ay, F::rand(&mut rng)).into_iter().enumerate() {
                put(&mut regs, w, k, v, split);
            }
            for (k, v) in xyzz(bx, by, F::rand(&mut rng)).into_iter().enumerate() {
                put(&mut regs, w, 4 + k, v, split);
            }
            let saved = regs.clone();
            run(&p, "ADD_HEAD", &mut regs);
            run(&p, "ADD_TAIL", &mut regs);
            assert_eq!(coords(&regs), affine_xy(&(a + b).into_affine()), "{curve:?} add");
            // P + affine Q.
            let mut regs = saved.clone();
            put(&mut regs, w, 4, bx, split);
            put(&mut regs, w, 5, by, split);
            run(&p, "MADD_HEAD", &mut regs);
            run(&p, "MADD_TAIL", &mut regs);
            assert_eq!(coords(&regs), affine_xy(&(a + b).into_affine()), "{curve:?} madd");
            // 2·affine Q, and 2·P.
            let mut regs = saved.clone();
            put(&mut regs, w, 4, bx, split);
            put(&mut regs, w, 5, by, split);
            run(&p, "MDBL", &mut regs);
            assert_eq!(coords(&regs), affine_xy(&(b + b).into_affine()), "{curve:?} mdbl");
            let mut regs = saved;
            run(&p, "DBL", &mut regs);
            assert_eq!(coords(&regs), affine_xy(&(a + a).into_affine()), "{curve:?} dbl");
        }
    }

    /// The shifted-bases kernel's programs (msm_table.wgsl) on random field values, through
    /// the host model of the interpreter: the forward product, the norm the kernel inverts,
    /// the inverse from it, and the backward step's affine coordinates and running inverse.
    fn check_table<F: Field>(curve: Curve, lazy: bool, split: fn(F) -> [Fq; 2], join: fn([Fq; 2]) -> F) {
        let mut rng = ark_std::test_rng();
        let p = programs(curve, lazy);
        let w = p.w as usize;
        let slot = |s: u16| s as usize;
        for _ in 0..4 {
            let mut regs = vec![Fq::ZERO; p.registers as usize];
            let (zz, zzz, prefix) = (F::rand(&mut rng), F::rand(&mut rng), F::rand(&mut rng));
            put(&mut regs, w, 2, zz, split);
            put(&mut regs, w, 3, zzz, split);
            put(&mut regs, w, slot(TABLE_PREFIX), prefix, split);
            run(&p, "TABLE_FWD", &mut regs, lazy);
            let prefix = prefix * zz * zzz;
            assert_eq!(get(&regs, w, slot(TABLE_PREFIX), join), prefix, "{curve:?} TABLE_FWD");
            run(&p, "TABLE_NORM", &mut regs, lazy);
            // What the kernel does between the two: invert NORM's first register, zero its second.
            let n = regs[slot(TABLE_NORM) * w];
            regs[slot(TABLE_NORM) * w] = n.inverse().unwrap();
            if w == 2 {
                regs[slot(TABLE_NORM) * w + 1] = Fq::ZERO;
            }
            run(&p, "TABLE_INV", &mut regs, lazy);
            assert_eq!(get(&regs, w, slot(TABLE_INV), join), prefix.inverse().unwrap(), "{curve:?} TABLE_INV");

            let q: Vec<F> = (0..4).map(|_| F::rand(&mut rng)).collect();
            let (inv, prev) = (F::rand(&mut rng), F::rand(&mut rng));
            for (k, v) in q.iter().enumerate() {
                put(&mut regs, w, 4 + k, *v, split);
            }
            put(&mut regs, w, slot(TABLE_INV), inv, split);
            put(&mut regs, w, slot(TABLE_PREV), prev, split);
            run(&p, "TABLE_BWD", &mut regs, lazy);
            let dinv = inv * prev;
            assert_eq!(get(&regs, w, 4, join), q[0] * dinv * q[3], "{curve:?} TABLE_BWD x");
            assert_eq!(get(&regs, w, 5, join), q[1] * dinv * q[2], "{curve:?} TABLE_BWD y");
            assert_eq!(get(&regs, w, slot(TABLE_INV), join), inv * q[2] * q[3], "{curve:?} TABLE_BWD inv");
        }
    }

    #[test]
    fn table_programs_invert_and_normalise() {
        for lazy in [false, true] {
            check_table::<Fq>(Curve::G1, lazy, |x| [x, Fq::ZERO], |v| v[0]);
            check_table::<Fq2>(Curve::G2, lazy, |x| [x.c0, x.c1], |v| Fq2::new(v[0], v[1]));
        }
    }

    #[test]
    fn programs_compute_the_group_law() {
        for lazy in [false, true] {
            check::<Fq, G1Projective>(Curve::G1, lazy, |x| [x, Fq::ZERO], |v| v[0], |p| (p.x, p.y));
            check::<Fq2, G2Projective>(Curve::G2, lazy, |x| [x.c0, x.c1], |v| Fq2::new(v[0], v[1]), |p| (p.x, p.y));
        }
    }

    /// The plain path's function `func` (generated WGSL text), evaluated on the host: every
    /// line is `let t = op(a, b);`, `out.f = op(a, b);` or a bare name, so a few string
    /// splits read it. Inputs and outputs are keyed by WGSL path (`p.x.c0`, `zz`, `pp`).
    fn eval_plain(src: &str, func: &str, inputs: &HashMap<String, Fq>) -> HashMap<String, Fq> {
        let start = src.find(&format!("fn {func}(")).unwrap_or_else(|| panic!("{func} missing"));
        let mut values = inputs.clone();
        let mut out = HashMap::new();
        for line in src[start..].lines().skip(1).map(str::trim).take_while(|l| *l != "}") {
            let Some((lhs, rhs)) = line.trim_end_matches(';').split_once(" = ") else { continue };
            let look = |n: &str| *values.get(n).unwrap_or_else(|| panic!("{func}: {n} unset"));
            let v = match rhs.split_once('(') {
                Some((op, args)) => {
                    let (a, b) = args.trim_end_matches(')').split_once(", ").expect("two operands");
                    match op {
                        "fq_mul" => look(a) * look(b),
                        "fq_add" => look(a) + look(b),
                        "fq_sub" => look(a) - look(b),
                        other => panic!("{func}: unknown op {other}"),
                    }
                }
                None => look(rhs),
            };
            match lhs.strip_prefix("out.") {
                Some(field) => out.insert(field.to_string(), v),
                None => values.insert(lhs.trim_start_matches("let ").to_string(), v),
            };
        }
        out
    }

    /// WGSL paths of a point's coordinates under `var` (`p.x` or `p.x.c0`, `p.x.c1`).
    fn point_env<F: Copy>(var: &str, coords: &[F], w: usize, split: fn(F) -> [Fq; 2]) -> HashMap<String, Fq> {
        let names = ["x", "y", "zz", "zzz"];
        let mut env = HashMap::new();
        for (c, v) in coords.iter().enumerate() {
            let parts = split(*v);
            for (k, part) in parts.iter().enumerate().take(w) {
                let suffix = if w == 2 { format!(".c{k}") } else { String::new() };
                env.insert(format!("{var}{}{}", if var.is_empty() { "" } else { "." }, names[c]) + &suffix, *part);
            }
        }
        env
    }

    fn check_plain<F: Field, G: CurveGroup<BaseField = F> + PrimeGroup<ScalarField = Fr>>(
        curve: Curve,
        split: fn(F) -> [Fq; 2],
        join: fn([Fq; 2]) -> F,
        affine_xy: fn(&G::Affine) -> (F, F),
    ) {
        let mut rng = ark_std::test_rng();
        let src = plain_wgsl(curve);
        let g = curve.prefix();
        let w = width(curve) as usize;
        // An output map's coordinate c as an element of F.
        let coord = |out: &HashMap<String, Fq>, name: &str| -> F {
            if w == 1 {
                join([out[name], Fq::ZERO])
            } else {
                join([out[&format!("{name}.c0")], out[&format!("{name}.c1")]])
            }
        };
        let affine =
            |out: &HashMap<String, Fq>| (coord(out, "x") / coord(out, "zz"), coord(out, "y") / coord(out, "zzz"));
        // What a head function returns, as the tail's `h` input.
        let as_h = |out: HashMap<String, Fq>| -> HashMap<String, Fq> {
            out.into_iter().map(|(k, v)| (format!("h.{k}"), v)).collect()
        };
        for _ in 0..4 {
            let a = (G::generator() * Fr::rand(&mut rng)).into_affine();
            let b = (G::generator() * Fr::rand(&mut rng)).into_affine();
            let (ax, ay) = affine_xy(&a);
            let (bx, by) = affine_xy(&b);
            let p = point_env("p", &xyzz(ax, ay, F::rand(&mut rng)), w, split);
            let q = point_env("q", &xyzz(bx, by, F::rand(&mut rng)), w, split);
            let q_affine = point_env("q", &[bx, by], w, split);
            let sum = affine_xy(&(a + b).into_affine());

            let mut env: HashMap<String, Fq> = p.clone().into_iter().chain(q.clone()).collect();
            let h = as_h(eval_plain(&src, &format!("{g}_add_head"), &env));
            env.extend(h);
            assert_eq!(affine(&eval_plain(&src, &format!("{g}_add_tail"), &env)), sum, "{curve:?} add");

            let mut env: HashMap<String, Fq> = p.clone().into_iter().chain(q_affine.clone()).collect();
            let h = as_h(eval_plain(&src, &format!("{g}_madd_head"), &env));
            env.extend(h);
            assert_eq!(affine(&eval_plain(&src, &format!("{g}_madd_tail"), &env)), sum, "{curve:?} madd");

            let doubled_b = affine_xy(&(b + b).into_affine());
            assert_eq!(affine(&eval_plain(&src, &format!("{g}_mdbl"), &q_affine)), doubled_b, "{curve:?} mdbl");
            let doubled_a = affine_xy(&(a + a).into_affine());
            assert_eq!(affine(&eval_plain(&src, &format!("{g}_dbl"), &p)), doubled_a, "{curve:?} dbl");
        }
    }

    #[test]
    fn plain_functions_compute_the_group_law() {
        check_plain::<Fq, G1Projective>(Curve::G1, |x| [x, Fq::ZERO], |v| v[0], |p| (p.x, p.y));
        check_plain::<Fq2, G2Projective>(Curve::G2, |x| [x.c0, x.c1], |v| Fq2::new(v[0], v[1]), |p| (p.x, p.y));
    }

    /// One Fq2 product and one square as the interpreter runs them (both sequences: the
    /// fused one and the lazy one), on edge operands — limbs p − 1, zero, limbs 1, one, the
    /// lazy c0's negative case a0·b0 < a1·b1 — against arkworks, with `run`'s bound checks.
    #[test]
    fn fq2_products_on_edge_operands() {
        let mut rng = ark_std::test_rng();
        let mut p_minus_1 = modulus();
        p_minus_1[0] -= 1;
        let mut limbs_1 = [0u32; N];
        limbs_1[0] = 1;
        let values = [
            Fq::ZERO,
            from_limbs(limbs_1, "limbs 1"),
            Fq::ONE,
            from_limbs(p_minus_1, "p - 1"),
            -Fq::ONE,
            Fq::from(2u64),
            Fq::rand(&mut rng),
            Fq::rand(&mut rng),
        ];
        let operands: Vec<Fq2> = values.iter().flat_map(|&c0| values.iter().map(move |&c1| Fq2::new(c0, c1))).collect();
        for lazy in [false, true] {
            let mut b = Builder::new(2, true, lazy);
            let (x, y) = (b.fixed(P), b.fixed(Q));
            let c = b.mul(x, y);
            let s = b.sqr(x);
            b.store(&[(P + 1, c), (P + 2, s)]);
            b.fold_stores();
            let (words, high) = b.allocate();
            let len = words.len() as u32;
            let p = Programs { words, ranges: vec![("TEST", 0, len)], registers: high, w: 2 };
            let mut regs = vec![Fq::ZERO; p.registers as usize];
            for &u in &operands {
                for &v in &operands {
                    regs[..2].copy_from_slice(&[u.c0, u.c1]);
                    regs[8..10].copy_from_slice(&[v.c0, v.c1]);
                    run(&p, "TEST", &mut regs, lazy);
                    assert_eq!(Fq2::new(regs[2], regs[3]), u * v, "lazy {lazy}: {u} · {v}");
                    assert_eq!(Fq2::new(regs[4], regs[5]), u.square(), "lazy {lazy}: {u}²");
                }
            }
        }
    }

    /// What each G2 program costs the interpreter, fused against lazy: instructions, stores to
    /// the register file, products (an Fq-size product, reduced or double-width) and Montgomery
    /// reductions. NOTES.md quotes this table (`--nocapture` prints it); the asserts pin the
    /// counts the prediction rests on: a mixed addition (head + tail) makes 28 products either
    /// way, and 20 reductions lazily instead of 28.
    #[test]
    fn lazy_programs_count() {
        let count = |p: &Programs, name: &str| -> [usize; 4] {
            let &(_, start, end) = p.ranges.iter().find(|r| r.0 == name).unwrap();
            let mut c = [0; 4];
            for &ins in &p.words[start as usize..end as usize] {
                let (op, kind) = (ins & 0xff, ins & 0xf);
                c[0] += 1;
                c[1] += usize::from(op & TO_PX == 0 && kind != OP_WIDE);
                let reduced = [OP_MUL, OP_MUL_SUM, OP_MUL_DIFF, OP_REDC_DIFF_ACC, OP_REDC_SUM_MINUS].contains(&kind);
                c[2] += usize::from(reduced || kind == OP_WIDE);
                c[3] += usize::from(reduced);
            }
            c
        };
        let (fused, lazy) = (programs(Curve::G2, false), programs(Curve::G2, true));
        println!("G2 program: instructions, stores, products, reductions (fused -> lazy)");
        let mut madd = [[0; 4]; 2];
        for (name, ..) in &fused.ranges {
            let (f, l) = (count(&fused, name), count(&lazy, name));
            println!("{name}: {f:?} -> {l:?}");
            if name.starts_with("MADD") {
                for k in 0..4 {
                    madd[0][k] += f[k];
                    madd[1][k] += l[k];
                }
            }
        }
        println!("mixed addition: {:?} -> {:?}", madd[0], madd[1]);
        assert_eq!((madd[0][2], madd[0][3]), (28, 28), "fused mixed addition");
        assert_eq!((madd[1][2], madd[1][3]), (28, 20), "lazy mixed addition");
    }

    #[test]
    fn folding_drops_the_copies() {
        for (curve, lazy) in [(Curve::G1, false), (Curve::G2, false), (Curve::G2, true)] {
            let p = programs(curve, lazy);
            for (name, start, end) in &p.ranges {
                let copies = p.words[*start as usize..*end as usize].iter().filter(|w| *w & 0xff == OP_COPY).count();
                assert_eq!(copies, 0, "{curve:?} {name}");
            }
        }
    }

    #[test]
    fn programs_fit_the_interpreter() {
        for (curve, lazy) in [(Curve::G1, false), (Curve::G2, false), (Curve::G2, true)] {
            let p = programs(curve, lazy);
            assert!(p.registers < 256, "{curve:?}: {} registers", p.registers);
            assert!(p.ranges.iter().all(|r| r.1 < r.2));
        }
    }
}
