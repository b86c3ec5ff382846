// NTT over Fr in passes of up to 8 stages, each pass one read and one write of the array with
// its stages run in workgroup memory: the design of the CUDA pass kernel (kernels/ntt/ntt.cu,
// whose header derives the maths), in WGSL. The host plans the passes
// from the tile the device's workgroup storage holds.
//
// One NTT of n = 2^L is a decimation-in-time transform split into passes of k stages. Seen
// from a pass that starts after stage s0, the array is a grid: index = hi·2^(s0+k) + p·2^s0 +
// lo, and the pass transforms every column (hi, lo) of 2^k rows p on its own: an inter-pass
// twiddle ω_(2^(s0+k))^(lo·bitrev_k(p)) on load, then a 2^k-point DIT whose twiddles are roots
// of order ≤ 2^k. Both come from the domain's table `tw`, which holds:
// - the roots, ω_(2^K)^j for j < 2^(K−1), K the plan's largest pass (≤ 10): a root
//   ω_(2^(q+1))^j is roots[j·2^(K−1−q)], so the butterflies read at most 2^(K−1) adjacent
//   entries (16 KiB);
// - the inter-pass twiddles ω^e, e < n, as the half table (ω^e for e < n/2; ω^(e+n/2) = −ω^e:
//   one read; a pass gathers its 2^16 distinct twiddles from all n/2·32 bytes of it);
// - the scalings' power tables, each split in two: power(i) = hi[i >> 12]·lo[i mod 2^12].
//
// A workgroup holds `cols` = 2^log_cols adjacent columns (a tile of 2^(k+log_cols) elements),
// loaded and stored a row at a time so that the columns' elements, adjacent in memory, move
// together. Between load and store the stages run in rounds of two (radix 4): each thread takes
// the 4 elements a round combines into registers, runs both stages there, and puts them back:
// one workgroup-memory round trip and one barrier a round instead of a stage.
//
// Workgroup memory holds the tile as 8 planes of u32, one limb a plane (`sh[j·ntt_plane + e]`),
// so that threads reading adjacent elements read adjacent words (with whole 32-byte elements
// side by side, 32 threads would hit 4 of the 32 banks). Row r, column m of the tile is element
// r·stride + m, stride = cols plus one pad element where the host found room: the radix-4
// rounds and the first pass's store walk a column, and an odd stride spreads a column over
// the banks.
//
// Orders: DIT wants its input bit-reversed. The first pass reads the input as a 2^k × 2^(L−k)
// matrix (x[row·2^(L−k) + c], contiguous in c): its columns c are exactly the first-pass
// groups hi = bitrev(c), so no scattered reads; it writes each group's 2^k outputs
// contiguously. Every pass writes natural order, so no bit-reversal pass runs.
//
// Scaling, fused into the passes, mode 0 none, 1 a constant, 2 a power table: load_mode 2
// (first pass) multiplies input i by a power table's entry i (the coset shift g^i, or
// snarkjs's ω_2n^i); store_mode 1 (last pass) multiplies every output by the constant `scale`
// (n⁻¹), store_mode 2 output i by a power table's entry (n⁻¹·g^(−i)). A power table is two short tables appended to `tw`:
// power(i) = tw[hi + (i >> NTT_SPLIT)]·tw[lo + (i & (2^NTT_SPLIT − 1))].

// The split of the power tables (the host builds them with the same split).
const NTT_SPLIT: u32 = 12u;

