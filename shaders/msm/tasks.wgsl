// The bucket kernels' parameters (one struct for both kernels and all their modes, so one
// uniform layout serves every dispatch of an MSM) and the lookup from a task to its bucket.

struct Params {
    // accumulate: task size, bucket count, base offset of this launch's first scalar.
    t: u32,
    nb: u32,
    base_offset: u32,
    // reduce over windows: bucket sets (one a window, or one in all over shifted bases),
    // buckets per set (B), segments per set, the ones bucket.
    sets: u32,
    half_buckets: u32,
    segments: u32,
    ones_bucket: u32,
    // reduce over groups: outputs, and inputs per output.
    outputs: u32,
    group: u32,
    // accumulate: 0 over bases, 1 over partials. reduce: 0 over windows, 1 over groups.
    mode: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

const SIGN: u32 = 0x80000000u;

// The bucket whose tasks include task t: the largest b with tasks[b] <= t.
fn bucket_of_task(t: u32) -> u32 {
    var lo = 0u;
    var hi = params.nb;
    while (hi - lo > 1u) {
        let mid = (lo + hi) >> 1u;
        if (tasks[mid] <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

