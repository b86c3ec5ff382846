// Field arithmetic for BLS12-381: Fr (scalar field, 8×32-bit limbs), Fq (base field, 12×32-bit
// limbs) and Fq2 = Fq[u]/(u²+1), all in Montgomery form with R = 2^(32·N), the same
// representation arkworks keeps in memory, so limbs cross the host boundary unconverted.
//
// Multiplication is CIOS Montgomery: for each limb b_i of b, t += a·b_i, then t += m·p with
// m = t_0·(−p⁻¹) mod 2^32, then t >>= 32. Each row is PTX carry chains (mad.lo.cc /
// madc.hi.cc); the running value is kept as two halves whose chains are independent (see
// `operator*`). With a, b < p, t stays below 2p < 2^(32N) for both moduli, so one conditional
// subtraction finishes the product.
//
// Each PTX instruction is its own `asm volatile` statement. The carry flag lives between them;
// the compiler keeps volatile asm in order and the unrolled loops put nothing else between the
// links of a chain (the usual practice of GPU field libraries; the tests on the device check
// every operation against arkworks).
//
// Built twice: by NVRTC for the device, and (G16_HOST_EMULATION) by a host C++ compiler for
// the arithmetic tests of `backend-cuda/tests/host_ff.rs`, where the carry flag is a variable.
#pragma once

typedef unsigned int u32;
typedef unsigned long long u64;

