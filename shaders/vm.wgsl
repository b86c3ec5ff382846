// The interpreter of curve programs (backend-wgpu/src/formulas.rs): straight-line Fq code,
// one instruction per word (op | dst << 8 | a << 16 | b << 24), in the `prog` binding.
// Registers live in private memory. However many formulas a kernel runs, each call site of
// vm_run holds one Montgomery product, one sum and one difference, which keeps the modules
// small enough for every driver's compiler (see formulas.rs for why that matters).

var<private> vm: array<fq, VM_REGISTERS>;

fn vm_run(range: vec2<u32>) {
    for (var pc = range.x; pc < range.y; pc++) {
        let ins = prog[pc];
        let a = vm[(ins >> 16u) & 0xffu];
        let b = vm[ins >> 24u];
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
        vm[(ins >> 8u) & 0xffu] = z;
    }
}

fn fq_to_vm(slot: u32, v: fq) {
    vm[slot] = v;
}

fn fq_from_vm(slot: u32) -> fq {
    return vm[slot];
}
