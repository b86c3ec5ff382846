// The R1CS check on the device: the first row with a·b ≠ c, where a, b, c are A·z, B·z, C·z
// (spmv.wgsl); kernels/r1cs/check.cu is the CUDA twin. One dispatch a chunk of the vectors
// (chunk k of a, b and c holds the same rows, from `offset`), each failing row lowering
// `first[0]` by an atomicMin; the host sets it to 0xffffffff before and reads back that one
// word after. A thread past a failure already found skips its product.

struct Params {
    offset: u32,
    count: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

@compute @workgroup_size(64)
fn check(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(gid, groups);
    if (i >= params.count) {
        return;
    }
    let row = params.offset + i;
    if (row > atomicLoad(&first[0])) {
        return;
    }
    if (!fr_eq(fr_mul(a_load(i), b_load(i)), c_load(i))) {
        atomicMin(&first[0], row);
    }
}
