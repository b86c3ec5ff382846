// One radix-2 pass of a Stockham NTT over Fr: natural order in, natural order out, no
// bit-reversal pass (Govindaraju et al., "High performance discrete Fourier transforms on
// graphics processors", 2008). Pass p (ns = 2^p) reads src[j] and src[j + n/2], multiplies
// the second by ω_{2ns}^k (k = j mod ns), and writes the butterfly to dst[(j - k)·2 + k]
// and dst[(j - k)·2 + k + ns]. After log2(n) passes, ping-ponging src and dst, dst holds
// Σ_j a_j·ω^(ij). The twiddles are ω_n^i for i < n/2; ω_{2ns}^k = ω_n^(k·n/(2ns)).

struct Params {
    half: u32,
    ns: u32,
    tw_shift: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

@compute @workgroup_size(64)
fn stockham_pass(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let j = thread_index(gid, groups);
    if (j >= params.half) {
        return;
    }
    let k = j & (params.ns - 1u);
    let a = src_load(j);
    var b = src_load(j + params.half);
    if (k != 0u) {
        b = fr_mul(b, tw_load(k << params.tw_shift));
    }
    let o = ((j - k) << 1u) + k;
    dst_store(o, fr_add(a, b));
    dst_store(o + params.ns, fr_sub(a, b));
}
