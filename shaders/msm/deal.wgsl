// The batched subgroup check's deal (g16_backend::subgroup::batched): each point's bucket in
// each pass, read from a keystream the host drew from the operating system, written as bucket
// keys in sort.wgsl's layout so that the MSM's scatter and accumulation sum the buckets.
//
// The stream's layout is `Deal::keystream`'s: point i owns the 64-bit words
// i·words .. (i + 1)·words, each stored low half first; pass p's bucket is the `bucket_bits`
// bits at (p mod per_word)·bucket_bits of 64-bit word p / per_word (a pass never straddles two
// 64-bit words, but may straddle the two halves of one).
//
// Keys: point i's key for pass p at i·passes + p, bucket p·buckets + (its bits), never signed:
// a bucket sums its points as they are. Every point has a key in every pass, identities
// included (their addition is the identity's, which the accumulation handles).

struct Params {
    // Points in this launch.
    n: u32,
    passes: u32,
    bucket_bits: u32,
    // 64-bit words of the stream a point takes.
    words: u32,
    // Passes one 64-bit word holds: 64 / bucket_bits.
    per_word: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

@compute @workgroup_size(64)
fn deal(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(gid, groups);
    if (i >= params.n) {
        return;
    }
    let bits = params.bucket_bits;
    let mask = (1u << bits) - 1u;
    let buckets = 1u << bits;
    for (var p = 0u; p < params.passes; p++) {
        let word = (i * params.words + p / params.per_word) * 2u;
        let at = (p % params.per_word) * bits;
        let lo = stream[word];
        let hi = stream[word + 1u];
        var v: u32;
        if (at >= 32u) {
            v = hi >> (at - 32u);
        } else {
            v = lo >> at;
            // at > 0 here whenever the bits run past the low half (bits ≤ 16), so the shift
            // is below 32.
            if (at + bits > 32u) {
                v |= hi << (32u - at);
            }
        }
        let bucket = p * buckets + (v & mask);
        keys[i * params.passes + p] = bucket;
        atomicAdd(&counts[bucket], 1u);
    }
}
