// Short-Weierstrass points with a = 0 (BLS12-381's G1 over fq, G2 over fq2): the template the
// host instantiates per group, substituting CURVE (the prefix, g1 or g2) and FLD (its field).
//
// Bases are affine; the identity is stored as x = y = 0 (no point of the prime-order
// subgroup has y = 0). Sums are in XYZZ coordinates (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2):
// cheap mixed additions against affine bases, no inversions. The identity has ZZ = 0.
// Formulas: hyperelliptic.org EFD, "g1p/short-w/xyzz" (madd-2008-s, add-2008-s, dbl-2008-s-1,
// mdbl-2008-s-1).

struct CURVE_affine {
    x: FLD,
    y: FLD,
}

struct CURVE_xyzz {
    x: FLD,
    y: FLD,
    zz: FLD,
    zzz: FLD,
}

fn CURVE_identity() -> CURVE_xyzz {
    return CURVE_xyzz(FLD_zero(), FLD_zero(), FLD_zero(), FLD_zero());
}

fn CURVE_is_identity(p: CURVE_xyzz) -> bool {
    return FLD_is_zero(p.zz);
}

fn CURVE_affine_is_identity(a: CURVE_affine) -> bool {
    return FLD_is_zero(a.x) && FLD_is_zero(a.y);
}

fn CURVE_affine_neg(a: CURVE_affine) -> CURVE_affine {
    return CURVE_affine(a.x, FLD_neg(a.y));
}

fn CURVE_from_affine(a: CURVE_affine) -> CURVE_xyzz {
    if (CURVE_affine_is_identity(a)) {
        return CURVE_identity();
    }
    return CURVE_xyzz(a.x, a.y, FLD_one(), FLD_one());
}

// 2·a for affine a (mdbl-2008-s-1).
fn CURVE_double_affine(a: CURVE_affine) -> CURVE_xyzz {
    let u = FLD_double(a.y);
    let v = FLD_sqr(u);
    let w = FLD_mul(u, v);
    let s = FLD_mul(a.x, v);
    let x2 = FLD_sqr(a.x);
    let m = FLD_add(FLD_double(x2), x2);
    let x3 = FLD_sub(FLD_sub(FLD_sqr(m), s), s);
    let y3 = FLD_sub(FLD_mul(m, FLD_sub(s, x3)), FLD_mul(w, a.y));
    return CURVE_xyzz(x3, y3, v, w);
}

// 2·p (dbl-2008-s-1); the identity doubles to itself (ZZ stays 0).
fn CURVE_double(p: CURVE_xyzz) -> CURVE_xyzz {
    let u = FLD_double(p.y);
    let v = FLD_sqr(u);
    let w = FLD_mul(u, v);
    let s = FLD_mul(p.x, v);
    let x2 = FLD_sqr(p.x);
    let m = FLD_add(FLD_double(x2), x2);
    let x3 = FLD_sub(FLD_sub(FLD_sqr(m), s), s);
    let y3 = FLD_sub(FLD_mul(m, FLD_sub(s, x3)), FLD_mul(w, p.y));
    return CURVE_xyzz(x3, y3, FLD_mul(v, p.zz), FLD_mul(w, p.zzz));
}

// p + a for affine a (madd-2008-s), with every special case: either operand the identity,
// a = p (doubling), a = -p (the identity).
fn CURVE_add_affine(p: CURVE_xyzz, a: CURVE_affine) -> CURVE_xyzz {
    if (CURVE_affine_is_identity(a)) {
        return p;
    }
    if (CURVE_is_identity(p)) {
        return CURVE_xyzz(a.x, a.y, FLD_one(), FLD_one());
    }
    let u2 = FLD_mul(a.x, p.zz);
    let s2 = FLD_mul(a.y, p.zzz);
    let pp_ = FLD_sub(u2, p.x);
    let r = FLD_sub(s2, p.y);
    if (FLD_is_zero(pp_)) {
        if (FLD_is_zero(r)) {
            return CURVE_double_affine(a);
        }
        return CURVE_identity();
    }
    let pp = FLD_sqr(pp_);
    let ppp = FLD_mul(pp_, pp);
    let q = FLD_mul(p.x, pp);
    let x3 = FLD_sub(FLD_sub(FLD_sub(FLD_sqr(r), ppp), q), q);
    let y3 = FLD_sub(FLD_mul(r, FLD_sub(q, x3)), FLD_mul(p.y, ppp));
    return CURVE_xyzz(x3, y3, FLD_mul(p.zz, pp), FLD_mul(p.zzz, ppp));
}

// p + q (add-2008-s), with every special case.
fn CURVE_add(p: CURVE_xyzz, q: CURVE_xyzz) -> CURVE_xyzz {
    if (CURVE_is_identity(q)) {
        return p;
    }
    if (CURVE_is_identity(p)) {
        return q;
    }
    let u1 = FLD_mul(p.x, q.zz);
    let u2 = FLD_mul(q.x, p.zz);
    let s1 = FLD_mul(p.y, q.zzz);
    let s2 = FLD_mul(q.y, p.zzz);
    let pp_ = FLD_sub(u2, u1);
    let r = FLD_sub(s2, s1);
    if (FLD_is_zero(pp_)) {
        if (FLD_is_zero(r)) {
            return CURVE_double(p);
        }
        return CURVE_identity();
    }
    let pp = FLD_sqr(pp_);
    let ppp = FLD_mul(pp_, pp);
    let qq = FLD_mul(u1, pp);
    let x3 = FLD_sub(FLD_sub(FLD_sub(FLD_sqr(r), ppp), qq), qq);
    let y3 = FLD_sub(FLD_mul(r, FLD_sub(qq, x3)), FLD_mul(s1, ppp));
    return CURVE_xyzz(x3, y3, FLD_mul(FLD_mul(p.zz, q.zz), pp), FLD_mul(FLD_mul(p.zzz, q.zzz), ppp));
}

// k·p for a small k (double-and-add from the top bit).
fn CURVE_mul_small(p: CURVE_xyzz, k: u32) -> CURVE_xyzz {
    var acc = CURVE_identity();
    if (k == 0u) {
        return acc;
    }
    let top = 31u - countLeadingZeros(k);
    for (var i = i32(top); i >= 0; i--) {
        acc = CURVE_double(acc);
        if (((k >> u32(i)) & 1u) == 1u) {
            acc = CURVE_add(acc, p);
        }
    }
    return acc;
}
