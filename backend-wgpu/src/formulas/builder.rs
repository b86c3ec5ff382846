//! Writing a program: field operations over virtual registers, copies of the results into
//! fixed slots folded away where possible, then registers allocated by liveness and each
//! instruction encoded as one word for shaders/vm/vm.wgsl.

/// Instruction kinds (the op byte's low 4 bits).
pub const OP_MUL: u32 = 0;
pub const OP_ADD: u32 = 1;
pub const OP_SUB: u32 = 2;
pub const OP_COPY: u32 = 3;
/// px·(a + b) and px·(a − b), where px is the interpreter's one register kept out of memory
/// (vm.wgsl): Karatsuba's (a0 + a1)(b0 + b1) and a square's (a0 + a1)(a0 − a1) as one
/// product each, without storing the sums.
pub const OP_MUL_SUM: u32 = 4;
pub const OP_MUL_DIFF: u32 = 5;
/// Flags over the kinds above: the left operand is px (a is unused), and the result goes to
/// px instead of register d.
pub const FROM_PX: u32 = 0x10;
pub const TO_PX: u32 = 0x20;
/// The destination of an instruction that writes px.
const NO_REG: u16 = u16::MAX;

/// Fixed slots (in coordinates; times w for registers): P (X, Y, ZZ, ZZZ), Q, and what a head
/// program leaves for its tail and for the zero tests between them.
pub const P: u16 = 0;
pub const Q: u16 = 4;
pub const PP: u16 = 8;
pub const R: u16 = 9;
pub const U1: u16 = 10;
pub const S1: u16 = 11;
/// Slots 12..20: two more points for the kernels. Programs address P and Q relative to bases
/// the kernel picks (vm_run's p and q), so a kernel adds any slot to any other without
/// copying points — on lavapipe every register access in a kernel costs compile time.
pub const FIXED: u16 = 20;

/// An element of the curve's field: one or two registers (virtual until allocation).
#[derive(Clone, Copy)]
pub struct E(pub [u16; 2]);

pub struct Builder {
    /// Registers a coordinate: 1 (Fq, G1) or 2 (Fq2, G2).
    pub w: u16,
    /// (op, dst, a, b) over virtual registers; virtual r < FIXED·w are the fixed slots.
    pub ins: Vec<(u32, u16, u16, u16)>,
    next: u16,
}

impl Builder {
    pub fn new(w: u16) -> Builder {
        Builder { w, ins: Vec::new(), next: FIXED * w }
    }

    pub fn fixed(&self, coord: u16) -> E {
        E([coord * self.w, coord * self.w + 1])
    }

    fn temp(&mut self) -> u16 {
        self.next += 1;
        self.next - 1
    }

    /// One Fq instruction into a new temporary.
    pub fn op1(&mut self, op: u32, a: u16, b: u16) -> u16 {
        let d = self.temp();
        self.ins.push((op, d, a, b));
        d
    }

    /// Register `dst` = register `src`.
    pub fn copy(&mut self, dst: u16, src: u16) {
        self.ins.push((OP_COPY, dst, src, src));
    }

    pub fn add(&mut self, a: E, b: E) -> E {
        if self.w == 1 {
            E([self.op1(OP_ADD, a.0[0], b.0[0]), 0])
        } else {
            E([self.op1(OP_ADD, a.0[0], b.0[0]), self.op1(OP_ADD, a.0[1], b.0[1])])
        }
    }

    pub fn sub(&mut self, a: E, b: E) -> E {
        if self.w == 1 {
            E([self.op1(OP_SUB, a.0[0], b.0[0]), 0])
        } else {
            E([self.op1(OP_SUB, a.0[0], b.0[0]), self.op1(OP_SUB, a.0[1], b.0[1])])
        }
    }

    pub fn double(&mut self, a: E) -> E {
        self.add(a, a)
    }

    /// An instruction whose result goes to px.
    fn set_px(&mut self, op: u32, a: u16, b: u16) {
        self.ins.push((op | TO_PX, NO_REG, a, b));
    }

    /// In Fq2 (u² = −1) by Karatsuba: three Fq products, the sums through px —
    /// px = a0 + a1; px = px·(b0 + b1); px = px − v0; c1 = px − v1: 7 instructions and 4
    /// stores where naming every value takes 8 and 8.
    pub fn mul(&mut self, a: E, b: E) -> E {
        if self.w == 1 {
            return E([self.op1(OP_MUL, a.0[0], b.0[0]), 0]);
        }
        let v0 = self.op1(OP_MUL, a.0[0], b.0[0]);
        let v1 = self.op1(OP_MUL, a.0[1], b.0[1]);
        self.set_px(OP_ADD, a.0[0], a.0[1]);
        self.set_px(OP_MUL_SUM, b.0[0], b.0[1]);
        self.set_px(OP_SUB | FROM_PX, v0, v0);
        let c1 = self.op1(OP_SUB | FROM_PX, v1, v1);
        let c0 = self.op1(OP_SUB, v0, v1);
        E([c0, c1])
    }

    /// In Fq2: (a0 + a1)(a0 − a1) + 2·a0·a1·u, two Fq products.
    pub fn sqr(&mut self, a: E) -> E {
        if self.w == 1 {
            return self.mul(a, a);
        }
        self.set_px(OP_ADD, a.0[0], a.0[1]);
        let c0 = self.op1(OP_MUL_DIFF, a.0[0], a.0[1]);
        let m = self.op1(OP_MUL, a.0[0], a.0[1]);
        let c1 = self.op1(OP_ADD, m, m);
        E([c0, c1])
    }

    /// Copies results into fixed slots, after everything else has read the inputs.
    pub fn store(&mut self, outputs: &[(u16, E)]) {
        for &(coord, e) in outputs {
            let dst = self.fixed(coord);
            for k in 0..self.w as usize {
                self.copy(dst.0[k], e.0[k]);
            }
        }
    }

    /// Drops the copies of `store` where the copied value can be computed straight into its
    /// slot: the instruction defining it writes the slot instead, and later readers read the
    /// slot. Allowed when nothing after that instruction reads the slot's old value (nor the
    /// same coordinate of the other point, which a kernel may alias: `CURVE_add(p, p)`).
    /// Why: the interpreter moves each register through memory, so a copy costs a third of a
    /// product's memory traffic; a mixed addition had 6 copies among its 23 instructions.
    pub fn fold_stores(&mut self) {
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
    /// once its value is dead (an instruction reads its operands before it writes), and
    /// encodes each instruction as op | dst << 8 | a << 16 | b << 24. Returns the words and
    /// the registers used.
    pub fn allocate(&self) -> (Vec<u32>, u16) {
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
