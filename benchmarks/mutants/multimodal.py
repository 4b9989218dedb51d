"""Mutations of the multimodal chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "merge-not-squared",
        "multimodal",
        "multimodal/tokens.py",
        "    return patches // (merge * merge) + cls",
        "    return patches // merge + cls",
        ("multimodal/index",),
        "image_tokens divides by the merge factor once instead of its square",
    ),
    Mutation(
        "lpt-most-loaded",
        "multimodal",
        "multimodal/packing.py",
        "        r = totals.index(min(totals))",
        "        r = totals.index(max(totals))",
        ("multimodal/systems",),
        "LPT places the next item on the most-loaded rank",
    ),
    Mutation(
        "encoder-cache-by-id",
        "multimodal",
        "multimodal/cache.py",
        "        return hashlib.sha256(image.contiguous().numpy().tobytes()).hexdigest()",
        "        return str(id(image))",
        ("multimodal/systems",),
        "the encoder cache is keyed by object id instead of the pixels' hash",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "clip-no-transpose",
        "multimodal",
        "multimodal/contrastive.py",
        "F.cross_entropy(logits.T, labels)) / 2",
        "F.cross_entropy(logits, labels)) / 2",
        ("multimodal/encoders",),
        "CLIP's text-to-image half reuses the image-to-text logits (the transpose is lost)",
    ),
    Mutation(
        "smart-resize-swapped",
        "multimodal",
        "multimodal/tokens.py",
        "        w = math.ceil(width * beta / factor) * factor\n    return h, w",
        "        w = math.ceil(width * beta / factor) * factor\n    return w, h",
        ("multimodal/index",),
        "smart_resize returns (width, height): invisible on a square image",
    ),
    Mutation(
        "siglip-sign-off-diagonal",
        "multimodal",
        "multimodal/contrastive.py",
        "    signs = 2 * torch.eye(image.shape[0]) - 1",
        "    signs = torch.ones(image.shape[0], image.shape[0])",
        ("multimodal/encoders",),
        "SigLIP treats every pair as positive (the off-diagonal sign is lost)",
    ),
    Mutation(
        "image-tokens-merge-once",
        "multimodal",
        "multimodal/tokens.py",
        "    return patches // (merge * merge) + cls",
        "    return patches // merge + cls",
        ("multimodal/index",),
        "spatial merging divides by the merge factor once instead of its square",
    ),
    # --- issue 39: the reworked checks ---
    Mutation(
        "siglip-chunked-positives-lost",
        "multimodal",
        "multimodal/contrastive.py",
        "                signs += 2 * torch.eye(logits.shape[0])",
        "                signs += 0 * torch.eye(logits.shape[0])",
        ("multimodal/encoders",),
        "the chunked SigLIP loss scores the block of positives as negatives too",
    ),
]
