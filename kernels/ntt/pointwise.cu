// The pointwise operations on Fr vectors that the quotient H needs, one thread an element (grid
// strided).

extern "C" __global__ void fr_mul(Fr* a, const Fr* b, u32 n) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = a[i] * b[i];
}

extern "C" __global__ void fr_sub(Fr* a, const Fr* b, u32 n) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = a[i] - b[i];
}

extern "C" __global__ void fr_scale(Fr* a, const Fr* c, u32 n) {
  const Fr k = *c;
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = a[i] * k;
}

// The quotient step of H, fused: a = (a·b − c)·z_inv, one pass over the three vectors.
extern "C" __global__ void fr_quotient(Fr* a, const Fr* b, const Fr* c, const Fr* z_inv, u32 n) {
  const Fr k = *z_inv;
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    a[i] = (a[i] * b[i] - c[i]) * k;
}
