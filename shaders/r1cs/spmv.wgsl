// Sparse matrix–vector products over Fr, out = M·z, for a compiled circuit's A, B and C
// (kernels/r1cs/spmv.cu is the CUDA twin). The matrix is g16_backend's packed words (`m`, split
// over bindings like any large array): coefficients from word 0 (8 words each), row starts
// from `starts`, each entry's (column, slot) pair from `entries`, the long rows' indices from
// `long_rows`.
//
// A slot is SLOT_ONE (add z[col] as it is: most of an R1CS's entries), SLOT_MINUS_ONE
// (subtract it) or the index of the coefficient to multiply by. Skipping the product for ±1 is
// bit-identical: every value is reduced below p, and addition and subtraction are exact.
//
// Two entry points, dispatched in one pass, each writing rows the other does not:
// - `rows`: one thread a row of at most `long_row` entries, summed in order; rows from the
//   matrix's height to `out_len` are written 0;
// - `long_rows`: one workgroup a longer row (hash circuits have rows of 1000+ entries): each
//   thread sums every WORKGROUP-th entry, then a tree in workgroup memory adds the partial sums.

struct Params {
    starts: u32,
    entries: u32,
    rows: u32,
    long_row: u32,
    long_rows: u32,
    long_count: u32,
    out_len: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

const SLOT_ONE: u32 = 0xffffffffu;
const SLOT_MINUS_ONE: u32 = 0xfffffffeu;

// Coefficient `slot` of the table at the start of the words.
fn coefficient(slot: u32) -> fr {
    let at = slot * 8u;
    return fr(m_load(at), m_load(at + 1u), m_load(at + 2u), m_load(at + 3u), m_load(at + 4u), m_load(at + 5u),
              m_load(at + 6u), m_load(at + 7u));
}

// acc + coefficient·z[col] for the entry whose pair starts at word `at`.
fn add_entry(acc: fr, at: u32) -> fr {
    let slot = m_load(at + 1u);
    var term = z_load(m_load(at));
    if (slot < SLOT_MINUS_ONE) {
        term = fr_mul(term, coefficient(slot));
    }
    if (slot == SLOT_MINUS_ONE) {
        return fr_sub(acc, term);
    }
    return fr_add(acc, term);
}

@compute @workgroup_size(64)
fn rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let r = thread_index(gid, groups);
    if (r >= params.out_len) {
        return;
    }
    if (r >= params.rows) {
        out_store(r, fr_zero());
        return;
    }
    let lo = m_load(params.starts + r);
    let hi = m_load(params.starts + r + 1u);
    if (hi - lo > params.long_row) {
        return;  // `long_rows` writes it
    }
    var acc = fr_zero();
    for (var e = lo; e < hi; e++) {
        acc = add_entry(acc, params.entries + 2u * e);
    }
    out_store(r, acc);
}

var<workgroup> partial: array<fr, WORKGROUP>;

@compute @workgroup_size(64)
fn long_rows(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    // The workgroup's long row: the same for all its threads, so every barrier below is
    // reached by all of them or by none.
    let j = wid.x + wid.y * groups.x;
    if (j >= params.long_count) {
        return;
    }
    let r = m_load(params.long_rows + j);
    let hi = m_load(params.starts + r + 1u);
    var acc = fr_zero();
    for (var e = m_load(params.starts + r) + t; e < hi; e += WORKGROUP) {
        acc = add_entry(acc, params.entries + 2u * e);
    }
    partial[t] = acc;
    workgroupBarrier();
    for (var s = WORKGROUP / 2u; s > 0u; s >>= 1u) {
        if (t < s) {
            partial[t] = fr_add(partial[t], partial[t + s]);
        }
        workgroupBarrier();
    }
    if (t == 0u) {
        out_store(r, partial[0]);
    }
}
