// Fq2 = Fq[u]/(u² + 1), over `field/fp.cuh`'s Fq: G2's coordinates.
//
// The product and the square are out-of-line free functions taking their operands by value, so
// ptxas passes them in registers; as member functions taking references they went through the
// stack (docs/perf/cuda.md: Fq2 product and square). The product reduces lazily: two
// Montgomery reductions instead of three (see fq2_mul_body).
#pragma once

struct Fq2 {
  Fq c0, c1;
  // Whether the MSM's accumulation inlines its mixed addition over Fq2 (see
  // Xyzz::add_affine_hot): no; inlined, G2's larger body measured slower (docs/perf/cuda.md:
  // mixed addition in the accumulation).
  static constexpr bool HOT_INLINE = false;
  DEVICE static Fq2 zero() { Fq2 r; r.c0 = Fq::zero(); r.c1 = Fq::zero(); return r; }
  DEVICE static Fq2 one() { Fq2 r; r.c0 = Fq::one(); r.c1 = Fq::zero(); return r; }
  DEVICE bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  DEVICE bool operator==(const Fq2& o) const { return c0 == o.c0 && c1 == o.c1; }
  DEVICE bool operator!=(const Fq2& o) const { return !(*this == o); }
  DEVICE Fq2 operator+(const Fq2& b) const { Fq2 r; r.c0 = c0 + b.c0; r.c1 = c1 + b.c1; return r; }
  DEVICE Fq2 operator-(const Fq2& b) const { Fq2 r; r.c0 = c0 - b.c0; r.c1 = c1 - b.c1; return r; }
  DEVICE Fq2 neg() const { Fq2 r; r.c0 = c0.neg(); r.c1 = c1.neg(); return r; }
  DEVICE Fq2 dbl() const { return *this + *this; }
  DEVICE static Fq2 ldg(const Fq2* p) { Fq2 r; r.c0 = Fq::ldg(&p->c0); r.c1 = Fq::ldg(&p->c1); return r; }
  DEVICE Fq2 operator*(const Fq2& b) const;
  DEVICE Fq2 sqr() const;
  // a·b − c·d with two Montgomery reductions in all (fq2_mul_sub_mul_body) instead of four.
  DEVICE static Fq2 mul_sub_mul(const Fq2& a, const Fq2& b, const Fq2& c, const Fq2& d);
  // (a0 + a1·u)⁻¹ = (a0 − a1·u) / (a0² + a1²); 0 for 0.
  NOINLINE Fq2 inverse() const {
    const Fq t = (c0 * c0 + c1 * c1).inverse();
    Fq2 r;
    r.c0 = c0 * t;
    r.c1 = (c1 * t).neg();
    return r;
  }
};

// Karatsuba with the reduction deferred: the three Fq products v0 = a0·b0, v1 = a1·b1 and
// v2 = (a0 + a1)·(b0 + b1) are kept whole (2N limbs, `Fq::mul_wide`), and each coordinate is
// ONE Montgomery reduction of its double-width value: 3 × 144 limb products + 2 reductions
// (2 × 144) instead of 3 × (144 + 144). All inputs are < p (every Fq operation returns a
// reduced value), so, with R = 2^384 and 8p < R:
//   c0 = REDC(v0 − v1 + [v0 < v1]·p·R): v0 − v1 ∈ (−p², p²), so the argument is in [0, p·R).
//   c1 = REDC(v2 − v0 − v1) = REDC(a0·b1 + a1·b0) ∈ [0, 2p²) ⊂ [0, p·R). The sums a0 + a1 and
//        b0 + b1 are left unreduced (< 2p < R), so v2 < 4p² < R², and v2 − v0 ≥ 0 on the way.
DEVICE Fq2 fq2_mul_body(Fq2 a, Fq2 b) {
  constexpr int N = Fq::N;
  u32 sa[N], sb[N];
  sa[0] = ptx::add_cc(a.c0.l[0], a.c1.l[0]);
#pragma unroll
  for (int j = 1; j < N; j++) sa[j] = ptx::addc_cc(a.c0.l[j], a.c1.l[j]);
  sb[0] = ptx::add_cc(b.c0.l[0], b.c1.l[0]);
#pragma unroll
  for (int j = 1; j < N; j++) sb[j] = ptx::addc_cc(b.c0.l[j], b.c1.l[j]);
  u32 v0[2 * N], v1[2 * N], d[2 * N];
  Fq::mul_wide(v0, a.c0.l, b.c0.l);
  Fq::mul_wide(v1, a.c1.l, b.c1.l);
  // d = v0 − v1, plus p·R (p added to the high half) when that borrowed.
  d[0] = ptx::sub_cc(v0[0], v1[0]);
#pragma unroll
  for (int j = 1; j < 2 * N; j++) d[j] = ptx::subc_cc(v0[j], v1[j]);
  const u32 borrow = ptx::subc(0, 0);
  d[N] = ptx::add_cc(d[N], FqParams::mod(0) & borrow);
#pragma unroll
  for (int j = 1; j < N; j++) d[N + j] = ptx::addc_cc(d[N + j], FqParams::mod(j) & borrow);
  Fq2 r;
  r.c0 = Fq::redc(d);
  u32 v2[2 * N];
  Fq::mul_wide(v2, sa, sb);
  v2[0] = ptx::sub_cc(v2[0], v0[0]);
#pragma unroll
  for (int j = 1; j < 2 * N; j++) v2[j] = ptx::subc_cc(v2[j], v0[j]);
  v2[0] = ptx::sub_cc(v2[0], v1[0]);
#pragma unroll
  for (int j = 1; j < 2 * N; j++) v2[j] = ptx::subc_cc(v2[j], v1[j]);
  r.c1 = Fq::redc(v2);
  return r;
}

