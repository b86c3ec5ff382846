// Multi-scalar multiplication Σ sᵢ·Pᵢ on G1 and G2: Pippenger with signed window digits.
//
// The scalar range is cut into W windows of c bits. A window's digit is taken in
// [−2^(c−1)+1, 2^(c−1)] (a digit above 2^(c−1) becomes digit − 2^c and carries one into the
// next window), so each bucket set has B = 2^(c−1) buckets and a negative digit adds the
// negated point. W·c ≥ 256 leaves the top window room for the last carry (scalars are < 2^255).
//
// Two layouts of the buckets:
//   windowed  one bucket set per window (W·B buckets); the host combines the W window sums
//             (Horner, c doublings each). Entry indices are point indices.
//   shared    with precomputed shifted bases (table[w·len + i] = 2^(c·w)·P_i, made once per
//             uploaded base vector by *_shift_bases), digit d of window w adds ±table[w·len+i]
//             to bucket |d| of ONE set: B buckets in all, so c can be 20–22 (fewer windows,
//             fewer additions) while the bucket reduction stays small. Entry indices are
//             w·len + i.
//
// Phases (each one or a few launches, each timed as a span by the host; no host round trip
// until the result):
//   digits      msm_count: per bucket counts; scalars equal to 1 go to the `ones` list instead
//               (the 0/1 split), zero digits go nowhere.
//   sort        scan of the counts into offsets, then msm_scatter: each (scalar, window) with
//               a nonzero digit writes its entry index (sign in bit 31) into its bucket's slot:
//               a counting sort by bucket, on the device.
//   accumulate  *_accumulate: one thread per bucket sums its points into XYZZ with mixed
//               additions. Buckets larger than `big` are left to the big-bucket path:
//               msm_big_plan cuts them into pieces, *_big_pieces sums the pieces with whole
//               blocks, *_big_combine adds each bucket's pieces; so a skewed distribution
//               where most scalars share a digit does not leave one thread doing it all.
//   reduce      *_bucket_reduce: Σ_b b·bucket_b per set by running sums over segments of
//               buckets in parallel (t_j, r_j per segment j of L buckets; the set's sum is
//               Σ t_j + L·Σ j·r_j); *_window_fold (twice) sums the t_j; *_bit_sums and a fold
//               give Σ_j j·r_j as bit sums R_bit = Σ_{bit of j set} r_j, which the host doubles
//               and adds (or, the older way, each thread multiplies its r_j by jL itself);
//               *_ones_sum and a fold sum the ones. The host adds the ones' sum to the sets'
//               combination.

#define MSM_BIG_THREADS_G1 128
#define MSM_BIG_THREADS_G2 64
// Threads per block of the accumulation (the host launches it so).
#define MSM_ACC_THREADS 128

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

// Calls emit(bucket_key, entry, negative) for each nonzero signed digit of the plain scalar s
// of point i: windowed layout (stride 0): key w·B + |d| − 1, entry i; shared layout (stride =
// the table's points per window): key |d| − 1, entry w·stride + i.
template <class Emit>
DEVICE void for_each_digit(const Fr& s, u32 i, u32 c, u32 windows, u32 stride, Emit emit) {
  const u32 half = 1u << (c - 1);
  u32 carry = 0;
  for (u32 w = 0; w < windows; w++) {
    const u32 v = window_bits(s, w * c, c) + carry;
    u32 mag;
    u32 neg;
    if (v > half) { mag = (1u << c) - v; neg = 1; carry = 1; }
    else { mag = v; neg = 0; carry = 0; }
    if (mag != 0) {
      if (stride) emit(mag - 1, w * stride + i, neg);
      else emit(w * half + mag - 1, i, neg);
    }
  }
}

extern "C" __global__ void msm_count(const Fr* __restrict__ scalars, u32 n, u32 c, u32 windows, u32 stride,
                                     u32* counts, u32* ones, u32* ones_count, u32 split) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Fr s = scalars[i].from_montgomery();
    if (split && is_plain_one(s)) {
      ones[atomicAdd(ones_count, 1u)] = i;
      continue;
    }
    for_each_digit(s, i, c, windows, stride, [&](u32 key, u32, u32) { atomicAdd(&counts[key], 1u); });
  }
}