#ifdef G16_HOST_EMULATION
#define DEVICE inline
#define NOINLINE inline
namespace ptx {
static u32 carry_flag;  // the emulated condition-code register (host tests are single-threaded)
inline u32 add_cc(u32 a, u32 b) { u64 s = (u64)a + b; carry_flag = (u32)(s >> 32); return (u32)s; }
inline u32 addc_cc(u32 a, u32 b) { u64 s = (u64)a + b + carry_flag; carry_flag = (u32)(s >> 32); return (u32)s; }
inline u32 addc(u32 a, u32 b) { return a + b + carry_flag; }
inline u32 sub_cc(u32 a, u32 b) { u64 d = (u64)a - b; carry_flag = (u32)(d >> 63); return (u32)d; }
inline u32 subc_cc(u32 a, u32 b) { u64 d = (u64)a - b - carry_flag; carry_flag = (u32)(d >> 63); return (u32)d; }
inline u32 subc(u32 a, u32 b) { return a - b - carry_flag; }
inline u32 mad_lo_cc(u32 a, u32 b, u32 c) { return add_cc((u32)((u64)a * b), c); }
inline u32 madc_lo_cc(u32 a, u32 b, u32 c) { return addc_cc((u32)((u64)a * b), c); }
inline u32 mad_hi_cc(u32 a, u32 b, u32 c) { return add_cc((u32)(((u64)a * b) >> 32), c); }
inline u32 madc_hi_cc(u32 a, u32 b, u32 c) { return addc_cc((u32)(((u64)a * b) >> 32), c); }
}  // namespace ptx
inline u32 __umulhi_portable(u32 a, u32 b) { return (u32)(((u64)a * b) >> 32); }
#else
#define DEVICE __device__ __forceinline__
// Curve operations are kept out of line: inlined, their unrolled field products multiply the
// code size (and NVRTC's compile time) by every call site, for a call's small cost.
#define NOINLINE __device__ __noinline__
namespace ptx {
DEVICE u32 add_cc(u32 a, u32 b) { u32 r; asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
DEVICE u32 addc_cc(u32 a, u32 b) { u32 r; asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
DEVICE u32 addc(u32 a, u32 b) { u32 r; asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
DEVICE u32 sub_cc(u32 a, u32 b) { u32 r; asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
DEVICE u32 subc_cc(u32 a, u32 b) { u32 r; asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
DEVICE u32 subc(u32 a, u32 b) { u32 r; asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
DEVICE u32 mad_lo_cc(u32 a, u32 b, u32 c) { u32 r; asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
DEVICE u32 madc_lo_cc(u32 a, u32 b, u32 c) { u32 r; asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
DEVICE u32 mad_hi_cc(u32 a, u32 b, u32 c) { u32 r; asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
DEVICE u32 madc_hi_cc(u32 a, u32 b, u32 c) { u32 r; asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
}  // namespace ptx
DEVICE u32 __umulhi_portable(u32 a, u32 b) { return __umulhi(a, b); }
#endif

// Whether the product is the older single-chain CIOS (for A/B runs, via G16_CUDA_DEFINES).
#ifndef G16_FF_SERIAL_MUL
#define G16_FF_SERIAL_MUL 0
#endif

// Whether sqr() is the dedicated squaring (cross products once) or a product a·a.
#ifndef G16_FF_SQR
#define G16_FF_SQR 1
#endif

// The constants of one prime field: its limbs, Montgomery one (R mod p) and −p⁻¹ mod 2^32.
// `Rust: backend-cuda/src/constants.rs` checks these tables against arkworks.
struct FrParams {
  enum { N = 8 };
  static constexpr u32 INV = 0xffffffffu;
  DEVICE static u32 mod(int i) {
    constexpr u32 m[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402, 0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
    return m[i];
  }
  DEVICE static u32 one(int i) {
    constexpr u32 m[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa, 0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
    return m[i];
  }
};

struct FqParams {
  enum { N = 12 };
  static constexpr u32 INV = 0xfffcfffdu;
  DEVICE static u32 mod(int i) {
    constexpr u32 m[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
                           0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
    return m[i];
  }
  DEVICE static u32 one(int i) {
    constexpr u32 m[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
                           0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
    return m[i];
  }
};

// An element of the prime field P, Montgomery form, little-endian 32-bit limbs.
template <class P>
struct Fp {
  enum { N = P::N };
  static constexpr bool HOT_INLINE = true;  // see Xyzz::add_affine_hot
  static constexpr bool PAIRED = false;       // see Xyzz::add_affine_inline
  static constexpr bool MADD_INLINE = false;  // likewise
  static constexpr bool MUL_SUB = false;      // likewise
  DEVICE static Fp mul_sub(const Fp& a, const Fp& b, const Fp& c, const Fp& d) { return a * b - c * d; }
  DEVICE Fp mul_inline(const Fp& b) const { return *this * b; }
  DEVICE Fp sqr_inline() const { return sqr(); }
  u32 l[N];

  DEVICE static Fp zero() {
    Fp r;
#pragma unroll
    for (int i = 0; i < N; i++) r.l[i] = 0;
    return r;
  }
  DEVICE static Fp one() {
    Fp r;
#pragma unroll
    for (int i = 0; i < N; i++) r.l[i] = P::one(i);
    return r;
  }
  DEVICE bool is_zero() const {
    u32 acc = 0;
#pragma unroll
    for (int i = 0; i < N; i++) acc |= l[i];
    return acc == 0;
  }
  DEVICE bool operator==(const Fp& o) const {
    u32 acc = 0;
#pragma unroll
    for (int i = 0; i < N; i++) acc |= l[i] ^ o.l[i];
    return acc == 0;
  }
  DEVICE bool operator!=(const Fp& o) const { return !(*this == o); }

  // r = t − p if t ≥ p, else t (t < 2p).
  DEVICE static Fp reduce_once(const u32 t[N]) {
    u32 s[N];
    s[0] = ptx::sub_cc(t[0], P::mod(0));
#pragma unroll
    for (int i = 1; i < N; i++) s[i] = ptx::subc_cc(t[i], P::mod(i));
    u32 borrow = ptx::subc(0, 0);  // all ones when t < p
    Fp r;
#pragma unroll
    for (int i = 0; i < N; i++) r.l[i] = (t[i] & borrow) | (s[i] & ~borrow);
    return r;
  }

  DEVICE Fp operator+(const Fp& b) const {
    u32 t[N];
    t[0] = ptx::add_cc(l[0], b.l[0]);
#pragma unroll
    for (int i = 1; i < N; i++) t[i] = ptx::addc_cc(l[i], b.l[i]);
    return reduce_once(t);  // a + b < 2p < 2^(32N): no carry out
  }

  DEVICE Fp operator-(const Fp& b) const {
    u32 t[N];
    t[0] = ptx::sub_cc(l[0], b.l[0]);
#pragma unroll
    for (int i = 1; i < N; i++) t[i] = ptx::subc_cc(l[i], b.l[i]);
    u32 borrow = ptx::subc(0, 0);
    Fp r;
    r.l[0] = ptx::add_cc(t[0], P::mod(0) & borrow);
#pragma unroll
    for (int i = 1; i < N; i++) r.l[i] = ptx::addc_cc(t[i], P::mod(i) & borrow);
    return r;
  }

  DEVICE Fp neg() const { return zero() - *this; }
  DEVICE Fp dbl() const { return *this + *this; }

  // acc[0..N) += Σ_k x[2k+s]·y·2^(64k): the lo/hi halves of the products of every other limb
  // of x (s = 0: the even ones, s = 1: the odd ones) tile acc without overlap, so the sum is
  // ONE carry chain of N multiply-adds; with `carry_in` it starts from the flag's carry. The
  // carry out is left in the flag.
  DEVICE static void mad_pairs(u32 acc[N], const u32 x[N], int s, u32 y, bool carry_in) {
    acc[0] = carry_in ? ptx::madc_lo_cc(x[s], y, acc[0]) : ptx::mad_lo_cc(x[s], y, acc[0]);
    acc[1] = ptx::madc_hi_cc(x[s], y, acc[1]);
#pragma unroll
    for (int k = 1; k < N / 2; k++) {
      acc[2 * k] = ptx::madc_lo_cc(x[2 * k + s], y, acc[2 * k]);
      acc[2 * k + 1] = ptx::madc_hi_cc(x[2 * k + s], y, acc[2 * k + 1]);
    }
  }

#if G16_FF_SERIAL_MUL
  // The previous product (one carry chain through every row), kept for A/B measurements.
  DEVICE Fp operator*(const Fp& b) const {
    u32 t[N + 2];
#pragma unroll
    for (int j = 0; j < N + 2; j++) t[j] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      const u32 bi = b.l[i];
      t[0] = ptx::mad_lo_cc(l[0], bi, t[0]);
#pragma unroll
      for (int j = 1; j < N; j++) t[j] = ptx::madc_lo_cc(l[j], bi, t[j]);
      t[N] = ptx::addc_cc(t[N], 0);
      t[N + 1] = ptx::addc(t[N + 1], 0);
      t[1] = ptx::mad_hi_cc(l[0], bi, t[1]);
#pragma unroll
      for (int j = 1; j < N; j++) t[j + 1] = ptx::madc_hi_cc(l[j], bi, t[j + 1]);
      t[N + 1] = ptx::addc(t[N + 1], 0);
      const u32 m = t[0] * P::INV;
      t[0] = ptx::mad_lo_cc(m, P::mod(0), t[0]);
#pragma unroll
      for (int j = 1; j < N; j++) t[j] = ptx::madc_lo_cc(m, P::mod(j), t[j]);
      t[N] = ptx::addc_cc(t[N], 0);
      t[N + 1] = ptx::addc(t[N + 1], 0);
      t[1] = ptx::mad_hi_cc(m, P::mod(0), t[1]);
#pragma unroll
      for (int j = 1; j < N; j++) t[j + 1] = ptx::madc_hi_cc(m, P::mod(j), t[j + 1]);
      t[N + 1] = ptx::addc(t[N + 1], 0);
#pragma unroll
      for (int j = 0; j < N + 1; j++) t[j] = t[j + 1];
      t[N + 1] = 0;
    }
    return reduce_once(t);
  }
#else
  // CIOS with the running value split in two: t = z + E + O·2^32, E of N+1 limbs, O of N, z
  // one limb. Each row adds a·b_i and m·p (m = t_0·(−p⁻¹), which clears t's low limb), the
  // even limbs of a and p into E and the odd ones into O (`mad_pairs`): independent carry
  // chains of N links instead of one of 4N, so the scheduler can interleave them (the layout
  // sppark's mont_t uses). Then t >>= 32: O becomes the new E; E_1 is z, and E_2..E_N the new
  // O. z is added into E_0 at the next row's start, its carry (position 1) starting O's chain.
  // Bounds: with a < p and t < 2p before a row, t + a·b_i + m·p < 2p·2^32 < 2^(32(N+1)) (2p <
  // 2^(32N) for both moduli), and each part is at most the whole: E < 2^(32(N+1)) (E_N takes
  // E's carries) and O < 2^(32N) (O's chains carry nothing out). m depends only on the first
  // links of E's chain, so it is off the chains' critical path.
  DEVICE Fp operator*(const Fp& b) const {
    u32 e[N + 1], o[N], pm[N];
#pragma unroll
    for (int j = 0; j < N; j++) {
      e[j] = 0;
      o[j] = 0;
      pm[j] = P::mod(j);
    }
    e[N] = 0;
    u32 z = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      const u32 bi = b.l[i];
      e[0] = ptx::add_cc(e[0], z);
      mad_pairs(o, l, 1, bi, true);
      mad_pairs(e, l, 0, bi, false);
      e[N] = ptx::addc(e[N], 0);
      const u32 m = e[0] * P::INV;
      mad_pairs(e, pm, 0, m, false);
      e[N] = ptx::addc(e[N], 0);
      mad_pairs(o, pm, 1, m, false);
      // t >>= 32 (e_0 is now 0).
      z = e[1];
#pragma unroll
      for (int j = 0; j < N; j++) {
        const u32 hi = j + 2 <= N ? e[j + 2] : 0;
        e[j] = o[j];
        o[j] = hi;
      }
      e[N] = 0;
    }
    // t = z + E + O·2^32 < 2p < 2^(32N), so O_{N−1} = 0 and the merge carries nothing out.
    u32 t[N];
    t[0] = ptx::add_cc(e[0], z);
#pragma unroll
    for (int j = 1; j < N; j++) t[j] = ptx::addc_cc(e[j], o[j - 1]);
    return reduce_once(t);
  }
#endif

  // Montgomery reduction of a double-width value: s·R⁻¹ mod p, fully reduced, for s < p·R
  // (R = 2^(32N)). The low half goes through `operator*`'s reduction rows (t = s_lo; N times
  // t = (t + m·p) / 2^32, split in E and O), which leaves (s_lo + M·p)/R ≤ p (s_lo, M < R); the
  // high half s_hi = ⌊s/R⌋ ≤ p − 1 is added after, so the sum is below 2p < 2^(32N) and one
  // conditional subtraction finishes it.
  DEVICE static Fp redc(const u32 s[2 * N]) {
    u32 e[N + 1], o[N], pm[N];
#pragma unroll
    for (int j = 0; j < N; j++) {
      e[j] = s[j];
      o[j] = 0;
      pm[j] = P::mod(j);
    }
    e[N] = 0;
    u32 z = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      e[0] = ptx::add_cc(e[0], z);
      const u32 m = e[0] * P::INV;
      mad_pairs(o, pm, 1, m, true);
      mad_pairs(e, pm, 0, m, false);
      e[N] = ptx::addc(e[N], 0);
      z = e[1];
#pragma unroll
      for (int j = 0; j < N; j++) {
        const u32 hi = j + 2 <= N ? e[j + 2] : 0;
        e[j] = o[j];
        o[j] = hi;
      }
      e[N] = 0;
    }
    u32 t[N];
    t[0] = ptx::add_cc(e[0], z);
#pragma unroll
    for (int j = 1; j < N; j++) t[j] = ptx::addc_cc(e[j], o[j - 1]);
    t[0] = ptx::add_cc(t[0], s[N]);
#pragma unroll
    for (int j = 1; j < N; j++) t[j] = ptx::addc_cc(t[j], s[N + j]);
    return reduce_once(t);
  }

  // The whole product t = a·b of two N-limb integers (any values below 2^(32N)), 2N limbs, no
  // reduction. Row i adds a·b_i at position i as two carry chains of N links, like
  // `operator*`: the products of every other limb of a tile a run of limbs without overlap.
  // Which half lands on pairs at even positions flips with i's parity, so the accumulators are
  // kept by alignment, not by a's limb parity (that keeps each 64-bit product on one aligned
  // register pair: ptxas makes every lo/hi pair one IMAD.WIDE.U32.X, with no moves between
  // rows): A_j weighs 2^(32j) and takes the pairs at even positions (even i: a's even limbs,
  // at i … i+N−1; odd i: its odd limbs, at i+1 … i+N), B_j weighs 2^(32(j+1)) and takes those
  // at odd positions (even i: a's odd limbs, at i+1 … i+N; odd i: its even limbs, at i … i+N−1).
  // Each chain's carry goes into the limb just above its run, which holds at most the carry
  // of the row before (that row's run ended one limb lower, or two, and nothing else reached
  // it), so nothing is lost; A's last carry (into A_{2N}) is 0 since A ≤ a·b < 2^(64N). Then
  // t = A + B·2^32 (< 2^(64N): the merge carries nothing out).
  DEVICE static void mul_wide(u32 t[2 * N], const u32 a[N], const u32 b[N]) {
    u32 A[2 * N + 1], B[2 * N];
#pragma unroll
    for (int j = 0; j < 2 * N; j++) {
      A[j] = 0;
      B[j] = 0;
    }
    A[2 * N] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      const int odd = i & 1;
      mad_pairs(A + i + odd, a, odd, b[i], false);
      A[i + odd + N] = ptx::addc(A[i + odd + N], 0);
      mad_pairs(B + i - odd, a, 1 - odd, b[i], false);
      B[i - odd + N] = ptx::addc(B[i - odd + N], 0);
    }
    t[0] = A[0];
    t[1] = ptx::add_cc(A[1], B[0]);
#pragma unroll
    for (int j = 2; j < 2 * N; j++) t[j] = ptx::addc_cc(A[j], B[j - 1]);
  }

#if G16_FF_SQR
  // a², with each cross product a_i·a_j (i < j) computed once and doubled: 66 + 12 limb products
  // instead of 144 for Fq, then a separate Montgomery reduction (SOS).
  //  1. Cross products, row i = a_i·(a_{i+1} … a_{N−1}) at positions 2i+1 … i+N, split like
  //     `mad_pairs`: the products with a_{i+1+2k} into X (pairs starting at odd positions), those
  //     with a_{i+2+2k} into Y (pairs at even positions), each a carry chain. The chain holding
  //     a_{N−1} ends at position i+N and carries into i+N+1, which no earlier row reached; the
  //     other ends at i+N−1 and carries into i+N, which holds at most the previous row's carry
  //     (that row's chain ended there), so nothing carries further.
  //  2. s = 2(X + Y) + Σ a_i²·2^(64i) (the diagonal: pairs that do not overlap, no carries).
  //  3. `redc(s)` (s = a² < p² < p·R).
  DEVICE Fp sqr() const {
    u32 x[2 * N], y[2 * N];
#pragma unroll
    for (int j = 0; j < 2 * N; j++) {
      x[j] = 0;
      y[j] = 0;
    }
#pragma unroll
    for (int i = 0; i < N - 1; i++) {
      const int len = N - 1 - i;  // a_{i+1} … a_{N−1}
      // X: a_{i+1+2k}, pairs at 2i+1+2k.
      const int nx = (len + 1) / 2, ny = len / 2;
      u32* xs = x + 2 * i + 1;
      xs[0] = ptx::mad_lo_cc(l[i + 1], l[i], xs[0]);
      xs[1] = ptx::madc_hi_cc(l[i + 1], l[i], xs[1]);
#pragma unroll
      for (int k = 1; k < nx; k++) {
        xs[2 * k] = ptx::madc_lo_cc(l[i + 1 + 2 * k], l[i], xs[2 * k]);
        xs[2 * k + 1] = ptx::madc_hi_cc(l[i + 1 + 2 * k], l[i], xs[2 * k + 1]);
      }
      xs[2 * nx] = ptx::addc(xs[2 * nx], 0);
      if (ny > 0) {
        u32* ys = y + 2 * i + 2;
        ys[0] = ptx::mad_lo_cc(l[i + 2], l[i], ys[0]);
        ys[1] = ptx::madc_hi_cc(l[i + 2], l[i], ys[1]);
#pragma unroll
        for (int k = 1; k < ny; k++) {
          ys[2 * k] = ptx::madc_lo_cc(l[i + 2 + 2 * k], l[i], ys[2 * k]);
          ys[2 * k + 1] = ptx::madc_hi_cc(l[i + 2 + 2 * k], l[i], ys[2 * k + 1]);
        }
        ys[2 * ny] = ptx::addc(ys[2 * ny], 0);
      }
    }
    // x = X + Y (< 2^(64N): half of a² − diagonal), then s = 2x + diagonal.
    x[1] = ptx::add_cc(x[1], y[1]);
#pragma unroll
    for (int j = 2; j < 2 * N; j++) x[j] = ptx::addc_cc(x[j], y[j]);
    u32 s[2 * N];
#pragma unroll
    for (int i = 0; i < N; i++) {
      y[2 * i] = l[i] * l[i];
      y[2 * i + 1] = __umulhi_portable(l[i], l[i]);
    }
    s[0] = y[0];  // x_0 = 0: the cross products start at position 1
    s[1] = ptx::add_cc(y[1], x[1] << 1);
#pragma unroll
    for (int j = 2; j < 2 * N; j++) s[j] = ptx::addc_cc(y[j], (x[j] << 1) | (x[j - 1] >> 31));
    return redc(s);
  }
#else
  DEVICE Fp sqr() const { return *this * *this; }
#endif

  // Out of Montgomery form: a·R⁻¹, the plain integer (for scalar digits).
  DEVICE Fp from_montgomery() const {
    Fp one_plain = zero();
    one_plain.l[0] = 1;
    return *this * one_plain;
  }

  // a^(p−2) = a⁻¹ (Fermat; 0 for a = 0), square-and-multiply from the top bit. Slow (about
  // N·32 squarings); only for one-off work such as normalising the precomputed MSM bases.
  // Requires p's low limb ≥ 2 (true of Fq; Fr's is 1, so Fr has no inverse here).
  NOINLINE Fp inverse() const {
    Fp r = one();
    for (int i = N - 1; i >= 0; i--) {
      const u32 e = P::mod(i) - (i == 0 ? 2u : 0u);
      for (int bit = 31; bit >= 0; bit--) {
        r = r.sqr();
        if ((e >> bit) & 1) r = r * *this;
      }
    }
    return r;
  }
};

typedef Fp<FrParams> Fr;
typedef Fp<FqParams> Fq;

// Whether G2's accumulation inlines its mixed addition (its Fq2 products stay out of line
// either way); an experiment switch, set through G16_CUDA_DEFINES.
#ifndef G16_G2_HOT_INLINE
#define G16_G2_HOT_INLINE 0
#endif

// Whether Fq2's product and square are out-of-line free functions taking their operands by
// value (so ptxas passes them in registers) rather than member functions taking them by
// reference (through the stack). Measured on the H200 (NOTES.md): G2's accumulation at 2^24
// 538 → 404 ms, its stack frame 1536 → 576 B. 0 keeps the member versions, for A/B runs.
#ifndef G16_FQ2_BYVALUE
#define G16_FQ2_BYVALUE 1
#endif

// Whether the by-value Fq2 product reduces lazily (see fq2_mul: two Montgomery reductions
// instead of three). 0 keeps the product of three reduced Fq products, for A/B runs.
#ifndef G16_FQ2_LAZY
#define G16_FQ2_LAZY 1
#endif

// Whether G2's mixed addition pairs its independent Fq2 products, two to a call (fq2_mul2,
// fq2_square2: 5 calls instead of 10). An experiment switch (0: one product a call); needs
// G16_FQ2_BYVALUE.
#ifndef G16_FQ2_PAIRED
#define G16_FQ2_PAIRED 0
#endif

// Whether G2's mixed addition (Xyzz::add_affine, out of line) has its Fq2 products inlined
// (no calls inside it, so its live values need not go to the stack around them; a larger
// body). 0: the products are calls. An experiment switch; needs G16_FQ2_BYVALUE.
#ifndef G16_FQ2_MADD_INLINE
#define G16_FQ2_MADD_INLINE 0
#endif

// Whether G2's mixed addition computes y3 = r·(q − x3) − y·ppp as one double-width difference
// with two Montgomery reductions (fq2_mul_sub) instead of two reduced Fq2 products (four) and a
// subtraction. An experiment switch (measured on the H200, NOTES.md: G2 2^24 +4.1 %, with
// the 4-operand call's spills); needs G16_FQ2_BYVALUE and G16_FQ2_LAZY.
#ifndef G16_FQ2_MULSUB
#define G16_FQ2_MULSUB 0
#endif

// Fq2 = Fq[u]/(u² + 1).
struct Fq2 {
  Fq c0, c1;
  static constexpr bool HOT_INLINE = G16_G2_HOT_INLINE;
  DEVICE static Fq2 zero() { Fq2 r; r.c0 = Fq::zero(); r.c1 = Fq::zero(); return r; }
  DEVICE static Fq2 one() { Fq2 r; r.c0 = Fq::one(); r.c1 = Fq::zero(); return r; }
  DEVICE bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  DEVICE bool operator==(const Fq2& o) const { return c0 == o.c0 && c1 == o.c1; }
  DEVICE bool operator!=(const Fq2& o) const { return !(*this == o); }
  DEVICE Fq2 operator+(const Fq2& b) const { Fq2 r; r.c0 = c0 + b.c0; r.c1 = c1 + b.c1; return r; }
  DEVICE Fq2 operator-(const Fq2& b) const { Fq2 r; r.c0 = c0 - b.c0; r.c1 = c1 - b.c1; return r; }
  DEVICE Fq2 neg() const { Fq2 r; r.c0 = c0.neg(); r.c1 = c1.neg(); return r; }
  DEVICE Fq2 dbl() const { return *this + *this; }
#if G16_FQ2_BYVALUE
  static constexpr bool PAIRED = G16_FQ2_PAIRED && !G16_FQ2_MADD_INLINE;
  static constexpr bool MADD_INLINE = G16_FQ2_MADD_INLINE;
  static constexpr bool MUL_SUB = G16_FQ2_MULSUB && G16_FQ2_LAZY;
  // a·b − c·d (fq2_mul_sub; with MUL_SUB only).
  DEVICE static Fq2 mul_sub(const Fq2& a, const Fq2& b, const Fq2& c, const Fq2& d);
  // a·b and a², inlined (for the mixed addition with G16_FQ2_MADD_INLINE).
  DEVICE Fq2 mul_inline(const Fq2& b) const;
  DEVICE Fq2 sqr_inline() const;
  DEVICE Fq2 operator*(const Fq2& b) const;
  DEVICE Fq2 sqr() const;
  // ab = a·b and cd = c·d; aa = a², cc = c² (one call each: fq2_mul2, fq2_square2).
  DEVICE static void mul2(const Fq2& a, const Fq2& b, const Fq2& c, const Fq2& d, Fq2& ab, Fq2& cd);
  DEVICE static void sqr2(const Fq2& a, const Fq2& c, Fq2& aa, Fq2& cc);
#else
  static constexpr bool PAIRED = false;
  static constexpr bool MADD_INLINE = false;
  static constexpr bool MUL_SUB = false;
  DEVICE static Fq2 mul_sub(const Fq2& a, const Fq2& b, const Fq2& c, const Fq2& d) { return a * b - c * d; }
  DEVICE Fq2 mul_inline(const Fq2& b) const { return *this * b; }
  DEVICE Fq2 sqr_inline() const { return sqr(); }
  // Karatsuba: three Fq products. Out of line, like the curve operations (see NOINLINE).
  // (The default, G16_FQ2_BYVALUE, is the same formulas in fq2_mul / fq2_square below.)
  NOINLINE Fq2 operator*(const Fq2& b) const {
    Fq v0 = c0 * b.c0, v1 = c1 * b.c1;
    Fq2 r;
    r.c0 = v0 - v1;
    r.c1 = (c0 + c1) * (b.c0 + b.c1) - v0 - v1;
    return r;
  }
  // (a0 + a1·u)² = (a0 + a1)(a0 − a1) + 2·a0·a1·u: two Fq products.
  NOINLINE Fq2 sqr() const {
    Fq2 r;
    Fq p = c0 * c1;
    r.c0 = (c0 + c1) * (c0 - c1);
    r.c1 = p + p;
    return r;
  }
#endif
  // (a0 + a1·u)⁻¹ = (a0 − a1·u) / (a0² + a1²); 0 for 0.
  NOINLINE Fq2 inverse() const {
    const Fq t = (c0 * c0 + c1 * c1).inverse();
    Fq2 r;
    r.c0 = c0 * t;
    r.c1 = (c1 * t).neg();
    return r;
  }
};

#if G16_FQ2_BYVALUE
// Karatsuba, three Fq products; and (a0 + a1·u)² = (a0 + a1)(a0 − a1) + 2·a0·a1·u, two. The
// same formulas as the member versions above; operands by value, so no stack round trip.
#if G16_FQ2_LAZY
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

// x ← x − y over 2N limbs, plus p·R when that borrowed: for x, y in [0, p·R) the result is in
// [0, p·R) and ≡ x − y (mod p), a valid REDC argument.
DEVICE void fq_sub_wide(u32 x[2 * Fq::N], const u32 y[2 * Fq::N]) {
  constexpr int N = Fq::N;
  x[0] = ptx::sub_cc(x[0], y[0]);
#pragma unroll
  for (int j = 1; j < 2 * N; j++) x[j] = ptx::subc_cc(x[j], y[j]);
  const u32 borrow = ptx::subc(0, 0);
  x[N] = ptx::add_cc(x[N], FqParams::mod(0) & borrow);
#pragma unroll
  for (int j = 1; j < N; j++) x[N + j] = ptx::addc_cc(x[N + j], FqParams::mod(j) & borrow);
}

// a·b before its two reductions (as fq2_mul_body): w0 = a0·b0 − a1·b1 (+ p·R when negative)
// and w1 = a0·b1 + a1·b0, each in [0, p·R).
DEVICE void fq2_mul_wide(u32 w0[2 * Fq::N], u32 w1[2 * Fq::N], const Fq2& a, const Fq2& b) {
  constexpr int N = Fq::N;
  u32 sa[N], sb[N], v1[2 * N];
  sa[0] = ptx::add_cc(a.c0.l[0], a.c1.l[0]);
#pragma unroll
  for (int j = 1; j < N; j++) sa[j] = ptx::addc_cc(a.c0.l[j], a.c1.l[j]);
  sb[0] = ptx::add_cc(b.c0.l[0], b.c1.l[0]);
#pragma unroll
  for (int j = 1; j < N; j++) sb[j] = ptx::addc_cc(b.c0.l[j], b.c1.l[j]);
  Fq::mul_wide(w0, a.c0.l, b.c0.l);
  Fq::mul_wide(v1, a.c1.l, b.c1.l);
  Fq::mul_wide(w1, sa, sb);
  w1[0] = ptx::sub_cc(w1[0], w0[0]);
#pragma unroll
  for (int j = 1; j < 2 * N; j++) w1[j] = ptx::subc_cc(w1[j], w0[j]);
  w1[0] = ptx::sub_cc(w1[0], v1[0]);
#pragma unroll
  for (int j = 1; j < 2 * N; j++) w1[j] = ptx::subc_cc(w1[j], v1[j]);
  fq_sub_wide(w0, v1);
}

// a·b − c·d with one reduction a coordinate: both products unreduced (fq2_mul_wide), their
// difference brought back into [0, p·R) (fq_sub_wide), then REDC: 6 double-width products and
// 2 reductions where two Fq2 products take 6 and 4.
NOINLINE Fq2 fq2_mul_sub(Fq2 a, Fq2 b, Fq2 c, Fq2 d) {
  constexpr int N = Fq::N;
  u32 x0[2 * N], x1[2 * N], y0[2 * N], y1[2 * N];
  fq2_mul_wide(x0, x1, a, b);
  fq2_mul_wide(y0, y1, c, d);
  fq_sub_wide(x0, y0);
  fq_sub_wide(x1, y1);
  Fq2 r;
  r.c0 = Fq::redc(x0);
  r.c1 = Fq::redc(x1);
  return r;
}
DEVICE Fq2 Fq2::mul_sub(const Fq2& a, const Fq2& b, const Fq2& c, const Fq2& d) { return fq2_mul_sub(a, b, c, d); }
#else
DEVICE Fq2 fq2_mul_body(Fq2 a, Fq2 b) {
  Fq v0 = a.c0 * b.c0, v1 = a.c1 * b.c1;
  Fq2 r;
  r.c0 = v0 - v1;
  r.c1 = (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1;
  return r;
}
#endif
DEVICE Fq2 fq2_square_body(Fq2 a) {
  Fq2 r;
  Fq p = a.c0 * a.c1;
  r.c0 = (a.c0 + a.c1) * (a.c0 - a.c1);
  r.c1 = p + p;
  return r;
}
NOINLINE Fq2 fq2_mul(Fq2 a, Fq2 b) { return fq2_mul_body(a, b); }
NOINLINE Fq2 fq2_square(Fq2 a) { return fq2_square_body(a); }
DEVICE Fq2 Fq2::operator*(const Fq2& b) const { return fq2_mul(*this, b); }
DEVICE Fq2 Fq2::mul_inline(const Fq2& b) const { return fq2_mul_body(*this, b); }
DEVICE Fq2 Fq2::sqr_inline() const { return fq2_square_body(*this); }
DEVICE Fq2 Fq2::sqr() const { return fq2_square(*this); }

// Two independent products (or squares) in one out-of-line call: half the calls of the
// mixed addition, so half the caller's saves and restores of its live values around them, and
// two independent sets of carry chains in one body for ptxas to interleave (G2's accumulation
// is latency-bound at 2 warps a scheduler: NOTES.md).
struct Fq2Pair {
  Fq2 a, b;
};
NOINLINE Fq2Pair fq2_mul2(Fq2 a, Fq2 b, Fq2 c, Fq2 d) {
  Fq2Pair r;
  r.a = fq2_mul_body(a, b);
  r.b = fq2_mul_body(c, d);
  return r;
}
NOINLINE Fq2Pair fq2_square2(Fq2 a, Fq2 c) {
  Fq2Pair r;
  r.a = fq2_square_body(a);
  r.b = fq2_square_body(c);
  return r;
}
DEVICE void Fq2::mul2(const Fq2& a, const Fq2& b, const Fq2& c, const Fq2& d, Fq2& ab, Fq2& cd) {
  const Fq2Pair r = fq2_mul2(a, b, c, d);
  ab = r.a;
  cd = r.b;
}
DEVICE void Fq2::sqr2(const Fq2& a, const Fq2& c, Fq2& aa, Fq2& cc) {
  const Fq2Pair r = fq2_square2(a, c);
  aa = r.a;
  cc = r.b;
}
#endif
