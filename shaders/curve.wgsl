// Short-Weierstrass points with a = 0 (BLS12-381's G1 over fq, G2 over fq2): the template the
// host instantiates per group, substituting CURVE (the prefix, g1 or g2) and FLD (its field).
//
// Bases are affine; the identity is stored as x = y = 0 (no point of the prime-order
// subgroup has y = 0). Sums are in XYZZ coordinates (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2):
// cheap mixed additions against affine bases, no inversions. The identity has ZZ = 0.
// The formulas themselves are programs run by vm.wgsl (backend-wgpu/src/formulas.rs).

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

// Coordinate `coord` of the interpreter's register slots (formulas.rs: P at 0..4, Q at 4..8,
// PP at 8, R at 9), each CURVE_W registers wide.
fn CURVE_put(coord: u32, v: FLD) {
    FLD_to_vm(coord * CURVE_W, v);
}

fn CURVE_get(coord: u32) -> FLD {
    return FLD_from_vm(coord * CURVE_W);
}

fn CURVE_put_point(coord: u32, p: CURVE_xyzz) {
    CURVE_put(coord, p.x);
    CURVE_put(coord + 1u, p.y);
    CURVE_put(coord + 2u, p.zz);
    CURVE_put(coord + 3u, p.zzz);
}

fn CURVE_get_p() -> CURVE_xyzz {
    return CURVE_xyzz(CURVE_get(0u), CURVE_get(1u), CURVE_get(2u), CURVE_get(3u));
}

// 2·p (dbl-2008-s-1).
fn CURVE_double(p: CURVE_xyzz) -> CURVE_xyzz {
    if (CURVE_is_identity(p)) {
        return p;
    }
    CURVE_put_point(0u, p);
    vm_run(CURVE_DBL);
    return CURVE_get_p();
}

// p + a for affine a (madd-2008-s), with every special case: either operand the identity,
// a = p (doubling, mdbl-2008-s-1), a = -p (the identity). One vm_run call site: the head
// program runs first, then the loop picks the tail or the doubling.
fn CURVE_add_affine(p: CURVE_xyzz, a: CURVE_affine) -> CURVE_xyzz {
    if (CURVE_affine_is_identity(a)) {
        return p;
    }
    if (CURVE_is_identity(p)) {
        return CURVE_xyzz(a.x, a.y, FLD_one(), FLD_one());
    }
    CURVE_put_point(0u, p);
    CURVE_put(4u, a.x);
    CURVE_put(5u, a.y);
    var prog = CURVE_MADD_HEAD;
    loop {
        vm_run(prog);
        if (prog.x != CURVE_MADD_HEAD.x) {
            break;
        }
        if (FLD_is_zero(CURVE_get(8u))) {
            if (!FLD_is_zero(CURVE_get(9u))) {
                return CURVE_identity();
            }
            prog = CURVE_MDBL;
        } else {
            prog = CURVE_MADD_TAIL;
        }
    }
    return CURVE_get_p();
}

// p + q (add-2008-s), with every special case, in the same shape as CURVE_add_affine.
fn CURVE_add(p: CURVE_xyzz, q: CURVE_xyzz) -> CURVE_xyzz {
    if (CURVE_is_identity(q)) {
        return p;
    }
    if (CURVE_is_identity(p)) {
        return q;
    }
    CURVE_put_point(0u, p);
    CURVE_put_point(4u, q);
    var prog = CURVE_ADD_HEAD;
    loop {
        vm_run(prog);
        if (prog.x != CURVE_ADD_HEAD.x) {
            break;
        }
        if (FLD_is_zero(CURVE_get(8u))) {
            if (!FLD_is_zero(CURVE_get(9u))) {
                return CURVE_identity();
            }
            prog = CURVE_DBL;
        } else {
            prog = CURVE_ADD_TAIL;
        }
    }
    return CURVE_get_p();
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
