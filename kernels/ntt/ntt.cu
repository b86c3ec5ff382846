// NTT over Fr: the twiddle tables and the pass kernel.
//
// One NTT of n = 2^L is a decimation-in-time transform, split into passes of k stages each
// (k ≤ 8, three passes at 2^24; one pass of all L stages up to 2^10). Seen from a pass that
// starts after stage s0, the array is a grid: index = hi·2^(s0+k) + p·2^s0 + lo, and the pass
// transforms every column (hi, lo) of 2^k rows p on its own. With the rows in bit-reversed
// order (which DIT keeps), the result of stages s0+1 … s0+k is, for each column,
//     X[t] = Σ_p ω_(2^k)^(t·u) · ω_(2^(s0+k))^(lo·u) · Y[p],   u = bitrev_k(p),
// i.e. an inter-pass twiddle ω_(2^(s0+k))^(lo·u) on load, then a plain 2^k-point DIT whose
// twiddles are roots of unity of order ≤ 2^k. Those come from one small table (`roots`:
// ω_1024^j, j < 512, the same for every n), and the inter-pass ones from the domain's tables
// (see inter_pass_twiddle): one table read a element a pass, or two reads of cache-resident
// split tables and a product, and no twiddle read at all inside the butterflies' inner loop
// but the small table's.
//
// A block holds `cols` = 2^log_cols adjacent columns of one pass (1024 elements and 32 KB of
// shared memory, or 512 and 16 KB in `ntt_radix4_pass_512`; see Tile), loaded and stored a
// row at a time so that the columns' elements, adjacent in memory, are read and written
// together; every element, twiddle and root crosses global memory in 16-byte pieces (Fr::ldg,
// Fr::stg). Between load and store the k stages run in rounds of up to 2 stages (radix 4):
// each thread takes the 4 elements a round combines into registers, runs the round's stages
// there, and puts them back: one shared-memory round trip and one barrier a round instead of
// a stage.
//
// Orders: DIT wants its input bit-reversed. The first pass reads it so without scattered
// reads: its block b takes the 2^k rows of columns c = b·cols + m of the input seen as a
// 2^k × 2^(L−k) matrix (x[row·2^(L−k) + c], contiguous in c), which are exactly the elements
// of the first-pass groups hi = bitrev(c), and writes each group's 2^k outputs contiguously.
// Every pass writes natural order, so the output is natural and no bit-reversal pass runs.
// Passes go out of place (first pass input → scratch, then ping-pong); the host swaps buffers
// so the result lands in the caller's.
//
// Scaling: a coset NTT multiplies coefficient i by g^i on load (first pass), an inverse one
// multiplies output i by n⁻¹ (and g^(−i) on the coset) on store (last pass). Powers are taken
// from two small tables, hi[i >> 12]·lo[i & 4095], so no n-sized power table is needed.
//
// The kernels index with loops strided by blockDim.x and take their geometry from their
// arguments, so the host-emulation test (`backend-cuda/src/ntt/tests.rs`) runs them with one
// thread a block.

#define NTT_SPLIT 12
// Elements of one block (the tile's size): `ntt_radix4_pass` and `ntt_radix4_pass_512`.
#define NTT_BLOCK_ELEMS 1024
#define NTT_SMALL_BLOCK_ELEMS 512
// roots[j] = ω_(2^NTT_ROOTS_LOG)^j for j < 2^(NTT_ROOTS_LOG − 1): a pass has at most 10 stages.
#define NTT_ROOTS_LOG 10

// hi[i >> 12]·lo[i & 4095]: a power from two small tables.
DEVICE Fr split_power(const Fr* hi, const Fr* lo, u32 i) {
  return Fr::ldg(hi + (i >> NTT_SPLIT)) * Fr::ldg(lo + (i & ((1u << NTT_SPLIT) - 1)));
}

