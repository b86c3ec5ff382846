// Elementwise Fr operations on device buffers: what H needs between its NTTs. `quotient`
// fuses a·b − c and the scaling by Z_H(g)^-1 into one pass (a third of the memory traffic).

struct Params {
    n: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    k: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> params: Params;

@compute @workgroup_size(64)
fn mul(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(gid, groups);
    if (i < params.n) {
        a_store(i, fr_mul(a_load(i), b_load(i)));
    }
}

@compute @workgroup_size(64)
fn sub(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(gid, groups);
    if (i < params.n) {
        a_store(i, fr_sub(a_load(i), b_load(i)));
    }
}

@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(gid, groups);
    if (i < params.n) {
        a_store(i, fr_mul(a_load(i), fr_from_uniform(params.k)));
    }
}

@compute @workgroup_size(64)
fn quotient(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(gid, groups);
    if (i < params.n) {
        let ab = fr_mul(a_load(i), b_load(i));
        a_store(i, fr_mul(fr_sub(ab, c_load(i)), fr_from_uniform(params.k)));
    }
}
