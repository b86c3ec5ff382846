// Prime-order subgroup checks of points already on the curve (a proving key's, as it loads),
// one thread a point, by Scott's endomorphism tests (eprint 2021/1130), as arkworks runs them:
// - G1 (§6): P is in G1 iff φ(P) = −[x²]P, where φ(x, y) = (β·x, y) and β is a cube root of
//   unity in Fq. As in arkworks, a point other than the identity with [|x|]P = P is outside
//   (the early out of §6).
// - G2 (§4): P is in G2 iff ψ(P) = [x]P, where ψ(x, y) = (conj(x)·c_x, conj(y)·c_y) is the
//   untwist-Frobenius-twist endomorphism.
// x = −0xd201000000010000, so [|x|]Q is 63 doublings and 5 additions (|x| has 6 bits set):
// two such chains a G1 point, one a G2 point. The host passes the constants, β for G1 and
// c_x, c_y for G2 (g16_backend::subgroup, held there to arkworks), in `endo`.
//
// Each point outside lowers `first` by an atomicMin, so the host reads back one word: the
// first such point's index in the launch, or 0xffffffff (set before the launch) when every
// point is in. A thread whose point lies past one already found skips its check.

// |x|, BLS12-381's parameter without its sign (g16_backend::subgroup::X_ABS).
#define SUBGROUP_X_ABS 0xd201000000010000ull

template <class F>
DEVICE void subgroup_add(Xyzz<F>& acc, const Affine<F>& p) { acc.add_affine(p); }
template <class F>
DEVICE void subgroup_add(Xyzz<F>& acc, const Xyzz<F>& p) { acc.add(p); }

// [|x|]·p by its bits from the top: p affine (the point itself) or XYZZ ([|x|] of it).
template <class F, class P>
DEVICE Xyzz<F> mul_by_x_abs(Xyzz<F> acc, const P& p) {
  for (int bit = 62; bit >= 0; bit--) {
    acc.dbl();
    if ((SUBGROUP_X_ABS >> bit) & 1) subgroup_add(acc, p);
  }
  return acc;
}

// Whether q is the affine point (x, y) (which is not the identity).
template <class F>
DEVICE bool xyzz_is(const Xyzz<F>& q, const F& x, const F& y) {
  return !q.is_identity() && q.x == x * q.zz && q.y == y * q.zzz;
}

DEVICE bool in_subgroup(const Affine<Fq>& p, const Fq* endo) {
  if (p.is_identity()) return true;
  const Xyzz<Fq> xp = mul_by_x_abs(Xyzz<Fq>::from_affine(p), p);
  if (xyzz_is(xp, p.x, p.y)) return false;
  const Xyzz<Fq> x2p = mul_by_x_abs(xp, xp);
  // φ(P) = −[x²]P, i.e. [x²]P = (β·x, −y).
  return xyzz_is(x2p, endo[0] * p.x, p.y.neg());
}

DEVICE Fq2 subgroup_conj(const Fq2& a) {
  Fq2 r;
  r.c0 = a.c0;
  r.c1 = a.c1.neg();
  return r;
}

DEVICE bool in_subgroup(const Affine<Fq2>& p, const Fq2* endo) {
  if (p.is_identity()) return true;
  const Xyzz<Fq2> xp = mul_by_x_abs(Xyzz<Fq2>::from_affine(p), p);
  // ψ(P) = [x]P = −[|x|]P, i.e. [|x|]P = −ψ(P).
  return xyzz_is(xp, subgroup_conj(p.x) * endo[0], (subgroup_conj(p.y) * endo[1]).neg());
}

// Threads a block of the subgroup kernels (the host launches them so).
#define SUBGROUP_THREADS 256

#define SUBGROUP_KERNELS(P, F)                                                                    \
  extern "C" __global__ void __launch_bounds__(SUBGROUP_THREADS)                                  \
      P##_subgroup_check(const Affine<F>* __restrict__ points, u32 count, const F* __restrict__ endo, \
                         u32* first) {                                                            \
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;                                          \
    if (i >= count || i > *(volatile u32*)first) return;                                          \
    if (!in_subgroup(points[i], endo)) atomicMin(first, i);                                       \
  }

SUBGROUP_KERNELS(g1, Fq)
SUBGROUP_KERNELS(g2, Fq2)
