// NTT over Fr, and the pointwise operations of the quotient H.
//
// One NTT of n = 2^L is a decimation-in-time transform, split into passes of k stages each
// (k ≤ 8, three passes at 2^24; one pass of all L stages up to 2^10). Seen from a pass that
// starts after stage s0, the array is a grid: index = hi·2^(s0+k) + p·2^s0 + lo, and the pass
// transforms every column (hi, lo) of 2^k rows p on its own. With the rows in bit-reversed
// order (which DIT keeps), the result of stages s0+1 … s0+k is, for each column,
//     X[t] = Σ_p ω_(2^k)^(t·u) · ω_(2^(s0+k))^(lo·u) · Y[p],   u = bitrev_k(p),
// i.e. an inter-pass twiddle ω_(2^(s0+k))^(lo·u) on load, then a plain 2^k-point DIT whose
// twiddles are roots of unity of order ≤ 2^k. Those come from one small table (`roots`:
// ω_1024^j, j < 512, the same for every n), and the inter-pass ones from the domain's table
// `tw` (ω^e, e < n/2; ω^(e+n/2) = −ω^e): one table read a element a pass, and no twiddle
// read at all inside the butterflies' inner loop but the small table's.
//
// A block holds `cols` = 2^log_cols adjacent columns of one pass (1024 elements, 32 KB of
// shared memory), loaded and stored a row at a time so that the columns' elements, adjacent in
// memory, are read and written together. Between load and store the k stages run in rounds of
// up to 2 stages (radix 4, the default kernel; 3 or 1 in the variants): each thread takes the
// 4 (or 8, 2) elements a round combines into registers, runs the round's stages there, and
// puts them back: one shared-memory round trip and one barrier a round instead of a stage.
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
// arguments, so the host-emulation test (`ntt.rs`) runs them with one thread a block.

#define NTT_SPLIT 12
// Elements of one block, and the shared array: one pad element a row when a row holds several
// columns (rows are then read along a column too, at a stride the pad moves off one bank).
#define NTT_BLOCK_ELEMS 1024
#define NTT_SHARED_ELEMS 1280
// roots[j] = ω_(2^NTT_ROOTS_LOG)^j for j < 2^(NTT_ROOTS_LOG − 1): a pass has at most 10 stages.
#define NTT_ROOTS_LOG 10

// How the pass kernels multiply in Fr: inline (ff.cuh's product, unrolled at every call site),
// or through one out-of-line copy (a call's few instructions for code that fits the
// instruction cache: a radix-8 round inlines 12 products). Both are kernels (`KERNELS` in
// ntt.rs); the engine picks one (see `PassVariant`).
struct InlineMul {
  DEVICE static Fr mul(const Fr& a, const Fr& b) { return a * b; }
};
NOINLINE Fr fr_mul_out_of_line(Fr a, Fr b) { return a * b; }
struct CalledMul {
  DEVICE static Fr mul(const Fr& a, const Fr& b) { return fr_mul_out_of_line(a, b); }
};

template <class Mul = InlineMul>
DEVICE Fr split_power(const Fr* hi, const Fr* lo, u32 i) { return Mul::mul(hi[i >> NTT_SPLIT], lo[i & ((1u << NTT_SPLIT) - 1)]); }

// The low `bits` bits of x, reversed (bits = 0 gives 0).
DEVICE u32 bit_reverse(u32 x, u32 bits) { return bits == 0 ? 0 : __brev(x) >> (32 - bits); }

// ω^e, e < n: from the half table tw[e] = ω^e, e < half = n/2 (one read), or, when tw_lo is
// given, from the split tables tw[e >> 12]·tw_lo[e & 4095] of e < n (two reads from small,
// cache-resident tables and a product; a run-time choice, for A/B measurements).
template <class Mul>
DEVICE Fr inter_pass_twiddle(const Fr* __restrict__ tw, const Fr* __restrict__ tw_lo, u32 e, u32 half) {
  if (tw_lo) return split_power<Mul>(tw, tw_lo, e);
  return e < half ? tw[e] : tw[e - half].neg();
}

// tw[e] = hi[e >> 12]·lo[e & 4095] for e < count: the twiddle table of one domain.
extern "C" __global__ void ntt_twiddles(Fr* tw, const Fr* hi, const Fr* lo, u32 count) {
  for (u32 e = blockIdx.x * blockDim.x + threadIdx.x; e < count; e += gridDim.x * blockDim.x)
    tw[e] = split_power(hi, lo, e);
}

