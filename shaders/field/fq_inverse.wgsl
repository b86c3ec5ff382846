// Fq inversion for the curve kernels that bring points to affine (msm/table.wgsl,
// msm/fixed_base.wgsl), instantiated per group (CURVE) after the interpreter.
//
// a^(p−2) = 1/a in Fq (a ≠ 0), square-and-multiply from the top bit of p − 2, with one
// product site: each turn either squares or multiplies by a.
fn fq_inverse(a: fq) -> fq {
    var e = fq_P;
    e[0] -= 2u; // p's low limb is odd and above 2: no borrow
    var r = fq_one();
    var bit = 380i; // p has 381 bits
    var multiply = false;
    loop {
        var rhs = r;
        if (multiply) {
            rhs = a;
        }
        r = fq_mul(r, rhs);
        if (multiply) {
            multiply = false;
        } else {
            multiply = ((e[u32(bit) >> 5u] >> (u32(bit) & 31u)) & 1u) == 1u;
        }
        if (!multiply) {
            bit -= 1i;
            if (bit < 0i) {
                break;
            }
        }
    }
    return r;
}

// The batch inversion's one inversion: NORM (TABLE_NORM's first register, an Fq value) becomes
// 1/NORM, and its second register zero where coordinates are Fq2, as TABLE_INV expects.
fn CURVE_invert_norm() {
    vm[TABLE_NORM * CURVE_W] = fq_inverse(vm[TABLE_NORM * CURVE_W]);
    if (CURVE_W == 2u) {
        vm[TABLE_NORM * CURVE_W + 1u] = fq_zero();
    }
}
