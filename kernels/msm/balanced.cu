// The accumulation in equal slices of the sorted entries (`MsmAccumulation::Chunks`), an
// alternative to `*_accumulate`'s thread a bucket (msm/bucket.cu, whose big-bucket path and
// output it shares).
//
// A thread a bucket runs a warp as long as its longest bucket: with random scalars bucket
// sizes vary by a few standard deviations within a warp, and lanes that finish early idle.
// Here thread t sums the entries [t·chunk, (t+1)·chunk) of the sorted list, whichever buckets
// they fall in, so every lane of a warp does the same number of additions; only the short
// hand-over at a bucket's edge diverges. The list's length is known on the device alone (zero
// digits and the ones of the 0/1 split take no entry), so the kernels read it there and make
// the slices as long as the mean bucket, at least `chunk_min`: at most `buckets` slices.
//
//   *_accumulate_chunks  a bucket that starts in a thread's slice is that thread's: it writes
//                        the bucket's sum (from its first entry to the slice's end) to out,
//                        and notes the bucket in tails[t] when it runs on past the slice. A
//                        slice that starts inside an earlier bucket writes that bucket's part
//                        to carries[t]. Empty buckets get the identity from the thread whose
//                        slice holds their offset, but for those at the list's end.
//   *_empty_buckets      one thread a bucket: the empty ones get the identity (again, for those
//                        a slice wrote). The empty buckets at the list's end were once the last
//                        slice's, one thread writing them all: a windowed layout wider than
//                        c = 16 ends with most of its top window's buckets empty (~500 K at
//                        c = 20, whose top digits reach 2^15 of 2^19).
//                        Buckets of more than `big` entries are skipped and recorded for the
//                        big-bucket path by their owner, as *_accumulate does.
//   *_chunk_carries      one thread a slice: where tails[t] names a bucket, it adds the
//                        carries of the slices the bucket runs on into (at most big/chunk + 1).

// tails[t] where slice t's last bucket ends inside it (or is big).
#define MSM_NO_TAIL 0xffffffffu

// The first bucket k with offsets[k] ≥ s or offsets[k] + counts[k] > s (both hold from some k
// on, as offsets are the counts' exclusive scan): the bucket holding entry s, or the first of
// the empty buckets at offset s.
DEVICE u32 first_bucket_at(const u32* offsets, const u32* counts, u32 buckets, u32 s) {
  u32 lo = 0, hi = buckets;
  while (lo < hi) {
    const u32 mid = (lo + hi) / 2;
    const u32 start = offsets[mid];
    if (start >= s || start + counts[mid] > s) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// The sorted list's length (the last offset plus its count) and the slices' length.
struct Slices {
  u32 entries, chunk;
  DEVICE Slices(const u32* offsets, const u32* counts, u32 buckets, u32 chunk_min) {
    entries = offsets[buckets - 1] + counts[buckets - 1];
    chunk = max((entries + buckets - 1) / buckets, chunk_min);
  }
};

template <class F, bool FUSED>
DEVICE void accumulate_chunks(const Affine<F>* __restrict__ bases, const u32* __restrict__ sorted,
                              const u32* offsets, const u32* counts, u32 buckets, u32 chunk_min, u32 big,
                              Xyzz<F>* out, Xyzz<F>* carries, u32* tails, BigBucket* big_list, u32* big_count) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  const Slices slices(offsets, counts, buckets, chunk_min);
  const u32 entries = slices.entries, chunk = slices.chunk;
  if ((u64)t * chunk >= entries) return;
  const u32 s = t * chunk, e = min(s + chunk, entries);
  tails[t] = MSM_NO_TAIL;
  // Bucket k spans [start, end); the end of bucket k + 1 is loaded a bucket ahead, so that a
  // lane crossing a bucket's edge does not stall its warp on a load (with small buckets some
  // lane of a warp crosses one nearly every addition).
  auto end_of = [&](u32 b) { return b + 1 < buckets ? offsets[b + 1] : entries; };
  u32 k = first_bucket_at(offsets, counts, buckets, s);
  u32 start = k < buckets ? offsets[k] : entries;
  u32 end = k < buckets ? end_of(k) : entries;
  u32 next_end = k + 1 < buckets ? end_of(k + 1) : entries;
  Xyzz<F> acc = Xyzz<F>::identity();
  // Bucket k's part in this slice is done: out (its owner), carries (a later part) or the
  // big-bucket list (its owner, nothing summed).
  auto finish = [&]() {
    const bool owner = start >= s;
    if (end - start > big) {
      if (owner) {
        const u32 slot = atomicAdd(big_count, 1u);
        big_list[slot].key = k;
        big_list[slot].start = start;
        big_list[slot].count = end - start;
      }
    } else if (owner) {
      out[k] = acc;
      if (end > e) tails[t] = k;
    } else {
      carries[t] = acc;
    }
    acc = Xyzz<F>::identity();
  };
  for (u32 j = s; j < e; j++) {
    // Past the bucket's end (and past the empty buckets after it): the next bucket.
    while (j >= end) {
      finish();
      k++;
      start = end;
      end = next_end;
      next_end = k + 1 < buckets ? end_of(k + 1) : entries;
    }
    if (end - start <= big) {
      const u32 entry = sorted[j];
      Affine<F> p = Affine<F>::ldg(bases + (entry & 0x7fffffffu));
      if (entry >> 31) p = p.neg();
      acc.template add_affine_hot<FUSED>(p);
    }
  }
  if (s < e) finish();
}

template <class F>
DEVICE void empty_buckets(const u32* counts, u32 buckets, Xyzz<F>* out) {
  for (u32 k = blockIdx.x * blockDim.x + threadIdx.x; k < buckets; k += gridDim.x * blockDim.x) {
    if (counts[k] == 0) out[k] = Xyzz<F>::identity();
  }
}

template <class F>
DEVICE void chunk_carries(const u32* offsets, const u32* counts, u32 buckets, u32 chunk_min, const u32* tails,
                          const Xyzz<F>* carries, Xyzz<F>* out) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  const Slices slices(offsets, counts, buckets, chunk_min);
  const u32 chunk = slices.chunk;
  if ((u64)t * chunk >= slices.entries) return;
  const u32 k = tails[t];
  if (k == MSM_NO_TAIL) return;
  const u32 end = offsets[k] + counts[k];
  Xyzz<F> acc = out[k];
  for (u32 u = t + 1; (u64)u * chunk < end; u++) acc.add(carries[u]);
  out[k] = acc;
}

