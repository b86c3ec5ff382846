// The interpreter of curve programs (backend-wgpu/src/formulas.rs): straight-line Fq code,
// one instruction per word (op | dst << 8 | a << 16 | b << 24), in the `prog` binding.
// Registers live in private memory. However many formulas a kernel runs, each call site of
// vm_run holds one Montgomery product, one sum and one difference, which keeps the modules
// small enough for every driver's compiler (see formulas.rs for why that matters).

var<private> vm: array<fq, VM_REGISTERS>;

// Register r of a program: P's range (4 coordinates) from register p, Q's from register q,
// the rest absolute (formulas.rs).
fn vm_reg(r: u32, p: u32, q: u32) -> u32 {
    if (r < 4u * VM_W) {
        return p + r;
    }
    if (r < 8u * VM_W) {
        return q + r - 4u * VM_W;
    }
    return r;
}

fn vm_run(range: vec2<u32>, p: u32, q: u32) {
    for (var pc = range.x; pc < range.y; pc++) {
        let ins = prog[pc];
        let a = vm[vm_reg((ins >> 16u) & 0xffu, p, q)];
        let b = vm[vm_reg(ins >> 24u, p, q)];
        var z: fq;
        switch (ins & 0xffu) {
            case 0u: {
                z = fq_mul(a, b);
            }
            case 1u: {
                z = fq_add(a, b);
            }
            case 2u: {
                z = fq_sub(a, b);
            }
            default: {
                z = a;
            }
        }
        vm[vm_reg((ins >> 8u) & 0xffu, p, q)] = z;
    }
}

fn fq_to_vm(slot: u32, v: fq) {
    vm[slot] = v;
}

fn fq_from_vm(slot: u32) -> fq {
    return vm[slot];
}
