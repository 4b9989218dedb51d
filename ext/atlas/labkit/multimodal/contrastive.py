"""Contrastive image-text losses: CLIP's softmax and SigLIP's sigmoid."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def clip_loss(image: torch.Tensor, text: torch.Tensor, temperature: float) -> torch.Tensor:
    """Symmetric cross-entropy over the batch's similarity matrix: image i should pick text i
    among all texts, and text i image i. Embeddings are L2-normalised first."""
    image = F.normalize(image, dim=-1)
    text = F.normalize(text, dim=-1)
    logits = image @ text.T / temperature
    labels = torch.arange(image.shape[0])
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


def siglip_loss(image: torch.Tensor, text: torch.Tensor, scale: float, bias: float) -> torch.Tensor:
    """Pairwise sigmoid loss: every (image, text) pair is an independent binary problem,
    positive on the diagonal, negative elsewhere; summed over pairs, divided by batch size."""
    image = F.normalize(image, dim=-1)
    text = F.normalize(text, dim=-1)
    logits = scale * image @ text.T + bias
    signs = 2 * torch.eye(image.shape[0]) - 1
    return -F.logsigmoid(signs * logits).sum() / image.shape[0]
