// Memory access and occupancy (kernels/cuda-memory.md): a copy whose stride and offset set how
// many 32-byte sectors a warp's load touches, the same copy with 16-byte loads, a transpose
// through shared memory with and without a padded row, and a memory-bound sum with 1, 4 or 8
// independent accumulators per thread, whose registers set its occupancy.

// out[i] = in[i * stride + offset]: the store is always coalesced, the load touches
// min(32, 4 * stride) sectors per warp when offset is a multiple of 8 floats, one more when not.
extern "C" __global__ void copy_strided(const float* __restrict__ in, float* __restrict__ out,
                                        int n, int stride, int offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[(long long)i * stride + offset];
}

// The coalesced copy with one float4 (16 bytes) per load and store: four floats per thread, the
// last n % 4 done one by one. The pointers must be 16-byte aligned (cudaMalloc's are).
extern "C" __global__ void copy_vec4(const float* __restrict__ in, float* __restrict__ out,
                                     int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(in)[i];
  } else {
    for (int k = 0; k < 4; ++k)  // the last, partial group: at most three floats
      if (4 * i + k < n) out[4 * i + k] = in[4 * i + k];
  }
}

constexpr int kTile = 32, kRows = 8;  // a 32 x 32 tile, a block of 32 x 8 threads

// Naive transpose of a rows x cols matrix: each thread reads along a row (coalesced) and writes
// along a column of the output, 32 words of stride rows apart: one sector per thread.
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out,
                                           int rows, int cols) {
  int c = blockIdx.x * kTile + threadIdx.x, r0 = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows)
    if (r0 + j < rows && c < cols) out[c * rows + r0 + j] = in[(r0 + j) * cols + c];
}

// Transpose through a shared tile of Pitch words per row: read a 32 x 32 tile row by row
// (coalesced), then write it out column by column of the tile, so that the global store is
// coalesced too. The column read of the tile, tile[x][y], puts lane x at word x * Pitch: with
// Pitch = 32 every lane is in the same bank, with 33 each lane in its own.
template <int Pitch>
__device__ void transpose_tile(const float* __restrict__ in, float* __restrict__ out, int rows,
                               int cols) {
  __shared__ float tile[kTile][Pitch];
  int x = threadIdx.x, y = threadIdx.y;
  int c = blockIdx.x * kTile + x, r0 = blockIdx.y * kTile + y;
#pragma unroll
  for (int j = 0; j < kTile; j += kRows)
    if (r0 + j < rows && c < cols) tile[y + j][x] = in[(r0 + j) * cols + c];
  __syncthreads();
  int oc = blockIdx.y * kTile + x, or0 = blockIdx.x * kTile + y;  // output column, first row
#pragma unroll
  for (int j = 0; j < kTile; j += kRows)
    if (or0 + j < cols && oc < rows) out[(or0 + j) * rows + oc] = tile[x][y + j];
}

extern "C" __global__ void transpose_smem(const float* __restrict__ in, float* __restrict__ out,
                                          int rows, int cols) {
  transpose_tile<kTile>(in, out, rows, cols);
}

extern "C" __global__ void transpose_padded(const float* __restrict__ in,
                                            float* __restrict__ out, int rows, int cols) {
  transpose_tile<kTile + 1>(in, out, rows, cols);
}

// A memory-bound sum with K independent float4 accumulators per thread: each round of the
// grid-stride loop issues K 16-byte loads that do not depend on each other before the first add
// needs one, so K loads per thread are in flight at once. The last, partial round goes one load
// at a time. Each thread writes its partial sum to out[thread]; the caller adds the partials.
// The last n % 4 floats go to thread 0.
template <int K>
__device__ void sum_ilp(const float* __restrict__ x, float* __restrict__ out, int n) {
  const float4* x4 = reinterpret_cast<const float4*>(x);
  int n4 = n / 4, t = blockIdx.x * blockDim.x + threadIdx.x, step = gridDim.x * blockDim.x;
  float4 acc[K];
#pragma unroll
  for (int k = 0; k < K; ++k) acc[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  int i = t;
#pragma unroll 1  // as written: K is the only independent work (else ptxas unrolls it itself)
  for (; i + (K - 1) * step < n4; i += K * step) {
    float4 v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = x4[i + k * step];  // K loads, none waiting for another
#pragma unroll
    for (int k = 0; k < K; ++k)
      acc[k].x += v[k].x, acc[k].y += v[k].y, acc[k].z += v[k].z, acc[k].w += v[k].w;
  }
#pragma unroll 1
  for (; i < n4; i += step) {
    float4 v = x4[i];
    acc[0].x += v.x, acc[0].y += v.y, acc[0].z += v.z, acc[0].w += v.w;
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) s += (acc[k].x + acc[k].y) + (acc[k].z + acc[k].w);
  if (t == 0)
#pragma unroll 1
    for (int k = 4 * n4; k < n; ++k) s += x[k];
  out[t] = s;
}

extern "C" __global__ void sum_ilp1(const float* __restrict__ x, float* __restrict__ out,
                                    int n) {
  sum_ilp<1>(x, out, n);
}

extern "C" __global__ void sum_ilp4(const float* __restrict__ x, float* __restrict__ out,
                                    int n) {
  sum_ilp<4>(x, out, n);
}

extern "C" __global__ void sum_ilp8(const float* __restrict__ x, float* __restrict__ out,
                                    int n) {
  sum_ilp<8>(x, out, n);
}

// The same eight accumulators, with a promise to ptxas: blocks of at most 256 threads, and at
// least 6 of them resident per SM. 6 x 256 threads on 65,536 registers leave 42 a thread.
extern "C" __global__ __launch_bounds__(256, 6) void sum_ilp8_bounded(const float* __restrict__ x,
                                                                     float* __restrict__ out,
                                                                     int n) {
  sum_ilp<8>(x, out, n);
}
