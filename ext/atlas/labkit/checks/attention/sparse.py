"""Checks of the labs of ``attention/sparse.md``.

The chapter's checks: What the attention labs need but the pages do not teach.
"""

from __future__ import annotations

import ast
import math
from typing import Optional

import torch

from atlas.labkit.checks.attention.common import rearrange, repeat
from atlas.labkit.pinned import Definitions, definitions, package, pinned

ROLE = "check"


def upstream_functions(
    name: str, path: str, names: list[str], namespace: dict | None = None
) -> Definitions:
    """Execute only the top-level functions ``names`` of an upstream file, in ``namespace``.

    For files whose other imports (a framework, a compiled extension) cannot load on a CPU
    machine while the functions themselves need only torch.
    """
    env = {
        "torch": torch,
        "math": math,
        "Optional": Optional,
        "rearrange": rearrange,
        "repeat": repeat,
        **(namespace or {}),
    }
    return definitions(name, path, names, env)


MEGATRON_DSA = "megatron/core/transformer/experimental_attention_variant/dsa.py"
# The sibling modules of dsa.py that its reference functions call, in dependency order (each a
# path literal, so that ``make upstreams`` fetches it: atlas.upstream.labpaths), and the two small
# Megatron modules they import (a dataclass and an enum), all run whole at the pin.
_MEGATRON_DSA_SIBLINGS = {
    "dsa_layout": "megatron/core/transformer/experimental_attention_variant/dsa_layout.py",
    "dsa_masking": "megatron/core/transformer/experimental_attention_variant/dsa_masking.py",
}
_MEGATRON_DSA_IMPORTS = ("megatron/core/packed_seq_params.py", "megatron/core/transformer/enums.py")


def megatron_dsa(names: list[str]) -> Definitions:
    """Megatron-LM's DSA reference functions ``names`` at the pin, with the sibling modules they
    call (``dsa_masking``, ``dsa_layout``) run whole from the same commit.

    dsa.py itself imports the distributed stack, so only its functions run; the siblings it
    imports from its package are real modules, not stand-ins, so the masks the check compares
    against are Megatron's own. Their one other import, ``get_pg_size`` (context parallelism,
    a path the checks never take), is a stand-in. At a pin whose dsa.py imports none of the
    siblings, none is loaded.
    """
    import types

    folder = MEGATRON_DSA.rpartition("/")[0]
    imported = _imported_siblings(pinned("megatron").read_text(MEGATRON_DSA), folder)
    siblings = {s: path for s, path in _MEGATRON_DSA_SIBLINGS.items() if s in imported}
    namespace: dict = {}
    if siblings:
        utils = types.ModuleType("megatron.core.utils")
        utils.get_pg_size = lambda group=None: 1  # type: ignore[attr-defined]
        files = [*_MEGATRON_DSA_IMPORTS, *siblings.values()]
        tree = package("megatron", files, {"megatron.core.utils": utils})
        namespace = {
            s: tree[path.removesuffix(".py").replace("/", ".")] for s, path in siblings.items()
        }
    return upstream_functions("megatron", MEGATRON_DSA, names, namespace)


def _imported_siblings(text: str, folder: str) -> set[str]:
    """The names ``from <folder as a package> import ...`` brings in, in the file ``text``."""
    dotted = folder.replace("/", ".")
    return {
        alias.name
        for node in ast.parse(text).body
        if isinstance(node, ast.ImportFrom) and node.module == dotted
        for alias in node.names
    }