extern "C" __global__ void msm_scatter(const Fr* __restrict__ scalars, u32 n, u32 c, u32 windows, u32 stride,
                                       u32* cursor, u32* sorted, u32 split) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Fr s = scalars[i].from_montgomery();
    if (split && is_plain_one(s)) continue;
    for_each_digit(s, i, c, windows, stride, [&](u32 key, u32 entry, u32 neg) {
      const u32 pos = atomicAdd(&cursor[key], 1u);
      sorted[pos] = entry | (neg << 31);
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

// Whether the accumulation copies each next base into shared memory asynchronously
// (cp.async, sm_80 and later) while the current addition runs: 0 never, 1 for G1 and G2, 2 for
// G2 only (the default; set through G16_CUDA_DEFINES). Measured on the H200 at 2^24 with the
// two-chain product (NOTES.md): G2's accumulation −2.6 %, G1's +1.8 %. Off, each base is
// loaded when its addition starts (the entry index one addition ahead).
#ifndef G16_MSM_PREFETCH
#define G16_MSM_PREFETCH 2
#endif
#if G16_MSM_PREFETCH && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define MSM_CP_ASYNC 1
#else
#define MSM_CP_ASYNC 0
#endif
// Whether curve F's accumulation prefetches (F = Fq for G1, Fq2 for G2).
template <class F>
struct MsmPrefetch {
  static constexpr bool on = MSM_CP_ASYNC && (G16_MSM_PREFETCH == 1 || (G16_MSM_PREFETCH == 2 && sizeof(F) > sizeof(Fq)));
};

// An asynchronous 16-byte copy from global into shared memory (L2 only), and the waits.
DEVICE void cp_async16(void* smem, const void* gmem) {
#if MSM_CP_ASYNC
  const u32 s = (u32)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
#endif
}
DEVICE void cp_async_commit() {
#if MSM_CP_ASYNC
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
DEVICE void cp_async_wait_all() {
#if MSM_CP_ASYNC
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// Starts the copy of one affine point (a multiple of 16 bytes, 16-byte aligned: 96 or 192).
template <class F>
DEVICE void fetch_point(Affine<F>* slot, const Affine<F>* src) {
  static_assert(sizeof(Affine<F>) % 16 == 0, "points are copied in 16-byte pieces");
#pragma unroll
  for (u32 o = 0; o < sizeof(Affine<F>); o += 16) cp_async16((char*)slot + o, (const char*)src + o);
  cp_async_commit();
}

template <class F>
DEVICE void accumulate(const Affine<F>* __restrict__ bases, const u32* __restrict__ sorted, const u32* offsets,
                       const u32* counts, u32 buckets, u32 big, Xyzz<F>* out, BigBucket* big_list, u32* big_count) {
  // Two slots a thread: base j+1 lands in one while base j is read from the other (unused,
  // and left out by the compiler, where F does not prefetch).
  __shared__ Affine<F> slots[MsmPrefetch<F>::on ? 2 : 1][MsmPrefetch<F>::on ? MSM_ACC_THREADS : 1];
  const u32 k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= buckets) return;
  const u32 start = offsets[k], count = counts[k];
  Xyzz<F> acc = Xyzz<F>::identity();
  if (count > big) {
    const u32 slot = atomicAdd(big_count, 1u);
    big_list[slot].key = k;
    big_list[slot].start = start;
    big_list[slot].count = count;
  } else if (count != 0 && MsmPrefetch<F>::on) {
    // Entry j+2's index and base j+1 are in flight while addition j runs, so neither the
    // index load nor the dependent base load waits in the loop.
    u32 e = sorted[start];
    fetch_point(&slots[0][threadIdx.x], &bases[e & 0x7fffffffu]);
    u32 next = count > 1 ? sorted[start + 1] : 0;
    for (u32 j = 0; j < count; j++) {
      cp_async_wait_all();
      Affine<F> p = slots[j & 1][threadIdx.x];
      if (j + 1 < count) fetch_point(&slots[(j + 1) & 1][threadIdx.x], &bases[next & 0x7fffffffu]);
      const u32 after = j + 2 < count ? sorted[start + j + 2] : 0;
      if (e >> 31) p = p.neg();
      acc.add_affine_hot(p);
      e = next;
      next = after;
    }
  } else if (count != 0) {
    // The next entry's index is loaded while the current addition runs.
    u32 e = sorted[start];
    for (u32 j = 1; j <= count; j++) {
      const u32 next = j < count ? sorted[start + j] : 0;
      Affine<F> p = bases[e & 0x7fffffffu];
      if (e >> 31) p = p.neg();
      acc.add_affine_hot(p);
      e = next;
    }
  }
  out[k] = acc;
}

// The big buckets' plan, on the device (one block of 1024 threads): bucket j of the list gets
// table[j] = (key, first piece, pieces) and pieces[first + k] = (start, length) of its k-th
// piece of at most `piece` entries; counters[0] = the number of pieces. A block-wide scan per
// chunk of 1024 buckets numbers the pieces.
extern "C" __global__ void __launch_bounds__(1024) msm_big_plan(const BigBucket* big_list, const u32* big_count,
                                                                u32 piece, u32* table, u32* pieces, u32* counters) {
  __shared__ u32 buf[2][1024];
  const u32 t = threadIdx.x, nbig = *big_count;
  u32 base_piece = 0;
  for (u32 chunk = 0; chunk < nbig; chunk += 1024) {
    const u32 j = chunk + t;
    const BigBucket b = j < nbig ? big_list[j] : BigBucket{0, 0, 0};
    const u32 np = (b.count + piece - 1) / piece;
    buf[0][t] = np;
    __syncthreads();
    int cur = 0;
    for (u32 d = 1; d < 1024; d <<= 1) {
      const u32 v = buf[cur][t] + (t >= d ? buf[cur][t - d] : 0);
      buf[cur ^ 1][t] = v;
      cur ^= 1;
      __syncthreads();
    }
    const u32 first = base_piece + buf[cur][t] - np;
    if (j < nbig) {
      table[3 * j] = b.key;
      table[3 * j + 1] = first;
      table[3 * j + 2] = np;
      for (u32 k = 0; k < np; k++) {
        pieces[2 * (first + k)] = b.start + k * piece;
        pieces[2 * (first + k) + 1] = min(piece, b.count - k * piece);
      }
    }
    base_piece += buf[cur][1023];
    __syncthreads();  // buf is rewritten by the next chunk
  }
  if (t == 0) counters[0] = base_piece;
}

// Blocks loop over the pieces of the big buckets (their number is on the device): strided
// sums of a piece, then a tree in shared memory; one partial sum per piece.
template <class F, int T>
DEVICE void big_pieces(const Affine<F>* __restrict__ bases, const u32* __restrict__ sorted, const u32* pieces,
                       const u32* counters, Xyzz<F>* partials) {
  __shared__ Xyzz<F> sh[T];
  const u32 npieces = counters[0];
  for (u32 piece = blockIdx.x; piece < npieces; piece += gridDim.x) {
    const u32 start = pieces[2 * piece], len = pieces[2 * piece + 1];
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
    if (threadIdx.x == 0) partials[piece] = sh[0];
    __syncthreads();  // sh is rewritten by the next piece
  }
}

// Threads loop over the big buckets: each bucket's sum is the sum of its pieces' partial sums.
template <class F>
DEVICE void big_combine(const u32* table, const u32* big_count, const Xyzz<F>* partials, Xyzz<F>* buckets) {
  const u32 nbig = *big_count;
  for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < nbig; j += gridDim.x * blockDim.x) {
    const u32 key = table[3 * j], first = table[3 * j + 1], count = table[3 * j + 2];
    Xyzz<F> acc = Xyzz<F>::identity();
    for (u32 i = 0; i < count; i++) acc.add(partials[first + i]);
    buckets[key] = acc;
  }
}

// The shifted bases of the shared layout, for the points [first, first + count):
// table[w·len + i] = 2^(c·w)·P_i (affine; window 0 is P_i itself). Thread t doubles its point
// c times per window in XYZZ, keeping each multiple and the running product of their ZZZ in
// `scratch`, then inverts the product once and walks back (Montgomery's batch inversion):
// x = X·(ZZ/ZZZ)², y = Y/ZZZ. The identity stays the identity (x = y = 0).
template <class F>
DEVICE void shift_bases(const Affine<F>* __restrict__ bases, u32 len, u32 c, u32 windows, u32 first, u32 count,
                        Xyzz<F>* multiples, F* products, Affine<F>* table) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= count) return;
  const u32 i = first + t;
  const Affine<F> p = bases[i];
  table[i] = p;
  Xyzz<F> acc = Xyzz<F>::from_affine(p);
  F product = F::one();
  for (u32 w = 1; w < windows; w++) {
    for (u32 k = 0; k < c; k++) acc.dbl();
    multiples[(size_t)(w - 1) * count + t] = acc;
    if (!acc.is_identity()) product = product * acc.zzz;
    products[(size_t)(w - 1) * count + t] = product;
  }
  F inv = product.inverse();  // 1 / Π ZZZ_w over the non-identity multiples
  for (u32 w = windows - 1; w >= 1; w--) {
    const Xyzz<F> m = multiples[(size_t)(w - 1) * count + t];
    Affine<F> a;
    if (m.is_identity()) {
      a.x = F::zero();
      a.y = F::zero();
    } else {
      const F zzz_inv = w > 1 ? inv * products[(size_t)(w - 2) * count + t] : inv;
      inv = inv * m.zzz;
      const F z_inv = m.zz * zzz_inv;
      a.x = m.x * z_inv.sqr();
      a.y = m.y * zzz_inv;
    }
    table[(size_t)w * len + i] = a;
  }
}

