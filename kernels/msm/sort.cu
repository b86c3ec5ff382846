// The MSM's first two phases: every scalar's signed window digits, counted by bucket, then
// sorted by bucket (a counting sort on the device; the scan between them is `util/scan.cu`).
//
// The scalar range is cut into W windows of c bits. A window's digit is taken in
// [−2^(c−1)+1, 2^(c−1)] (a digit above 2^(c−1) becomes digit − 2^c and carries one into the
// next window), so each bucket set has B = 2^(c−1) buckets and a negative digit adds the
// negated point. W·c ≥ 256 leaves the top window room for the last carry (scalars are < 2^255).
//
//   plan    msm_dense_count: the scalars that reach the buckets (neither 0 nor, under the 0/1
//           split, 1), whose count the host plans the window and buffers for.
//   digits  msm_count: per bucket counts; scalars equal to 1 go to the `ones` list instead
//           (the 0/1 split), zero digits go nowhere.
//   sort    the host scans the counts into offsets, then msm_scatter: each (scalar, window)
//           with a nonzero digit writes its entry index (sign in bit 31) into its bucket's slot;
//           or msm_scatter_by_window, the same entries written one window after another.
//
// Window w belongs to set w / shifts and reads shift w mod shifts of the points: entry indices
// are point indices in the windowed layout (shifts = 1: one bucket set a window, stride 0), and
// j·stride + i over a table of shifted bases (`msm/table.cu`: shifts = W, one set for all
// windows, in the shared layout; k, sets of k windows, in the grouped one).

// Bits [off, off + c) of a 256-bit little-endian scalar (c ≤ 24); selects by unrolled compare
// so the limbs stay in registers.
DEVICE u32 window_bits(const Fr& s, u32 off, u32 c) {
  const u32 i = off >> 5, sh = off & 31;
  u32 lo = 0, hi = 0;
#pragma unroll
  for (u32 j = 0; j < 8; j++) {
    if (j == i) lo = s.l[j];
    if (j == i + 1) hi = s.l[j];
  }
  const u64 v = ((u64)hi << 32 | lo) >> sh;
  return (u32)v & ((1u << c) - 1);
}

DEVICE bool is_plain_one(const Fr& s) {
  u32 acc = s.l[0] ^ 1u;
#pragma unroll
  for (int j = 1; j < 8; j++) acc |= s.l[j];
  return acc == 0;
}

// Window w's signed digit of the plain scalar s: its magnitude, with `neg` set where it is
// negative; `carry` holds the carry into window w and is left holding the carry out of it.
DEVICE u32 signed_digit(const Fr& s, u32 w, u32 c, u32& carry, u32& neg) {
  const u32 half = 1u << (c - 1);
  const u32 v = window_bits(s, w * c, c) + carry;
  if (v > half) {
    neg = 1;
    carry = 1;
    return (1u << c) - v;
  }
  neg = 0;
  carry = 0;
  return v;
}

// Runs emit(bucket_key, entry, negative) for a digit of point i of magnitude mag (nothing where
// it is 0) in window `set`·shifts + `shift`: key set·B + mag − 1, entry shift·stride + i
// (windowed: set = w, shift 0; shared: set 0, shift w).
template <class Emit>
DEVICE void emit_digit(u32 mag, u32 neg, u32 set, u32 shift, u32 i, u32 c, u32 stride, Emit emit) {
  if (mag == 0) return;
  emit(set * (1u << (c - 1)) + mag - 1, shift * stride + i, neg);
}

// Runs emit(bucket_key, entry, negative) for each nonzero signed digit of the plain scalar s
// of point i, window by window (see `emit_digit`); the set and shift are counted along, not
// divided out.
template <class Emit>
DEVICE void for_each_digit(const Fr& s, u32 i, u32 c, u32 windows, u32 stride, u32 shifts, Emit emit) {
  u32 carry = 0, set = 0, shift = 0;
  for (u32 w = 0; w < windows; w++) {
    u32 neg;
    const u32 mag = signed_digit(s, w, c, carry, neg);
    emit_digit(mag, neg, set, shift, i, c, stride, emit);
    if (++shift == shifts) {
      shift = 0;
      set++;
    }
  }
}

// A hash circuit's witness is mostly 0 and 1 (docs/perf/filecoin.md): buckets planned for
// every scalar would cost more to clear, fill and reduce than its few other values' entries.
// Compared in Montgomery form, as stored (0 is 0, 1 is R mod r); a warp's count is summed by
// shuffles, so one atomic a warp.
extern "C" __global__ void msm_dense_count(const Fr* __restrict__ scalars, u32 n, u32 split, u32* count) {
  u32 mine = 0;
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Fr s = scalars[i];
    mine += !(s.is_zero() || (split && s == Fr::one()));
  }
#pragma unroll
  for (u32 lane = 16; lane; lane >>= 1) mine += __shfl_down_sync(0xffffffffu, mine, lane);
  if ((threadIdx.x & 31) == 0 && mine) atomicAdd(count, mine);
}

extern "C" __global__ void msm_count(const Fr* __restrict__ scalars, u32 n, u32 c, u32 windows, u32 stride,
                                     u32 shifts, u32* counts, u32* ones, u32* ones_count, u32 split) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Fr s = scalars[i].from_montgomery();
    if (split && is_plain_one(s)) {
      ones[atomicAdd(ones_count, 1u)] = i;
      continue;
    }
    for_each_digit(s, i, c, windows, stride, shifts, [&](u32 key, u32, u32) { atomicAdd(&counts[key], 1u); });
  }
}

extern "C" __global__ void msm_scatter(const Fr* __restrict__ scalars, u32 n, u32 c, u32 windows, u32 stride,
                                       u32 shifts, u32* cursor, u32* sorted, u32 split) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Fr s = scalars[i].from_montgomery();
    if (split && is_plain_one(s)) continue;
    for_each_digit(s, i, c, windows, stride, shifts, [&](u32 key, u32 entry, u32 neg) {
      const u32 pos = atomicAdd(&cursor[key], 1u);
      sorted[pos] = entry | (neg << 31);
    });
  }
}

// msm_scatter one window after another: block b takes window b / per_window, and its threads
// the scalars (b mod per_window)·blockDim.x + threadIdx.x, stepping by per_window·blockDim.x.
// Blocks start in about index order, so at any moment the slots being written are those of
// one window's 2^(c−1) buckets, a 32-byte sector each in L2, rather than every window's: in a
// windowed layout of more than 2^19 buckets in all (c > 16) those sectors outgrow the L2, and
// each 4-byte write becomes a partial write of a sector that has left it. The price: each
// window reads the scalars again and walks the carries up to itself.
extern "C" __global__ void msm_scatter_by_window(const Fr* __restrict__ scalars, u32 n, u32 c, u32 windows,
                                                 u32 stride, u32 shifts, u32* cursor, u32* sorted,
                                                 u32 split, u32 per_window) {
  const u32 w = blockIdx.x / per_window, b = blockIdx.x % per_window;
  if (w >= windows) return;
  for (u32 i = b * blockDim.x + threadIdx.x; i < n; i += per_window * blockDim.x) {
    const Fr s = scalars[i].from_montgomery();
    if (split && is_plain_one(s)) continue;
    u32 carry = 0, neg = 0, mag = 0;
    for (u32 u = 0; u <= w; u++) mag = signed_digit(s, u, c, carry, neg);
    emit_digit(mag, neg, w / shifts, w % shifts, i, c, stride, [&](u32 key, u32 entry, u32 sign) {
      const u32 pos = atomicAdd(&cursor[key], 1u);
      sorted[pos] = entry | (sign << 31);
    });
  }
}
