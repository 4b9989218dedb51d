"""NCCL's own cost model, compiled from ``src/graph/tuning.cc`` at the pin.

The page ``hpc/collectives.md`` derives a ring/tree crossover from the alpha-beta model. That
crossover is ours; the one NCCL acts on comes out of ``ncclTopoTuneModel`` (the latency and
bandwidth tables it fills at init) and ``ncclTopoGetAlgoTime`` (the time of one call). So that a
lab can put the two side by side without typing NCCL's constants into the book, this module
reads ``tuning.cc`` and the tuner plugin headers from NCCL's git objects at the pin, compiles
them with the system C++ compiler against the small stand-in headers below (which declare only
the fields of ``ncclComm`` and ``ncclTopoGraph`` that ``tuning.cc`` touches) and calls the two
functions through ``ctypes``.

The stand-ins are ours: they describe a topology (nodes, GPUs per node, channels, per-channel
bandwidth, NVLink inside a node) the way NCCL's topology search would hand it to the tuner. The
constants, the refinements and the correction table are NCCL's, read at the pin.
"""

from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from atlas.labkit.pinned import UpstreamUnavailable, pinned

ROLE = "check"

#: NCCL's indices (src/include/plugin/nccl_tuner.h and src/include/nccl_common.h at the pin).
ALGOS = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
PROTOS = ("LL", "LL128", "Simple")
FUNCS = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")

#: The files compiled, read at the pin; literal paths, so that ``make upstreams`` brings them.
_UPSTREAM_FILES = {
    "tuning.cc": "src/graph/tuning.cc",
    "nccl_common.h": "src/include/nccl_common.h",
    "nccl_tuner.h": "src/include/plugin/nccl_tuner.h",
    "tuner/tuner_v2.h": "src/include/plugin/tuner/tuner_v2.h",
    "tuner/tuner_v3.h": "src/include/plugin/tuner/tuner_v3.h",
    "tuner/tuner_v4.h": "src/include/plugin/tuner/tuner_v4.h",
    "tuner/tuner_v5.h": "src/include/plugin/tuner/tuner_v5.h",
    "tuner/tuner_v6.h": "src/include/plugin/tuner/tuner_v6.h",
}

# Stand-ins for the headers tuning.cc includes. Values of NCCL's macros are the pin's
# (graph.h, topo.h, device.h, comm.h); the structs hold only the fields tuning.cc reads.
_NCCL_H = b"""#pragma once
typedef enum { ncclSuccess = 0, ncclUnhandledCudaError = 1, ncclSystemError = 2,
  ncclInternalError = 3, ncclInvalidArgument = 4, ncclInvalidUsage = 5 } ncclResult_t;
"""

_CORE_H = b"""#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <strings.h>
#include <sys/types.h>
#include "nccl.h"
#define WARP_SIZE 32
#define CUDART_VERSION 12080
#define INFO(...) do {} while (0)
#define WARN(...) do {} while (0)
#define NCCLCHECK(call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) return r_; } while (0)
#define DIVUP(x, y) (((x) + (y) - 1) / (y))
#define NCCL_PARAM(name, env, deftVal) \\
  static int64_t ncclParam##name() { const char* s = getenv("NCCL_" env); \\
    return s ? strtoll(s, nullptr, 0) : (int64_t)(deftVal); }
static inline const char* ncclGetEnv(const char* name) { return getenv(name); }
static inline long log2i(long n) { return n <= 0 ? -1 : 63 - __builtin_clzl((unsigned long)n); }
"""

_DEVICE_H = b"""#pragma once
#define NCCL_MAX_NTHREADS 640
#define NCCL_SIMPLE_MAX_NTHREADS 512
#define NCCL_LL_MAX_NTHREADS 512
#define NCCL_LL128_MAX_NTHREADS 640
#define NCCL_MAX_DEV_WORK_BATCH_COLLS 8
"""

_TOPO_H = b"""#pragma once
#define PCI_BW 12.0
#define LINK_NVL 1
#define PATH_NVB 2
#define PATH_PXB 5
#define PATH_PXN 7
#define NCCL_TOPO_CPU_ARCH_X86 1
#define NCCL_TOPO_CPU_ARCH_POWER 2
#define NCCL_TOPO_CPU_VENDOR_INTEL 1
#define NCCL_TOPO_CPU_VENDOR_AMD 2
#define NCCL_TOPO_CPU_VENDOR_MIXED 4
#define NCCL_TOPO_PATTERN_TREE 3
#define NCCL_NET_DEVICE_HOST 0
struct ncclTopoGraph { float bwIntra, bwInter, latencyInter; int nChannels, typeIntra, typeInter,
  sameChannels, pattern; };
struct ncclTopoSystem;
static inline ncclResult_t ncclTopoGetNvsCount(ncclTopoSystem*, int* n) {
  *n = 1; return ncclSuccess; }
"""