// One round: stages q0 … q0+r−1 (R = 2^r) of the block's 2^k-point DITs, on the shared array
// (row p, column m at p·stride + m). A subgroup is the R elements whose rows differ only in
// bits [q0, q0+r) of one column; stage q = q0 + j pairs local elements i and i + 2^j with
// the twiddle ω_(2^(q+1))^(p mod 2^q), where p mod 2^q = low + (i mod 2^j)·2^q0.
template <int R, class Mul>
DEVICE void ntt_round(Fr* sh, const Fr* __restrict__ roots, u32 k, u32 q0, u32 log_cols, u32 stride) {
  constexpr int r = R == 2 ? 1 : R == 4 ? 2 : 3;
  const u32 subgroups = (1u << (k + log_cols)) / R;
  for (u32 sg = threadIdx.x; sg < subgroups; sg += blockDim.x) {
    const u32 m = sg & ((1u << log_cols) - 1), rest = sg >> log_cols;
    const u32 low = rest & ((1u << q0) - 1);
    const u32 base = ((rest >> q0) << (q0 + r)) | low;
    Fr x[R];
#pragma unroll
    for (int i = 0; i < R; i++) x[i] = sh[(base + ((u32)i << q0)) * stride + m];
#pragma unroll
    for (int j = 0; j < r; j++) {
      const u32 q = q0 + j;
#pragma unroll
      for (int a = 0; a < (1 << j); a++) {
        const Fr w = roots[(low + ((u32)a << q0)) << (NTT_ROOTS_LOG - 1 - q)];
#pragma unroll
        for (int b = 0; b < R; b += 2 << j) {
          const Fr u = x[b + a];
          // In the pass's first round (low = 0) the twiddle of a = 0 is ω^0 = 1.
          const Fr v = (a == 0 && q0 == 0) ? x[b + a + (1 << j)] : Mul::mul(x[b + a + (1 << j)], w);
          x[b + a] = u + v;
          x[b + a + (1 << j)] = u - v;
        }
      }
    }
#pragma unroll
    for (int i = 0; i < R; i++) sh[(base + ((u32)i << q0)) * stride + m] = x[i];
  }
}

// One pass (the body of the ntt_radix_pass kernels): stages s0+1 … s0+k of an NTT of 2^log_n
// elements, block = 2^log_cols columns.
//   tw, tw_lo: the inter-pass twiddles (see inter_pass_twiddle; tw_lo null: the half table);
//   load_mode 1 (first pass only): scale input x[i] by load_hi[i >> 12]·load_lo[i & 4095];
//   store_mode 1: scale each output by store_hi[0]; 2: output i by store_hi·store_lo powers of i.
#define NTT_PASS_PARAMS                                                                                           \
  const Fr *__restrict__ in, Fr *__restrict__ out, const Fr *__restrict__ tw, const Fr *__restrict__ tw_lo,       \
      const Fr *__restrict__ roots, u32 log_n, u32 s0, u32 k, u32 log_cols, u32 load_mode, const Fr *load_hi,    \
      const Fr *load_lo, u32 store_mode, const Fr *store_hi, const Fr *store_lo
#define NTT_PASS_ARGS \
  in, out, tw, tw_lo, roots, log_n, s0, k, log_cols, load_mode, load_hi, load_lo, store_mode, store_hi, store_lo