// The low `bits` bits of x, reversed (bits = 0 gives 0).
DEVICE u32 bit_reverse(u32 x, u32 bits) { return bits == 0 ? 0 : __brev(x) >> (32 - bits); }

// ω^e for e < n, in one of two layouts:
// - the half table tw[e] = ω^e, e < half = n/2 (ω^(e+n/2) = −ω^e), tw_lo null: one read a
//   twiddle, but from a table of n/2 elements (256 MB at 2^24), which a later pass reads
//   scattered (exponents (lo0 + m)·u·2^(L−s0−k)), so nearly every twiddle is a DRAM sector of
//   its own beside the element it scales;
// - split, tw[e >> 12]·tw_lo[e & 4095]: tables of n/4096 and 4096 elements (256 KB at 2^24),
//   which stay in cache, for one more product a twiddle.
DEVICE Fr inter_pass_twiddle(const Fr* __restrict__ tw, const Fr* __restrict__ tw_lo, u32 e, u32 half) {
  if (tw_lo != nullptr) return split_power(tw, tw_lo, e);
  return e < half ? Fr::ldg(tw + e) : Fr::ldg(tw + (e - half)).neg();
}

// tw[e] = hi[e >> 12]·lo[e & 4095] for e < count: the twiddle table of one domain.
extern "C" __global__ void ntt_twiddles(Fr* tw, const Fr* hi, const Fr* lo, u32 count) {
  for (u32 e = blockIdx.x * blockDim.x + threadIdx.x; e < count; e += gridDim.x * blockDim.x)
    split_power(hi, lo, e).stg(tw + e);
}

// A block's elements in shared memory: row p (of 2^k), column m (of 2^log_cols) at slot
// (p' << log_cols) + m, p' = p ^ ((p >> 2) & swizzle), each element as two 16-byte halves in
// two arrays. Shared memory serves a 16-byte access of a warp in four phases of 8 threads, and
// a phase is free of bank conflicts when its 8 slots differ mod 8. One array of 32-byte
// elements would give 8 consecutive slots only 4 bank groups (2-way conflicts on every
// access); in halves, slots mod 8 are 8 groups. The 8 threads of a phase take 8 consecutive
// elements row by row (loads, stores) or one column of each of 8 / cols consecutive
// subgroups (rounds). With 4 columns, the rows 4 apart that a pass's first round pairs land 4
// slots apart, never 8, once bit 0 of p takes bit 2's parity (swizzle 1); with 2 columns, bits
// 0–1 take bits 2–3 (swizzle 3). With 8 or more columns a phase is one row. The swizzle only
// permutes rows within aligned groups of 4, so the tile stays 2^(k + log_cols) slots.
struct Tile {
  uint4 *low, *high;  // the elements' first and last 16 bytes
  u32 log_cols, swizzle;
  DEVICE u32 slot(u32 p, u32 m) const { return ((p ^ ((p >> 2) & swizzle)) << log_cols) + m; }
  DEVICE Fr get(u32 p, u32 m) const {
    const u32 s = slot(p, m);
    const uint4 a = low[s], b = high[s];
    Fr r;
    r.l[0] = a.x; r.l[1] = a.y; r.l[2] = a.z; r.l[3] = a.w;
    r.l[4] = b.x; r.l[5] = b.y; r.l[6] = b.z; r.l[7] = b.w;
    return r;
  }
  DEVICE void put(u32 p, u32 m, const Fr& v) const {
    const u32 s = slot(p, m);
    uint4 a, b;
    a.x = v.l[0]; a.y = v.l[1]; a.z = v.l[2]; a.w = v.l[3];
    b.x = v.l[4]; b.y = v.l[5]; b.z = v.l[6]; b.w = v.l[7];
    low[s] = a;
    high[s] = b;
  }
};

