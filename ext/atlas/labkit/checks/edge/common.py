"""Checking code that the edge chapter's pages share: ``edge/index.md``, ``edge/bounds.md``,
``edge/gguf.md``, ``edge/problems.md``.

Two references independent of the taught code: ggml's own header at the pin, whose
``static_assert`` lines state each block's size in terms of its fields, and the ``gguf`` package
(gguf-py, maintained in llama.cpp's repository), whose NumPy quantisers, dequantisers, size
table and GGUF writer and reader were written apart from ours.
"""

from __future__ import annotations

import ast
import operator
import re

import numpy as np

from atlas.labkit.pinned import read

ROLE = "check"

UPSTREAM = "ggml"
COMMON_H = "src/ggml-common.h"

# sizeof() of the field types the asserts use (ggml_half is uint16_t, ggml_half2 two of them)
_SIZEOF = {"ggml_half": 2, "ggml_half2": 4, "uint8_t": 1, "int8_t": 1, "uint32_t": 4}
_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.floordiv,
}
# the block element count of each type, by the header's macro name
ELEMS_MACRO = {"Q4_0": "QK4_0", "Q8_0": "QK8_0", "Q4_K": "QK_K"}


def _eval(expr: str, names: dict[str, int]) -> int:
    """Evaluate a C size expression of +, -, *, / (integer), macros and sizeof(type)."""
    expr = re.sub(r"sizeof\((\w+)\)", lambda m: str(_SIZEOF[m.group(1)]), expr)

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Constant):
            return int(node.value)
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.BinOp):
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError(f"unsupported C expression {expr!r}")

    return ev(ast.parse(expr, mode="eval").body)


def header_blocks() -> dict[str, tuple[int, int]]:
    """(elements, bytes) of Q4_0, Q8_0 and Q4_K, read from ggml-common.h at the pin."""
    text, _ = read(UPSTREAM, COMMON_H)
    macros = {m.group(1): int(m.group(2)) for m in re.finditer(r"#define (\w+) (\d+)\b", text)}
    wanted = {"block_" + t.lower().replace("_k", "_K"): t for t in ELEMS_MACRO}
    sizes = {
        wanted[m.group(1)]: _eval(m.group(2), macros)
        for m in re.finditer(r"static_assert\(sizeof\((\w+)\) == ([^,]+),", text)
        if m.group(1) in wanted
    }
    return {t: (macros[q], sizes[t]) for t, q in ELEMS_MACRO.items()}


def gguf_sizes() -> dict[str, tuple[int, int]]:
    """(elements, bytes) of each block type as gguf-py's GGML_QUANT_SIZES gives them."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    return {t: GGML_QUANT_SIZES[GGMLQuantizationType[t]] for t in ELEMS_MACRO}


def gguf_quantize(x: np.ndarray, name: str) -> np.ndarray:
    """gguf-py's quantiser for type ``name``: bytes, one row of blocks per row of ``x``."""
    from gguf.constants import GGMLQuantizationType
    from gguf.quants import quantize

    return quantize(np.asarray(x, dtype=np.float32), GGMLQuantizationType[name])


def gguf_dequantize(blocks: np.ndarray, name: str) -> np.ndarray:
    """gguf-py's dequantiser for type ``name``, flattened."""
    from gguf.constants import GGMLQuantizationType
    from gguf.quants import dequantize

    return dequantize(
        np.ascontiguousarray(blocks).reshape(1, -1), GGMLQuantizationType[name]
    ).reshape(-1)


def test_weights(n: int, seed: int = 0) -> np.ndarray:
    """Weights with a heavy tail (Student-t), as trained matrices have, and a few exact ties."""
    rng = np.random.default_rng(seed)
    x = rng.standard_t(df=4, size=n).astype(np.float32) * np.float32(0.02)
    x[7] = -x[3]  # a tie in magnitude within the first block: the first one wins the scale
    return x


def gguf_byte_shape(shape: tuple[int, ...], name: str) -> tuple[int, ...]:
    """The byte shape gguf-py gives a tensor of ``shape`` stored as type ``name``."""
    from gguf.constants import GGMLQuantizationType
    from gguf.quants import quant_shape_to_byte_shape

    return tuple(quant_shape_to_byte_shape(shape, GGMLQuantizationType[name]))
