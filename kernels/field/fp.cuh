// The prime fields of BLS12-381: Fr (scalar field, 8×32-bit limbs) and Fq (base field, 12×32-bit
// limbs), in Montgomery form with R = 2^(32·N), the same representation arkworks keeps in
// memory, so limbs cross the host boundary unconverted. One template, `Fp<P>`, instantiated from
// each field's constants.
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
// the arithmetic tests of `backend-cuda/tests/host_arithmetic.rs`, where the carry flag is a
// variable.
#pragma once

typedef unsigned int u32;
typedef unsigned long long u64;

#ifdef G16_HOST_EMULATION
#define DEVICE inline
#define NOINLINE inline
namespace ptx {
// The emulated condition-code register, one a thread: the sparse kernels' test runs a block's
// threads as host threads.
static thread_local u32 carry_flag;
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
// code size (and NVRTC's compile time) by every place that uses them; out of line they cost a
// jump and a return.
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

// The constants of one prime field: its limbs, Montgomery one (R mod p) and −p⁻¹ mod 2^32
// (`backend-cuda/tests/host_arithmetic.rs` checks the arithmetic they give against arkworks).
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
  // Whether the MSM's accumulation inlines its mixed addition over this field (see
  // Xyzz::add_affine_hot): yes, since an Fq product is small enough that going out of line,
  // which would round-trip the sum through the stack on every point, costs more than the
  // larger body.
  static constexpr bool HOT_INLINE = true;
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

  // An element from global memory in 16-byte pieces through the read-only data path, and one
  // stored in 16-byte pieces. As a struct of 4-byte limbs, a plain copy compiles to N 4-byte
  // accesses: each warp-wide access to one limb asks for 32 sectors (docs/perf/cuda.md, "What
  // is left"). Both need `p` 16-byte aligned, which every element of a device buffer is (Fr is
  // 32 bytes, Fq 48). Only for memory no thread writes during the kernel (`ldg`).
  DEVICE static Fp ldg(const Fp* p) {
#ifdef G16_HOST_EMULATION
    return *p;
#else
    static_assert(N % 4 == 0, "whole 16-byte pieces");
    const uint4* q = reinterpret_cast<const uint4*>(p);
    Fp r;
#pragma unroll
    for (int i = 0; i < N / 4; i++) {
      const uint4 v = __ldg(q + i);
      r.l[4 * i] = v.x; r.l[4 * i + 1] = v.y; r.l[4 * i + 2] = v.z; r.l[4 * i + 3] = v.w;
    }
    return r;
#endif
  }
  DEVICE void stg(Fp* p) const {
#ifdef G16_HOST_EMULATION
    *p = *this;
#else
    uint4* q = reinterpret_cast<uint4*>(p);
#pragma unroll
    for (int i = 0; i < N / 4; i++) q[i] = make_uint4(l[4 * i], l[4 * i + 1], l[4 * i + 2], l[4 * i + 3]);
#endif
  }

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

  // E += m·p over p's even limbs (`mad_pairs(e, pm, 0, m, false)`), the row that clears E's low
  // limb (m = E₀·(−p⁻¹)). Where p₀ = 1 (Fr), m = −E₀, so m·p₀ + E₀ is 0 with a carry exactly
  // when E₀ ≠ 0, and m·p₀'s high half is 0: the chain's first two links are two additions, not
  // two products.
  DEVICE static void clear_low_limb(u32 e[N + 1], const u32 pm[N], u32 m) {
    if (P::mod(0) != 1) {
      mad_pairs(e, pm, 0, m, false);
      return;
    }
    e[0] = ptx::add_cc(e[0], 0xffffffffu);
    e[1] = ptx::addc_cc(e[1], 0);
#pragma unroll
    for (int k = 1; k < N / 2; k++) {
      e[2 * k] = ptx::madc_lo_cc(pm[2 * k], m, e[2 * k]);
      e[2 * k + 1] = ptx::madc_hi_cc(pm[2 * k], m, e[2 * k + 1]);
    }
  }

  // t >>= 32 on the running value t = z + E + O·2^32 once a row has cleared its low limb e_0:
  // O becomes the new E; E_1 becomes z, and E_2..E_N the new O.
  DEVICE static void shift_limb(u32 e[N + 1], u32 o[N], u32& z) {
    z = e[1];
#pragma unroll
    for (int j = 0; j < N; j++) {
      const u32 hi = j + 2 <= N ? e[j + 2] : 0;
      e[j] = o[j];
      o[j] = hi;
    }
    e[N] = 0;
  }

  // t = z + E + O·2^32 as N limbs, for a value below 2^(32N) (then O_{N−1} = 0 and nothing
  // carries out).
  DEVICE static void merge(u32 t[N], const u32 e[N + 1], const u32 o[N], u32 z) {
    t[0] = ptx::add_cc(e[0], z);
#pragma unroll
    for (int j = 1; j < N; j++) t[j] = ptx::addc_cc(e[j], o[j - 1]);
  }

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
      clear_low_limb(e, pm, m);
      e[N] = ptx::addc(e[N], 0);
      mad_pairs(o, pm, 1, m, false);
      shift_limb(e, o, z);  // e_0 is now 0
    }
    // t = z + E + O·2^32 < 2p < 2^(32N): O_{N−1} = 0 and the merge carries nothing out.
    u32 t[N];
    merge(t, e, o, z);
    return reduce_once(t);
  }

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
      clear_low_limb(e, pm, m);
      e[N] = ptx::addc(e[N], 0);
      shift_limb(e, o, z);
    }
    u32 t[N];
    merge(t, e, o, z);
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

  // a·b − c·d under one Montgomery reduction: the two whole products (`mul_wide`), c·(p − d) in
  // place of −c·d so that nothing goes negative, their sum (a·b + c·(p − d) < 2p² < p·R, no
  // carry out of 2N limbs), then `redc`: 2N² + N² + N limb products instead of 2(2N² + N).
  DEVICE static Fp mul_sub_mul(const Fp& a, const Fp& b, const Fp& c, const Fp& d) {
    const Fp nd = d.neg();  // p − d, or 0 where d = 0
    u32 s[2 * N], t[2 * N];
    mul_wide(s, a.l, b.l);
    mul_wide(t, c.l, nd.l);
    s[0] = ptx::add_cc(s[0], t[0]);
#pragma unroll
    for (int j = 1; j < 2 * N; j++) s[j] = ptx::addc_cc(s[j], t[j]);
    return redc(s);
  }

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

