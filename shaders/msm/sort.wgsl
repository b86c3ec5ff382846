// MSM, phase 1: scalars to signed bucket keys, and the keys sorted by bucket (counting sort).
//
// Each scalar s (read in Montgomery form, converted to its canonical integer) is cut into
// `nwin` windows of c bits with signed digits in [-2^(c-1), 2^(c-1)] (a digit above 2^(c-1)
// becomes digit - 2^c and carries one into the next window), so each window needs only
// B = 2^(c-1) buckets. A digit d ≠ 0 of window w puts the base, negated if d < 0, into
// bucket w·B + |d| − 1. The 0/1 split: a zero scalar emits nothing, and a scalar equal to
// one emits a single key for the "ones" bucket (index nwin·B), which is summed without
// any doubling; hash-circuit witnesses are mostly bits, so most of their scalars never reach
// the windows at all.
//
// Key layout: bucket index in the low 31 bits, the sign in the top bit; EMPTY marks "none".
//
// The shared layout (over a table of shifted bases, table.wgsl; `stride` ≠ 0): every
// window's digit goes into the one set of B buckets (bucket |d| − 1), and its base is the
// table's entry for that window, w·stride + i, so the windows need no doublings between them.

const EMPTY: u32 = 0xffffffffu;
const SIGN: u32 = 0x80000000u;

struct Params {
    // digits: scalars in this launch. scatter: keys in this launch (n·nwin).
    n: u32,
    // Element offset of the first scalar in the scalar buffer.
    offset: u32,
    c: u32,
    nwin: u32,
    half_buckets: u32,
    ones_bucket: u32,
    // The shared layout's table stride (its points per window), or 0: one bucket set a window.
    stride: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

// c bits of s starting at bit `at` (c < 32; bits past the top read as zero).
fn window_bits(s: ptr<function, fr>, at: u32, c: u32) -> u32 {
    let limb = at >> 5u;
    let sh = at & 31u;
    if (limb >= 8u) {
        return 0u;
    }
    var v = (*s)[limb] >> sh;
    if (sh + c > 32u && limb + 1u < 8u) {
        v |= (*s)[limb + 1u] << (32u - sh);
    }
    return v & ((1u << c) - 1u);
}

@compute @workgroup_size(64)
fn digits(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(gid, groups);
    if (i >= params.n) {
        return;
    }
    // Montgomery form times a raw 1 is s·R·R^-1 = the canonical integer.
    var raw_one = fr_zero();
    raw_one[0] = 1u;
    var s = fr_mul(scalars_load(params.offset + i), raw_one);
    let nwin = params.nwin;
    let first = i * nwin;
    var high = 0u;
    for (var l = 1u; l < 8u; l++) {
        high |= s[l];
    }
    if (high == 0u && s[0] <= 1u) {
        for (var w = 0u; w < nwin; w++) {
            keys[first + w] = EMPTY;
        }
        if (s[0] == 1u) {
            keys[first] = params.ones_bucket;
            atomicAdd(&counts[params.ones_bucket], 1u);
        }
        return;
    }
    let c = params.c;
    let half = params.half_buckets;
    var carry = 0u;
    for (var w = 0u; w < nwin; w++) {
        let digit = window_bits(&s, w * c, c) + carry;
        var magnitude = digit;
        var sign = 0u;
        carry = 0u;
        if (digit > half) {
            magnitude = (half << 1u) - digit;
            sign = SIGN;
            carry = 1u;
        }
        if (magnitude == 0u) {
            keys[first + w] = EMPTY;
        } else {
            let bucket_set = select(w, 0u, params.stride != 0u);
            let bucket = bucket_set * half + magnitude - 1u;
            keys[first + w] = bucket | sign;
            atomicAdd(&counts[bucket], 1u);
        }
    }
}

@compute @workgroup_size(64)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(gid, groups);
    if (i >= params.n) {
        return;
    }
    let key = keys[i];
    if (key == EMPTY) {
        return;
    }
    let bucket = key & ~SIGN;
    let slot = offsets[bucket] + atomicAdd(&counts[bucket], 1u);
    // The base: scalar i / nwin's, or in the shared layout its window's entry in the table.
    var base = i / params.nwin;
    if (params.stride != 0u) {
        base += (i % params.nwin) * params.stride;
    }
    sorted[slot] = base | (key & SIGN);
}
