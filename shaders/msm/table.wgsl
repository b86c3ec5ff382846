// MSM bases precomputed per window ("shifted bases"), instantiated per group (CURVE).
//
// table[w·len + i] = 2^(c·w)·P_i, affine, for every window w < windows. An MSM over such a
// table puts the digit of window w of scalar i into the one shared set of buckets with base
// w·len + i (sort.wgsl's shared layout): the same n·windows additions as the windowed
// layout, but one set of buckets to fill and reduce instead of one per window (the host
// chooses c).
//
// One thread per point of a launch (points first .. first + count): c doublings a window in
// XYZZ (the interpreter's DBL program), each multiple kept in `multiples`; then one field
// inversion for all the point's multiples (Montgomery's trick over d_w = ZZ_w·ZZZ_w: the
// prefix products are parked in the table's own slots until the backward pass overwrites
// them), and x = X/ZZ, y = Y/ZZZ. Building a table is a one-off per uploaded base vector.

struct Params {
    // Points in the base vector (the table's stride between windows).
    len: u32,
    c: u32,
    windows: u32,
    // This launch: points first .. first + count.
    first: u32,
    count: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

// Coordinate slots (curve/xyzz.wgsl numbering: a slot is CURVE_W registers): the running
// multiple is P (0..4), which DBL doubles in place; the multiple of the backward pass is Q
// (4..8); the field values are TABLE_PREFIX, TABLE_INV, TABLE_PREV and TABLE_NORM
// (the wgpu backend's table formulas).
//
// Every product of the kernel runs in the interpreter (programs DBL and TABLE_*) from one
// vm_run site, and the inversion is one more product site: a driver inlines each site
// whole, and a kernel with a field product per step took several times longer to compile
// (docs/perf/wgpu.md, "Shifted bases").

// The kernel's steps, one program each.
const STEP_DOUBLE: u32 = 0u; // P = 2P, c times a window
const STEP_FWD: u32 = 1u; // multiple w out, PREFIX ·= ZZ·ZZZ, PREFIX parked in table slot w
const STEP_NORM: u32 = 2u; // NORM = PREFIX·conj(PREFIX), then inverted
const STEP_INV: u32 = 3u; // INV = 1/PREFIX
const STEP_BWD: u32 = 4u; // multiple w affine into table slot w, down to w = 1

@compute @workgroup_size(64)
fn shift_bases(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = thread_index(gid, groups);
    if (t >= params.count) {
        return;
    }
    let i = params.first + t;
    let len = params.len;
    let windows = params.windows;
    bases_to_vm(i, 0u);
    table_from_vm(i, 0u);
    if (CURVE_is_zero_at(0u) && CURVE_is_zero_at(1u)) {
        // The identity (affine x = y = 0): so is every multiple.
        for (var w = 1u; w < windows; w++) {
            table_from_vm(w * len + i, 0u);
        }
        return;
    }
    if (windows < 2u) {
        return;
    }
    CURVE_set_one(2u);
    CURVE_set_one(3u);
    CURVE_set_one(TABLE_PREFIX);
    var step = STEP_DOUBLE;
    var w = 1u;
    var k = 0u;
    loop {
        var prog = CURVE_DBL;
        if (step == STEP_FWD) {
            multiples_from_vm((w - 1u) * params.count + t, 0u);
            prog = CURVE_TABLE_FWD;
        } else if (step == STEP_NORM) {
            prog = CURVE_TABLE_NORM;
        } else if (step == STEP_INV) {
            prog = CURVE_TABLE_INV;
        } else if (step == STEP_BWD) {
            multiples_to_vm((w - 1u) * params.count + t, 4u * CURVE_W);
            if (w > 1u) {
                table_to_vm((w - 1u) * len + i, TABLE_PREV * CURVE_W);
            } else {
                CURVE_set_one(TABLE_PREV);
            }
            prog = CURVE_TABLE_BWD;
        }
        vm_run(prog, 0u, 4u * CURVE_W);
        if (step == STEP_DOUBLE) {
            k += 1u;
            if (k == params.c) {
                k = 0u;
                step = STEP_FWD;
            }
        } else if (step == STEP_FWD) {
            table_from_vm(w * len + i, TABLE_PREFIX * CURVE_W);
            w += 1u;
            step = select(STEP_NORM, STEP_DOUBLE, w < windows);
        } else if (step == STEP_NORM) {
            CURVE_invert_norm();
            step = STEP_INV;
        } else if (step == STEP_INV) {
            w = windows - 1u;
            step = STEP_BWD;
        } else {
            table_from_vm(w * len + i, 4u * CURVE_W);
            w -= 1u;
            if (w == 0u) {
                break;
            }
        }
    }
}
