// Sparse matrix–vector products over Fr, out = M·z, for a compiled circuit's A, B and C, with
// the matrix in the packed layout of `g16_backend::sparse::packed` (one array of words
// `m`): coefficients from word 0 (8 words each), row starts from `starts`, each entry's
// (column, slot) pair from `entries`, the long rows' indices from `long_rows`.
//
// A slot is SPMV_SLOT_ONE (add z[col] as it is: most of an R1CS's entries), SPMV_SLOT_MINUS_ONE
// (subtract it) or the index of the coefficient to multiply by. Skipping the product for ±1 is
// bit-identical: every value is reduced below p, and addition and subtraction are exact.
//
// Two kernels, queued one after the other on one stream, each writing rows the other does not:
// - spmv_rows: one thread a row of at most `long_row` entries, summed in order; rows from the
//   matrix's height to `out_len` are written 0;
// - spmv_long_rows: one block of SPMV_LONG_THREADS threads a longer row (a hash circuit has
//   rows of 1000+ entries, which one thread would sum while its warp's 31 others wait): each
//   thread sums every SPMV_LONG_THREADS-th entry, then a tree in shared memory adds the
//   partial sums.
//
// Loops stride by blockDim.x and gridDim.x, so the host-emulation test
// (`backend-cuda/src/sparse/tests.rs`) runs the kernels with any block size.

#define SPMV_SLOT_ONE 0xffffffffu
#define SPMV_SLOT_MINUS_ONE 0xfffffffeu
// Threads of a long row's block: a power of two (the tree halves it).
#define SPMV_LONG_THREADS 32

// Coefficient `slot` of the table at the start of `m`, word by word (the words need not be
// aligned for a wider load).
DEVICE Fr spmv_coefficient(const u32* __restrict__ m, u32 slot) {
  Fr k;
#pragma unroll
  for (int i = 0; i < Fr::N; i++) k.l[i] = m[slot * Fr::N + i];
  return k;
}

// acc + coefficient·z[col] for the entry whose pair starts at word `at`.
DEVICE Fr spmv_add_entry(Fr acc, const u32* __restrict__ m, const Fr* __restrict__ z, u32 at) {
  const u32 col = m[at], slot = m[at + 1];
  const Fr x = z[col];
  if (slot == SPMV_SLOT_ONE) return acc + x;
  if (slot == SPMV_SLOT_MINUS_ONE) return acc - x;
  return acc + x * spmv_coefficient(m, slot);
}

extern "C" __global__ void spmv_rows(Fr* __restrict__ out, const Fr* __restrict__ z, const u32* __restrict__ m,
                                     u32 starts, u32 entries, u32 rows, u32 long_row, u32 out_len) {
  for (u32 r = blockIdx.x * blockDim.x + threadIdx.x; r < out_len; r += gridDim.x * blockDim.x) {
    if (r >= rows) {
      out[r] = Fr::zero();
      continue;
    }
    const u32 lo = m[starts + r], hi = m[starts + r + 1];
    if (hi - lo > long_row) continue;  // spmv_long_rows writes it
    Fr acc = Fr::zero();
    for (u32 e = lo; e < hi; e++) acc = spmv_add_entry(acc, m, z, entries + 2 * e);
    out[r] = acc;
  }
}

extern "C" __global__ void __launch_bounds__(SPMV_LONG_THREADS)
    spmv_long_rows(Fr* __restrict__ out, const Fr* __restrict__ z, const u32* __restrict__ m, u32 starts,
                   u32 entries, u32 long_rows, u32 long_count) {
  __shared__ Fr partial[SPMV_LONG_THREADS];
  const u32 t = threadIdx.x;
  for (u32 j = blockIdx.x; j < long_count; j += gridDim.x) {
    const u32 r = m[long_rows + j];
    const u32 hi = m[starts + r + 1];
    Fr acc = Fr::zero();
    for (u32 e = m[starts + r] + t; e < hi; e += blockDim.x) acc = spmv_add_entry(acc, m, z, entries + 2 * e);
    partial[t] = acc;
    __syncthreads();
    for (u32 s = blockDim.x / 2; s > 0; s >>= 1) {
      if (t < s) partial[t] = partial[t] + partial[t + s];
      __syncthreads();
    }
    if (t == 0) out[r] = partial[0];
    // partial[0] is read before the block's next row overwrites it.
    __syncthreads();
  }
}
