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
//
// The batched check (g16_backend::subgroup::batched, whose text says why it is sound) runs on
// the MSM's bucket machinery: subgroup_deal_count and subgroup_deal_scatter sort each point into
// one random bucket a pass, from a keystream the host draws (`deal`, laid out as
// batched::Deal::keystream documents), the MSM's accumulation sums the buckets, and
// *_subgroup_check_sums runs the same tests on the XYZZ sums, naming the first failing bucket.

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

// Whether a and b are the same point (XYZZ, either may be the identity).
template <class F>
DEVICE bool xyzz_equal(const Xyzz<F>& a, const Xyzz<F>& b) {
  if (a.is_identity() || b.is_identity()) return a.is_identity() && b.is_identity();
  return a.x * b.zz == b.x * a.zz && a.y * b.zzz == b.y * a.zzz;
}

// The tests above on a point in XYZZ (a bucket's sum).
DEVICE bool in_subgroup(const Xyzz<Fq>& p, const Fq* endo) {
  if (p.is_identity()) return true;
  const Xyzz<Fq> xp = mul_by_x_abs(p, p);
  if (xyzz_equal(xp, p)) return false;
  const Xyzz<Fq> x2p = mul_by_x_abs(xp, xp);
  // −φ(P) = (β·X, −Y, ZZ, ZZZ): φ scales x by β, and (X, Y, ZZ, ZZZ) stands for (X/ZZ, Y/ZZZ).
  Xyzz<Fq> minus_phi = p;
  minus_phi.x = endo[0] * p.x;
  minus_phi.y = p.y.neg();
  return xyzz_equal(x2p, minus_phi);
}

DEVICE bool in_subgroup(const Xyzz<Fq2>& p, const Fq2* endo) {
  if (p.is_identity()) return true;
  const Xyzz<Fq2> xp = mul_by_x_abs(p, p);
  // −ψ(P): conjugation is a field automorphism, so it applies to each coordinate (ZZ and ZZZ
  // too) and then x, y are scaled by c_x, c_y.
  Xyzz<Fq2> minus_psi;
  minus_psi.x = subgroup_conj(p.x) * endo[0];
  minus_psi.y = (subgroup_conj(p.y) * endo[1]).neg();
  minus_psi.zz = subgroup_conj(p.zz);
  minus_psi.zzz = subgroup_conj(p.zzz);
  return xyzz_equal(xp, minus_psi);
}

// Point i's bucket in `pass`, from the keystream: `words` 64-bit words a point, `bits` bits a
// pass, 64 / bits passes a word (a pass's bits never straddle two words).
DEVICE u32 dealt_bucket(const u64* deal, u32 i, u32 pass, u32 bits, u32 words) {
  const u32 per_word = 64 / bits;
  const u64 w = deal[(size_t)i * words + pass / per_word];
  return (u32)(w >> ((pass % per_word) * bits)) & ((1u << bits) - 1);
}

// Bucket sizes of the deal: bucket (pass, b) is key pass·2^bits + b, as a window's buckets in
// the MSM's windowed layout.
extern "C" __global__ void subgroup_deal_count(const u64* __restrict__ deal, u32 n, u32 bits, u32 passes, u32 words,
                                               u32* counts) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    for (u32 pass = 0; pass < passes; pass++) atomicAdd(&counts[(pass << bits) + dealt_bucket(deal, i, pass, bits, words)], 1u);
}

// The counting sort's scatter: each (point, pass) writes the point's index into its bucket's
// next slot (no sign: every point is added as it is).
extern "C" __global__ void subgroup_deal_scatter(const u64* __restrict__ deal, u32 n, u32 bits, u32 passes,
                                                 u32 words, u32* cursor, u32* sorted) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    for (u32 pass = 0; pass < passes; pass++)
      sorted[atomicAdd(&cursor[(pass << bits) + dealt_bucket(deal, i, pass, bits, words)], 1u)] = i;
}

// Threads a block of the subgroup kernels (the host launches them so).
#define SUBGROUP_THREADS 256

// Lowers `first` to the index of each of `count` points (affine, or XYZZ bucket sums) outside
// the subgroup; a thread whose point lies past one already found skips its check.
template <class T, class F>
DEVICE void first_outside(const T* __restrict__ points, u32 count, const F* __restrict__ endo, u32* first) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count || i > *(volatile u32*)first) return;
  if (!in_subgroup(points[i], endo)) atomicMin(first, i);
}

#define SUBGROUP_KERNELS(P, F)                                                                        \
  extern "C" __global__ void __launch_bounds__(SUBGROUP_THREADS)                                      \
      P##_subgroup_check(const Affine<F>* __restrict__ points, u32 count, const F* __restrict__ endo, \
                         u32* first) {                                                                \
    first_outside(points, count, endo, first);                                                        \
  }                                                                                                   \
  extern "C" __global__ void __launch_bounds__(SUBGROUP_THREADS)                                      \
      P##_subgroup_check_sums(const Xyzz<F>* __restrict__ sums, u32 count, const F* __restrict__ endo, \
                              u32* first) {                                                           \
    first_outside(sums, count, endo, first);                                                          \
  }

SUBGROUP_KERNELS(g1, Fq)
SUBGROUP_KERNELS(g2, Fq2)