// One round: stages q0 … q0+r−1 (R = 2^r) of the block's 2^k-point DITs, on the tile. A
// subgroup is the R elements whose rows differ only in bits [q0, q0+r) of one column; stage
// q = q0 + j pairs local elements i and i + 2^j with the twiddle ω_(2^(q+1))^(p mod 2^q),
// where p mod 2^q = low + (i mod 2^j)·2^q0.
template <int R>
DEVICE void ntt_round(const Tile& sh, const Fr* __restrict__ roots, u32 k, u32 q0, u32 log_cols) {
  static_assert(R == 2 || R == 4, "rounds of one or two stages");
  constexpr int r = R == 2 ? 1 : 2;
  const u32 subgroups = (1u << (k + log_cols)) / R;
  for (u32 sg = threadIdx.x; sg < subgroups; sg += blockDim.x) {
    const u32 m = sg & ((1u << log_cols) - 1), rest = sg >> log_cols;
    const u32 low = rest & ((1u << q0) - 1);
    const u32 base = ((rest >> q0) << (q0 + r)) | low;
    Fr x[R];
#pragma unroll
    for (int i = 0; i < R; i++) x[i] = sh.get(base + ((u32)i << q0), m);
#pragma unroll
    for (int j = 0; j < r; j++) {
      const u32 q = q0 + j;
#pragma unroll
      for (int a = 0; a < (1 << j); a++) {
        const Fr w = Fr::ldg(roots + ((low + ((u32)a << q0)) << (NTT_ROOTS_LOG - 1 - q)));
#pragma unroll
        for (int b = 0; b < R; b += 2 << j) {
          const Fr u = x[b + a];
          // In the pass's first round (low = 0) the twiddle of a = 0 is ω^0 = 1.
          const Fr v = (a == 0 && q0 == 0) ? x[b + a + (1 << j)] : x[b + a + (1 << j)] * w;
          x[b + a] = u + v;
          x[b + a + (1 << j)] = u - v;
        }
      }
    }
#pragma unroll
    for (int i = 0; i < R; i++) sh.put(base + ((u32)i << q0), m, x[i]);
  }
}

// Stages per round: the block has NTT_BLOCK_ELEMS >> NTT_LOG_RADIX threads, so fewer registers
// a thread buy more resident warps, to hide the latency of the products' carry chains (radix 4
// at 256 threads against radix 8 and 2; docs/perf/cuda.md: NTT pass kernel).
#define NTT_LOG_RADIX 2

