// Short-Weierstrass points with a = 0 as WGSL values (the plain formula path): the template
// the host instantiates per group, substituting CURVE (g1 or g2) and FLD (fq or fq2).
//
// XYZZ: x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; the identity has ZZ = 0. An affine identity is
// x = y = 0 (no point of the prime-order subgroup has y = 0). The formulas themselves
// (CURVE_madd_head, _madd_tail, _mdbl, _add_head, _add_tail, _dbl) are generated from the
// interpreter's programs (formulas.rs, `plain_wgsl`); here are only the special cases around
// them, the same as curve.wgsl's CURVE_add.

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

// The base negated where its signed digit is negative.
fn CURVE_affine_neg_if(q: CURVE_affine, negate: bool) -> CURVE_affine {
    if (negate) {
        return CURVE_affine(q.x, FLD_neg(q.y));
    }
    return q;
}

// p + affine q (madd-2008-s; mdbl-2008-s-1 when the points are equal).
fn CURVE_madd(p: CURVE_xyzz, q: CURVE_affine) -> CURVE_xyzz {
    if (FLD_is_zero(q.x) && FLD_is_zero(q.y)) {
        return p;
    }
    if (CURVE_is_identity(p)) {
        return CURVE_xyzz(q.x, q.y, FLD_one(), FLD_one());
    }
    let h = CURVE_madd_head(p, q);
    if (FLD_is_zero(h.pp)) {
        if (FLD_is_zero(h.r)) {
            return CURVE_mdbl(q);
        }
        return CURVE_identity();
    }
    return CURVE_madd_tail(p, h);
}

// p + q (add-2008-s; dbl-2008-s-1 when the points are equal).
fn CURVE_add(p: CURVE_xyzz, q: CURVE_xyzz) -> CURVE_xyzz {
    if (CURVE_is_identity(q)) {
        return p;
    }
    if (CURVE_is_identity(p)) {
        return q;
    }
    let h = CURVE_add_head(p, q);
    if (FLD_is_zero(h.pp)) {
        if (FLD_is_zero(h.r)) {
            return CURVE_dbl(p);
        }
        return CURVE_identity();
    }
    return CURVE_add_tail(p, q, h);
}
