"""Contrastive image-text losses: CLIP's softmax and SigLIP's sigmoid."""

from __future__ import annotations

import torch
import torch.nn.functional as F

ROLE = "taught"


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


def siglip_loss_chunked(
    image: torch.Tensor, text: torch.Tensor, scale: float, bias: float, devices: int
) -> tuple[torch.Tensor, int]:
    """SigLIP's loss computed as ``devices`` ranks would: each holds ``B / devices`` pairs,
    scores its images against the text block it currently holds, then passes that block to
    its neighbour (a collective permute), ``devices`` rounds in all. No rank ever holds more
    than one ``b x b`` block of logits. Returns the loss and the text rows each rank sent."""
    image = F.normalize(image, dim=-1)
    text = F.normalize(text, dim=-1)
    imgs, txts = image.chunk(devices), list(text.chunk(devices))
    total, sent = image.new_zeros(()), 0
    for step in range(devices):
        for rank in range(devices):
            owner = (rank + step) % devices  # whose texts this rank holds at this step
            logits = scale * imgs[rank] @ txts[owner].T + bias
            signs = -torch.ones_like(logits)
            if owner == rank:
                signs += 2 * torch.eye(logits.shape[0])
            total = total - F.logsigmoid(signs * logits).sum()
        if step < devices - 1:
            sent += txts[0].shape[0]  # every rank sends its current block to rank - 1
    return total / image.shape[0], sent
