// Softmax over the rows of a rows x cols matrix (kernels/cuda-softmax.md): naive, safe and online
// with one warp per row, and online with one block per row. Blocks have kThreads threads.
#include <cmath>

constexpr unsigned kThreads = 256;
constexpr unsigned kWarps = kThreads / 32;
constexpr unsigned kAll = 0xffffffffu;

// Butterfly reductions: after the five exchanges every lane holds the result, not only lane 0.
__device__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(kAll, v, offset));
  return v;
}

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(kAll, v, offset);
  return v;
}

// Naive: sum of exp(x), then exp(x) / sum. Two passes over the row, and exp overflows to
// infinity for inputs above about 88, which turns the row into NaN.
extern "C" __global__ void softmax_naive(const float* __restrict__ x, float* __restrict__ y,
                                         int rows, int cols) {
  int row = blockIdx.x * kWarps + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;  // the whole warp leaves together
  const float* xr = x + static_cast<size_t>(row) * cols;
  float* yr = y + static_cast<size_t>(row) * cols;
  float sum = 0.0f;
  for (int j = lane; j < cols; j += 32) sum += expf(xr[j]);
  sum = warp_sum(sum);
  for (int j = lane; j < cols; j += 32) yr[j] = expf(xr[j]) / sum;
}

// Safe: subtract the row's maximum first, so every exponent is at most 0. Three passes.
extern "C" __global__ void softmax_safe(const float* __restrict__ x, float* __restrict__ y, int rows,
                                        int cols) {
  int row = blockIdx.x * kWarps + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* xr = x + static_cast<size_t>(row) * cols;
  float* yr = y + static_cast<size_t>(row) * cols;
  float m = -INFINITY;
  for (int j = lane; j < cols; j += 32) m = fmaxf(m, xr[j]);
  m = warp_max(m);
  float sum = 0.0f;
  for (int j = lane; j < cols; j += 32) sum += expf(xr[j] - m);
  sum = warp_sum(sum);
  for (int j = lane; j < cols; j += 32) yr[j] = expf(xr[j] - m) / sum;
}

// A partial softmax: the maximum m of some inputs and d, the sum of exp(x - m) over them.
struct MD {
  float m, d;
};

// Two partials combine into the partial of their union: rescale each sum to the larger maximum.
// The merge is associative and commutative, so partials can be merged in any tree.
__device__ MD md_merge(MD a, MD b) {
  if (a.m == -INFINITY) return b;  // an empty partial (no input yet)
  if (b.m == -INFINITY) return a;
  float m = fmaxf(a.m, b.m);
  return {m, a.d * expf(a.m - m) + b.d * expf(b.m - m)};
}

__device__ MD warp_merge(MD v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = md_merge(v, {__shfl_xor_sync(kAll, v.m, offset), __shfl_xor_sync(kAll, v.d, offset)});
  return v;
}

// Online: maximum and sum in one pass (each element a partial {x, 1} merged into the running
// one), then the output pass. Two passes, safe like the three-pass version.
extern "C" __global__ void softmax_online(const float* __restrict__ x, float* __restrict__ y,
                                          int rows, int cols) {
  int row = blockIdx.x * kWarps + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* xr = x + static_cast<size_t>(row) * cols;
  float* yr = y + static_cast<size_t>(row) * cols;
  MD v{-INFINITY, 0.0f};
  for (int j = lane; j < cols; j += 32) v = md_merge(v, {xr[j], 1.0f});
  v = warp_merge(v);
  for (int j = lane; j < cols; j += 32) yr[j] = expf(xr[j] - v.m) / v.d;
}

// Online, one block per row: 256 threads share a long row; the warps' partials meet in shared
// memory and are merged again by every warp, so all threads know the row's maximum and sum.
extern "C" __global__ void softmax_online_block(const float* __restrict__ x, float* __restrict__ y,
                                                int rows, int cols) {
  __shared__ float ms[kWarps], ds[kWarps];
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const float* xr = x + static_cast<size_t>(blockIdx.x) * cols;
  float* yr = y + static_cast<size_t>(blockIdx.x) * cols;
  MD v{-INFINITY, 0.0f};
  for (int j = threadIdx.x; j < cols; j += kThreads) v = md_merge(v, {xr[j], 1.0f});
  v = warp_merge(v);
  if (lane == 0) ms[warp] = v.m, ds[warp] = v.d;
  __syncthreads();
  v = warp_merge(lane < kWarps ? MD{ms[lane], ds[lane]} : MD{-INFINITY, 0.0f});
  for (int j = threadIdx.x; j < cols; j += kThreads) yr[j] = expf(xr[j] - v.m) / v.d;
}
