// Multi-scalar multiplication Σ sᵢ·Pᵢ on G1 and G2: Pippenger with signed window digits.
//
// The scalar range is cut into W windows of c bits. A window's digit is taken in
// [−2^(c−1)+1, 2^(c−1)] (a digit above 2^(c−1) becomes digit − 2^c and carries one into the
// next window), so each window has B = 2^(c−1) buckets and a negative digit adds the negated
// point. W·c ≥ 256 leaves the top window room for the last carry (scalars are < 2^255).
//
// Phases (each one or a few launches, each timed as a span by the host):
//   digits      msm_count: per (window, bucket) counts; scalars equal to 1 go to the `ones`
//               list instead (the 0/1 split), zero digits go nowhere.
//   sort        scan of the counts into offsets, then msm_scatter: each (scalar, window) with
//               a nonzero digit writes its point index (sign in bit 31) into its bucket's slot:
//               a counting sort by bucket, on the device.
//   accumulate  *_accumulate: one thread per bucket sums its points into XYZZ with mixed
//               additions. Buckets larger than `big` are left to *_big_pieces (pieces of the
//               bucket summed by whole blocks, then *_big_combine), so a skewed distribution
//               where most scalars share a digit does not leave one thread doing it all.
//   reduce      *_bucket_reduce: Σ_b b·bucket_b per window by running sums over segments of
//               buckets in parallel, *_window_fold sums each window's segments; the host
//               combines the windows (Horner) and the ones' partial sums.

#define MSM_BIG_THREADS_G1 128
#define MSM_BIG_THREADS_G2 64

// Bits [off, off + c) of a 256-bit little-endian scalar (c ≤ 24); selects by unrolled compare
// so the limbs stay in registers.
DEVICE u32 window_bits(const Fr& s, u32 off, u32 c) {
  const u32 i = off >> 5, sh = off & 31;
  u32 lo = 0, hi = 0;
#pragma unroll
  for (u32 j = 0; j < 8; j++) {
    if (j == i) lo = s.l[j];
    if (j == i + 1) hi = s.l[j];
  }
  const u64 v = ((u64)hi << 32 | lo) >> sh;
  return (u32)v & ((1u << c) - 1);
}

DEVICE bool is_plain_one(const Fr& s) {
  u32 acc = s.l[0] ^ 1u;
#pragma unroll
  for (int j = 1; j < 8; j++) acc |= s.l[j];
  return acc == 0;
}

// Calls emit(bucket_key, negative) for each nonzero signed digit of the plain scalar s.
template <class Emit>
DEVICE void for_each_digit(const Fr& s, u32 c, u32 windows, Emit emit) {
  const u32 half = 1u << (c - 1);
  u32 carry = 0;
  for (u32 w = 0; w < windows; w++) {
    const u32 v = window_bits(s, w * c, c) + carry;
    u32 mag;
    u32 neg;
    if (v > half) { mag = (1u << c) - v; neg = 1; carry = 1; }
    else { mag = v; neg = 0; carry = 0; }
    if (mag != 0) emit(w * half + mag - 1, neg);
  }
}

extern "C" __global__ void msm_count(const Fr* __restrict__ scalars, u32 n, u32 c, u32 windows, u32* counts,
                                     u32* ones, u32* ones_count, u32 split) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Fr s = scalars[i].from_montgomery();
    if (split && is_plain_one(s)) {
      ones[atomicAdd(ones_count, 1u)] = i;
      continue;
    }
    for_each_digit(s, c, windows, [&](u32 key, u32) { atomicAdd(&counts[key], 1u); });
  }
}

extern "C" __global__ void msm_scatter(const Fr* __restrict__ scalars, u32 n, u32 c, u32 windows, u32* cursor,
                                       u32* sorted, u32 split) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Fr s = scalars[i].from_montgomery();
    if (split && is_plain_one(s)) continue;
    for_each_digit(s, c, windows, [&](u32 key, u32 neg) {
      const u32 pos = atomicAdd(&cursor[key], 1u);
      sorted[pos] = i | (neg << 31);
    });
  }
}

