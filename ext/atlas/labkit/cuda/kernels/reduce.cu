// The reduce ladder: eight kernels that sum a float array, each one change away from the one
// before (kernels/cuda-reduce.md). Every kernel is extern "C" so that the name in ptxas's report
// and in the SASS is the name written here. Blocks have kThreads threads; the steps before the
// grid-stride one write one partial sum per block to out[blockIdx.x], the last adds it into
// out[0]. Every load is guarded, so n need not be a multiple of anything.

constexpr unsigned kThreads = 256;

// Step 1: interleaved addressing. At stride s, the threads whose index is a multiple of 2s add
// the element s to their right; half of the active threads of every warp idle (divergence), and
// the modulo by a value known only at run time costs an integer division.
extern "C" __global__ void reduce_interleaved(const float* __restrict__ x, float* __restrict__ out,
                                              int n) {
  __shared__ float s[kThreads];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + tid;
  s[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// Step 2: sequential addressing. At stride s, threads 0..s-1 add the element s away: the active
// threads are contiguous, so whole warps either work or skip, and consecutive threads read
// consecutive words (no bank conflict).
extern "C" __global__ void reduce_sequential(const float* __restrict__ x, float* __restrict__ out,
                                             int n) {
  __shared__ float s[kThreads];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + tid;
  s[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// Step 3: first add during load. Each block covers 2 * blockDim.x elements and every thread adds
// two of them on the way in, so half as many blocks do the same tree.
extern "C" __global__ void reduce_first_add(const float* __restrict__ x, float* __restrict__ out,
                                            int n) {
  __shared__ float s[kThreads];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * (2 * blockDim.x) + tid;
  float v = i < n ? x[i] : 0.0f;
  if (i + blockDim.x < n) v += x[i + blockDim.x];
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// The last warp of the 2007 version: no barrier, because the 32 lanes of a warp were assumed to
// run in lock step; volatile keeps every value in shared memory instead of a register. Since
// Volta, lanes may run apart, and nothing here orders one lane's write before another's read.
__device__ void warp_reduce_volatile(volatile float* s, unsigned tid) {
  s[tid] += s[tid + 32];
  s[tid] += s[tid + 16];
  s[tid] += s[tid + 8];
  s[tid] += s[tid + 4];
  s[tid] += s[tid + 2];
  s[tid] += s[tid + 1];
}

// The last warp today: every lane reads, the warp meets, every lane writes, the warp meets.
__device__ void warp_reduce_synced(float* s, unsigned tid) {
  for (unsigned offset = 32; offset > 0; offset >>= 1) {
    float v = s[tid] + s[tid + offset];
    __syncwarp();
    s[tid] = v;
    __syncwarp();
  }
}

// Step 4 (2007): unrolled last warp. The tree stops at 64 elements; the first warp finishes
// alone, without __syncthreads.
extern "C" __global__ void reduce_last_warp_volatile(const float* __restrict__ x,
                                                     float* __restrict__ out, int n) {
  __shared__ float s[kThreads];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * (2 * blockDim.x) + tid;
  float v = i < n ? x[i] : 0.0f;
  if (i + blockDim.x < n) v += x[i + blockDim.x];
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 32; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) warp_reduce_volatile(s, tid);
  if (tid == 0) out[blockIdx.x] = s[0];
}

// Step 4 (today): the same, with __syncwarp() where the 2007 code assumed lock step.
extern "C" __global__ void reduce_last_warp(const float* __restrict__ x, float* __restrict__ out,
                                            int n) {
  __shared__ float s[kThreads];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * (2 * blockDim.x) + tid;
  float v = i < n ? x[i] : 0.0f;
  if (i + blockDim.x < n) v += x[i + blockDim.x];
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 32; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) warp_reduce_synced(s, tid);
  if (tid == 0) out[blockIdx.x] = s[0];
}

// Step 5: full unroll. With the block size a compile-time constant the loop has a known trip
// count, the compiler unrolls it, and the loop's counter, compare and branch disappear.
extern "C" __global__ void reduce_unrolled(const float* __restrict__ x, float* __restrict__ out,
                                           int n) {
  __shared__ float s[kThreads];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * (2 * kThreads) + tid;
  float v = i < n ? x[i] : 0.0f;
  if (i + kThreads < n) v += x[i + kThreads];
  s[tid] = v;
  __syncthreads();
#pragma unroll
  for (unsigned stride = kThreads / 2; stride > 32; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) warp_reduce_synced(s, tid);
  if (tid == 0) out[blockIdx.x] = s[0];
}

// Step 6: grid-stride loop. A fixed grid (a few blocks per SM) walks the whole array, each thread
// summing many elements in a register before the tree, which then runs once per block instead of
// once per 512 elements.
extern "C" __global__ void reduce_grid_stride(const float* __restrict__ x, float* __restrict__ out,
                                              int n) {
  __shared__ float s[kThreads];
  unsigned tid = threadIdx.x;
  float v = 0.0f;
  for (unsigned i = blockIdx.x * kThreads + tid; i < n; i += kThreads * gridDim.x) v += x[i];
  s[tid] = v;
  __syncthreads();
#pragma unroll
  for (unsigned stride = kThreads / 2; stride > 32; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) warp_reduce_synced(s, tid);
  if (tid == 0) out[blockIdx.x] = s[0];
}

// A warp's sum by shuffles: five steps, each lane adding the value of the lane `offset` above
// it, register to register; lane 0 ends with the sum of all 32.
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// A block's sum: each warp by shuffles, the warps' sums through 32 bytes of shared memory, then
// every warp by shuffles again (only thread 0's result is used; letting all warps do it keeps
// every warp converged). One __syncthreads().
__device__ float block_sum(float v) {
  __shared__ float warp_sums[kThreads / 32];
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  return warp_sum(lane < kThreads / 32 ? warp_sums[lane] : 0.0f);
}

// Step 7: warp shuffle. The grid-stride load, then block_sum: no shared-memory tree at all.
extern "C" __global__ void reduce_shuffle(const float* __restrict__ x, float* __restrict__ out,
                                          int n) {
  float v = 0.0f;
  for (unsigned i = blockIdx.x * kThreads + threadIdx.x; i < n; i += kThreads * gridDim.x)
    v += x[i];
  v = block_sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// Step 8: one atomic per block. Each block adds its sum into out[0] (zeroed before the launch),
// so one launch gives the total and no second pass over the partial sums is needed.
extern "C" __global__ void reduce_atomic(const float* __restrict__ x, float* __restrict__ out,
                                         int n) {
  float v = 0.0f;
  for (unsigned i = blockIdx.x * kThreads + threadIdx.x; i < n; i += kThreads * gridDim.x)
    v += x[i];
  v = block_sum(v);
  if (threadIdx.x == 0) atomicAdd(out, v);
}

// Not a step: block_sum with the second warp sum in warp 0 only, as PyTorch's BlockReduceSum
// does. Correct (the condition is the same for all 32 lanes of a warp), but ptxas cannot prove
// that, so it also compiles a path for a warp that arrives diverged (BRA.DIV, extra shuffles).
__device__ float block_sum_warp0(float v) {
  __shared__ float warp_sums[kThreads / 32];
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) {
    warp_sums[warp] = v;
  }
  __syncthreads();
  v = lane < kThreads / 32 ? warp_sums[lane] : 0.0f;
  if (warp == 0) v = warp_sum(v);
  return v;
}

extern "C" __global__ void reduce_shuffle_warp0(const float* __restrict__ x,
                                                float* __restrict__ out, int n) {
  float v = 0.0f;
  for (unsigned i = blockIdx.x * kThreads + threadIdx.x; i < n; i += kThreads * gridDim.x)
    v += x[i];
  v = block_sum_warp0(v);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
