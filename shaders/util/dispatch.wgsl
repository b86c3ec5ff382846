// Thread numbering for dispatches past 65535 workgroups in one dimension: the host spreads
// the workgroups over x and y, and every kernel numbers its threads x-major, then bounds
// the index by the element count it was given.
const WORKGROUP: u32 = 64u;

fn thread_index(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.x + gid.y * groups.x * WORKGROUP;
}

// A field constant passed through the uniform block as two vec4s.
fn fr_from_uniform(k: array<vec4<u32>, 2>) -> fr {
    return fr(k[0].x, k[0].y, k[0].z, k[0].w, k[1].x, k[1].y, k[1].z, k[1].w);
}