// Exclusive prefix sum of 1024-element blocks in place (blockDim = 1024); each block's total
// goes to block_sums (the host scans those and adds them back with scan_add).
extern "C" __global__ void scan_blocks(u32* data, u32 n, u32* block_sums) {
  __shared__ u32 buf[2][1024];
  const u32 t = threadIdx.x, i = blockIdx.x * 1024 + t;
  const u32 x = i < n ? data[i] : 0;
  buf[0][t] = x;
  __syncthreads();
  int cur = 0;
  for (u32 d = 1; d < 1024; d <<= 1) {
    const u32 v = buf[cur][t] + (t >= d ? buf[cur][t - d] : 0);
    buf[cur ^ 1][t] = v;
    cur ^= 1;
    __syncthreads();
  }
  const u32 inclusive = buf[cur][t];
  if (i < n) data[i] = inclusive - x;
  if (t == 1023) block_sums[blockIdx.x] = inclusive;
}

extern "C" __global__ void scan_add(u32* data, u32 n, const u32* block_offsets) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += block_offsets[i / 1024];
}

// A big bucket, recorded by *_accumulate for the big-bucket path.
struct BigBucket {
  u32 key, start, count;
};

template <class F>
DEVICE void accumulate(const Affine<F>* __restrict__ bases, const u32* __restrict__ sorted, const u32* offsets,
                       const u32* counts, u32 buckets, u32 big, Xyzz<F>* out, BigBucket* big_list, u32* big_count) {
  const u32 k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= buckets) return;
  const u32 start = offsets[k], count = counts[k];
  Xyzz<F> acc = Xyzz<F>::identity();
  if (count > big) {
    const u32 slot = atomicAdd(big_count, 1u);
    big_list[slot].key = k;
    big_list[slot].start = start;
    big_list[slot].count = count;
  } else {
    for (u32 j = 0; j < count; j++) {
      const u32 e = sorted[start + j];
      Affine<F> p = bases[e & 0x7fffffffu];
      if (e >> 31) p = p.neg();
      acc.add_affine_hot(p);
    }
  }
  out[k] = acc;
}

// One block per piece of a big bucket: strided sums, then a tree in shared memory.
template <class F, int T>
DEVICE void big_pieces(const Affine<F>* __restrict__ bases, const u32* __restrict__ sorted, const u32* pieces,
                       Xyzz<F>* partials) {
  __shared__ Xyzz<F> sh[T];
  const u32 start = pieces[2 * blockIdx.x], len = pieces[2 * blockIdx.x + 1];
  Xyzz<F> acc = Xyzz<F>::identity();
  for (u32 j = threadIdx.x; j < len; j += T) {
    const u32 e = sorted[start + j];
    Affine<F> p = bases[e & 0x7fffffffu];
    if (e >> 31) p = p.neg();
    acc.add_affine(p);
  }
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int s = T / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) {
      Xyzz<F> a = sh[threadIdx.x];
      a.add(sh[threadIdx.x + s]);
      sh[threadIdx.x] = a;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = sh[0];
}

// One thread per big bucket: the sum of its pieces' partial sums. table: (key, first, count).
template <class F>
DEVICE void big_combine(const u32* table, u32 nbig, const Xyzz<F>* partials, Xyzz<F>* buckets) {
  const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= nbig) return;
  const u32 key = table[3 * j], first = table[3 * j + 1], count = table[3 * j + 2];
  Xyzz<F> acc = Xyzz<F>::identity();
  for (u32 i = 0; i < count; i++) acc.add(partials[first + i]);
  buckets[key] = acc;
}

// One thread per (window, segment of L = B/S buckets): u = Σ_{b in segment} (b+1)·bucket_b,
// as a running sum from the top (t = Σ (b − jL + 1)·bucket_b, r = Σ bucket_b) plus (jL)·r.
template <class F>
DEVICE void bucket_reduce(const Xyzz<F>* buckets, u32 windows, u32 half, u32 segments, Xyzz<F>* out) {
  const u32 id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= windows * segments) return;
  const u32 w = id / segments, j = id % segments, len = half / segments;
  const Xyzz<F>* b = buckets + (size_t)w * half + (size_t)j * len;
  Xyzz<F> r = Xyzz<F>::identity(), t = Xyzz<F>::identity();
  for (int i = (int)len - 1; i >= 0; i--) {
    r.add(b[i]);
    t.add(r);
  }
  const u32 m = j * len;
  if (m != 0 && !r.is_identity()) {
    Xyzz<F> acc = Xyzz<F>::identity();
    for (int bit = 31 - __clz(m); bit >= 0; bit--) {
      acc.dbl();
      if ((m >> bit) & 1) acc.add(r);
    }
    t.add(acc);
  }
  out[id] = t;
}

