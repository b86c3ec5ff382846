// The interpreter of curve programs (the wgpu backend's formulas): straight-line Fq code,
// one instruction per word (op | dst << 8 | a << 16 | b << 24), in the `prog` binding.
// Registers live in private memory (registers.wgsl). However many formulas a kernel runs,
// each use of vm_run holds one Montgomery product, one sum and one difference, which
// keeps the modules small enough for every driver's compiler (the formulas' module says why that
// matters).

// The op byte: the kind in its low 4 bits (0 product, 1 sum, 2 difference, 3 copy, 4 and 5
// px·(a + b) and px·(a − b)), then FROM_PX (0x10: the left operand is px) and TO_PX (0x20:
// the result goes to px, not to a register). px is one Fq value the compiler keeps in
// registers (it is only ever read and written whole), so G2's Karatsuba products keep their
// sums and partial differences out of the memory the register file lives in.
fn vm_run(range: vec2<u32>, p: u32, q: u32) {
    var px: fq;
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
        if (kind == 0u || kind >= 4u) {
            var r = b;
            if (kind == 4u) {
                l = px;
                r = fq_add(a, b);
            } else if (kind == 5u) {
                l = px;
                r = fq_sub(a, b);
            }
            z = fq_mul(l, r);
        } else if (kind == 1u) {
            z = fq_add(l, b);
        } else if (kind == 2u) {
            z = fq_sub(l, b);
        } else {
            z = l;
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
