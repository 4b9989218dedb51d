"""The labs' shared harness: units and the one reference attention every check compares with.

Harness code (see :mod:`atlas.teach.taught`) is what a lab needs but a page does not teach:
units, seeding, references to compare against. Keeping one causal attention here, instead of
one per chapter, means every chapter's kernel is checked against the same plain definition.
"""

from __future__ import annotations

import math
import unittest
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from atlas.bookroot import package_book

if TYPE_CHECKING:
    import torch

GIB = 2**30  # bytes in a gibibyte: memory sizes in the book are binary units
MIB = 2**20


class UpstreamUnavailable(unittest.SkipTest):
    """An upstream's objects at the pin cannot be read here (run ``make upstreams``); a lab that
    needs them is skipped, visibly, with this message."""


@dataclass(frozen=True)
class PinnedFiles:
    """The files of one upstream at the book's pin, read from its object store.

    The stores never fetch on a read, so a file a lab reads must be named as a literal path in
    the labkit for ``make upstreams`` to bring it (:mod:`atlas.upstream.labpaths`); a file that
    is absent raises :class:`UpstreamUnavailable`, which skips the lab visibly.
    """

    name: str
    pin: str
    _read: Callable[[str], bytes]

    def label(self, digits: int = 8) -> str:
        """``name@sha``, the pin cut to ``digits`` hex digits (for messages and module names)."""
        return f"{self.name}@{self.pin[:digits]}"

    def read_bytes(self, path: str) -> bytes:
        return self._read(path)

    def read_text(self, path: str) -> str:
        return self._read(path).decode("utf-8")


def pinned(name: str, root: Path | None = None) -> PinnedFiles:
    """The reader of upstream ``name`` at its pin in the book at ``root`` (default: this one).

    The one place in the labkit that opens an object store; every chapter's harness reads
    upstream code through it.
    """
    try:
        from atlas.git.store import MissingObject, store_for
        from atlas.upstream.registry import load_registry, object_store
    except ImportError as exc:  # pragma: no cover - the book ships atlas.upstream
        raise UpstreamUnavailable(f"atlas.upstream is unavailable ({exc})") from exc
    root = root or package_book()
    upstream = load_registry(root).get(name)
    if upstream is None or upstream.pin is None:
        raise UpstreamUnavailable(f"{name} is not registered with a pin in {root}")
    git_dir = object_store(root, upstream)
    if git_dir is None:
        raise UpstreamUnavailable(f"no object store for {name}; run `make upstreams`")
    store, pin = store_for(git_dir), _pin_override(name) or upstream.pin

    def read(path: str) -> bytes:
        try:
            return store.read_blob(pin, path)
        except (MissingObject, FileNotFoundError) as exc:
            raise UpstreamUnavailable(
                f"{name}@{pin[:8]} {path}: {exc}; run `make upstreams`"
            ) from exc

    return PinnedFiles(name, pin, read)


def _pin_override(name: str) -> str | None:
    """The commit ``drift NAME REV --labs`` runs the labs at (``ATLAS_UPSTREAM_PINS``,
    ``name=FULLSHA,...``), instead of the pin: a broken loader is seen before the bump."""
    import os

    for item in os.environ.get("ATLAS_UPSTREAM_PINS", "").split(","):
        key, _, commit = item.partition("=")
        if key.strip() == name and commit.strip():
            return commit.strip()
    return None


def read_upstream(name: str, path: str, *, label_with_path: bool = False) -> tuple[str, str]:
    """The text of ``path`` in upstream ``name`` at its pin, and a label for messages:
    ``name@sha8``, or ``name@sha8/path`` with ``label_with_path``."""
    files = pinned(name)
    label = files.label()
    return files.read_text(path), f"{label}/{path}" if label_with_path else label


def causal_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_positions: torch.Tensor | None = None,
    scale: float | None = None,
) -> torch.Tensor:
    """Softmax attention with a causal mask, written as the definition, on one device.

    ``q`` is ``[queries, heads, dim]``; ``k`` and ``v`` are ``[keys, kv_heads, dim]`` with
    ``heads`` a multiple of ``kv_heads`` (grouped-query attention: each key/value head serves
    ``heads / kv_heads`` query heads). Query ``i`` sits at position ``q_positions[i]`` (default:
    the last ``queries`` positions, as in prefill or decode) and sees keys ``0..position``.
    Returns ``[queries, heads, dim]``.
    """
    import torch

    queries, heads, kv_heads = q.shape[0], q.shape[1], k.shape[1]
    if q_positions is None:
        q_positions = torch.arange(k.shape[0] - queries, k.shape[0])
    scale = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    group = heads // kv_heads
    kh = k.repeat_interleave(group, dim=1)
    vh = v.repeat_interleave(group, dim=1)
    scores = torch.einsum("qhd,khd->hqk", q, kh) * scale
    visible = torch.arange(k.shape[0])[None, :] <= q_positions[:, None]
    scores = scores.masked_fill(~visible[None], -math.inf)
    return torch.einsum("hqk,khd->qhd", torch.softmax(scores, dim=-1), vh)
