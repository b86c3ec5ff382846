// The curve interpreter's register file (vm.wgsl): private memory, indexed by the program,
// and where a program's register numbers point.

var<private> vm: array<fq, VM_REGISTERS>;

// Register r of a program: P's range (4 coordinates) from register p, Q's from register q,
// the rest absolute (the wgpu backend's program builder).
fn vm_reg(r: u32, p: u32, q: u32) -> u32 {
    if (r < 4u * VM_W) {
        return p + r;
    }
    if (r < 8u * VM_W) {
        return q + r - 4u * VM_W;
    }
    return r;
}

