// MSM bases precomputed per window ("shifted bases"), instantiated per group (CURVE).
//
// table[w·len + i] = 2^(c·w)·P_i, affine, for every window w < windows. An MSM over such a
// table puts the digit of window w of scalar i into the one shared set of buckets with base
// w·len + i (msm_sort.wgsl's shared layout): the same n·windows additions as the windowed
// layout, but one bucket reduction instead of one per window, so the window can be wider
// (c = 20 at 2^20: 13 windows instead of 16).
//
// One thread per point of a launch (points first .. first + count): c doublings a window in
// XYZZ (the interpreter's DBL program), each multiple kept in `multiples`; then one field
// inversion for all the point's multiples (Montgomery's trick over d_w = ZZ_w·ZZZ_w: the
// prefix products are parked in the table's own slots until the backward pass overwrites
// them), and x = X/ZZ, y = Y/ZZZ. Building a table is a one-off per uploaded base vector, so
// the code here is written for small pipelines (one Montgomery product site for the field
// products, one for the inversion) rather than speed.

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

// Coordinate slots (curve.wgsl numbering: a slot is CURVE_W registers). The running multiple
// is P (0..4), which DBL doubles in place; a multiple read back in the backward pass is Q
// (4..8). Field values live in the spare slots 12..19, which no program touches. PREFIX and
// PREV are stored to and loaded from the table as an affine point's x, so the slot after each
// (its y) is scratch.
const PREFIX: u32 = 12u;
const D: u32 = 14u;
const INV: u32 = 15u;
const PREV: u32 = 16u;
const DINV: u32 = 18u;
const T: u32 = 19u;
// CURVE_fe_inverse's scratch: the conjugate and the norm.
const CONJ: u32 = 8u;
const NORM: u32 = 9u;

// Slot dst = slot a · slot b in the coordinate field (Fq for G1; Fq2 = Fq[u]/(u² + 1) for G2,
// Karatsuba: c0 = a0·b0 − a1·b1, c1 = (a0 + a1)(b0 + b1) − a0·b0 − a1·b1). dst may be a or b.
fn CURVE_fe_mul(dst: u32, a: u32, b: u32) {
    let ra = a * CURVE_W;
    let rb = b * CURVE_W;
    let rd = dst * CURVE_W;
    var t: array<fq, 3>;
    let products = 2u * CURVE_W - 1u;
    for (var k = 0u; k < products; k++) {
        var l = vm[ra + min(k, CURVE_W - 1u)];
        var r = vm[rb + min(k, CURVE_W - 1u)];
        if (k == 2u) {
            l = fq_add(vm[ra], vm[ra + 1u]);
            r = fq_add(vm[rb], vm[rb + 1u]);
        }
        t[k] = fq_mul(l, r);
    }
    if (CURVE_W == 1u) {
        vm[rd] = t[0];
    } else {
        vm[rd] = fq_sub(t[0], t[1]);
        vm[rd + 1u] = fq_sub(fq_sub(t[2], t[0]), t[1]);
    }
}

// a^(p−2) = 1/a in Fq (a ≠ 0), square-and-multiply from the top bit of p − 2, with one
// product site: each turn either squares or multiplies by a.
fn fq_inverse(a: fq) -> fq {
    var e = fq_P;
    e[0] -= 2u; // p's low limb is odd and above 2: no borrow
    var r = fq_one();
    var bit = 380i; // p has 381 bits
    var multiply = false;
    loop {
        var rhs = r;
        if (multiply) {
            rhs = a;
        }
        r = fq_mul(r, rhs);
        if (multiply) {
            multiply = false;
        } else {
            multiply = ((e[u32(bit) >> 5u] >> (u32(bit) & 31u)) & 1u) == 1u;
        }
        if (!multiply) {
            bit -= 1i;
            if (bit < 0i) {
                break;
            }
        }
    }
    return r;
}

// Slot dst = 1 / slot a (a ≠ 0): a⁻¹ = conj(a) / (a·conj(a)), where a·conj(a) = a0² + a1² lies
// in Fq (for G1, conj(a) = a and the norm is a²).
fn CURVE_fe_inverse(dst: u32, a: u32) {
    vm[CONJ * CURVE_W] = vm[a * CURVE_W];
    if (CURVE_W == 2u) {
        vm[CONJ * CURVE_W + 1u] = fq_neg(vm[a * CURVE_W + 1u]);
    }
    CURVE_fe_mul(NORM, a, CONJ);
    vm[NORM * CURVE_W] = fq_inverse(vm[NORM * CURVE_W]);
    CURVE_fe_mul(dst, CONJ, NORM);
}

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
    CURVE_set_one(2u);
    CURVE_set_one(3u);
    CURVE_set_one(PREFIX);
    // Forward: the multiples, and prefix_w = d_1·…·d_w (parked in table slot w).
    for (var w = 1u; w < windows; w++) {
        for (var k = 0u; k < params.c; k++) {
            vm_run(CURVE_DBL, 0u, 0u);
        }
        multiples_from_vm((w - 1u) * params.count + t, 0u);
        CURVE_fe_mul(D, 2u, 3u);
        CURVE_fe_mul(PREFIX, PREFIX, D);
        table_from_vm(w * len + i, PREFIX * CURVE_W);
    }
    // INV = 1/prefix_{windows−1}; backward, INV = 1/prefix_w on entering window w.
    CURVE_fe_inverse(INV, PREFIX);
    for (var w = windows - 1u; w >= 1u; w--) {
        multiples_to_vm((w - 1u) * params.count + t, 4u * CURVE_W);
        if (w > 1u) {
            table_to_vm((w - 1u) * len + i, PREV * CURVE_W);
        } else {
            CURVE_set_one(PREV);
        }
        CURVE_fe_mul(DINV, INV, PREV); // 1/d_w
        CURVE_fe_mul(D, 6u, 7u); // d_w
        CURVE_fe_mul(INV, INV, D); // 1/prefix_{w−1}
        CURVE_fe_mul(T, DINV, 7u); // 1/ZZ = ZZZ/d
        CURVE_fe_mul(4u, 4u, T); // x = X/ZZ
        CURVE_fe_mul(T, DINV, 6u); // 1/ZZZ = ZZ/d
        CURVE_fe_mul(5u, 5u, T); // y = Y/ZZZ
        table_from_vm(w * len + i, 4u * CURVE_W);
    }
}
