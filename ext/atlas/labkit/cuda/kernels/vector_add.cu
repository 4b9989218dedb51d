// A first kernel (kernels/cuda-execution.md): c = a + b over n floats, one element per thread,
// then four per thread with 16-byte loads. extern "C" keeps the names unmangled in the SASS.
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's element
  if (i < n) c[i] = a[i] + b[i];                  // the last block may run past n
}

// Four elements per thread: one float4 (16 bytes) per load and store. The pointers must be
// 16-byte aligned (cudaMalloc's are); the last n % 4 elements are done one by one.
extern "C" __global__ void vector_add4(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    float4 x = reinterpret_cast<const float4*>(a)[i];
    float4 y = reinterpret_cast<const float4*>(b)[i];
    reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  } else {
    for (int k = 0; k < 4; ++k)  // the last, partial group: at most three elements
      if (4 * i + k < n) c[4 * i + k] = a[4 * i + k] + b[4 * i + k];
  }
}
