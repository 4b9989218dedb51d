// Synchronisation and atomics (kernels/cuda-sync.md): a barrier that orders shared memory, the
// same kernel without it, three ways to count the elements above a threshold with atomics, an
// atomic float maximum built from atomicCAS, the three memory fences, and a single-pass sum that
// the last block to finish completes. Every kernel is extern "C" so that the name in ptxas's
// report and in the SASS is the name written here; blocks have kThreads threads.

constexpr unsigned kThreads = 256;
constexpr unsigned kFull = 0xffffffffu;

// Each block rotates its slice of x left by one: thread t writes its element to shared memory,
// then reads the element thread t + 1 wrote. The barrier orders every write before every read.
extern "C" __global__ void rotate_block(const float* __restrict__ x, float* __restrict__ out,
                                        int n) {
  __shared__ float s[kThreads];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * kThreads + tid;
  s[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  float v = s[(tid + 1) % kThreads];
  if (i < n) out[i] = v;
}

// The same kernel without the barrier: thread t may read s[t + 1] before thread t + 1 wrote it
// (a data race, so the result is undefined, not merely stale).
extern "C" __global__ void rotate_block_racy(const float* __restrict__ x, float* __restrict__ out,
                                             int n) {
  __shared__ float s[kThreads];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * kThreads + tid;
  s[tid] = i < n ? x[i] : 0.0f;
  float v = s[(tid + 1) % kThreads];
  if (i < n) out[i] = v;
}

// Counting, 1: every thread whose element passes adds 1 to one global counter.
extern "C" __global__ void count_global(const float* __restrict__ x, unsigned* count, int n,
                                        float threshold) {
  unsigned i = blockIdx.x * kThreads + threadIdx.x;
  if (i < n && x[i] > threshold) atomicAdd(count, 1u);
}

// Counting, 1 in float: the same count with a float counter, which ptxas does not aggregate (a
// float sum depends on its order), so every passing thread sends its own atomic to the one word.
extern "C" __global__ void count_global_float(const float* __restrict__ x, float* count, int n,
                                              float threshold) {
  unsigned i = blockIdx.x * kThreads + threadIdx.x;
  if (i < n && x[i] > threshold) atomicAdd(count, 1.0f);
}

// Counting, 2: the warp votes, and one lane adds the number of lanes that passed.
extern "C" __global__ void count_warp_aggregated(const float* __restrict__ x, unsigned* count,
                                                 int n, float threshold) {
  unsigned i = blockIdx.x * kThreads + threadIdx.x;
  bool pass = i < n && x[i] > threshold;
  unsigned votes = __ballot_sync(kFull, pass);  // every lane reaches the vote
  if (threadIdx.x % 32 == 0 && votes != 0) atomicAdd(count, __popc(votes));
}

// Counting, 3: threads add into a shared counter, and one thread per block adds it to the global.
extern "C" __global__ void count_per_block(const float* __restrict__ x, unsigned* count, int n,
                                           float threshold) {
  __shared__ unsigned block_count;
  unsigned i = blockIdx.x * kThreads + threadIdx.x;
  if (threadIdx.x == 0) block_count = 0;
  __syncthreads();
  if (i < n && x[i] > threshold) atomicAdd(&block_count, 1u);
  __syncthreads();
  if (threadIdx.x == 0 && block_count != 0) atomicAdd(count, block_count);
}

// There is no atomicMax for float: read the word, compute the maximum, and publish it with
// atomicCAS only if no other thread changed the word in between; otherwise retry with its value.
__device__ float atomic_max_float(float* address, float v) {
  int* word = reinterpret_cast<int*>(address);
  int old = *word;
  while (__int_as_float(old) < v) {
    int seen = atomicCAS(word, old, __float_as_int(v));
    if (seen == old) break;  // ours was written
    old = seen;              // another thread won; compare with its value
  }
  return __int_as_float(old);
}

extern "C" __global__ void max_cas(const float* __restrict__ x, float* out, int n) {
  unsigned i = blockIdx.x * kThreads + threadIdx.x;
  if (i < n) atomic_max_float(out, x[i]);
}

// The three fences, one each, for reading their instructions in the SASS.
extern "C" __global__ void fences(int* flag) {
  flag[0] = 1;
  __threadfence_block();
  flag[1] = 1;
  __threadfence();
  flag[2] = 1;
  __threadfence_system();
  flag[3] = 1;
}

__device__ float warp_total(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(kFull, v, offset);
  return v;
}

// The block's sum, in every thread of warp 0 (lane 0 holds it).
__device__ float block_total(float v) {
  __shared__ float warp_sums[kThreads / 32];
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_total(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = lane < kThreads / 32 ? warp_sums[lane] : 0.0f;
  return warp_total(v);
}

// A single-pass sum: every block writes its partial sum, fences, and takes a ticket; the block
// that takes the last ticket sums the partials. The fence makes the partial visible to every
// block before the ticket that announces it; without it the last block could read a stale one.
extern "C" __global__ void sum_last_block(const float* __restrict__ x, float* partial,
                                          unsigned* tickets, float* out, int n) {
  __shared__ bool last;
  unsigned i = blockIdx.x * kThreads + threadIdx.x;
  float v = block_total(i < n ? x[i] : 0.0f);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = v;
    __threadfence();
    unsigned ticket = atomicAdd(tickets, 1u);
    last = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;  // the whole block leaves together: `last` is the same for all its threads
  __threadfence();    // the reader's half: no load of a partial moves before the ticket's atomic
  float w = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads) w += partial[b];
  __syncthreads();  // warp_sums is reused by the second block_total
  w = block_total(w);
  if (threadIdx.x == 0) {
    out[0] = w;
    *tickets = 0;  // ready for the next launch
  }
}
