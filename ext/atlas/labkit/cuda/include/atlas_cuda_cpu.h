// The CUDA thread model on a CPU, for checking the results of the book's .cu kernels without a GPU.
//
// The host compiler includes this header before a kernel file (g++ -include atlas_cuda_cpu.h), so
// that the same source nvcc compiles for sm_80 and sm_90 also compiles, unchanged, to host code.
// One block runs at a time; its threads are fibers (ucontext) of one OS thread, each running until
// it reaches a barrier. That makes a run deterministic and makes ordering bugs visible:
//
// * __syncthreads() parks a thread until every live thread of the block has arrived. Without it,
//   thread 0 runs all the way to the next barrier before thread 1 starts, so a read of a value
//   another thread should have written first sees the old one, every time.
// * __syncwarp(mask) and the __shfl_*_sync functions park a lane until every lane of its mask has
//   arrived; a shuffle's lanes write their value, meet, read, and meet again.
// * Warps do not run in lock step (as on Volta and later, "independent thread scheduling"): code
//   that relied on the warp's implicit synchrony, without __syncwarp, gives a wrong result here.
// * The scheduler can run threads (and blocks) in reverse order (atlas_set_order(1)): a correct
//   kernel gives the same result in both orders, a racy one usually does not.
// * A deadlock (threads waiting at different barriers, a lane that exited before a shuffle that
//   names it) stops the launch with a message instead of hanging.
//
// Blocks run one after another, so atomics need no lock and __shared__ can be a function-local
// static: every thread (fiber) of the running block sees the same array, as on the GPU.
#pragma once

#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ static

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  unsigned x, y, z;
};
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

