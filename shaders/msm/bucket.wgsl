// MSM, phase 2: bucket sums, and their reduction to one sum per window, for one group
// (instantiated as g1 and g2: CURVE). Two kernels, `accumulate` and `reduce`, two modes each.
//
// Bucket sums in levels, so an oversized bucket (the ones bucket of a bit witness, a
// skewed scalar distribution) is split over many threads instead of serialising one:
// level 0 cuts every bucket's sorted entries into tasks of at most t bases; each task is
// one thread, adding its bases (mixed additions into XYZZ) into one partial sum. The
// partials of a bucket lie contiguously, so level k+1 cuts them again into tasks of t
// partials, until every bucket has at most one. A task finds its bucket by binary search
// in the task offsets (a prefix sum, util/scan.wgsl).
//
// Then each window's buckets are reduced Σ_k (k+1)·S_k by running sums over segments of
// the window, one thread per segment, and the segment results are summed in groups.

// Params, SIGN and bucket_of_task: tasks.wgsl.

// Register slots of the points (curve/xyzz.wgsl), as register indices.
const P_REG: u32 = 0u;
const Q_REG: u32 = 4u * CURVE_W;

// Level 0 (mode 0: bases, mixed additions) and the later levels (mode 1: partials) in one
// kernel, so a driver compiles one addition site, not two.
@compute @workgroup_size(64)
fn accumulate(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = thread_index(gid, groups);
    if (t >= tasks[params.nb]) {
        return;
    }
    let b = bucket_of_task(t);
    let start = offsets[b] + (t - tasks[b]) * params.t;
    let end = min(offsets[b + 1u], start + params.t);
    let affine = params.mode == 0u;
    if (!affine && end - start == 1u) {
        // A bucket's only partial: moved as words, with no addition to make. Every level
        // after the one that finishes a bucket moves its sum on like this (the levels are
        // planned for the largest possible bucket), so the move skips the registers.
        let words = 48u * CURVE_W;
        for (var k = 0u; k < words; k++) {
            pout[t * words + k] = pin[start * words + k];
        }
        return;
    }
    CURVE_set_identity(0u);
    for (var e = start; e < end; e++) {
        if (affine) {
            let v = sorted[e];
            bases_to_vm(params.base_offset + (v & ~SIGN), Q_REG);
            if ((v & SIGN) != 0u) {
                CURVE_neg_at(5u);
            }
        } else {
            pin_to_vm(e, Q_REG);
        }
        CURVE_add(0u, 4u, affine);
    }
    pout_from_vm(t, P_REG);
}

// Bucket b's sum after the last level (its single partial, or the identity) into slot `coord`.
fn bucket_sum_to(b: u32, coord: u32) {
    if (tasks[b + 1u] > tasks[b]) {
        pin_to_vm(tasks[b], coord * CURVE_W);
    } else {
        CURVE_set_identity(coord);
    }
}

// Thread (w, s): Σ_{k in segment s of window w} (k+1)·S_k, by a running sum from the top
// (acc = Σ_{k' ≥ k} S_k', total += acc gives Σ (k − lo + 1)·S_k), plus lo·acc by
// double-and-add (a doubling adds a slot to itself). Thread sets·segments copies the ones
// bucket's sum to the end of the output.
//
// A little state machine around a single use of CURVE_add, and no point ever copied: drivers
// inline every function where it is used, and every inlined addition or register access
// costs compile time.
// Slots: the bucket sum in 4, acc in 12, total in 16, the result in 0.
const STEP_ACC: u32 = 0u; // acc += S_k
const STEP_TOTAL: u32 = 1u; // total += acc
const STEP_DOUBLE: u32 = 2u; // P += P
const STEP_ADD_ACC: u32 = 3u; // P += acc
const STEP_FINAL: u32 = 4u; // P += total
const STEP_DONE: u32 = 5u;
const ACC: u32 = 12u;
const TOTAL: u32 = 16u;

// Mode 0: thread (w, s) of the window reduction above. Mode 1: out[i] = Σ in[i·group ..
// (i+1)·group] (summing the segment results of each window). One kernel, one addition site.
const STEP_GROUP: u32 = 6u; // P += in[e]

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
        CURVE_set_identity(0u);
    } else {
        let segs = params.segments;
        if (i > params.sets * segs) {
            return;
        }
        if (i == params.sets * segs) {
            bucket_sum_to(params.ones_bucket, 0u);
            pout_from_vm(i, P_REG);
            return;
        }
        w = i / segs;
        let len = params.half_buckets / segs;
        lo = (i % segs) * len;
        k = lo + len;
        bit = 31i - i32(countLeadingZeros(lo));
        CURVE_set_identity(ACC);
        CURVE_set_identity(TOTAL);
    }
    loop {
        if (step == STEP_GROUP && e == e_end) {
            break;
        }
        if (step == STEP_ACC && k == lo) {
            // The running sums are done: P = lo·acc + total from here on.
            CURVE_set_identity(0u);
            if (bit < 0i) {
                step = STEP_FINAL;
            } else {
                step = STEP_DOUBLE;
            }
        }
        var p = 0u;
        var q = 0u;
        if (step == STEP_GROUP) {
            pin_to_vm(e, Q_REG);
            q = 4u;
        } else if (step == STEP_ACC) {
            bucket_sum_to(w * params.half_buckets + k - 1u, 4u);
            p = ACC;
            q = 4u;
        } else if (step == STEP_TOTAL) {
            p = TOTAL;
            q = ACC;
        } else if (step == STEP_ADD_ACC) {
            q = ACC;
        } else if (step == STEP_FINAL) {
            q = TOTAL;
        }
        CURVE_add(p, q, false);
        if (step == STEP_GROUP) {
            e += 1u;
        } else if (step == STEP_ACC) {
            step = STEP_TOTAL;
        } else if (step == STEP_TOTAL) {
            k -= 1u;
            step = STEP_ACC;
        } else if (step == STEP_DOUBLE && ((lo >> u32(bit)) & 1u) == 1u) {
            step = STEP_ADD_ACC;
        } else if (step == STEP_DOUBLE || step == STEP_ADD_ACC) {
            bit -= 1i;
            if (bit < 0i) {
                step = STEP_FINAL;
            } else {
                step = STEP_DOUBLE;
            }
        } else {
            step = STEP_DONE;
        }
        if (step == STEP_DONE) {
            break;
        }
    }
    pout_from_vm(i, P_REG);
}