struct Params {
    log_n: u32,
    // Stages before this pass, and this pass's stages.
    s0: u32,
    k: u32,
    log_cols: u32,
    // Row stride in workgroup memory: cols, or cols + 1.
    stride: u32,
    load_mode: u32,
    store_mode: u32,
    // K: the roots are ω_(2^K)^j, j < 2^(K−1), at the start of `tw`.
    roots_log: u32,
    // The inter-pass twiddles: the half table, from this offset.
    twiddles: u32,
    // Offsets in `tw` of the power tables' high and low parts, on load and on store.
    load_hi: u32,
    load_lo: u32,
    store_hi: u32,
    store_lo: u32,
    // Bring the u32 fields to 16, so that `scale` starts where the host writes it.
    pad0: u32,
    pad1: u32,
    pad2: u32,
    // store_mode 1's constant.
    scale: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> params: Params;

// The tile: elements a limb plane holds, the words of all 8 planes, and threads a workgroup.
// Set per device at pipeline creation, from the device's workgroup storage.
override ntt_plane: u32;
override ntt_shared_words: u32;
override ntt_threads: u32;

var<workgroup> sh: array<u32, ntt_shared_words>;

fn sh_load(e: u32) -> fr {
    let p = ntt_plane;
    return fr(sh[e], sh[p + e], sh[2u * p + e], sh[3u * p + e], sh[4u * p + e], sh[5u * p + e], sh[6u * p + e], sh[7u * p + e]);
}

fn sh_store(e: u32, v: fr) {
    let p = ntt_plane;
    sh[e] = v[0];
    sh[p + e] = v[1];
    sh[2u * p + e] = v[2];
    sh[3u * p + e] = v[3];
    sh[4u * p + e] = v[4];
    sh[5u * p + e] = v[5];
    sh[6u * p + e] = v[6];
    sh[7u * p + e] = v[7];
}

// The low `bits` bits of x, reversed (bits = 0 gives 0).
fn bit_reverse(x: u32, bits: u32) -> u32 {
    if (bits == 0u) {
        return 0u;
    }
    return reverseBits(x) >> (32u - bits);
}

// Entry i of the power table whose parts start at tw[hi] and tw[lo].
fn split_power(hi: u32, lo: u32, i: u32) -> fr {
    return fr_mul(tw_load(hi + (i >> NTT_SPLIT)), tw_load(lo + (i & ((1u << NTT_SPLIT) - 1u))));
}

// ω^e for e < n: an inter-pass twiddle.
fn twiddle(e: u32) -> fr {
    let half = 1u << (params.log_n - 1u);
    if (e < half) {
        return tw_load(params.twiddles + e);
    }
    return fr_neg(tw_load(params.twiddles + e - half));
}

// ω_(2^(q+1))^j for j < 2^q: a root of the butterflies of stage q (counted within the pass).
fn root(j: u32, q: u32) -> fr {
    return tw_load(j << (params.roots_log - 1u - q));
}

// (u + v, u − v): a butterfly whose twiddle the caller has applied to v.
fn butterfly(u: fr, v: fr) -> array<fr, 2> {
    return array<fr, 2>(fr_add(u, v), fr_sub(u, v));
}

// Stages q0 and q0 + 1 on the 4 rows of one column at e0 … e3 (rows p, p + 2^q0, p + 2^(q0+1),
// p + 3·2^q0; low = p mod 2^q0).
fn radix4(e0: u32, e1: u32, e2: u32, e3: u32, low: u32, q0: u32) {
    var x0 = sh_load(e0);
    var x1 = sh_load(e1);
    var x2 = sh_load(e2);
    var x3 = sh_load(e3);
    // Stage q0: (x0, x1) and (x2, x3), one root; it is 1 in the pass's first round (low = 0).
    if (q0 != 0u) {
        let w = root(low, q0);
        x1 = fr_mul(x1, w);
        x3 = fr_mul(x3, w);
    }
    let a = butterfly(x0, x1);
    let b = butterfly(x2, x3);
    // Stage q0 + 1: (x0, x2) with ω_(2^(q0+2))^low, (x1, x3) with ω_(2^(q0+2))^(low + 2^q0).
    var y2 = b[0];
    if (q0 != 0u) {
        y2 = fr_mul(y2, root(low, q0 + 1u));
    }
    let y3 = fr_mul(b[1], root(low + (1u << q0), q0 + 1u));
    let c = butterfly(a[0], y2);
    let d = butterfly(a[1], y3);
    sh_store(e0, c[0]);
    sh_store(e1, d[0]);
    sh_store(e2, c[1]);
    sh_store(e3, d[1]);
}

// Stage q0 alone on the 2 rows of one column at e0, e1 (rows p, p + 2^q0; low = p mod 2^q0).
fn radix2(e0: u32, e1: u32, low: u32, q0: u32) {
    var x1 = sh_load(e1);
    if (low != 0u) {
        x1 = fr_mul(x1, root(low, q0));
    }
    let a = butterfly(sh_load(e0), x1);
    sh_store(e0, a[0]);
    sh_store(e1, a[1]);
}

// One round: stages q0 … q0 + r − 1 of the tile's 2^k-point DITs, r = 2 (radix 4), or r = 1
// for the last stage of a pass of odd k. A subgroup is the 2^r rows of one column that differ
// only in bits q0 … q0 + r − 1; stage q pairs rows 2^(q−q0) apart with the root
// ω_(2^(q+1))^(p mod 2^q).
fn round(lid: u32, q0: u32, r: u32) {
    let log_cols = params.log_cols;
    let stride = params.stride;
    let subgroups = (1u << (params.k + log_cols)) >> r;
    let step = 1u << q0;
    for (var sg = lid; sg < subgroups; sg += ntt_threads) {
        let m = sg & ((1u << log_cols) - 1u);
        let rest = sg >> log_cols;
        let low = rest & (step - 1u);
        let base = ((rest >> q0) << (q0 + r)) | low;
        let e0 = base * stride + m;
        let e1 = (base + step) * stride + m;
        if (r == 2u) {
            radix4(e0, e1, (base + 2u * step) * stride + m, (base + 3u * step) * stride + m, low, q0);
        } else {
            radix2(e0, e1, low, q0);
        }
    }
}

// One pass: stages s0+1 … s0+k of the NTT, src → dst; one workgroup a tile. The host sizes the
// dispatch so that workgroups and tiles match one to one (their count is a power of two).
@compute @workgroup_size(ntt_threads)
fn ntt_pass(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    let log_n = params.log_n;
    let s0 = params.s0;
    let k = params.k;
    let log_cols = params.log_cols;
    let stride = params.stride;
    let elems = 1u << (k + log_cols);
    let cols_mask = (1u << log_cols) - 1u;
    let first = s0 == 0u;
    // This workgroup's columns: first pass, c0 + m of the 2^k × 2^(L−k) input matrix; later
    // passes, lo0 + m in group hi.
    let c0 = block << log_cols;
    let col_blocks = select((1u << s0) >> log_cols, 1u, first);
    let hi = block / col_blocks;
    let lo0 = (block % col_blocks) << log_cols;

    for (var e = lid; e < elems; e += ntt_threads) {
        let row = e >> log_cols;
        let m = e & cols_mask;
        var at: u32;
        var factor = fr_one();
        var scaled = false;
        var slot: u32;
        if (first) {
            at = (row << (log_n - k)) + c0 + m;
            slot = bit_reverse(row, k) * stride + m;
            if (params.load_mode == 2u) {
                factor = split_power(params.load_hi, params.load_lo, at);
                scaled = true;
            }
        } else {
            at = (hi << (s0 + k)) + (row << s0) + lo0 + m;
            slot = row * stride + m;
            let exponent = ((lo0 + m) * bit_reverse(row, k)) << (log_n - s0 - k);
            if (exponent != 0u) {
                factor = twiddle(exponent);
                scaled = true;
            }
        }
        var v = src_load(at);
        if (scaled) {
            v = fr_mul(v, factor);
        }
        sh_store(slot, v);
    }
    workgroupBarrier();

    for (var q0 = 0u; q0 < k; q0 += 2u) {
        round(lid, q0, min(2u, k - q0));
        workgroupBarrier();
    }

    for (var e = lid; e < elems; e += ntt_threads) {
        var row: u32;
        var m: u32;
        var at: u32;
        if (first) {
            // Row fastest: each group's 2^k outputs are contiguous.
            row = e & ((1u << k) - 1u);
            m = e >> k;
            at = (bit_reverse(c0 + m, log_n - k) << k) + row;
        } else {
            row = e >> log_cols;
            m = e & cols_mask;
            at = (hi << (s0 + k)) + (row << s0) + lo0 + m;
        }
        var v = sh_load(row * stride + m);
        if (params.store_mode == 1u) {
            v = fr_mul(v, fr_from_uniform(params.scale));
        } else if (params.store_mode == 2u) {
            v = fr_mul(v, split_power(params.store_hi, params.store_lo, at));
        }
        dst_store(at, v);
    }
}
