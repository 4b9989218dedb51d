"""Connecting an encoder to a language model: a LLaVA-style projector and placeholder fill."""

from __future__ import annotations

import torch
from torch import nn

ROLE = "taught"


class Projector(nn.Module):
    """LLaVA-1.5's connector: two linear layers with a GELU, from the encoder width to the
    language model's hidden size, applied to every patch embedding independently."""

    def __init__(self, vision_width: int, lm_hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(vision_width, lm_hidden)
        self.fc2 = nn.Linear(lm_hidden, lm_hidden)

    def forward(self, patches: torch.Tensor) -> torch.Tensor:
        return self.fc2(nn.functional.gelu(self.fc1(patches)))


def expand_placeholders(ids: list[int], image_token: int, per_image: int) -> list[int]:
    """The prompt carries one placeholder per image; the processor repeats it ``per_image``
    times so that the sequence has one position per image embedding."""
    out: list[int] = []
    for t in ids:
        out.extend([t] * per_image if t == image_token else [t])
    return out


def insert_image_embeddings(
    ids: torch.Tensor,
    text_embeddings: torch.Tensor,
    image_embeddings: torch.Tensor,
    image_token: int,
) -> torch.Tensor:
    """Replace the embedding at every placeholder position, in order, by the next image
    embedding. ids: [B, S]; text_embeddings: [B, S, H]; image_embeddings: [N, H] with N the
    number of placeholders in the whole batch. Returns [B, S, H]."""
    mask = ids == image_token
    if int(mask.sum()) != image_embeddings.shape[0]:
        raise ValueError("one image embedding per placeholder is required")
    out = text_embeddings.clone()
    out[mask] = image_embeddings.to(out.dtype)
    return out
