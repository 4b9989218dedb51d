"""Property tests of taught functions against references written another way (Hypothesis).

Why properties: a lab checks one or two inputs, and the inputs a lab picks can hide a bug (a
square image hides swapped height and width, a symmetric similarity matrix hides a missing
transpose, one stream hides a transposed mix, lengths that are multiples of the tile hide a
floor in place of a ceiling). Here Hypothesis draws random, asymmetric, ragged inputs and
compares each function with a reference that does not share its code: a loop over elements, a
mask cut into tiles, a count of ``range`` steps.
"""

from __future__ import annotations

import math

import pytest
import torch
from atlas.labkit.attention.partition import causal_tile_costs, fa2_grid
from atlas.labkit.multimodal.contrastive import clip_loss, siglip_loss
from atlas.labkit.multimodal.tokens import image_tokens, smart_resize, video_tokens
from atlas.labkit.normalization.stacks import HyperConnection
from hypothesis import given, settings
from hypothesis import strategies as st

FAST = settings(max_examples=40, deadline=None)
seeds = st.integers(0, 2**16)


def _cosines(image: torch.Tensor, text: torch.Tensor) -> list[list[float]]:
    return [[float(a @ b / (a.norm() * b.norm())) for b in text] for a in image]


def _mean_cross_entropy(rows: list[list[float]], tau: float) -> float:
    """Mean over rows of -log softmax(row / tau)[i], written out with math."""
    total = 0.0
    for i, row in enumerate(rows):
        top = max(z / tau for z in row)
        total += top + math.log(sum(math.exp(z / tau - top) for z in row)) - row[i] / tau
    return total / len(rows)


@FAST
@given(seed=seeds, batch=st.integers(2, 6), dim=st.integers(2, 8), tau=st.floats(0.05, 2.0))
def test_clip_loss_is_the_mean_of_row_and_column_cross_entropies(seed, batch, dim, tau) -> None:
    generator = torch.Generator().manual_seed(seed)
    image = torch.randn(batch, dim, generator=generator, dtype=torch.float64)
    text = torch.randn(batch, dim, generator=generator, dtype=torch.float64)
    cos = _cosines(image, text)
    columns = [list(column) for column in zip(*cos, strict=True)]
    expected = (_mean_cross_entropy(cos, tau) + _mean_cross_entropy(columns, tau)) / 2
    assert clip_loss(image, text, tau).item() == pytest.approx(expected, rel=1e-6, abs=1e-9)


@FAST
@given(
    seed=seeds,
    batch=st.integers(1, 6),
    scale=st.floats(0.5, 20.0),
    bias=st.floats(-10.0, 10.0),
)
def test_siglip_loss_is_a_sum_of_pairwise_log_sigmoids(seed, batch, scale, bias) -> None:
    generator = torch.Generator().manual_seed(seed)
    image = torch.randn(batch, 5, generator=generator, dtype=torch.float64)
    text = torch.randn(batch, 5, generator=generator, dtype=torch.float64)
    cos = _cosines(image, text)

    def log_sigmoid(z: float) -> float:
        return -math.log1p(math.exp(-z)) if z > 0 else z - math.log1p(math.exp(z))

    pairs = [
        log_sigmoid((1 if i == j else -1) * (scale * cos[i][j] + bias))
        for i in range(batch)
        for j in range(batch)
    ]
    expected = -sum(pairs) / batch
    assert siglip_loss(image, text, scale, bias).item() == pytest.approx(expected, rel=1e-6)


@FAST
@given(seed=seeds, streams=st.integers(2, 5), tokens=st.integers(1, 4))
def test_hyper_connection_updates_each_stream_as_written(seed, streams, tokens) -> None:
    torch.manual_seed(seed)
    width = 6
    hc = HyperConnection(torch.nn.Linear(width, width), n=streams).double()
    with torch.no_grad():
        for weight in (hc.read, hc.mix, hc.write):
            weight.copy_(torch.randn_like(weight))
        h = torch.randn(streams, tokens, width, dtype=torch.float64)
        x = sum(hc.read[i] * h[i] for i in range(streams))
        y = hc.layer(x)
        expected = torch.stack(
            [
                sum(hc.mix[i, j] * h[i] for i in range(streams)) + hc.write[j] * y
                for j in range(streams)
            ]
        )
        assert torch.allclose(hc(h), expected, atol=1e-10)


@FAST
@given(
    batch=st.integers(1, 8),
    heads=st.integers(1, 64),
    seqlen=st.integers(1, 20000),
    block_m=st.sampled_from([16, 48, 64, 128, 176]),
)
def test_fa2_grid_counts_every_query_tile_the_partial_one_included(
    batch, heads, seqlen, block_m
) -> None:
    assert fa2_grid(batch, heads, seqlen, block_m) == batch * heads * len(range(0, seqlen, block_m))


@FAST
@given(seqlen=st.integers(1, 300), block_m=st.integers(1, 96), block_n=st.integers(1, 96))
def test_causal_tile_costs_equal_the_key_tiles_the_mask_reaches(seqlen, block_m, block_n) -> None:
    q = torch.arange(seqlen)[:, None]
    k = torch.arange(seqlen)[None, :]
    visible = k <= q
    expected = []
    for q0 in range(0, seqlen, block_m):
        rows = visible[q0 : q0 + block_m]
        expected.append(
            sum(bool(rows[:, k0 : k0 + block_n].any()) for k0 in range(0, seqlen, block_n))
        )
    assert causal_tile_costs(seqlen, block_m, block_n) == expected


@FAST
@given(height=st.integers(56, 3000), width=st.integers(56, 3000))
def test_smart_resize_keeps_height_and_width_apart(height, width) -> None:
    factor = 28
    h, w = smart_resize(height, width, factor)
    assert h % factor == 0 and w % factor == 0
    assert 56 * 56 <= h * w <= 14 * 14 * 4 * 1280
    if smart_resize(width, height, factor) != (w, h):  # the rule is symmetric in its sides
        pytest.fail("smart_resize(width, height) is not smart_resize(height, width) swapped")
    rounded = (
        max(factor, round(height / factor) * factor),
        max(factor, round(width / factor) * factor),
    )
    if 56 * 56 <= rounded[0] * rounded[1] <= 14 * 14 * 4 * 1280:
        assert (h, w) == rounded  # inside the pixel budget: each side rounded on its own
    if abs(height - width) > 4 * factor:  # clearly not square: the orientation survives
        assert (h > w) == (height > width) or h == w


@FAST
@given(
    height=st.integers(14, 2000),
    width=st.integers(14, 2000),
    patch=st.sampled_from([14, 16]),
    merge=st.sampled_from([1, 2]),
    frames=st.integers(1, 40),
)
def test_image_and_video_tokens_count_patches_row_by_row(height, width, patch, merge, frames):
    patches = len(range(0, height - patch + 1, patch)) * len(range(0, width - patch + 1, patch))
    assert image_tokens(height, width, patch, merge) == patches // (merge * merge)
    tubes = frames // 2
    assert video_tokens(frames, height, width, patch, 2, merge) == tubes * (patches // merge**2)