// LOG_RADIX: the most stages a round runs in registers (3: radix 8, 2: radix 4, 1: radix 2);
// the block has NTT_BLOCK_ELEMS >> LOG_RADIX threads, so fewer registers a thread buy more
// resident warps, to hide the latency of the products' serial carry chains.
template <class Mul, int LOG_RADIX>
DEVICE void ntt_radix_pass_body(NTT_PASS_PARAMS) {
  __shared__ Fr sh[NTT_SHARED_ELEMS];
  const u32 cols = 1u << log_cols, elems = cols << k, rows_mask = (1u << k) - 1, cols_mask = cols - 1;
  const u32 stride = cols + (cols > 1 ? 1 : 0);
  const u32 half = 1u << (log_n - 1);
  // This block's columns: first pass, c0 + m of the 2^k × 2^(L−k) input matrix; later passes,
  // lo0 + m in group hi.
  const u32 col_blocks = s0 == 0 ? 1 : (1u << s0) >> log_cols;
  const u32 hi = blockIdx.x / col_blocks, lo0 = (blockIdx.x % col_blocks) << log_cols;
  const u32 c0 = blockIdx.x << log_cols;

  for (u32 e = threadIdx.x; e < elems; e += blockDim.x) {
    const u32 row = e >> log_cols, m = e & cols_mask;
    if (s0 == 0) {
      const u32 src = (row << (log_n - k)) + c0 + m;
      Fr v = in[src];
      if (load_mode == 1) v = Mul::mul(v, split_power<Mul>(load_hi, load_lo, src));
      sh[bit_reverse(row, k) * stride + m] = v;
    } else {
      const u32 idx = (hi << (s0 + k)) + (row << s0) + lo0 + m;
      const u32 exponent = ((lo0 + m) * bit_reverse(row, k)) << (log_n - s0 - k);
      sh[row * stride + m] = Mul::mul(in[idx], inter_pass_twiddle<Mul>(tw, tw_lo, exponent, half));
    }
  }
  __syncthreads();

  for (u32 q0 = 0; q0 < k;) {
    const u32 r = min((u32)LOG_RADIX, k - q0);
    if constexpr (LOG_RADIX >= 3) {
      if (r == 3) ntt_round<8, Mul>(sh, roots, k, q0, log_cols, stride);
    }
    if constexpr (LOG_RADIX >= 2) {
      if (r == 2) ntt_round<4, Mul>(sh, roots, k, q0, log_cols, stride);
    }
    if (r == 1) ntt_round<2, Mul>(sh, roots, k, q0, log_cols, stride);
    q0 += r;
    __syncthreads();
  }

  const Fr scale = store_mode == 1 ? store_hi[0] : Fr::one();
  for (u32 e = threadIdx.x; e < elems; e += blockDim.x) {
    u32 row, m, idx;
    if (s0 == 0) {
      // Row fastest: each group's 2^k outputs are contiguous.
      row = e & rows_mask;
      m = e >> k;
      idx = (bit_reverse(c0 + m, log_n - k) << k) + row;
    } else {
      row = e >> log_cols;
      m = e & cols_mask;
      idx = (hi << (s0 + k)) + (row << s0) + lo0 + m;
    }
    Fr v = sh[row * stride + m];
    if (store_mode == 1) v = Mul::mul(v, scale);
    else if (store_mode == 2) v = Mul::mul(v, split_power<Mul>(store_hi, store_lo, idx));
    out[idx] = v;
  }
}

// The variants (`PassVariant` in ntt.rs picks one; H200, 2^24: backend-cuda/NOTES.md): radix 8
// with 128 threads a block, products inline (10.4 ms: 25% occupancy, the products' carry
// chains wait) or out of line (7.2 ms); radix 4 with 256 threads, registers capped for 3 blocks
// an SM (the default, 7.2 ms), or for 4 (a few spilled words, 7.2 ms); radix 2 with 512
// threads, capped for 2 blocks an SM (9.0 ms).
extern "C" __global__ void __launch_bounds__(128) ntt_radix_pass(NTT_PASS_PARAMS) {
  ntt_radix_pass_body<InlineMul, 3>(NTT_PASS_ARGS);
}
extern "C" __global__ void __launch_bounds__(128) ntt_radix_pass_call(NTT_PASS_PARAMS) {
  ntt_radix_pass_body<CalledMul, 3>(NTT_PASS_ARGS);
}
extern "C" __global__ void __launch_bounds__(256, 3) ntt_radix4_pass(NTT_PASS_PARAMS) {
  ntt_radix_pass_body<InlineMul, 2>(NTT_PASS_ARGS);
}
extern "C" __global__ void __launch_bounds__(256, 4) ntt_radix4_pass_4(NTT_PASS_PARAMS) {
  ntt_radix_pass_body<InlineMul, 2>(NTT_PASS_ARGS);
}
extern "C" __global__ void __launch_bounds__(512, 2) ntt_radix2_pass(NTT_PASS_PARAMS) {
  ntt_radix_pass_body<InlineMul, 1>(NTT_PASS_ARGS);
}

extern "C" __global__ void fr_mul(Fr* a, const Fr* b, u32 n) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = a[i] * b[i];
}

extern "C" __global__ void fr_sub(Fr* a, const Fr* b, u32 n) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = a[i] - b[i];
}

extern "C" __global__ void fr_scale(Fr* a, const Fr* c, u32 n) {
  const Fr k = *c;
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = a[i] * k;
}

// The quotient step of H, fused: a = (a·b − c)·z_inv, one pass over the three vectors.
extern "C" __global__ void fr_quotient(Fr* a, const Fr* b, const Fr* c, const Fr* z_inv, u32 n) {
  const Fr k = *z_inv;
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    a[i] = (a[i] * b[i] - c[i]) * k;
}
