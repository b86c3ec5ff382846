// MSM, phase 2, on the plain formula path: the same two kernels, modes and results as
// msm_bucket.wgsl (read it for the algorithm: bucket sums in levels of tasks, then per-window
// running sums over segments, then sums of groups), with points as WGSL values and the
// formulas as straight-line functions (curve_plain.wgsl), so a GPU keeps them in registers.
// For adapters whose compiler is fast (real GPUs); llvmpipe takes the interpreted kernels.

// Level 0 (mode 0: signed bases, mixed additions) and the later levels (mode 1: partials).
@compute @workgroup_size(64)
fn accumulate(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = thread_index(gid, groups);
    if (t >= tasks[params.nb]) {
        return;
    }
    let b = bucket_of_task(t);
    let start = offsets[b] + (t - tasks[b]) * params.t;
    let end = min(offsets[b + 1u], start + params.t);
    var acc = CURVE_identity();
    if (params.mode == 0u) {
        for (var e = start; e < end; e++) {
            let v = sorted[e];
            let q = bases_load(params.base_offset + (v & ~SIGN));
            acc = CURVE_madd(acc, CURVE_affine_neg_if(q, (v & SIGN) != 0u));
        }
    } else {
        for (var e = start; e < end; e++) {
            acc = CURVE_add(acc, pin_load(e));
        }
    }
    pout_store(t, acc);
}

// Bucket b's sum after the last level: its single partial, or the identity.
fn bucket_sum(b: u32) -> CURVE_xyzz {
    if (tasks[b + 1u] > tasks[b]) {
        return pin_load(tasks[b]);
    }
    return CURVE_identity();
}

// Mode 0: thread (w, s) computes Σ_{k in segment s of window w} (k+1)·S_k: running sums
// from the top (acc = Σ_{k' ≥ k} S_k', total += acc gives Σ (k − lo + 1)·S_k), then
// lo·acc + total, lo·acc by double-and-add (a doubling adds a point to itself). Thread
// nwin·segments copies the ones bucket's sum to the end of the output. Mode 1: out[i] =
// Σ in[i·group .. (i+1)·group].
//
// Written as a little state machine around a single CURVE_add call, as msm_bucket.wgsl's:
// each call site inlines the whole addition, and llvmpipe pays seconds for each.
const STEP_ACC: u32 = 0u; // acc += S_k
const STEP_TOTAL: u32 = 1u; // total += acc
const STEP_DOUBLE: u32 = 2u; // res += res
const STEP_ADD_ACC: u32 = 3u; // res += acc
const STEP_FINAL: u32 = 4u; // res += total
const STEP_GROUP: u32 = 5u; // res += in[e]

@compute @workgroup_size(64)
fn reduce(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(gid, groups);
    var step = STEP_ACC;
    var e = 0u;
    var e_end = 0u;
    var k = 0u;
    var lo = 0u;
    var w = 0u;
    var bit = -1i;
    if (params.mode == 1u) {
        if (i >= params.outputs) {
            return;
        }
        e = i * params.group;
        e_end = e + params.group;
        step = STEP_GROUP;
    } else {
        let segs = params.segments;
        if (i > params.sets * segs) {
            return;
        }
        if (i == params.sets * segs) {
            pout_store(i, bucket_sum(params.ones_bucket));
            return;
        }
        w = i / segs;
        let len = params.half_buckets / segs;
        lo = (i % segs) * len;
        k = lo + len;
        bit = 31i - i32(countLeadingZeros(lo));
    }
    var acc = CURVE_identity();
    var total = CURVE_identity();
    var res = CURVE_identity();
    loop {
        if (step == STEP_GROUP && e == e_end) {
            break;
        }
        if (step == STEP_ACC && k == lo) {
            // The running sums are done: res = lo·acc + total from here on.
            step = select(STEP_DOUBLE, STEP_FINAL, bit < 0i);
        }
        var a = res;
        var b = res;
        if (step == STEP_GROUP) {
            b = pin_load(e);
        } else if (step == STEP_ACC) {
            a = acc;
            b = bucket_sum(w * params.half_buckets + k - 1u);
        } else if (step == STEP_TOTAL) {
            a = total;
            b = acc;
        } else if (step == STEP_ADD_ACC) {
            b = acc;
        } else if (step == STEP_FINAL) {
            b = total;
        }
        let r = CURVE_add(a, b);
        if (step == STEP_ACC) {
            acc = r;
            step = STEP_TOTAL;
        } else if (step == STEP_TOTAL) {
            total = r;
            k -= 1u;
            step = STEP_ACC;
        } else {
            res = r;
            if (step == STEP_GROUP) {
                e += 1u;
            } else if (step == STEP_FINAL) {
                break;
            } else if (step == STEP_DOUBLE && ((lo >> u32(bit)) & 1u) == 1u) {
                step = STEP_ADD_ACC;
            } else {
                bit -= 1i;
                step = select(STEP_DOUBLE, STEP_FINAL, bit < 0i);
            }
        }
    }
    pout_store(i, res);
}
