// Exclusive prefix sum over bucket counts: dst[b] = Σ_{b' < b} ⌈count(b')/t⌉ and dst[nb] =
// the total. The counts come either straight from src (mode 0: a histogram) or as
// differences of src's offsets (mode 1: count(b) = src[b+1] − src[b]), so one kernel turns a
// histogram into bucket offsets, and each level's offsets into the next level's task offsets.
//
// Three kernels over the whole GPU, not one workgroup (a single workgroup serialised the
// scan, and an MSM runs several: docs/perf/wgpu.md, "Scans across the GPU"): `scan_blocks`
// scans each block of BLOCK counts locally and leaves the block's total in `blocks`;
// `scan_tops` (one workgroup) scans the block totals in place and writes the grand total;
// `scan_add` adds each block's offset.

struct Params {
    nb: u32,
    mode: u32,
    t: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

const SCAN_WG: u32 = 64u;
const PER_THREAD: u32 = 8u;
const BLOCK: u32 = 512u; // SCAN_WG · PER_THREAD
var<workgroup> totals: array<u32, 64>;

fn count_of(b: u32) -> u32 {
    var c: u32;
    if (params.mode == 0u) {
        c = src[b];
    } else {
        c = src[b + 1u] - src[b];
    }
    return (c + params.t - 1u) / params.t;
}

fn block_count() -> u32 {
    return (params.nb + BLOCK - 1u) / BLOCK;
}

// The workgroup's exclusive prefix of v at thread tid (Hillis-Steele over `totals`).
fn workgroup_exclusive(tid: u32, v: u32) -> u32 {
    totals[tid] = v;
    workgroupBarrier();
    for (var d = 1u; d < SCAN_WG; d <<= 1u) {
        var add = 0u;
        if (tid >= d) {
            add = totals[tid - d];
        }
        workgroupBarrier();
        totals[tid] += add;
        workgroupBarrier();
    }
    return totals[tid] - v;
}

// One workgroup per block; each thread scans PER_THREAD consecutive counts.
@compute @workgroup_size(64)
fn scan_blocks(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let tid = lid.x;
    let blk = wid.x + wid.y * groups.x;
    let lo = blk * BLOCK + tid * PER_THREAD;
    let nb = params.nb;
    var sum = 0u;
    for (var k = 0u; k < PER_THREAD; k++) {
        if (lo + k < nb) {
            sum += count_of(lo + k);
        }
    }
    var run = workgroup_exclusive(tid, sum);
    for (var k = 0u; k < PER_THREAD; k++) {
        if (lo + k < nb) {
            dst[lo + k] = run;
            run += count_of(lo + k);
        }
    }
    if (tid == SCAN_WG - 1u && blk < block_count()) {
        blocks[blk] = run;
    }
}

// One workgroup: the block totals become block offsets; dst[nb] = the total.
@compute @workgroup_size(64)
fn scan_tops(@builtin(local_invocation_id) lid: vec3<u32>) {
    let tid = lid.x;
    let nblocks = block_count();
    let per = (nblocks + SCAN_WG - 1u) / SCAN_WG;
    let lo = min(tid * per, nblocks);
    let hi = min(lo + per, nblocks);
    var sum = 0u;
    for (var b = lo; b < hi; b++) {
        sum += blocks[b];
    }
    var run = workgroup_exclusive(tid, sum);
    for (var b = lo; b < hi; b++) {
        let v = blocks[b];
        blocks[b] = run;
        run += v;
    }
    if (tid == SCAN_WG - 1u) {
        dst[params.nb] = run;
    }
}

@compute @workgroup_size(64)
fn scan_add(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = thread_index(gid, groups);
    if (b < params.nb) {
        dst[b] += blocks[b / BLOCK];
    }
}
