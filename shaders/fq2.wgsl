// Fq2 = Fq[u]/(u² + 1) as a value, for the plain formula path (curve_plain.wgsl): only what
// the curve code needs around the formulas, whose Fq2 products formulas.rs already expands
// into Fq instructions (Karatsuba), exactly as for the interpreter.

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

fn fq2_neg(a: fq2) -> fq2 {
    return fq2(fq_neg(a.c0), fq_neg(a.c1));
}
