// The host program around vector_add (kernels/cuda-execution.md): nvcc compiles it whole, kernel
// and host code, and links the CUDA runtime. Only nvcc builds this file; the CPU model and the
// SASS labs use vector_add.cu alone.
#include <cstdio>

#include "vector_add.cu"

// Every runtime call returns an error code; CHECK prints where and which, and gives up. A launch
// returns nothing: a bad configuration shows in cudaGetLastError, a fault while the kernel ran in
// the next call that waits for it.
#define CHECK(call)                                                        \
  do {                                                                     \
    cudaError_t err_ = (call);                                             \
    if (err_ != cudaSuccess) {                                             \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__,          \
                   cudaGetErrorName(err_), cudaGetErrorString(err_));      \
      return 1;                                                            \
    }                                                                      \
  } while (0)

// Managed memory is visible to host and device alike, so no explicit copies are needed here.
int main() {
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  float *a, *b, *c;
  CHECK(cudaMallocManaged(&a, bytes));
  CHECK(cudaMallocManaged(&b, bytes));
  CHECK(cudaMallocManaged(&c, bytes));
  for (int i = 0; i < n; ++i) a[i] = 1.0f, b[i] = 2.0f;
  const int threads = 256, blocks = (n + threads - 1) / threads;
  vector_add<<<blocks, threads>>>(a, b, c, n);
  CHECK(cudaGetLastError());       // was the launch itself valid?
  CHECK(cudaDeviceSynchronize());  // did the kernel run to the end?
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += c[i] != 3.0f;
  std::printf("%d of %d elements wrong\n", wrong, n);
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  return wrong != 0;
}
