"""Fast unit tests of the multimodal chapter's labkit (no Sphinx)."""

import torch
from atlas.labkit.multimodal.cache import EncoderCache
from atlas.labkit.multimodal.contrastive import clip_loss, siglip_loss
from atlas.labkit.multimodal.fusion import expand_placeholders, insert_image_embeddings
from atlas.labkit.multimodal.packing import balance, imbalance, pack_greedy
from atlas.labkit.multimodal.tokens import audio_tokens, image_tokens, smart_resize, video_tokens


def test_tokens():
    assert image_tokens(336, 336, 14, cls=1) == 577
    assert image_tokens(896, 896, 14, merge=4) == 256
    assert smart_resize(1344, 1344, max_pixels=16384 * 784) == (1344, 1344)
    assert smart_resize(1344, 1344) == (980, 980)
    assert video_tokens(4, 28, 28, 14, 2, 2) == 2
    assert audio_tokens(30) == 1500


def test_insert():
    ids = torch.tensor([expand_placeholders([1, 9, 2], 9, 2)])
    text, img = torch.zeros(1, 4, 3), torch.ones(2, 3)
    out = insert_image_embeddings(ids, text, img, 9)
    assert out[0, 1:3].eq(1).all() and out[0, 0].eq(0).all()


def test_losses_positive():
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    assert clip_loss(a, b, 0.07) > 0 and siglip_loss(a, b, 10.0, -10.0) > 0


def test_packing_and_balance():
    packs = pack_greedy([5, 4, 3, 2, 1], 6)
    assert all(sum(p) <= 6 for p in packs) and sorted(sum(packs, [])) == [1, 2, 3, 4, 5]
    assert imbalance(balance([5, 4, 3, 3, 3], 2)) <= 1.2


def test_cache_counts():
    calls = []
    cache = EncoderCache(lambda x: calls.append(1) or x.sum(), capacity=2)
    x = torch.ones(3)
    cache(x), cache(x.clone()), cache(torch.zeros(3))
    assert len(calls) == 2 and cache.hits == 1


def test_siglip_chunked_equals_dense():
    import torch
    from atlas.labkit.multimodal.contrastive import siglip_loss_chunked

    torch.manual_seed(1)
    a, b = torch.randn(12, 8), torch.randn(12, 8)
    loss, sent = siglip_loss_chunked(a, b, 10.0, -10.0, devices=3)
    assert torch.allclose(loss, siglip_loss(a, b, 10.0, -10.0), rtol=1e-5) and sent == 8
