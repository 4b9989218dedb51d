"""Checks of the labs of ``serving/journey.md``.

nano-vllm's own sampler, run from its source at the pin, against the distribution it is
meant to sample.
"""

from __future__ import annotations

import torch

from atlas.labkit.pinned import definitions

ROLE = "check"


def nano_vllm_sampler_frequencies(
    probs: torch.Tensor, temperature: float, n: int, seed: int = 0
) -> torch.Tensor:
    """Token frequencies of ``n`` draws by nano-vllm's ``Sampler.forward`` (the exponential
    race, nanovllm/layers/sampler.py at the pin; its ``torch.compile`` decorator dropped),
    given the logits ``log(probs)`` repeated ``n`` times and one temperature for all rows."""
    forward = definitions(
        "nano-vllm", "nanovllm/layers/sampler.py", ("Sampler.forward",), {"torch": torch}
    )["forward"]
    torch.manual_seed(seed)  # the sampler draws from torch's global generator
    logits = probs.log().to(torch.float32).expand(n, -1).contiguous()
    temperatures = torch.full((n,), temperature, dtype=torch.float32)
    tokens = forward(None, logits, temperatures)
    return torch.bincount(tokens, minlength=probs.numel()).to(torch.float64) / n
