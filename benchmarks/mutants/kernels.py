"""Mutations of the kernels chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "matmul-no-k-masks",
        "kernels",
        "kernels/matmul.py",
        "        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)\n"
        "        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)\n",
        "        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M), other=0.0)\n"
        "        b = tl.load(b_ptrs, mask=(offs_n[None, :] < N), other=0.0)\n",
        ("kernels/gemm",),
        "the Triton GEMM drops both K masks (the ragged last K tile reads past the edge)",
    ),
    Mutation(
        "triton-flash-no-alpha",
        "kernels",
        "kernels/flash.py",
        "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)",
        "        acc = acc + tl.dot(p.to(v.dtype), v)",
        ("kernels/attention-kernel",),
        "the Triton attention kernel does not rescale its accumulator by alpha",
    ),
    Mutation(
        "cute-composition-stride-unscaled",
        "kernels",
        "kernels/cute.py",
        "            strided.append((n // rest, r * rest))\n",
        "            strided.append((n // rest, r))\n",
        ("kernels/cute",),
        "composition divides a mode's shape by the stride but leaves its stride unscaled",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "sectors-last-byte",
        "kernels",
        "kernels/gpu_model.py",
        "        first, last = a // sector, (a + access_bytes - 1) // sector",
        "        first, last = a // sector, (a + access_bytes) // sector",
        ("kernels/index",),
        "an access ending on a sector boundary touches the next sector too",
    ),
    Mutation(
        "warps-floor",
        "kernels",
        "kernels/gpu_model.py",
        "    warps = -(-threads_per_block // sm.warp_size)",
        "    warps = threads_per_block // sm.warp_size",
        ("kernels/problems", "kernels/index"),
        "a block's warps round down (a partial warp is free)",
    ),
    Mutation(
        "complement-last-floor",
        "kernels",
        "kernels/cute.py",
        "    result.append((-(-cotarget // covered), covered))",
        "    result.append((cotarget // covered, covered))",
        ("kernels/problems", "kernels/cute"),
        "the complement's last mode rounds down and misses the tail",
    ),
    Mutation(
        "cosize-off-by-one",
        "kernels",
        "kernels/cute.py",
        "        return self(self.size() - 1) + 1",
        "        return self(self.size() - 1)",
        ("kernels/problems", "kernels/cute"),
        "a layout's cosize is one short",
    ),
    # --- CUDA C kernels (issue 42): a barrier, a warp sync, an index, a bound ---
    Mutation(
        "cuda-block-sum-no-barrier",
        "kernels",
        "cuda/kernels/reduce.cu",
        "  if (lane == 0) warp_sums[warp] = v;\n  __syncthreads();\n",
        "  if (lane == 0) warp_sums[warp] = v;\n",
        ("kernels/cuda-reduce",),
        "block_sum reads the warps' sums without waiting for them to be written",
    ),
    Mutation(
        "cuda-last-warp-no-syncwarp",
        "kernels",
        "cuda/kernels/reduce.cu",
        "    float v = s[tid] + s[tid + offset];\n    __syncwarp();\n    s[tid] = v;\n    __syncwarp();\n",
        "    float v = s[tid] + s[tid + offset];\n    s[tid] = v;\n",
        ("kernels/cuda-reduce",),
        "the last warp goes back to implicit warp synchrony (no __syncwarp between read and write)",
    ),
    Mutation(
        "cuda-grid-stride-block-stride",
        "kernels",
        "cuda/kernels/reduce.cu",
        "  for (unsigned i = blockIdx.x * kThreads + tid; i < n; i += kThreads * gridDim.x) v += x[i];",
        "  for (unsigned i = blockIdx.x * kThreads + tid; i < n; i += kThreads) v += x[i];",
        ("kernels/cuda-reduce",),
        "the grid-stride loop strides by a block instead of the grid (blocks overlap)",
    ),
    Mutation(
        "cuda-vector-add4-tail",
        "kernels",
        "cuda/kernels/vector_add.cu",
        "  if (4 * i + 3 < n) {",
        "  if (4 * i < n) {",
        ("kernels/cuda-execution",),
        "the float4 path runs for a partial last group and reads past the end",
    ),
]