namespace atlas_cuda {

enum class State { Runnable, AtBlockBarrier, AtWarpBarrier, Done };

struct Thread {
  ucontext_t context;
  std::vector<char> stack;
  uint3 index;
  unsigned lane = 0, warp = 0, mask = 0;
  State state = State::Runnable;
};

struct Launch {
  dim3 grid, block;
  uint3 block_index{0, 0, 0};
  std::vector<Thread> threads;
  std::vector<uint64_t> slots;  // one shuffle slot per thread
  Thread* current = nullptr;
  ucontext_t scheduler;
  void (*body)() = nullptr;
  std::string error;
  int reverse = 0;
  unsigned long barriers = 0;  // __syncthreads() completed, summed over blocks
};

inline Launch* launch_ = nullptr;
inline int order_ = 0;
inline std::string& last_error() {
  static std::string message;
  return message;
}
inline unsigned long& last_barriers() {
  static unsigned long count = 0;
  return count;
}

inline Thread& me() { return *launch_->current; }
inline void park(State state) {
  Thread& t = me();
  t.state = state;
  swapcontext(&t.context, &launch_->scheduler);
}
inline void fail(const std::string& message) {
  if (launch_->error.empty()) launch_->error = message;
  park(State::Done);
}

inline void block_barrier() { park(State::AtBlockBarrier); }
inline void warp_barrier(unsigned mask) {
  Thread& t = me();
  if (!(mask & (1u << t.lane)))
    fail("lane " + std::to_string(t.lane) + " called a warp-level sync with a mask that omits it");
  t.mask = mask;
  park(State::AtWarpBarrier);
}

inline void trampoline() {
  launch_->body();
  park(State::Done);
}

// Release the threads that may go on; false when nothing can (a deadlock).
inline bool release(Launch& L) {
  bool released = false, live = false;
  unsigned warps = (L.threads.size() + 31) / 32;
  for (unsigned w = 0; w < warps; ++w) {
    unsigned waiting = 0, done = 0;
    for (unsigned l = 0; l < 32 && w * 32 + l < L.threads.size(); ++l) {
      State s = L.threads[w * 32 + l].state;
      if (s == State::AtWarpBarrier) waiting |= 1u << l;
      if (s == State::Done) done |= 1u << l;
    }
    for (unsigned l = 0; l < 32 && w * 32 + l < L.threads.size(); ++l) {
      Thread& t = L.threads[w * 32 + l];
      if (t.state != State::AtWarpBarrier) continue;
      if (t.mask & done) {
        L.error = "lane " + std::to_string(l) + " of warp " + std::to_string(w) +
                  " waits at a warp-level sync for lanes that have exited (mask 0x" +
                  [](unsigned m) { char b[16]; std::snprintf(b, sizeof b, "%08x", m); return std::string(b); }(t.mask) +
                  ")";
        return false;
      }
      if ((t.mask & waiting) == t.mask) {
        t.state = State::Runnable;
        released = true;
      }
    }
  }
  if (released) return true;
  unsigned at_block = 0, at_warp = 0;
  for (Thread& t : L.threads) {
    if (t.state != State::Done) live = true;
    at_block += t.state == State::AtBlockBarrier;
    at_warp += t.state == State::AtWarpBarrier;
  }
  if (!live) return true;
  if (at_warp == 0 && at_block > 0) {  // every live thread is at __syncthreads(): release all
    ++L.barriers;
    for (Thread& t : L.threads)
      if (t.state == State::AtBlockBarrier) t.state = State::Runnable;
    return true;
  }
  L.error = "deadlock: " + std::to_string(at_block) + " threads wait at __syncthreads() while " +
            std::to_string(at_warp) + " wait at a warp-level sync";
  return false;
}

inline bool all_done(const Launch& L) {
  for (const Thread& t : L.threads)
    if (t.state != State::Done) return false;
  return true;
}

inline bool run_block(Launch& L) {
  const size_t n = L.threads.size();
  for (size_t i = 0; i < n; ++i) {
    Thread& t = L.threads[i];
    t.state = State::Runnable;
    getcontext(&t.context);
    t.context.uc_stack.ss_sp = t.stack.data();
    t.context.uc_stack.ss_size = t.stack.size();
    t.context.uc_link = &L.scheduler;
    makecontext(&t.context, trampoline, 0);
  }
  while (!all_done(L)) {
    for (size_t k = 0; k < n; ++k) {
      Thread& t = L.threads[L.reverse ? n - 1 - k : k];
      if (t.state != State::Runnable) continue;
      L.current = &t;
      swapcontext(&L.scheduler, &t.context);
      if (!L.error.empty()) return false;
    }
    if (!release(L)) return false;
  }
  return true;
}

// Run body() as a grid of `grid` blocks of `block` threads; returns 0, or 1 with the message in
// atlas_last_error().
inline int launch(dim3 grid, dim3 block, void (*body)()) {
  Launch L;
  L.grid = grid;
  L.block = block;
  L.body = body;
  L.reverse = order_;
  const unsigned n = block.x * block.y * block.z;
  if (n == 0 || n > 1024) {
    L.error = "a block of " + std::to_string(n) + " threads (CUDA allows 1 to 1024)";
  } else {
    L.threads.resize(n);
    L.slots.assign(n, 0);
    for (unsigned i = 0; i < n; ++i) {
      Thread& t = L.threads[i];
      t.stack.resize(64 * 1024);
      t.index = {i % block.x, (i / block.x) % block.y, i / (block.x * block.y)};
      t.lane = i % 32;
      t.warp = i / 32;
    }
  }
  launch_ = &L;
  const unsigned blocks = grid.x * grid.y * grid.z;
  for (unsigned k = 0; k < blocks && L.error.empty(); ++k) {
    unsigned b = L.reverse ? blocks - 1 - k : k;
    L.block_index = {b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y)};
    if (!run_block(L)) break;
  }
  last_error() = L.error;
  last_barriers() = L.barriers;
  launch_ = nullptr;
  return L.error.empty() ? 0 : 1;
}

template <class T>
inline uint64_t to_slot(T v) {
  static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}
