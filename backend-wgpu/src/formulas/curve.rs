//! The curve formulas as programs (hyperelliptic.org EFD, g1p/short-w/xyzz, a = 0):
//! madd-2008-s and add-2008-s, each split into a head and a tail so the kernel can test PP and
//! R between them (equal points double, opposite points give the identity), mdbl-2008-s-1 and
//! dbl-2008-s-1. G2's Fq2 arithmetic is expanded into the same Fq instructions by the
//! builder, so G1 and G2 share the interpreter.

use super::builder::{Builder, E, P, PP, Q, R, S1, U1};

/// madd-2008-s, first half: PP = X2·ZZ1 − X1, R = Y2·ZZZ1 − Y1 (affine (X2, Y2) in Q).
pub fn madd_head(b: &mut Builder) {
    let (px, py, pzz, pzzz) = (b.fixed(P), b.fixed(P + 1), b.fixed(P + 2), b.fixed(P + 3));
    let (qx, qy) = (b.fixed(Q), b.fixed(Q + 1));
    let u2 = b.mul(qx, pzz);
    let s2 = b.mul(qy, pzzz);
    let pp = b.sub(u2, px);
    let r = b.sub(s2, py);
    b.store(&[(PP, pp), (R, r)]);
}

/// madd-2008-s, second half (PP ≠ 0).
pub fn madd_tail(b: &mut Builder) {
    let (px, py) = (b.fixed(P), b.fixed(P + 1));
    tail(b, px, py, None);
}

/// The second half shared by madd-2008-s (`q_zz` = None: Q affine) and add-2008-s, from what
/// the head left in PP and R: u = U1 (X1 for madd), s = S1 (Y1 for madd).
fn tail(b: &mut Builder, u: E, s: E, q_zz: Option<(E, E)>) {
    let (pzz, pzzz) = (b.fixed(P + 2), b.fixed(P + 3));
    let (pp_, r) = (b.fixed(PP), b.fixed(R));
    let pp = b.sqr(pp_);
    let ppp = b.mul(pp_, pp);
    let q = b.mul(u, pp);
    let r2 = b.sqr(r);
    let t = b.sub(r2, ppp);
    let t = b.sub(t, q);
    let x3 = b.sub(t, q);
    let t = b.sub(q, x3);
    let t = b.mul(r, t);
    let u = b.mul(s, ppp);
    let y3 = b.sub(t, u);
    let (zz3, zzz3) = match q_zz {
        None => (b.mul(pzz, pp), b.mul(pzzz, ppp)),
        Some((qzz, qzzz)) => {
            let t = b.mul(pzz, qzz);
            let zz3 = b.mul(t, pp);
            let t = b.mul(pzzz, qzzz);
            (zz3, b.mul(t, ppp))
        }
    };
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
pub fn mdbl(b: &mut Builder) {
    let (qx, qy) = (b.fixed(Q), b.fixed(Q + 1));
    double(b, qx, qy, None);
}

/// dbl-2008-s-1: 2·P into P.
pub fn dbl(b: &mut Builder) {
    let (px, py, pzz, pzzz) = (b.fixed(P), b.fixed(P + 1), b.fixed(P + 2), b.fixed(P + 3));
    double(b, px, py, Some((pzz, pzzz)));
}

/// add-2008-s, first half: U1, S1, PP = U2 − U1, R = S2 − S1.
pub fn add_head(b: &mut Builder) {
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
pub fn add_tail(b: &mut Builder) {
    let (u1, s1) = (b.fixed(U1), b.fixed(S1));
    let (qzz, qzzz) = (b.fixed(Q + 2), b.fixed(Q + 3));
    tail(b, u1, s1, Some((qzz, qzzz)));
}
