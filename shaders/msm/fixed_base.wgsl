// Fixed-base scalar multiplication (key generation), instantiated per group (CURVE):
// out[i] = s_i·P, affine, for the points i < count of one launch.
//
// The host builds the table of P's multiples (g16_backend::fixed_base):
// table[w·per_window + d − 1] = d·2^(c·w)·P for each window w and digit d in 1 ..= 2^c − 1.
// Scalars come in canonical form, 8 words each, so digit w is bits c·w .. c·w + c.
//
// Thread t takes the points t, t + threads, t + 2·threads, … (neighbouring threads touch
// neighbouring points: coalesced loads and stores). For each: the table point of every
// non-zero digit added in XYZZ (CURVE_add, mixed), the sum kept in `multiples`; then one
// field inversion for all the thread's points (Montgomery's trick over d = ZZ·ZZZ, the
// shifted-bases kernel's programs TABLE_*: msm/table.wgsl; fq_inverse: field/fq_inverse.wgsl), the running prefix parked in
// each point's own `out` slot until the backward pass overwrites it with the affine point.
// An inversion is ~570 products, a point ~11 a window: a thread's batch of points shares it.
// The identity (a zero scalar) stays out of the products and comes out as x = y = 0.

struct Params {
    // Points of this launch, and the threads that share them.
    count: u32,
    threads: u32,
    c: u32,
    windows: u32,
    // Table points a window: 2^c − 1.
    per_window: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

// Digit w of scalar i: bits c·w .. c·w + c of its canonical words (c ≤ 16, so a digit
// straddles at most two words).
fn fixed_base_digit(i: u32, w: u32) -> u32 {
    let bit = w * params.c;
    let word = bit >> 5u;
    let shift = bit & 31u;
    var d = scalars[i * 8u + word] >> shift;
    if (shift + params.c > 32u && word < 7u) {
        d = d | (scalars[i * 8u + word + 1u] << (32u - shift));
    }
    return d & ((1u << params.c) - 1u);
}

// The steps of a thread, one program each (one vm_run site for all of them, as in
// msm/table.wgsl; the window sums run in CURVE_add's own site).
const STEP_SUM: u32 = 0u; // point i's windows summed into P, then PREFIX ·= ZZ·ZZZ
const STEP_NORM: u32 = 1u; // NORM = PREFIX·conj(PREFIX), then inverted
const STEP_INV: u32 = 2u; // INV = 1/PREFIX
const STEP_BWD: u32 = 3u; // point i affine into out[i], from the last point back to the first

@compute @workgroup_size(64)
fn fixed_base(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = thread_index(gid, groups);
    if (t >= params.threads || t >= params.count) {
        return;
    }
    let stride = params.threads;
    CURVE_set_one(TABLE_PREFIX);
    var step = STEP_SUM;
    var i = t;
    loop {
        var prog = CURVE_TABLE_FWD;
        var run = true;
        if (step == STEP_SUM) {
            CURVE_set_identity(0u);
            for (var w = 0u; w < params.windows; w++) {
                let d = fixed_base_digit(i, w);
                if (d != 0u) {
                    table_to_vm(w * params.per_window + d - 1u, 4u * CURVE_W);
                    CURVE_add(0u, 4u, true);
                }
            }
            multiples_from_vm(i, 0u);
            run = !CURVE_is_zero_at(2u);
        } else if (step == STEP_NORM) {
            prog = CURVE_TABLE_NORM;
        } else if (step == STEP_INV) {
            prog = CURVE_TABLE_INV;
        } else {
            multiples_to_vm(i, 4u * CURVE_W);
            run = !CURVE_is_zero_at(6u);
            if (run) {
                if (i >= stride) {
                    out_to_vm(i - stride, TABLE_PREV * CURVE_W);
                } else {
                    CURVE_set_one(TABLE_PREV);
                }
            }
            prog = CURVE_TABLE_BWD;
        }
        if (run) {
            vm_run(prog, 0u, 4u * CURVE_W);
        }
        if (step == STEP_SUM) {
            // The prefix through point i waits in out[i] for the backward pass.
            out_from_vm(i, TABLE_PREFIX * CURVE_W);
            if (i + stride < params.count) {
                i += stride;
            } else {
                step = STEP_NORM;
            }
        } else if (step == STEP_NORM) {
            CURVE_invert_norm();
            step = STEP_INV;
        } else if (step == STEP_INV) {
            step = STEP_BWD;
        } else {
            if (!run) {
                CURVE_set_identity(4u);
            }
            out_from_vm(i, 4u * CURVE_W);
            if (i < stride) {
                break;
            }
            i -= stride;
        }
    }
}
