// Fixed-base scalar multiplication (key generation): out[i] = s_i·P, affine, for the points
// i < count of one launch.
//
// The host builds the table of P's multiples (g16_backend::fixed_base):
// table[w·per_window + d − 1] = d·2^(c·w)·P for each window w and digit d in 1 ..= 2^c − 1.
// Scalars come in canonical form (not Montgomery's), 8 words each, so digit w is the plain
// bit field c·w .. c·w + c: no doubling, no recoding, at most ⌈255/c⌉ mixed additions a point.
//
// Thread t takes the points t, t + threads, t + 2·threads, … (neighbouring threads touch
// neighbouring points: coalesced loads and stores). It sums each point's table points in
// XYZZ into `sums`, keeping the running product of their ZZZ in `prefixes`; then inverts the
// product once and walks back (Montgomery's batch inversion): 1/ZZZ_i from the inverse and the
// prefix before i, x = X·(ZZ/ZZZ)², y = Y/ZZZ (ZZ³ = ZZZ², so (ZZ/ZZZ)² = 1/ZZ). One inversion
// costs ~570 field products against ~11 a window for the additions; the thread's batch of
// points shares it. A zero scalar's sum is the identity: it stays out of the product and
// comes out as x = y = 0.

// Digit w of a scalar's canonical words: bits c·w .. c·w + c (c ≤ 16: at most two words).
DEVICE u32 fixed_base_digit(const u32* s, u32 c, u32 w) {
  const u32 bit = w * c, word = bit >> 5, shift = bit & 31;
  u32 d = s[word] >> shift;
  if (shift + c > 32 && word < 7) d |= s[word + 1] << (32 - shift);
  return d & ((1u << c) - 1);
}

// Thread t's points of one launch (see the header). Separate from the kernel so that the host
// emulation (`backend-cuda/src/fixed_base/tests.rs`) runs it thread by thread.
template <class F>
DEVICE void fixed_base_thread(u32 t, const u32* __restrict__ scalars, const Affine<F>* __restrict__ table, u32 c,
                              u32 windows, u32 per_window, u32 count, u32 threads, Xyzz<F>* sums, F* prefixes,
                              Affine<F>* out) {
  if (t >= threads || t >= count) return;
  F prefix = F::one();
  u32 last = t;
  for (u32 i = t; i < count; i += threads) {
    const u32* s = scalars + (size_t)i * 8;
    Xyzz<F> acc = Xyzz<F>::identity();
    for (u32 w = 0; w < windows; w++) {
      const u32 d = fixed_base_digit(s, c, w);
      if (d != 0) acc.add_affine_hot(table[(size_t)w * per_window + d - 1]);
    }
    sums[i] = acc;
    if (!acc.is_identity()) prefix = prefix * acc.zzz;
    prefixes[i] = prefix;
    last = i;
  }
  F inv = prefix.inverse();  // 1 / Π ZZZ over the thread's non-identity sums
  for (u32 i = last;; i -= threads) {
    const Xyzz<F> m = sums[i];
    Affine<F> a;
    if (m.is_identity()) {
      a.x = F::zero();
      a.y = F::zero();
    } else {
      const F zzz_inv = i >= threads ? inv * prefixes[i - threads] : inv;
      inv = inv * m.zzz;
      const F z_inv = m.zz * zzz_inv;
      a.x = m.x * z_inv.sqr();
      a.y = m.y * zzz_inv;
    }
    out[i] = a;
    if (i < threads) break;
  }
}

// Threads a block of the fixed-base kernels (the host launches them so).
#define FIXED_BASE_THREADS 128

#define FIXED_BASE_KERNELS(P, F)                                                                               \
  extern "C" __global__ void __launch_bounds__(FIXED_BASE_THREADS)                                             \
      P##_fixed_base(const u32* scalars, const Affine<F>* table, u32 c, u32 windows, u32 per_window, u32 count, \
                     u32 threads, Xyzz<F>* sums, F* prefixes, Affine<F>* out) {                                \
    fixed_base_thread<F>(blockIdx.x * blockDim.x + threadIdx.x, scalars, table, c, windows, per_window, count,  \
                         threads, sums, prefixes, out);                                                         \
  }

FIXED_BASE_KERNELS(g1, Fq)
FIXED_BASE_KERNELS(g2, Fq2)
