// Points of the short Weierstrass curves y² = x³ + b (a = 0) over F = Fq (G1) or Fq2 (G2):
// affine and XYZZ.
//
// Bases are affine (the identity is encoded as x = y = 0, which is on neither curve since
// b ≠ 0). Sums are XYZZ: (X, Y, ZZ, ZZZ) stands for the affine point (X/ZZ, Y/ZZZ), with
// ZZ³ = ZZZ²; ZZ = 0 is the identity. Formulas from the Explicit-Formulas Database
// (hyperelliptic.org/EFD, "xyzz" coordinates): madd-2008-s (XYZZ + affine, 8M + 2S),
// add-2008-s (XYZZ + XYZZ, 12M + 2S), dbl-2008-s-1 (6M + 3S), mdbl-2008-s-1. The
// exceptional cases (an operand the identity, equal points, opposite points) are branched on
// explicitly, since MSM inputs contain repeated points and identities.
#pragma once

template <class F>
struct Affine {
  F x, y;
  DEVICE bool is_identity() const { return x.is_zero() && y.is_zero(); }
  DEVICE Affine neg() const { Affine r; r.x = x; r.y = y.neg(); return r; }
  // A point of a read-only device array in 16-byte pieces (see Fp::ldg).
  DEVICE static Affine ldg(const Affine* p) { Affine r; r.x = F::ldg(&p->x); r.y = F::ldg(&p->y); return r; }
};

template <class F>
struct Xyzz {
  F x, y, zz, zzz;

  DEVICE static Xyzz identity() {
    Xyzz r;
    r.x = F::one(); r.y = F::one(); r.zz = F::zero(); r.zzz = F::zero();
    return r;
  }
  DEVICE bool is_identity() const { return zz.is_zero(); }
  DEVICE static Xyzz from_affine(const Affine<F>& p) {
    if (p.is_identity()) return identity();
    Xyzz r;
    r.x = p.x; r.y = p.y; r.zz = F::one(); r.zzz = F::one();
    return r;
  }
  DEVICE Xyzz neg() const { Xyzz r = *this; r.y = y.neg(); return r; }

  // mdbl-2008-s-1: 2·p for an affine p (never of order 2 in the prime-order subgroups).
  NOINLINE static Xyzz double_affine(const Affine<F>& p) {
    F u = p.y.dbl();
    F v = u.sqr();
    F w = u * v;
    F s = p.x * v;
    F x2 = p.x.sqr();
    F m = x2.dbl() + x2;
    Xyzz r;
    r.x = m.sqr() - s.dbl();
    r.y = m * (s - r.x) - w * p.y;
    r.zz = v;
    r.zzz = w;
    return r;
  }

  // dbl-2008-s-1
  NOINLINE void dbl() {
    if (is_identity()) return;
    F u = y.dbl();
    F v = u.sqr();
    F w = u * v;
    F s = x * v;
    F x2 = x.sqr();
    F m = x2.dbl() + x2;
    F x3 = m.sqr() - s.dbl();
    y = m * (s - x3) - w * y;
    x = x3;
    zz = zz * v;
    zzz = zzz * w;
  }

  // this += p, inlined where F says so (F::HOT_INLINE: G1, in the accumulation loop, where
  // going out of line would round-trip the sum through the stack on every point), out of line
  // otherwise.
  // FUSED: Y₃'s two products reduced together (F::mul_sub_mul; the sliced accumulation with
  // `CudaOptions::madd_fused_y`).
  template <bool FUSED = false>
  DEVICE void add_affine_hot(const Affine<F>& p) {
    if constexpr (F::HOT_INLINE) add_affine_inline<FUSED>(p);
    else add_affine<FUSED>(p);
  }
  template <bool FUSED = false>
  NOINLINE void add_affine(const Affine<F>& p) { add_affine_inline<FUSED>(p); }

  // madd-2008-s: this += p.
  template <bool FUSED = false>
  DEVICE void add_affine_inline(const Affine<F>& p) {
    if (p.is_identity()) return;
    if (is_identity()) { *this = from_affine(p); return; }
    F u2 = p.x * zz;
    F s2 = p.y * zzz;
    F pp_ = u2 - x;
    F r = s2 - y;
    if (pp_.is_zero()) {
      if (r.is_zero()) *this = double_affine(p);
      else *this = identity();
      return;
    }
    F pp = pp_.sqr();
    F ppp = pp_ * pp;
    F q = x * pp;
    F x3 = r.sqr() - ppp - q.dbl();
    if constexpr (FUSED) y = F::mul_sub_mul(r, q - x3, y, ppp);
    else y = r * (q - x3) - y * ppp;
    x = x3;
    zz = zz * pp;
    zzz = zzz * ppp;
  }

  // add-2008-s: this += q.
  NOINLINE void add(const Xyzz& q) {
    if (q.is_identity()) return;
    if (is_identity()) { *this = q; return; }
    F u1 = x * q.zz;
    F u2 = q.x * zz;
    F s1 = y * q.zzz;
    F s2 = q.y * zzz;
    F p_ = u2 - u1;
    F r = s2 - s1;
    if (p_.is_zero()) {
      if (r.is_zero()) dbl();
      else *this = identity();
      return;
    }
    F pp = p_.sqr();
    F ppp = p_ * pp;
    F qq = u1 * pp;
    F x3 = r.sqr() - ppp - qq.dbl();
    y = r * (qq - x3) - s1 * ppp;
    x = x3;
    zz = zz * q.zz * pp;
    zzz = zzz * q.zzz * ppp;
  }
};
