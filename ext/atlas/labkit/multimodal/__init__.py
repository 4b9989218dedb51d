"""Taught code of the multimodal chapter (source/multimodal/).

``tokens``: token counts of images, video and audio. ``fusion``: a LLaVA-style projector and the
insertion of image embeddings at placeholder positions. ``contrastive``: CLIP and SigLIP losses.
``packing``: sequence packing and balancing across data-parallel ranks. ``cache``: an encoder cache
keyed by image content. ``atlas.labkit.checks.multimodal``: loaders of Megatron's code at its pin
and the labs' checks.
"""

ROLE = "taught"
