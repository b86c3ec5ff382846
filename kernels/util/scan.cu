// Exclusive prefix sum of u32 words on the device, in place: 1024-element blocks scanned in
// shared memory, their totals scanned the same way (the host recurses) and added back.

// The inclusive prefix sums, over a block of 1024 threads, of each thread's x: doubling steps
// in `buf`, two rows of 1024 words in shared memory. Returns the row that holds them (thread
// t's sum is buf[row][t]); the block's total is buf[row][1023].
DEVICE int block_scan_1024(u32 (*buf)[1024], u32 t, u32 x) {
  buf[0][t] = x;
  __syncthreads();
  int cur = 0;
  for (u32 d = 1; d < 1024; d <<= 1) {
    const u32 v = buf[cur][t] + (t >= d ? buf[cur][t - d] : 0);
    buf[cur ^ 1][t] = v;
    cur ^= 1;
    __syncthreads();
  }
  return cur;
}

// Exclusive prefix sum of 1024-element blocks in place (blockDim = 1024); each block's total
// goes to block_sums (the host scans those and adds them back with scan_add).
extern "C" __global__ void scan_blocks(u32* data, u32 n, u32* block_sums) {
  __shared__ u32 buf[2][1024];
  const u32 t = threadIdx.x, i = blockIdx.x * 1024 + t;
  const u32 x = i < n ? data[i] : 0;
  const u32 inclusive = buf[block_scan_1024(buf, t, x)][t];
  if (i < n) data[i] = inclusive - x;
  if (t == 1023) block_sums[blockIdx.x] = inclusive;
}

extern "C" __global__ void scan_add(u32* data, u32 n, const u32* block_offsets) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += block_offsets[i / 1024];
}