// One block per window: thread i sums segments i, i+T, … of its window, then a tree in
// shared memory; out[w] = Σ_j segment_j. The host combines the windows (Horner, c doublings
// each): a few hundred serial point operations, which one GPU thread does far slower than a CPU.
template <class F, int T>
DEVICE void window_fold(const Xyzz<F>* segs, u32 segments, Xyzz<F>* out) {
  __shared__ Xyzz<F> sh[T];
  const Xyzz<F>* mine = segs + (size_t)blockIdx.x * segments;
  Xyzz<F> acc = Xyzz<F>::identity();
  for (u32 j = threadIdx.x; j < segments; j += T) acc.add(mine[j]);
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int s = T / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) {
      Xyzz<F> a = sh[threadIdx.x];
      a.add(sh[threadIdx.x + s]);
      sh[threadIdx.x] = a;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}

// The ones of the 0/1 split: their bases summed, gridDim partial sums out.
template <class F, int T>
DEVICE void ones_sum(const Affine<F>* __restrict__ bases, const u32* ones, const u32* ones_count, Xyzz<F>* partials) {
  __shared__ Xyzz<F> sh[T];
  const u32 m = *ones_count;
  Xyzz<F> acc = Xyzz<F>::identity();
  for (u32 j = blockIdx.x * T + threadIdx.x; j < m; j += gridDim.x * T) acc.add_affine(bases[ones[j]]);
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int s = T / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) {
      Xyzz<F> a = sh[threadIdx.x];
      a.add(sh[threadIdx.x + s]);
      sh[threadIdx.x] = a;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = sh[0];
}

#define MSM_CURVE_KERNELS(P, F, T, MINB)                                                                        \
  extern "C" __global__ void __launch_bounds__(128, MINB) P##_accumulate(const Affine<F>* bases, const u32* sorted, const u32* offsets,    \
                                            const u32* counts, u32 buckets, u32 big, Xyzz<F>* out,            \
                                            BigBucket* big_list, u32* big_count) {                            \
    accumulate<F>(bases, sorted, offsets, counts, buckets, big, out, big_list, big_count);                    \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(T) P##_big_pieces(const Affine<F>* bases, const u32* sorted,   \
                                                                 const u32* pieces, Xyzz<F>* partials) {      \
    big_pieces<F, T>(bases, sorted, pieces, partials);                                                        \
  }                                                                                                           \
  extern "C" __global__ void P##_big_combine(const u32* table, u32 nbig, const Xyzz<F>* partials,             \
                                             Xyzz<F>* buckets) {                                              \
    big_combine<F>(table, nbig, partials, buckets);                                                           \
  }                                                                                                           \
  extern "C" __global__ void P##_bucket_reduce(const Xyzz<F>* buckets, u32 windows, u32 half, u32 segments,   \
                                               Xyzz<F>* out) {                                                \
    bucket_reduce<F>(buckets, windows, half, segments, out);                                                  \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(T) P##_window_fold(const Xyzz<F>* segs, u32 segments,          \
                                                                  Xyzz<F>* out) {                             \
    window_fold<F, T>(segs, segments, out);                                                                   \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(T) P##_ones_sum(const Affine<F>* bases, const u32* ones,       \
                                                               const u32* ones_count, Xyzz<F>* partials) {    \
    ones_sum<F, T>(bases, ones, ones_count, partials);                                                        \
  }

MSM_CURVE_KERNELS(g1, Fq, MSM_BIG_THREADS_G1, 4)
MSM_CURVE_KERNELS(g2, Fq2, MSM_BIG_THREADS_G2, 1)
