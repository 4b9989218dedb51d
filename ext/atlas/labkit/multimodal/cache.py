"""An encoder cache: identical images are encoded once, keyed by a hash of their pixels."""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import torch

ROLE = "taught"


class EncoderCache:
    """Least-recently-used cache of encoder outputs, keyed by the SHA-256 of the image bytes.
    ``hits`` and ``misses`` count lookups; ``encode`` runs only on a miss."""

    def __init__(self, encode, capacity: int):
        self.encode = encode
        self.capacity = capacity
        self.entries: OrderedDict[str, torch.Tensor] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(image: torch.Tensor) -> str:
        return hashlib.sha256(image.contiguous().numpy().tobytes()).hexdigest()

    def __call__(self, image: torch.Tensor) -> torch.Tensor:
        k = self.key(image)
        if k in self.entries:
            self.hits += 1
            self.entries.move_to_end(k)
            return self.entries[k]
        self.misses += 1
        out = self.encode(image)
        self.entries[k] = out
        if len(self.entries) > self.capacity:
            self.entries.popitem(last=False)
        return out
