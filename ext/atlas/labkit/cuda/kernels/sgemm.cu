// SGEMM, C = A B for row-major fp32 matrices, A M x K, B K x N (kernels/cuda-sgemm.md): the naive
// kernel, shared-memory tiles, 1-D register blocking, 2-D register blocking with scalar loads,
// and 2-D register blocking with vector loads and a transposed tile of A. All blocks have 256
// threads.

// Naive: one thread per element of C, a 16 x 16 block of threads per 16 x 16 tile of C. Each
// thread reads a row of A and a column of B from global memory: 2K loads for K multiply-adds.
extern "C" __global__ void sgemm_naive(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
  int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

constexpr int kTile = 16;

// Shared-memory tiling: the block stages a 16 x 16 tile of A and one of B in shared memory, then
// every thread reads its row and column of the tiles from there. Each element loaded from global
// memory is used 16 times. Two barriers per tile: after the load (the tile is complete) and after
// the products (nobody still reads it when the next load overwrites it).
extern "C" __global__ void sgemm_smem(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[kTile][kTile], Bs[kTile][kTile];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    As[ty][tx] = row < M && k0 + tx < K ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = k0 + ty < K && col < N ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

constexpr int kBM = 64, kBN = 64, kBK = 16, kTM = 4, kTN = 4;

// 1-D register blocking: a 64 x 64 tile of C per block of 256 threads, a column of 16 outputs per
// thread (rows 16 (t / 64) to 16 (t / 64) + 15 of column t % 64), accumulated in 16 registers. Per
// step of k the thread reads one value of B into a register and 16 of A, and does 16 multiply-adds
// with that one B value. Loads are scalar, 4 elements of each tile per thread, coalesced along rows.
// Requires M and N multiples of 64 and K of 16 (the launcher checks it).
extern "C" __global__ void sgemm_reg1d(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
  constexpr int kT1 = 16;  // outputs per thread, one column
  __shared__ float As[kBM][kBK], Bs[kBK][kBN];
  int t = threadIdx.x;
  int tr = t / kBN, tc = t % kBN;  // this thread's column of 16 outputs
  const float* Ab = A + blockIdx.y * kBM * K;
  const float* Bb = B + blockIdx.x * kBN;
  float acc[kT1] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
#pragma unroll
    for (int l = 0; l < 4; ++l) {
      int ar = t / kBK + l * (256 / kBK), br = t / kBN + l * (256 / kBN);
      As[ar][t % kBK] = Ab[ar * K + k0 + t % kBK];
      Bs[br][tc] = Bb[(k0 + br) * N + tc];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float b = Bs[k][tc];
#pragma unroll
      for (int i = 0; i < kT1; ++i) acc[i] += As[tr * kT1 + i][k] * b;
    }
    __syncthreads();
  }
  float* Cb = C + (blockIdx.y * kBM + tr * kT1) * N + blockIdx.x * kBN + tc;
#pragma unroll
  for (int i = 0; i < kT1; ++i) Cb[i * N] = acc[i];
}

// 2-D register blocking with the loads of sgemm_reg1d: the 4 x 4 sub-tile and outer product of
// sgemm_reg2d, but scalar global loads and A's tile stored as it is in memory (row-major).
extern "C" __global__ void sgemm_reg2d_scalar(const float* __restrict__ A,
                                              const float* __restrict__ B, float* __restrict__ C,
                                              int M, int N, int K) {
  __shared__ float As[kBM][kBK], Bs[kBK][kBN];
  int t = threadIdx.x;
  int tr = t / (kBN / kTN), tc = t % (kBN / kTN);  // this thread's 4 x 4 sub-tile
  const float* Ab = A + blockIdx.y * kBM * K;
  const float* Bb = B + blockIdx.x * kBN;
  float acc[kTM][kTN] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
#pragma unroll
    for (int l = 0; l < 4; ++l) {
      int ar = t / kBK + l * (256 / kBK), br = t / kBN + l * (256 / kBN);
      As[ar][t % kBK] = Ab[ar * K + k0 + t % kBK];
      Bs[br][t % kBN] = Bb[(k0 + br) * N + t % kBN];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float av[kTM], bv[kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i) av[i] = As[tr * kTM + i][k];
#pragma unroll
      for (int j = 0; j < kTN; ++j) bv[j] = Bs[k][tc * kTN + j];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
  float* Cb = C + (blockIdx.y * kBM + tr * kTM) * N + blockIdx.x * kBN + tc * kTN;
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) Cb[i * N + j] = acc[i][j];
}

// 2-D register blocking: a 64 x 64 tile of C per block of 256 threads, a 4 x 4 sub-tile of it per
// thread, accumulated in 16 registers. Per step of k the thread reads 4 values of A and 4 of B
// from shared memory and does 16 multiply-adds: an outer product. A's tile is stored transposed
// (k-major) so that the 4 values a thread needs are adjacent. Global loads are float4.
// Requires M and N multiples of 64 and K of 16 (the launcher checks it).
extern "C" __global__ void sgemm_reg2d(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[kBK][kBM], Bs[kBK][kBN];
  int t = threadIdx.x;
  int tr = t / (kBN / kTN), tc = t % (kBN / kTN);  // this thread's 4 x 4 sub-tile
  const float* Ab = A + blockIdx.y * kBM * K;
  const float* Bb = B + blockIdx.x * kBN;
  float acc[kTM][kTN] = {};
  // loading: A's 64 x 16 tile is 256 float4 (4 per row), B's 16 x 64 tile 256 float4 (16 per row)
  int ar = t / (kBK / 4), ac = (t % (kBK / 4)) * 4;
  int br = t / (kBN / 4), bc = (t % (kBN / 4)) * 4;
  for (int k0 = 0; k0 < K; k0 += kBK) {
    float4 a = *reinterpret_cast<const float4*>(Ab + ar * K + k0 + ac);
    As[ac + 0][ar] = a.x, As[ac + 1][ar] = a.y, As[ac + 2][ar] = a.z, As[ac + 3][ar] = a.w;
    *reinterpret_cast<float4*>(&Bs[br][bc]) =
        *reinterpret_cast<const float4*>(Bb + (k0 + br) * N + bc);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float4 a4 = *reinterpret_cast<const float4*>(&As[k][tr * kTM]);
      float4 b4 = *reinterpret_cast<const float4*>(&Bs[k][tc * kTN]);
      float av[kTM] = {a4.x, a4.y, a4.z, a4.w}, bv[kTN] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
  float* Cb = C + (blockIdx.y * kBM + tr * kTM) * N + blockIdx.x * kBN + tc * kTN;
#pragma unroll
  for (int i = 0; i < kTM; ++i)
    *reinterpret_cast<float4*>(Cb + i * N) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
}