// The sliced accumulation of curve F as kernel NAME; FUSED: Y₃'s two products reduced together
// (F::mul_sub_mul), to be measured against the plain one (`CudaOptions::madd_fused_y`).
#define MSM_CHUNK_ACCUMULATE(NAME, F, MINB, FUSED)                                                                \
  extern "C" __global__ void __launch_bounds__(MSM_ACC_THREADS, MINB)                                            \
      NAME(const Affine<F>* bases, const u32* sorted, const u32* offsets, const u32* counts, u32 buckets,        \
           u32 chunk_min, u32 big, Xyzz<F>* out, Xyzz<F>* carries, u32* tails, BigBucket* big_list,              \
           u32* big_count) {                                                                                     \
    accumulate_chunks<F, FUSED>(bases, sorted, offsets, counts, buckets, chunk_min, big, out, carries, tails,     \
                                big_list, big_count);                                                            \
  }
#define MSM_CHUNK_CARRIES(P, F)                                                                                 \
  extern "C" __global__ void P##_chunk_carries(const u32* offsets, const u32* counts, u32 buckets,               \
                                               u32 chunk_min, const u32* tails, const Xyzz<F>* carries,          \
                                               Xyzz<F>* out) {                                                   \
    chunk_carries<F>(offsets, counts, buckets, chunk_min, tails, carries, out);                                  \
  }

MSM_CHUNK_ACCUMULATE(g1_accumulate_chunks, Fq, MSM_ACC_MIN_BLOCKS_G1, false)
MSM_CHUNK_ACCUMULATE(g1_accumulate_chunks_fused, Fq, MSM_ACC_MIN_BLOCKS_G1, true)
MSM_CHUNK_ACCUMULATE(g2_accumulate_chunks, Fq2, MSM_ACC_MIN_BLOCKS_G2, false)
MSM_CHUNK_ACCUMULATE(g2_accumulate_chunks_fused, Fq2, MSM_ACC_MIN_BLOCKS_G2, true)
#define MSM_EMPTY_BUCKETS(P, F)                                                                                 \
  extern "C" __global__ void P##_empty_buckets(const u32* counts, u32 buckets, Xyzz<F>* out) {                    \
    empty_buckets<F>(counts, buckets, out);                                                                      \
  }

MSM_CHUNK_CARRIES(g1, Fq)
MSM_CHUNK_CARRIES(g2, Fq2)
MSM_EMPTY_BUCKETS(g1, Fq)
MSM_EMPTY_BUCKETS(g2, Fq2)