// One pass: stages s0+1 … s0+k of an NTT of 2^log_n elements, block = 2^log_cols columns of
// at most BLOCK elements in all, BLOCK >> NTT_LOG_RADIX threads a block.
//   tw, tw_lo: the inter-pass twiddles (see inter_pass_twiddle: tw_lo null for the half table);
//   load_mode 1 (first pass only): scale input x[i] by load_hi[i >> 12]·load_lo[i & 4095];
//   store_mode 1: scale each output by store_hi[0]; 2: output i by store_hi·store_lo powers of i.
template <u32 BLOCK>
DEVICE void ntt_pass(const Fr* __restrict__ in, Fr* __restrict__ out, const Fr* __restrict__ tw,
                     const Fr* __restrict__ tw_lo, const Fr* __restrict__ roots, u32 log_n, u32 s0, u32 k, u32 log_cols,
                     u32 load_mode, const Fr* load_hi, const Fr* load_lo, u32 store_mode, const Fr* store_hi,
                     const Fr* store_lo) {
  __shared__ uint4 tile[2][BLOCK];
  const Tile sh{tile[0], tile[1], log_cols, log_cols == 2 ? 1u : log_cols == 1 ? 3u : 0u};
  const u32 cols = 1u << log_cols, elems = cols << k, cols_mask = cols - 1;
  const u32 half = 1u << (log_n - 1);
  // This block's columns: first pass, c0 + m of the 2^k × 2^(L−k) input matrix; later passes,
  // lo0 + m in group hi.
  const u32 col_blocks = s0 == 0 ? 1 : (1u << s0) >> log_cols;
  const u32 hi = blockIdx.x / col_blocks, lo0 = (blockIdx.x % col_blocks) << log_cols;
  const u32 c0 = blockIdx.x << log_cols;

  // Row by row, columns fastest: a row's columns are adjacent in memory (in the first pass,
  // tile row p is input row bitrev(p), so that consecutive threads fill consecutive tile rows).
  for (u32 e = threadIdx.x; e < elems; e += blockDim.x) {
    const u32 row = e >> log_cols, m = e & cols_mask;
    if (s0 == 0) {
      const u32 src = (bit_reverse(row, k) << (log_n - k)) + c0 + m;
      Fr v = Fr::ldg(in + src);
      if (load_mode == 1) v = v * split_power(load_hi, load_lo, src);
      sh.put(row, m, v);
    } else {
      const u32 idx = (hi << (s0 + k)) + (row << s0) + lo0 + m;
      const u32 exponent = ((lo0 + m) * bit_reverse(row, k)) << (log_n - s0 - k);
      sh.put(row, m, Fr::ldg(in + idx) * inter_pass_twiddle(tw, tw_lo, exponent, half));
    }
  }
  __syncthreads();

  for (u32 q0 = 0; q0 < k;) {
    const u32 r = min((u32)NTT_LOG_RADIX, k - q0);
    if (r == 2) ntt_round<4>(sh, roots, k, q0, log_cols);
    if (r == 1) ntt_round<2>(sh, roots, k, q0, log_cols);
    q0 += r;
    __syncthreads();
  }

  const Fr scale = store_mode == 1 ? Fr::ldg(store_hi) : Fr::one();
  // Row by row, columns fastest, as loaded. In the first pass each column is a group whose 2^k
  // outputs are contiguous: a warp writes 32 / cols rows of each of its columns' groups, runs
  // of 32 / cols adjacent elements.
  for (u32 e = threadIdx.x; e < elems; e += blockDim.x) {
    const u32 row = e >> log_cols, m = e & cols_mask;
    const u32 idx = s0 == 0 ? (bit_reverse(c0 + m, log_n - k) << k) + row : (hi << (s0 + k)) + (row << s0) + lo0 + m;
    Fr v = sh.get(row, m);
    if (store_mode == 1) v = v * scale;
    else if (store_mode == 2) v = v * split_power(store_hi, store_lo, idx);
    v.stg(out + idx);
  }
}

// The pass kernel NAME: blocks of BLOCK elements in BLOCK >> NTT_LOG_RADIX threads, registers
// capped for MIN_BLOCKS blocks an SM.
#define NTT_PASS_KERNEL(NAME, BLOCK, MIN_BLOCKS)                                                             \
  extern "C" __global__ void __launch_bounds__(BLOCK >> NTT_LOG_RADIX, MIN_BLOCKS)                           \
      NAME(const Fr* __restrict__ in, Fr* __restrict__ out, const Fr* __restrict__ tw,                       \
           const Fr* __restrict__ tw_lo, const Fr* __restrict__ roots, u32 log_n, u32 s0, u32 k, u32 log_cols, \
           u32 load_mode, const Fr* load_hi, const Fr* load_lo, u32 store_mode, const Fr* store_hi,          \
           const Fr* store_lo) {                                                                             \
    ntt_pass<BLOCK>(in, out, tw, tw_lo, roots, log_n, s0, k, log_cols, load_mode, load_hi, load_lo, store_mode, \
                    store_hi, store_lo);                                                                     \
  }

// 1024 elements in 256 threads, 3 blocks an SM (`NttBlock::Elems1024`).
NTT_PASS_KERNEL(ntt_radix4_pass, NTT_BLOCK_ELEMS, 3)
// 512 elements in 128 threads, 6 blocks an SM: the same occupancy with barriers half as wide,
// and the default (`CudaOptions::ntt_block`; docs/perf/cuda.md: NTT pass kernel).
NTT_PASS_KERNEL(ntt_radix4_pass_512, NTT_SMALL_BLOCK_ELEMS, 6)
