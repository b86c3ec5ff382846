// Fq2 = Fq[u]/(u^2 + 1), the field of G2's coordinates. Needs fq_* (field.wgsl as fq).

struct fq2 {
    c0: fq,
    c1: fq,
}

fn fq2_zero() -> fq2 {
    return fq2(fq_zero(), fq_zero());
}

fn fq2_one() -> fq2 {
    return fq2(fq_one(), fq_zero());
}

fn fq2_is_zero(a: fq2) -> bool {
    return fq_is_zero(a.c0) && fq_is_zero(a.c1);
}

fn fq2_add(a: fq2, b: fq2) -> fq2 {
    return fq2(fq_add(a.c0, b.c0), fq_add(a.c1, b.c1));
}

fn fq2_double(a: fq2) -> fq2 {
    return fq2(fq_double(a.c0), fq_double(a.c1));
}

fn fq2_sub(a: fq2, b: fq2) -> fq2 {
    return fq2(fq_sub(a.c0, b.c0), fq_sub(a.c1, b.c1));
}

fn fq2_neg(a: fq2) -> fq2 {
    return fq2(fq_neg(a.c0), fq_neg(a.c1));
}

// Karatsuba: three Fq products instead of four.
fn fq2_mul(a: fq2, b: fq2) -> fq2 {
    let v0 = fq_mul(a.c0, b.c0);
    let v1 = fq_mul(a.c1, b.c1);
    let s = fq_mul(fq_add(a.c0, a.c1), fq_add(b.c0, b.c1));
    return fq2(fq_sub(v0, v1), fq_sub(fq_sub(s, v0), v1));
}

// (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u: two Fq products.
fn fq2_sqr(a: fq2) -> fq2 {
    let c0 = fq_mul(fq_add(a.c0, a.c1), fq_sub(a.c0, a.c1));
    let c1 = fq_double(fq_mul(a.c0, a.c1));
    return fq2(c0, c1);
}

// An Fq2 occupies two consecutive interpreter registers (vm.wgsl).
fn fq2_to_vm(slot: u32, v: fq2) {
    vm[slot] = v.c0;
    vm[slot + 1u] = v.c1;
}

fn fq2_from_vm(slot: u32) -> fq2 {
    return fq2(vm[slot], vm[slot + 1u]);
}
