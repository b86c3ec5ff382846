// Shifted bases for the MSM's shared layout, made once per uploaded base vector:
// table[w·len + i] = 2^(c·w)·P_i for every window w, affine. Digit d of window w then adds
// ±table[w·len + i] to bucket |d| of ONE set: B buckets in all instead of W·B, so c can be wider
// (fewer windows, fewer additions) while the bucket reduction stays small, at W times the
// bases' memory (docs/perf/cuda.md: shifted bases).

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

#define MSM_TABLE_KERNELS(P, F)                                                                 \
  extern "C" __global__ void __launch_bounds__(128)                                             \
      P##_shift_bases(const Affine<F>* bases, u32 len, u32 c, u32 windows, u32 first, u32 count, \
                      Xyzz<F>* multiples, F* products, Affine<F>* table) {                      \
    shift_bases<F>(bases, len, c, windows, first, count, multiples, products, table);           \
  }

MSM_TABLE_KERNELS(g1, Fq)
MSM_TABLE_KERNELS(g2, Fq2)
