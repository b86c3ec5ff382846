// Exclusive prefix sum over bucket counts, in one workgroup: dst[b] = Σ_{b' < b} ⌈count(b')/t⌉
// and dst[nb] = the total. The counts come either straight from src (mode 0: a histogram)
// or as differences of src's offsets (mode 1: count(b) = src[b+1] − src[b]), so one kernel
// turns a histogram into bucket offsets, and each level's offsets into the next level's task
// offsets. Each thread scans a contiguous stretch; the stretch totals are scanned in
// workgroup memory.

struct Params {
    nb: u32,
    mode: u32,
    t: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

const SCAN_THREADS: u32 = 256u;
var<workgroup> totals: array<u32, 256>;

fn count_of(b: u32) -> u32 {
    var c: u32;
    if (params.mode == 0u) {
        c = src[b];
    } else {
        c = src[b + 1u] - src[b];
    }
    return (c + params.t - 1u) / params.t;
}

@compute @workgroup_size(256)
fn scan(@builtin(local_invocation_id) lid: vec3<u32>) {
    let tid = lid.x;
    let nb = params.nb;
    let per = (nb + SCAN_THREADS - 1u) / SCAN_THREADS;
    let lo = min(tid * per, nb);
    let hi = min(lo + per, nb);
    var sum = 0u;
    for (var b = lo; b < hi; b++) {
        sum += count_of(b);
    }
    totals[tid] = sum;
    workgroupBarrier();
    // Hillis-Steele inclusive scan of the 256 stretch totals.
    for (var d = 1u; d < SCAN_THREADS; d <<= 1u) {
        var add = 0u;
        if (tid >= d) {
            add = totals[tid - d];
        }
        workgroupBarrier();
        totals[tid] += add;
        workgroupBarrier();
    }
    var run = totals[tid] - sum;
    for (var b = lo; b < hi; b++) {
        dst[b] = run;
        run += count_of(b);
    }
    if (tid == SCAN_THREADS - 1u) {
        dst[nb] = totals[tid];
    }
}
