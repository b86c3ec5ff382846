// The MSM's last two phases, over the entries that `msm/sort.cu` sorted by bucket: Pippenger's
// bucket sums, then each set's weighted sum Σ_b b·bucket_b. One launch or a few a phase, each
// timed as a span by the host; no host round trip until the result.
//
//   accumulate  *_accumulate: one thread per bucket sums its points into XYZZ with mixed
//               additions (msm/balanced.cu: the default, equal slices of the list a thread). Buckets larger than `big` are left to the big-bucket path:
//               msm_big_plan cuts them into pieces, *_big_pieces sums the pieces with whole
//               blocks, *_big_combine adds each bucket's pieces; so a skewed distribution
//               where most scalars share a digit does not leave one thread doing it all.
//   reduce      *_bucket_reduce: Σ_b b·bucket_b per set by running sums over segments of
//               buckets in parallel (t_j, r_j per segment j of L buckets; the set's sum is
//               Σ_j (t_j + jL·r_j), each thread multiplying its r_j by jL); *_window_fold (twice)
//               sums the segments; *_ones_sum and a fold sum the ones of the 0/1 split. The
//               host combines the sets' sums (Horner, c doublings each) and adds the ones' sum.

#define MSM_BIG_THREADS_G1 128
#define MSM_BIG_THREADS_G2 64
// Threads per block of the accumulation (the host launches it so).
#define MSM_ACC_THREADS 128

// A big bucket, recorded by *_accumulate for the big-bucket path.
struct BigBucket {
  u32 key, start, count;
};

// The accumulation of G2 copies each next base into shared memory asynchronously (cp.async,
// sm_80 and later) while the current addition runs; G1's loads each base when its addition
// starts (the entry index one addition ahead). Prefetching helped G2 and slowed G1
// (docs/perf/cuda.md: base prefetch into shared memory). The host emulation runs the
// prefetching path too, its copies done at once.
#if defined(G16_HOST_EMULATION) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800)
#define MSM_CP_ASYNC 1
#else
#define MSM_CP_ASYNC 0
#endif
// Whether curve F's accumulation prefetches (F = Fq for G1, Fq2 for G2).
template <class F>
struct MsmPrefetch {
  static constexpr bool on = MSM_CP_ASYNC && sizeof(F) > sizeof(Fq);
};

// An asynchronous 16-byte copy from global into shared memory (L2 only), and the waits.
DEVICE void cp_async16(void* smem, const void* gmem) {
#if defined(G16_HOST_EMULATION)
  memcpy(smem, gmem, 16);
#elif MSM_CP_ASYNC
  const u32 s = (u32)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
#endif
}
DEVICE void cp_async_commit() {
#if MSM_CP_ASYNC && !defined(G16_HOST_EMULATION)
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
DEVICE void cp_async_wait_all() {
#if MSM_CP_ASYNC && !defined(G16_HOST_EMULATION)
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
      Affine<F> p = Affine<F>::ldg(bases + (e & 0x7fffffffu));
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
// chunk of 1024 buckets (`util/scan.cu`) numbers the pieces.
extern "C" __global__ void __launch_bounds__(1024) msm_big_plan(const BigBucket* big_list, const u32* big_count,
                                                                u32 piece, u32* table, u32* pieces, u32* counters) {
  __shared__ u32 buf[2][1024];
  const u32 t = threadIdx.x, nbig = *big_count;
  u32 base_piece = 0;
  for (u32 chunk = 0; chunk < nbig; chunk += 1024) {
    const u32 j = chunk + t;
    const BigBucket b = j < nbig ? big_list[j] : BigBucket{0, 0, 0};
    const u32 np = (b.count + piece - 1) / piece;
    const int cur = block_scan_1024(buf, t, np);
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
      Affine<F> p = Affine<F>::ldg(bases + (e & 0x7fffffffu));
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

// One thread per (bucket set, segment j of L = B/S buckets): u = Σ_{b in segment} (b+1)·bucket_b,
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
  for (u32 j = blockIdx.x * T + threadIdx.x; j < m; j += gridDim.x * T) acc.add_affine(Affine<F>::ldg(bases + ones[j]));
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

// Blocks of MSM_ACC_THREADS an SM that the accumulation's register budget must allow. G1: 3
// (168 registers, 12 warps an SM, no spills), which measured faster than 4 (128 registers and
// spills). G2: 1 (up to 255 registers), faster than 3 (168 registers, stack and spills).
// docs/perf/cuda.md: accumulation's blocks an SM.
#define MSM_ACC_MIN_BLOCKS_G1 3
#define MSM_ACC_MIN_BLOCKS_G2 1

MSM_CURVE_KERNELS(g1, Fq, MSM_BIG_THREADS_G1, MSM_ACC_MIN_BLOCKS_G1)
MSM_CURVE_KERNELS(g2, Fq2, MSM_BIG_THREADS_G2, MSM_ACC_MIN_BLOCKS_G2)