// a·b − c·d = a·b + c·(−d), both products kept whole as in fq2_mul_body and each coordinate
// reduced once: c0 = REDC(D + [D < 0]·p·R) with D = (a0b0 − a1b1) + (c0e0 − c1e1) ∈ (−2p², 2p²)
// (e = −d), in [0, p·R) since 2p < R; c1 = REDC(a0b1 + a1b0 + c0e1 + c1e0) < 4p² < p·R since
// 4p < R. Six whole Fq products and two reductions instead of six and four.
DEVICE Fq2 fq2_mul_sub_mul_body(Fq2 a, Fq2 b, Fq2 c, Fq2 d) {
  constexpr int N = Fq::N;
  const Fq2 e = d.neg();
  u32 w0[2 * N], w1[2 * N], v[2 * N], s1[N], s2[N];
  // w1 = (a0 + a1)(b0 + b1) + (c0 + c1)(e0 + e1), less the four plain products; w0 gathers the
  // same four products with their signs (a0b0 and c0e0 added, a1b1 and c1e1 subtracted).
  auto sum = [](u32 out[N], const Fq& x, const Fq& y) {
    out[0] = ptx::add_cc(x.l[0], y.l[0]);
#pragma unroll
    for (int j = 1; j < N; j++) out[j] = ptx::addc_cc(x.l[j], y.l[j]);
  };
  auto add_wide = [](u32 acc[2 * N], const u32 x[2 * N]) {
    acc[0] = ptx::add_cc(acc[0], x[0]);
#pragma unroll
    for (int j = 1; j < 2 * N; j++) acc[j] = ptx::addc_cc(acc[j], x[j]);
  };
  auto sub_wide = [](u32 acc[2 * N], const u32 x[2 * N]) {
    acc[0] = ptx::sub_cc(acc[0], x[0]);
#pragma unroll
    for (int j = 1; j < 2 * N; j++) acc[j] = ptx::subc_cc(acc[j], x[j]);
  };
  sum(s1, a.c0, a.c1);
  sum(s2, b.c0, b.c1);
  Fq::mul_wide(w1, s1, s2);
  sum(s1, c.c0, c.c1);
  sum(s2, e.c0, e.c1);
  Fq::mul_wide(v, s1, s2);
  add_wide(w1, v);  // < 8p² < R²
  // w0 = a0b0 + c0e0 − a1b1 − c1e1 as a two's-complement value of 2N limbs (|w0| < 2p²).
  Fq::mul_wide(w0, a.c0.l, b.c0.l);
  sub_wide(w1, w0);
  Fq::mul_wide(v, c.c0.l, e.c0.l);
  add_wide(w0, v);
  sub_wide(w1, v);
  Fq::mul_wide(v, a.c1.l, b.c1.l);
  sub_wide(w0, v);
  sub_wide(w1, v);
  Fq::mul_wide(v, c.c1.l, e.c1.l);
  sub_wide(w1, v);
  sub_wide(w0, v);
  const u32 negative = 0u - (w0[2 * N - 1] >> 31);  // |w0| < 2p² < 2^(64N − 1): the sign bit
  w0[N] = ptx::add_cc(w0[N], FqParams::mod(0) & negative);
#pragma unroll
  for (int j = 1; j < N; j++) w0[N + j] = ptx::addc_cc(w0[N + j], FqParams::mod(j) & negative);
  Fq2 r;
  r.c0 = Fq::redc(w0);
  r.c1 = Fq::redc(w1);
  return r;
}

// (a0 + a1·u)² = (a0 + a1)(a0 − a1) + 2·a0·a1·u: two Fq products.
DEVICE Fq2 fq2_square_body(Fq2 a) {
  Fq2 r;
  Fq p = a.c0 * a.c1;
  r.c0 = (a.c0 + a.c1) * (a.c0 - a.c1);
  r.c1 = p + p;
  return r;
}
// Out of line, like the curve operations (see NOINLINE in fp.cuh).
NOINLINE Fq2 fq2_mul(Fq2 a, Fq2 b) { return fq2_mul_body(a, b); }
NOINLINE Fq2 fq2_square(Fq2 a) { return fq2_square_body(a); }
NOINLINE Fq2 fq2_mul_sub_mul(Fq2 a, Fq2 b, Fq2 c, Fq2 d) { return fq2_mul_sub_mul_body(a, b, c, d); }
DEVICE Fq2 Fq2::mul_sub_mul(const Fq2& a, const Fq2& b, const Fq2& c, const Fq2& d) {
  return fq2_mul_sub_mul(a, b, c, d);
}
DEVICE Fq2 Fq2::operator*(const Fq2& b) const { return fq2_mul(*this, b); }
DEVICE Fq2 Fq2::sqr() const { return fq2_square(*this); }