_COMM_H = b"""#pragma once
#include "nccl_tuner.h"
#define NCCL_LL_THREAD_THRESHOLD 8
#define NCCL_LL128_THREAD_THRESHOLD 8
#define NCCL_SIMPLE_THREAD_THRESHOLD 64
extern const char* ncclFuncStr[NCCL_NUM_FUNCTIONS];
extern const char* ncclAlgoStr[NCCL_NUM_ALGORITHMS];
extern const char* ncclProtoStr[NCCL_NUM_PROTOCOLS];
struct ncclTopoSystem;
struct ncclCollNetStandIn { void* iallgather; void* ireducescatter; };
struct ncclNodeRanksStandIn { int localRanks; };
struct ncclConfigStandIn { int collnetEnable; };
struct ncclComm {
  int rank, nRanks, nNodes, nChannels, minCompCap, cpuArch, cpuVendor, netDeviceType;
  int maxTreePattern, collNetHeadsNum, collNetChainSupport;
  int* rankToNode; ncclNodeRanksStandIn* nodeRanks; ncclCollNetStandIn* ncclCollNet;
  ncclConfigStandIn config; ncclTopoSystem* topo;
  ncclTunerConstants_t tunerConstants;
  int maxThreads[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  float latencies[NCCL_NUM_FUNCTIONS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  float bandwidths[NCCL_NUM_FUNCTIONS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  ssize_t threadThresholds[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
};
"""

# One communicator per call of atlas_tune: NVLink inside a node, the network between nodes,
# every algorithm's graph with the same channels and bandwidths, CollNet off (no SHARP switch),
# NVLS graphs given no channels (the tuner then skips NVLS and NVLS Tree), one process per rank.
_SHIM = b"""#include "tuning.cc"
const char* ncclFuncStr[NCCL_NUM_FUNCTIONS] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
  "AllReduce"};
const char* ncclAlgoStr[NCCL_NUM_ALGORITHMS] = {"Tree", "Ring", "CollNetDirect", "CollNetChain",
  "NVLS",
  "NVLSTree", "PAT"};
const char* ncclProtoStr[NCCL_NUM_PROTOCOLS] = {"LL", "LL128", "Simple"};
static ncclComm theComm;
static ncclTopoGraph theGraphs[NCCL_NUM_ALGORITHMS];
extern "C" int atlas_tune(int nNodes, int ppn, int nChannels, float bwPerChannel, int compCap,
                          int typeInter, float* lat, float* bw) {
  ncclComm* c = &theComm;
  memset(c, 0, sizeof(*c));
  c->nNodes = nNodes; c->nRanks = nNodes * ppn; c->nChannels = nChannels;
  c->minCompCap = compCap; c->cpuArch = NCCL_TOPO_CPU_ARCH_X86;
  c->cpuVendor = NCCL_TOPO_CPU_VENDOR_INTEL; c->netDeviceType = NCCL_NET_DEVICE_HOST;
  c->maxTreePattern = 1; /* NCCL_TOPO_PATTERN_BALANCED_TREE */
  ncclTopoGraph* g[NCCL_NUM_ALGORITHMS];
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) {
    theGraphs[a] = ncclTopoGraph{bwPerChannel, bwPerChannel, 0.0f, nChannels, LINK_NVL, typeInter,
                                 1, 1};
    if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE) theGraphs[a].nChannels = 0;
    g[a] = &theGraphs[a];
  }
  NCCLCHECK(ncclTopoInitTunerConstants(c));
  NCCLCHECK(ncclTopoTuneModel(c, compCap, compCap, g));
  memcpy(lat, c->latencies, sizeof(c->latencies));
  memcpy(bw, c->bandwidths, sizeof(c->bandwidths));
  return 0;
}
extern "C" float atlas_time(int coll, int algo, int proto, size_t nBytes, int numPipeOps) {
  float t = -1.0f;
  ncclTopoGetAlgoTime(&theComm, coll, algo, proto, nBytes, numPipeOps, &t);
  return t;
}
"""

_STAND_INS = {
    "nccl.h": _NCCL_H,
    "core.h": _CORE_H,
    "device.h": _DEVICE_H,
    "topo.h": _TOPO_H,
    "comm.h": _COMM_H,
    "shim.cc": _SHIM,
}


def _library() -> tuple[ctypes.CDLL, str]:
    """Build (once per content) and load the shared library; return it with NCCL's pin."""
    files = pinned("nccl")
    sources = {name: files.read_bytes(path) for name, path in _UPSTREAM_FILES.items()}
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        raise UpstreamUnavailable("no C++ compiler to build NCCL's tuning.cc")
    digest = hashlib.sha256()
    for name, text in sorted({**sources, **_STAND_INS}.items()):
        digest.update(name.encode() + b"\0" + text)
    out = Path(tempfile.gettempdir()) / f"atlas-nccl-tuning-{digest.hexdigest()[:16]}"
    lib = out / "libtuning.so"
    if not lib.exists():
        (out / "tuner").mkdir(parents=True, exist_ok=True)
        for name, text in {**sources, **_STAND_INS}.items():
            (out / name).write_bytes(text)
        tmp = out / f"libtuning.{id(out)}.so"
        cmd = [cxx, "-std=c++17", "-shared", "-fPIC", "-O1", "-w", "-DNCCL_OS_LINUX"]
        subprocess.run(
            [*cmd, "-I", str(out), "-o", str(tmp), str(out / "shim.cc")],
            check=True,
            capture_output=True,
        )
        tmp.replace(lib)
    so = ctypes.CDLL(str(lib))
    so.atlas_tune.restype = ctypes.c_int
    so.atlas_tune.argtypes = [ctypes.c_int] * 3 + [ctypes.c_float] + [ctypes.c_int] * 2
    so.atlas_tune.argtypes += [ctypes.POINTER(ctypes.c_float)] * 2
    so.atlas_time.restype = ctypes.c_float
    so.atlas_time.argtypes = [ctypes.c_int] * 3 + [ctypes.c_size_t, ctypes.c_int]
    return so, files.pin


