// SGEMM, the two steps after register blocking (kernels/cuda-sgemm.md): double buffering and warp
// tiling, on the same 64 x 64 x 16 block tile, 4 x 4 register tile and float4 loads as
// sgemm_reg2d in sgemm.cu. Row-major fp32, A M x K, B K x N; blocks of 256 threads. Both require
// M and N multiples of 64 and K of 16 (the launcher checks it).

constexpr int kBM = 64, kBN = 64, kBK = 16, kTM = 4, kTN = 4;

// One tile step of the outer products: 16 values of k, each two LDS.128 (4 of A's transposed tile
// at row offset ra, 4 of B's at column offset cb) and 16 multiply-adds into acc.
__device__ __forceinline__ void outer_products(const float (*As)[kBM], const float (*Bs)[kBN],
                                               int ra, int cb, float (&acc)[kTM][kTN]) {
#pragma unroll
  for (int k = 0; k < kBK; ++k) {
    float4 a4 = *reinterpret_cast<const float4*>(&As[k][ra]);
    float4 b4 = *reinterpret_cast<const float4*>(&Bs[k][cb]);
    float av[kTM] = {a4.x, a4.y, a4.z, a4.w}, bv[kTN] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
      for (int j = 0; j < kTN; ++j) acc[i][j] += av[i] * bv[j];
  }
}

// Stores the float4 of A (transposed, four scalar stores) and the float4 of B a thread loaded.
__device__ __forceinline__ void store_tiles(float (*As)[kBM], float (*Bs)[kBN], float4 a, float4 b,
                                            int ar, int ac, int br, int bc) {
  As[ac + 0][ar] = a.x, As[ac + 1][ar] = a.y, As[ac + 2][ar] = a.z, As[ac + 3][ar] = a.w;
  *reinterpret_cast<float4*>(&Bs[br][bc]) = b;
}

// The K loop of both kernels, double-buffered: two copies of each tile in shared memory. While
// the block multiplies the tiles of step t out of buffer t % 2, each thread loads its float4s of
// step t + 1 into registers (issued before the products in the source; ptxas places them among
// the products) and stores them into the other buffer afterwards. One barrier per step: it both
// publishes buffer (t + 1) % 2 and tells every thread that nobody reads buffer t % 2 any more,
// which the next step overwrites. The last tile, with nothing left to load, is multiplied after
// the loop. ra and cb place the thread's register tile in the block tile.
__device__ __forceinline__ void k_loop(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int N, int K, int ra, int cb) {
  __shared__ float As[2][kBK][kBM], Bs[2][kBK][kBN];
  int t = threadIdx.x;
  const float* Ab = A + blockIdx.y * kBM * K;
  const float* Bb = B + blockIdx.x * kBN;
  int ar = t / (kBK / 4), ac = (t % (kBK / 4)) * 4;
  int br = t / (kBN / 4), bc = (t % (kBN / 4)) * 4;
  float acc[kTM][kTN] = {};
  store_tiles(As[0], Bs[0], *reinterpret_cast<const float4*>(Ab + ar * K + ac),
              *reinterpret_cast<const float4*>(Bb + br * N + bc), ar, ac, br, bc);
  __syncthreads();
  int cur = 0;
  for (int k0 = kBK; k0 < K; k0 += kBK) {
    float4 a = *reinterpret_cast<const float4*>(Ab + ar * K + k0 + ac);
    float4 b = *reinterpret_cast<const float4*>(Bb + (k0 + br) * N + bc);
    outer_products(As[cur], Bs[cur], ra, cb, acc);
    store_tiles(As[cur ^ 1], Bs[cur ^ 1], a, b, ar, ac, br, bc);
    __syncthreads();
    cur ^= 1;
  }
  outer_products(As[cur], Bs[cur], ra, cb, acc);
  float* Cb = C + (blockIdx.y * kBM + ra) * N + blockIdx.x * kBN + cb;
#pragma unroll
  for (int i = 0; i < kTM; ++i)
    *reinterpret_cast<float4*>(Cb + i * N) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
}

// Double buffering on sgemm_reg2d's thread layout: thread t owns rows 4 (t / 16) and columns
// 4 (t % 16) of the block tile, so a warp (two rows of 16 threads) covers an 8 x 64 strip.
extern "C" __global__ void sgemm_dbuf(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int M, int N, int K) {
  int t = threadIdx.x;
  k_loop(A, B, C, N, K, (t / (kBN / kTN)) * kTM, (t % (kBN / kTN)) * kTN);
}

constexpr int kWarpsN = 4, kWM = 32, kWN = 16, kLanesN = kWN / kTN;  // 2 x 4 warps of 32 x 16

// Warp tiling: the 64 x 64 block tile is cut into eight 32 x 16 warp tiles (2 rows of 4), and
// each lane's 4 x 4 register tile lies inside its warp's tile (8 rows of 4 lanes). At one k a
// warp reads 32 values of A and 16 of B, against 8 and 64 for sgemm_dbuf's 8 x 64 strip.
extern "C" __global__ void sgemm_warptile(const float* __restrict__ A, const float* __restrict__ B,
                                          float* __restrict__ C, int M, int N, int K) {
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int ra = (warp / kWarpsN) * kWM + (lane / kLanesN) * kTM;
  int cb = (warp % kWarpsN) * kWN + (lane % kLanesN) * kTN;
  k_loop(A, B, C, N, K, ra, cb);
}