// One thread per (bucket set, segment j of L = B/S buckets): u = Σ_{b in segment} (b+1)·bucket_b,
// as a running sum from the top (t = Σ (b − jL + 1)·bucket_b, r = Σ bucket_b) plus (jL)·r.
// With `rs` (the split reduction) the thread stops at t and r: out[id] = t, rs[id] = r, and
// Σ_j (jL)·r_j is left to *_bit_sums and the host; otherwise it multiplies r by jL itself.
template <class F>
DEVICE void bucket_reduce(const Xyzz<F>* buckets, u32 windows, u32 half, u32 segments, Xyzz<F>* out, Xyzz<F>* rs) {
  const u32 id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= windows * segments) return;
  const u32 w = id / segments, j = id % segments, len = half / segments;
  const Xyzz<F>* b = buckets + (size_t)w * half + (size_t)j * len;
  Xyzz<F> r = Xyzz<F>::identity(), t = Xyzz<F>::identity();
  for (int i = (int)len - 1; i >= 0; i--) {
    r.add(b[i]);
    t.add(r);
  }
  if (rs) {
    out[id] = t;
    rs[id] = r;
    return;
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

// Σ_j j·r_j of each set as bit sums: R_{s,bit} = Σ_{j: bit of j set} r_j, so that
// Σ_j j·r_j = Σ_bit 2^bit·R_{s,bit} (the host's few doublings). One block per (set, bit, group
// of the segments): strided sums over its group, a tree in shared memory, one partial sum out
// (partials[(s·bits + bit)·groups + group]; a fold adds each (set, bit)'s groups).
template <class F, int T>
DEVICE void bit_sums(const Xyzz<F>* rs, u32 segments, u32 bits, u32 groups, Xyzz<F>* partials) {
  __shared__ Xyzz<F> sh[T];
  const u32 g = blockIdx.x % groups, bit = (blockIdx.x / groups) % bits, set = blockIdx.x / (groups * bits);
  const u32 per = segments / groups;
  const Xyzz<F>* mine = rs + (size_t)set * segments;
  Xyzz<F> acc = Xyzz<F>::identity();
  for (u32 j = g * per + threadIdx.x; j < (g + 1) * per; j += T) {
    if ((j >> bit) & 1) acc.add(mine[j]);
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

// One block per group of `segments` consecutive sums: thread i sums items i, i+T, … of its
// group, then a tree in shared memory; out[g] = the group's sum. Run twice (segments → a few
// groups per set → one sum per set) so that many SMs share the fold. The host combines the
// windowed layout's sets (Horner, c doublings each): a few hundred serial point operations,
// which one GPU thread does far slower than a CPU.
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
  extern "C" __global__ void __launch_bounds__(MSM_ACC_THREADS, MINB)                                         \
      P##_accumulate(const Affine<F>* bases, const u32* sorted, const u32* offsets, const u32* counts,        \
                     u32 buckets, u32 big, Xyzz<F>* out, BigBucket* big_list, u32* big_count) {               \
    accumulate<F>(bases, sorted, offsets, counts, buckets, big, out, big_list, big_count);                    \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(T) P##_big_pieces(const Affine<F>* bases, const u32* sorted,   \
                                                                 const u32* pieces, const u32* counters,      \
                                                                 Xyzz<F>* partials) {                         \
    big_pieces<F, T>(bases, sorted, pieces, counters, partials);                                              \
  }                                                                                                           \
  extern "C" __global__ void P##_big_combine(const u32* table, const u32* big_count, const Xyzz<F>* partials, \
                                             Xyzz<F>* buckets) {                                              \
    big_combine<F>(table, big_count, partials, buckets);                                                      \
  }                                                                                                           \
  extern "C" __global__ void P##_bucket_reduce(const Xyzz<F>* buckets, u32 windows, u32 half, u32 segments,   \
                                               Xyzz<F>* out, Xyzz<F>* rs) {                                   \
    bucket_reduce<F>(buckets, windows, half, segments, out, rs);                                              \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(T) P##_bit_sums(const Xyzz<F>* rs, u32 segments, u32 bits,     \
                                                               u32 groups, Xyzz<F>* partials) {               \
    bit_sums<F, T>(rs, segments, bits, groups, partials);                                                     \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(T) P##_window_fold(const Xyzz<F>* segs, u32 segments,          \
                                                                  Xyzz<F>* out) {                             \
    window_fold<F, T>(segs, segments, out);                                                                   \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(T) P##_ones_sum(const Affine<F>* bases, const u32* ones,       \
                                                               const u32* ones_count, Xyzz<F>* partials) {    \
    ones_sum<F, T>(bases, ones, ones_count, partials);                                                        \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(128)                                                           \
      P##_shift_bases(const Affine<F>* bases, u32 len, u32 c, u32 windows, u32 first, u32 count,              \
                      Xyzz<F>* multiples, F* products, Affine<F>* table) {                                    \
    shift_bases<F>(bases, len, c, windows, first, count, multiples, products, table);                         \
  }

// G2's accumulation: blocks of 128 per SM the register budget must allow (1: up to 255
// registers, 8 warps an SM; 3: 168 registers, 12 warps). An experiment switch, set through
// G16_CUDA_DEFINES.
#ifndef G16_G2_ACC_MINB
#define G16_G2_ACC_MINB 1
#endif

// G1's accumulation likewise (4: 128 registers, 16 warps an SM, and spills; 3: 168 registers,
// 12 warps). Measured on the H200 at 2^24 with the two-chain product (NOTES.md): 3 is 3.8 %
// faster than 4 over the whole MSM.
#ifndef G16_G1_ACC_MINB
#define G16_G1_ACC_MINB 3
#endif

MSM_CURVE_KERNELS(g1, Fq, MSM_BIG_THREADS_G1, G16_G1_ACC_MINB)
MSM_CURVE_KERNELS(g2, Fq2, MSM_BIG_THREADS_G2, G16_G2_ACC_MINB)
