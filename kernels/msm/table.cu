// Shifted bases for the MSM's shared layout, made once per uploaded base vector:
// table[w·len + i] = 2^(c·w)·P_i for every window w, affine. Digit d of window w then adds
// ±table[w·len + i] to bucket |d| of ONE set: B buckets in all instead of W·B, so c can be wider
// (fewer windows, fewer additions) while the bucket reduction stays small, at W times the
// bases' memory (docs/perf/cuda.md: shifted bases). The grouped layout's table is the same with
// k < W shifts: table[j·len + i] = 2^(c·j)·P_i for j < k, window k·s + j adding shift j to set s.

// A point in Jacobian coordinates (X, Y, Z) for (X/Z², Y/Z³): doubling costs 2M + 5S here
// against XYZZ's 6M + 3S, and the table's chain is doublings only.
template <class F>
struct Jacobian {
  F x, y, z;

  // dbl-2009-l (a = 0), for a point that is not the identity: no point of the prime-order
  // subgroups has order 2, so a chain of doublings never reaches it.
  NOINLINE void dbl() {
    const F a = x.sqr();
    const F b = y.sqr();
    const F c = b.sqr();
    F d = (x + b).sqr() - a - c;
    d = d.dbl();
    const F e = a.dbl() + a;
    const F f = e.sqr();
    const F x3 = f - d.dbl();
    const F c8 = c.dbl().dbl().dbl();
    z = (y * z).dbl();
    y = e * (d - x3) - c8;
    x = x3;
  }
};

// The shifted bases for the points [first, first + count): table[w·len + i] = 2^(c·w)·P_i for
// w < shifts (affine; shift 0 is P_i itself; shifts = W for the shared layout, k grouped).
// Thread t doubles its point c times a shift in Jacobian coordinates, keeping each multiple and
// the running product of their Z in `scratch`, then inverts the product once and walks back
// (Montgomery's batch inversion): x = X/Z², y = Y/Z³. The identity stays the identity (x = y =
// 0) in every shift.
template <class F>
DEVICE void shift_bases(const Affine<F>* __restrict__ bases, u32 len, u32 c, u32 shifts, u32 first, u32 count,
                        Jacobian<F>* multiples, F* products, Affine<F>* table) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= count) return;
  const u32 i = first + t;
  const Affine<F> p = bases[i];
  table[i] = p;
  if (p.is_identity()) {
    for (u32 w = 1; w < shifts; w++) table[(size_t)w * len + i] = p;
    return;
  }
  Jacobian<F> acc;
  acc.x = p.x;
  acc.y = p.y;
  acc.z = F::one();
  F product = F::one();
  for (u32 w = 1; w < shifts; w++) {
    for (u32 k = 0; k < c; k++) acc.dbl();
    multiples[(size_t)(w - 1) * count + t] = acc;
    product = product * acc.z;
    products[(size_t)(w - 1) * count + t] = product;
  }
  F inv = product.inverse();  // 1 / Π Z_w
  for (u32 w = shifts - 1; w >= 1; w--) {
    const Jacobian<F> m = multiples[(size_t)(w - 1) * count + t];
    const F z_inv = w > 1 ? inv * products[(size_t)(w - 2) * count + t] : inv;
    inv = inv * m.z;
    const F z_inv2 = z_inv.sqr();
    Affine<F> a;
    a.x = m.x * z_inv2;
    a.y = m.y * (z_inv2 * z_inv);
    table[(size_t)w * len + i] = a;
  }
}

#define MSM_TABLE_KERNELS(P, F)                                                                 \
  extern "C" __global__ void __launch_bounds__(128)                                             \
      P##_shift_bases(const Affine<F>* bases, u32 len, u32 c, u32 shifts, u32 first, u32 count,  \
                      Jacobian<F>* multiples, F* products, Affine<F>* table) {                  \
    shift_bases<F>(bases, len, c, shifts, first, count, multiples, products, table);            \
  }

MSM_TABLE_KERNELS(g1, Fq)
MSM_TABLE_KERNELS(g2, Fq2)
