//! The shifted-bases kernel's programs (shaders/msm/table.wgsl): field arithmetic only, for
//! turning each window's multiple of a point into affine coordinates with one inversion a
//! point (Montgomery's trick over d = ZZ·ZZZ, whose inverse gives both 1/ZZ = ZZZ/d and
//! 1/ZZZ = ZZ/d).

use super::builder::{Builder, E, OP_ADD, OP_MUL, OP_SUB, P, Q};

/// Slots of the kernel's field values (the WGSL constants `TABLE_*` are generated from
/// these). PREFIX and PREV go to and come from the table as an affine point's x, so the slot
/// after each is the kernel's scratch; NORM's second register holds zero when TABLE_INV runs
/// (the kernel sets it).
pub const TABLE_PREFIX: u16 = 12;
pub const TABLE_INV: u16 = 15;
pub const TABLE_PREV: u16 = 16;
pub const TABLE_NORM: u16 = 18;

/// Forward, after P's doublings: PREFIX ·= ZZ·ZZZ.
pub fn table_fwd(b: &mut Builder) {
    let (pzz, pzzz, prefix) = (b.fixed(P + 2), b.fixed(P + 3), b.fixed(TABLE_PREFIX));
    let d = b.mul(pzz, pzzz);
    let prefix2 = b.mul(prefix, d);
    b.store(&[(TABLE_PREFIX, prefix2)]);
}

/// NORM = PREFIX·conj(PREFIX), in Fq (a0² + a1² for G2; a² for G1): the one value the kernel
/// inverts (in NORM's first register).
pub fn table_norm(b: &mut Builder) {
    let a = b.fixed(TABLE_PREFIX).0;
    let n = if b.w == 1 {
        b.op1(OP_MUL, a[0], a[0])
    } else {
        let s0 = b.op1(OP_MUL, a[0], a[0]);
        let s1 = b.op1(OP_MUL, a[1], a[1]);
        b.op1(OP_ADD, s0, s1)
    };
    let dst = b.fixed(TABLE_NORM).0[0];
    b.copy(dst, n);
}

/// INV = 1/PREFIX = conj(PREFIX)·(1/NORM), NORM's first register inverted by the kernel and
/// its second zero.
pub fn table_inv(b: &mut Builder) {
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
pub fn table_bwd(b: &mut Builder) {
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