@dataclass(frozen=True, eq=False)
class Tuner:
    """NCCL's tuner for one communicator: its tables and its time of a call.

    ``latency[f][a][p]`` in microseconds and ``bandwidth[f][a][p]`` in GB/s (algorithm
    bandwidth; 0 means disabled) are what ``ncclTopoTuneModel`` filled; :meth:`time` is
    ``ncclTopoGetAlgoTime`` (microseconds), which adds the size-dependent corrections.
    """

    nodes: int
    ppn: int
    shape: tuple[int, float, int, int]
    latency: tuple[tuple[tuple[float, ...], ...], ...]
    bandwidth: tuple[tuple[tuple[float, ...], ...], ...]
    label: str
    so: ctypes.CDLL = field(repr=False)

    def time(self, algo: str, proto: str, nbytes: int, func: str = "AllReduce") -> float:
        """NCCL's predicted time in microseconds, or -1 when the pair is disabled."""
        self._tune()
        a, p, f = ALGOS.index(algo), PROTOS.index(proto), FUNCS.index(func)
        return float(self.so.atlas_time(f, a, p, int(nbytes), 1))

    def choose(self, nbytes: int, func: str = "AllReduce") -> tuple[str, str]:
        """The (algorithm, protocol) of least predicted time: enqueue.cc's minimum over the
        table (NVLS and CollNet are off in this topology)."""
        times = {
            (a, p): t for a in ALGOS for p in PROTOS if (t := self.time(a, p, nbytes, func)) >= 0.0
        }
        return min(times, key=times.__getitem__)

    def _tune(self) -> None:
        # The library keeps one communicator; re-tune it if another Tuner was made since.
        if getattr(self.so, "atlas_current", None) is not self:
            _fill(self.so, self.nodes, self.ppn, *self._shape)
            self.so.atlas_current = self

    @property
    def _shape(self) -> tuple[int, float, int, int]:
        return self.__dict__["_shape_"]


def _fill(
    so: ctypes.CDLL, nodes: int, ppn: int, channels: int, bw: float, cc: int, inter: int
) -> tuple[list[float], list[float]]:
    size = len(FUNCS) * len(ALGOS) * len(PROTOS)
    lat, bwt = (ctypes.c_float * size)(), (ctypes.c_float * size)()
    if so.atlas_tune(nodes, ppn, channels, bw, cc, inter, lat, bwt) != 0:
        raise RuntimeError("ncclTopoTuneModel failed")
    return list(lat), list(bwt)


def nccl_tuner(
    nodes: int,
    ppn: int,
    bus_gbps: float = 50.0,
    channels: int = 4,
    compcap: int = 90,
    path_to_nic: int = 5,
) -> Tuner:
    """NCCL's tuner for ``nodes`` nodes of ``ppn`` GPUs on NVLink, ``channels`` channels that
    share ``bus_gbps`` GB/s of bus bandwidth per GPU, GPUs of compute capability ``compcap``
    (90: Hopper) and a GPU-to-NIC path of type ``path_to_nic`` (5: PATH_PXB, one PCIe switch)."""
    so, pin = _library()
    shape = (channels, bus_gbps / channels, compcap, path_to_nic)
    lat, bw = _fill(so, nodes, ppn, *shape)
    na, np_ = len(ALGOS), len(PROTOS)

    def nest(v: list[float]) -> tuple[tuple[tuple[float, ...], ...], ...]:
        return tuple(
            tuple(tuple(v[(f * na + a) * np_ : (f * na + a + 1) * np_]) for a in range(na))
            for f in range(len(FUNCS))
        )

    tuner = Tuner(nodes, ppn, shape, nest(lat), nest(bw), f"nccl@{pin[:7]} src/graph/tuning.cc", so)
    so.atlas_current = tuner
    return tuner


def crossover(tuner: Tuner, a: str, b: str, proto: str = "Simple") -> list[int]:
    """The sizes (powers of two and the three quarter-steps between, 1 KiB to 4 GiB) at which
    the cheaper of algorithms ``a`` and ``b`` changes under NCCL's model."""
    sizes = [int(2**e * f) for e in range(10, 32) for f in (1, 1.25, 1.5, 1.75)] + [2**32]
    flips, prev = [], None
    for s in sizes:
        win = tuner.time(a, proto, s) <= tuner.time(b, proto, s)
        if prev is not None and win != prev:
            flips.append(s)
        prev = win
    return flips
