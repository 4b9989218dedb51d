"""How many language-model tokens an image, a video or an audio clip becomes."""

from __future__ import annotations

import math

ROLE = "taught"


def image_tokens(height: int, width: int, patch: int, merge: int = 1, cls: int = 0) -> int:
    """Patches of ``patch`` pixels, then ``merge x merge`` neighbouring patches merged into one
    token (pixel shuffle or an MLP merger), plus ``cls`` class tokens kept by the encoder."""
    patches = (height // patch) * (width // patch)
    return patches // (merge * merge) + cls


def smart_resize(
    height: int,
    width: int,
    factor: int = 28,
    min_pixels: int = 56 * 56,
    max_pixels: int = 14 * 14 * 4 * 1280,
) -> tuple[int, int]:
    """Qwen2-VL-style dynamic resolution: round each side to a multiple of ``factor`` (patch
    times merge), then scale both sides to keep the pixel count inside [min, max]."""
    h = max(factor, round(height / factor) * factor)
    w = max(factor, round(width / factor) * factor)
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h = math.floor(height / beta / factor) * factor
        w = math.floor(width / beta / factor) * factor
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return h, w


def video_tokens(
    frames: int, height: int, width: int, patch: int, temporal_patch: int, merge: int
) -> int:
    """Video as a stack of frames cut into ``temporal_patch x patch x patch`` tubes, then
    spatial merging as for images."""
    return (frames // temporal_patch) * image_tokens(height, width, patch, merge)


def audio_tokens(seconds: float, hop_ms: float = 10.0, stride: int = 2) -> int:
    """Whisper-style audio: one log-mel frame every ``hop_ms`` milliseconds, then a
    convolution of stride ``stride`` halves the frame rate."""
    frames = round(seconds * 1000 / hop_ms)
    return frames // stride