template <class T>
inline T from_slot(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

// Every lane of `mask` publishes v, then reads the slot of lane `source(lane)`.
template <class T, class Source>
inline T exchange(unsigned mask, T v, Source source) {
  Thread& t = me();
  const size_t base = t.warp * 32;
  launch_->slots[base + t.lane] = to_slot(v);
  warp_barrier(mask);
  int src = source(static_cast<int>(t.lane));
  T result = v;
  if (src >= 0 && base + src < launch_->threads.size()) {
    if (!(mask & (1u << src)))
      fail("lane " + std::to_string(t.lane) + " shuffles from lane " + std::to_string(src) +
           ", which is not in the mask");
    result = from_slot<T>(launch_->slots[base + src]);
  }
  warp_barrier(mask);
  return result;
}

}  // namespace atlas_cuda

#define threadIdx (atlas_cuda::me().index)
#define blockIdx (atlas_cuda::launch_->block_index)
#define blockDim (atlas_cuda::launch_->block)
#define gridDim (atlas_cuda::launch_->grid)
constexpr int warpSize = 32;

inline void __syncthreads() { atlas_cuda::block_barrier(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { atlas_cuda::warp_barrier(mask); }
// Blocks run one after another on one OS thread, so every write is visible to every later read:
// the fences have nothing to order here (on a GPU they compile to MEMBAR; kernels/cuda-sync.md).
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}

template <class T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return atlas_cuda::exchange(mask, v, [=](int lane) {
    int src = lane + static_cast<int>(delta);
    return (lane % width) + static_cast<int>(delta) < width ? src : -1;
  });
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return atlas_cuda::exchange(mask, v, [=](int lane) {
    return (lane % width) >= static_cast<int>(delta) ? lane - static_cast<int>(delta) : -1;
  });
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  return atlas_cuda::exchange(mask, v, [=](int lane) {
    int src = lane ^ lane_mask;
    return src / width == lane / width ? src : -1;
  });
}
template <class T>
inline T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32) {
  return atlas_cuda::exchange(mask, v,
                              [=](int lane) { return (lane / width) * width + src_lane % width; });
}

// Warp votes: every lane of `mask` publishes its predicate, the lanes meet, each reads the mask's
// predicates, and they meet again (as a shuffle does), so a lane missing from the vote deadlocks.
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  atlas_cuda::Thread& t = atlas_cuda::me();
  const size_t base = t.warp * 32;
  atlas_cuda::launch_->slots[base + t.lane] = predicate != 0;
  atlas_cuda::warp_barrier(mask);
  unsigned votes = 0;
  for (unsigned l = 0; l < 32 && base + l < atlas_cuda::launch_->threads.size(); ++l)
    if ((mask & (1u << l)) && atlas_cuda::launch_->slots[base + l]) votes |= 1u << l;
  atlas_cuda::warp_barrier(mask);
  return votes;
}
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned mask, int predicate) {
  return __ballot_sync(mask, predicate) == (mask & __ballot_sync(mask, 1));
}
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __float_as_int(float x) {
  int i;
  std::memcpy(&i, &x, sizeof i);
  return i;
}
inline float __int_as_float(int i) {
  float x;
  std::memcpy(&x, &i, sizeof x);
  return x;
}

// Blocks run one at a time on one OS thread, so a read-modify-write is already atomic. The value
// is not deduced (type_identity_t), so atomicAdd(unsigned*, int) converts as CUDA's overloads do.
template <class T>
inline T atomicAdd(T* address, std::type_identity_t<T> v) {
  T old = *address;
  *address = old + v;
  return old;
}
template <class T>
inline T atomicMax(T* address, std::type_identity_t<T> v) {
  T old = *address;
  *address = old > v ? old : v;
  return old;
}
template <class T>
inline T atomicExch(T* address, std::type_identity_t<T> v) {
  T old = *address;
  *address = v;
  return old;
}
template <class T>
inline T atomicCAS(T* address, std::type_identity_t<T> compare, std::type_identity_t<T> v) {
  T old = *address;
  if (old == compare) *address = v;
  return old;
}

inline float __expf(float x) { return std::exp(x); }
inline float __fdividef(float a, float b) { return a / b; }
using std::exp;
using std::fmax;
using std::fmaxf;
using std::sqrt;
