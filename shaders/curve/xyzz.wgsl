// Short-Weierstrass points with a = 0 (BLS12-381's G1 over fq, G2 over fq2): the template the
// host instantiates per group, substituting CURVE (the prefix, g1 or g2).
//
// Points live in the curve interpreter's registers (vm/vm.wgsl), never in WGSL values: a
// point is 4 coordinates (X, Y, ZZ, ZZZ; XYZZ: x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2) of CURVE_W
// Fq registers each, and "coordinate c" below is register c·CURVE_W. The slots follow
// the wgpu backend's formulas: P at 0..4 and Q at 4..8 by default (a program's P and Q can be
// any two point slots: CURVE_add(p, q)), PP at 8, R at 9 (left by the head programs), spare
// points at 12 and 16. The identity has ZZ = 0; an affine identity is x = y = 0 (no point of
// the prime-order subgroup has y = 0).

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

// Point slot p += point slot q (coordinates), with every special case: either operand the
// identity, equal points (doubling; also when p = q is one slot), opposite points (the
// identity). `affine`: q holds an affine point (X, Y only; mixed addition madd-2008-s and
// mdbl-2008-s-1), else an XYZZ one (add-2008-s, dbl-2008-s-1). One vm_run site for
// every case — the head program runs first, then the loop picks the tail or the doubling —
// because each inlined interpreter loop is what a driver compiles.
fn CURVE_add(p: u32, q: u32, affine: bool) {
    if (affine) {
        if (CURVE_is_zero_at(q) && CURVE_is_zero_at(q + 1u)) {
            return;
        }
    } else if (CURVE_is_zero_at(q + 2u)) {
        return;
    }
    if (CURVE_is_zero_at(p + 2u)) {
        if (affine) {
            CURVE_copy(p, q, 2u);
            CURVE_set_one(p + 2u);
            CURVE_set_one(p + 3u);
        } else {
            CURVE_copy(p, q, 4u);
        }
        return;
    }
    let head = select(CURVE_ADD_HEAD, CURVE_MADD_HEAD, affine);
    let tail = select(CURVE_ADD_TAIL, CURVE_MADD_TAIL, affine);
    let double = select(CURVE_DBL, CURVE_MDBL, affine);
    var prog = head;
    loop {
        vm_run(prog, p * CURVE_W, q * CURVE_W);
        if (prog.x != head.x) {
            break;
        }
        if (CURVE_is_zero_at(8u)) {
            if (!CURVE_is_zero_at(9u)) {
                CURVE_set_identity(p);
                return;
            }
            prog = double;
        } else {
            prog = tail;
        }
    }
}
