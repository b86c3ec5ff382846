// Short-Weierstrass points with a = 0 (BLS12-381's G1 over fq, G2 over fq2): the template the
// host instantiates per group, substituting CURVE (the prefix, g1 or g2).
//
// Points live in the curve interpreter's registers (vm.wgsl), never in WGSL values: a
// point is 4 coordinates (X, Y, ZZ, ZZZ; XYZZ: x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2) of CURVE_W
// Fq registers each, and "coordinate c" below is register c·CURVE_W. The slots follow
// formulas.rs: P at 0..4 (the accumulator: inputs and results), Q at 4..8 (the addend; an
// affine addend uses Q's X and Y), PP at 8, R at 9 (left by the head programs), and two
// spare points at 12 and 16. The identity has ZZ = 0; an affine identity is x = y = 0 (no
// point of the prime-order subgroup has y = 0).

fn CURVE_is_zero_at(coord: u32) -> bool {
    var zero = true;
    for (var k = 0u; k < CURVE_W; k++) {
        zero = zero && fq_is_zero(vm[coord * CURVE_W + k]);
    }
    return zero;
}

fn CURVE_set_identity(coord: u32) {
    for (var k = 0u; k < 4u * CURVE_W; k++) {
        vm[coord * CURVE_W + k] = fq_zero();
    }
}

fn CURVE_set_one(coord: u32) {
    vm[coord * CURVE_W] = fq_one();
    for (var k = 1u; k < CURVE_W; k++) {
        vm[coord * CURVE_W + k] = fq_zero();
    }
}

// Copies `coords` coordinates from slot `src` to slot `dst`.
fn CURVE_copy(dst: u32, src: u32, coords: u32) {
    for (var k = 0u; k < coords * CURVE_W; k++) {
        vm[dst * CURVE_W + k] = vm[src * CURVE_W + k];
    }
}

fn CURVE_neg_at(coord: u32) {
    for (var k = 0u; k < CURVE_W; k++) {
        vm[coord * CURVE_W + k] = fq_neg(vm[coord * CURVE_W + k]);
    }
}

// P = 2·P (dbl-2008-s-1); the identity stays.
fn CURVE_double() {
    if (CURVE_is_zero_at(2u)) {
        return;
    }
    vm_run(CURVE_DBL);
}

// P += (Q.x, Q.y) affine (madd-2008-s), with every special case: either operand the identity,
// the same point (mdbl-2008-s-1), its negation (the identity). One vm_run call site: the
// head program runs first, then the loop picks the tail or the doubling.
fn CURVE_add_affine() {
    if (CURVE_is_zero_at(4u) && CURVE_is_zero_at(5u)) {
        return;
    }
    if (CURVE_is_zero_at(2u)) {
        CURVE_copy(0u, 4u, 2u);
        CURVE_set_one(2u);
        CURVE_set_one(3u);
        return;
    }
    var prog = CURVE_MADD_HEAD;
    loop {
        vm_run(prog);
        if (prog.x != CURVE_MADD_HEAD.x) {
            break;
        }
        if (CURVE_is_zero_at(8u)) {
            if (!CURVE_is_zero_at(9u)) {
                CURVE_set_identity(0u);
                return;
            }
            prog = CURVE_MDBL;
        } else {
            prog = CURVE_MADD_TAIL;
        }
    }
}

// P += Q (add-2008-s), with every special case, in the same shape.
fn CURVE_add() {
    if (CURVE_is_zero_at(6u)) {
        return;
    }
    if (CURVE_is_zero_at(2u)) {
        CURVE_copy(0u, 4u, 4u);
        return;
    }
    var prog = CURVE_ADD_HEAD;
    loop {
        vm_run(prog);
        if (prog.x != CURVE_ADD_HEAD.x) {
            break;
        }
        if (CURVE_is_zero_at(8u)) {
            if (!CURVE_is_zero_at(9u)) {
                CURVE_set_identity(0u);
                return;
            }
            prog = CURVE_DBL;
        } else {
            prog = CURVE_ADD_TAIL;
        }
    }
}
