// The curve interpreter with lazy Fq2 products (G2 only, G16_WGPU_FQ2_LAZY=1; vm.wgsl is the
// default). Same registers, encoding and px as vm.wgsl; every product is fq_redc(fq_mul_wide)
// (one double-width product and one Montgomery reduction per call site, about the code of
// vm.wgsl's one CIOS product), and one double-width accumulator wa carries a Karatsuba
// product's a0·b0 (then a0·b0 + a1·b1) unreduced between its instructions, so an Fq2 product
// takes three double-width products and two reductions instead of three reduced products
// (formulas.rs, Builder::mul, has the sequence and the bounds).
//
// Kinds (the op byte's low 4 bits):
//   0  redc(l·b)                   1  fq_add(l, b)          2  fq_sub(l, b)      3  copy l
//   4  redc(px·(a +raw b))         5  redc(px·(a − b))
//   6  l +raw b (no reduction: < 2p; only into px, only ever a product's operand)
//   7  wa = l·b, double width (no register written)
//   8  t = l·b; redc(wa − t, plus p·R where negative); then wa += t   (Karatsuba's c0)
//   9  redc(px·(a +raw b) − wa)     (Karatsuba's c1 = a0·b1 + a1·b0: never negative)
// FROM_PX (0x10: the left operand l is px) and TO_PX (0x20: the result goes to px) as in
// vm.wgsl.

fn vm_run(range: vec2<u32>, p: u32, q: u32) {
    var px: fq;
    var wa: fq_wide;
    for (var pc = range.x; pc < range.y; pc++) {
        let ins = prog[pc];
        let op = ins & 0xffu;
        let kind = op & 0xfu;
        let a = vm[vm_reg((ins >> 16u) & 0xffu, p, q)];
        let b = vm[vm_reg(ins >> 24u, p, q)];
        var l = a;
        if ((op & 0x10u) != 0u) {
            l = px;
        }
        var z: fq;
        if (kind == 1u) {
            z = fq_add(l, b);
        } else if (kind == 2u) {
            z = fq_sub(l, b);
        } else if (kind == 3u) {
            z = l;
        } else if (kind == 6u) {
            z = fq_add_raw(l, b);
        } else {
            var r = b;
            if (kind == 4u || kind == 9u) {
                l = px;
                r = fq_add_raw(a, b);
            } else if (kind == 5u) {
                l = px;
                r = fq_sub(a, b);
            }
            var w = fq_mul_wide(l, r);
            if (kind == 7u) {
                wa = w;
                continue;
            }
            if (kind == 8u) {
                let t = w;
                w = fq_wide_sub_mod(wa, t);
                wa = fq_wide_add(wa, t);
            } else if (kind == 9u) {
                w = fq_wide_sub(w, wa);
            }
            z = fq_redc(w);
        }
        if ((op & 0x20u) != 0u) {
            px = z;
        } else {
            vm[vm_reg((ins >> 8u) & 0xffu, p, q)] = z;
        }
    }
}

fn fq_to_vm(slot: u32, v: fq) {
    vm[slot] = v;
}

fn fq_from_vm(slot: u32) -> fq {
    return vm[slot];
}
