// The R1CS check on the device: the first row r < rows with a[r]·b[r] ≠ c[r], where a, b, c
// are A·z, B·z, C·z (spmv.cu). Each failing row lowers `first` by an atomicMin, so the host
// reads back one word: the first failing row, or 0xffffffff (set before the launch) when
// every row holds. Rows are fewer than 2^32 − 1 (buffers index with 32 bits).
//
// A thread skips the product of a row past a failure already found: an unsatisfied witness
// then costs little more than its first failure, a satisfied one a product a row.

extern "C" __global__ void r1cs_check(const Fr* __restrict__ a, const Fr* __restrict__ b, const Fr* __restrict__ c,
                                      u32 rows, u32* first) {
  for (u32 r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
    if (r > *(volatile u32*)first) break;
    if (a[r] * b[r] != c[r]) atomicMin(first, r);
  }
}
