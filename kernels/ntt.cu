// NTT over Fr, and the pointwise operations of the quotient H.
//
// One NTT of n = 2^L is a decimation-in-time transform: stage s (1..L) combines elements
// 2^(s−1) apart with twiddles ω_(2^s)^j = ω^(j·n/2^s). Stages are grouped into passes; a pass
// of k stages touches independent sub-problems of 2^k elements (indices that differ only in
// bits [s0, s0+k)), so a block loads 2^k·M of them (M adjacent sub-problems, for coalescing)
// into shared memory, runs the k stages there and writes them back: L/k round trips to memory
// instead of L.
//
// Orders: DIT wants its input in bit-reversed order. The first pass gathers it so (reading
// x[bitrev(i)], one 32-byte sector per element), and every pass writes natural order, so the
// output is natural and no separate bit-reversal pass runs. Passes go out of place (first pass
// input → scratch, then ping-pong); the host swaps buffers so the result lands in the caller's.
//
// Scaling: a coset NTT multiplies coefficient i by g^i on load (first pass), an inverse one
// multiplies output i by n⁻¹ (and g^(−i) on the coset) on store (last pass). Powers are taken
// from two small tables, hi[i >> 12]·lo[i & 4095], so no n-sized power table is needed.

#define NTT_SPLIT 12
#define NTT_BLOCK_ELEMS 1024

DEVICE Fr load_fr(const Fr* p) { return *p; }

DEVICE Fr split_power(const Fr* hi, const Fr* lo, u32 i) { return hi[i >> NTT_SPLIT] * lo[i & ((1u << NTT_SPLIT) - 1)]; }

// tw[e] = hi[e >> 12]·lo[e & 4095] for e < count: the twiddle table of one domain.
extern "C" __global__ void ntt_twiddles(Fr* tw, const Fr* hi, const Fr* lo, u32 count) {
  for (u32 e = blockIdx.x * blockDim.x + threadIdx.x; e < count; e += gridDim.x * blockDim.x)
    tw[e] = split_power(hi, lo, e);
}

// One pass: stages s0+1 .. s0+k of an NTT of 2^log_n elements.
//   first: gather input from bit-reversed positions (and, if load_hi, scale by hi·lo powers of
//          the source index: the coset shift);
//   store_hi: scale each output i by store_hi[i >> 12]·store_lo[i & 4095] (inverse scaling).
// Block: 2^k·M elements (M = min(2^s0, 1024 >> k)), 2^(k−1)·M threads.
extern "C" __global__ void ntt_pass(const Fr* __restrict__ in, Fr* __restrict__ out, const Fr* __restrict__ tw,
                                    u32 log_n, u32 s0, u32 k, u32 first, const Fr* load_hi, const Fr* load_lo,
                                    const Fr* store_hi, const Fr* store_lo) {
  __shared__ Fr sh[NTT_BLOCK_ELEMS];
  const u32 rows = 1u << k;
  const u32 m_cols = min(1u << s0, NTT_BLOCK_ELEMS >> k);
  const u32 col_blocks = (1u << s0) / m_cols;
  const u32 hi_idx = blockIdx.x / col_blocks;
  const u32 lo_base = (blockIdx.x % col_blocks) * m_cols;
  const u32 elems = rows * m_cols;

  // Load: element e = t·M + m holds index hi·2^(s0+k) + t·2^s0 + lo_base + m.
  for (u32 e = threadIdx.x; e < elems; e += blockDim.x) {
    const u32 t = e / m_cols, m = e % m_cols;
    const u32 idx = (hi_idx << (s0 + k)) + (t << s0) + lo_base + m;
    if (first) {
      const u32 src = __brev(idx) >> (32 - log_n);
      Fr v = in[src];
      if (load_hi) v = v * split_power(load_hi, load_lo, src);
      sh[e] = v;
    } else {
      sh[e] = in[idx];
    }
  }
  __syncthreads();

  const u32 butterflies = elems / 2;
  for (u32 q = 0; q < k; q++) {
    for (u32 b = threadIdx.x; b < butterflies; b += blockDim.x) {
      const u32 m = b % m_cols, bf = b / m_cols;
      const u32 t0 = ((bf >> q) << (q + 1)) | (bf & ((1u << q) - 1));
      const u32 t1 = t0 + (1u << q);
      // Twiddle ω^(j·n/2^(s0+q+1)), j = (t0 mod 2^q)·2^s0 + lo.
      const u32 j = ((t0 & ((1u << q) - 1)) << s0) + lo_base + m;
      const u32 e_tw = j << (log_n - s0 - q - 1);
      const Fr u = sh[t0 * m_cols + m];
      const Fr v = sh[t1 * m_cols + m] * tw[e_tw];
      sh[t0 * m_cols + m] = u + v;
      sh[t1 * m_cols + m] = u - v;
    }
    __syncthreads();
  }

  for (u32 e = threadIdx.x; e < elems; e += blockDim.x) {
    const u32 t = e / m_cols, m = e % m_cols;
    const u32 idx = (hi_idx << (s0 + k)) + (t << s0) + lo_base + m;
    Fr v = sh[e];
    if (store_hi) v = v * split_power(store_hi, store_lo, idx);
    out[idx] = v;
  }
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
