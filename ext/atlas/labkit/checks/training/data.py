"""Checks of the labs of ``training/data.md``.

The chapter's checks: Megatron-LM's own code at the pin, measuring tools.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from atlas.labkit.checks.training.common import _QUIET, UPSTREAM
from atlas.labkit.pinned import definitions, module, registered

ROLE = "check"


def megatron_indexed() -> types.SimpleNamespace:
    """Megatron's ``.idx`` writer and reader, ``.bin`` memory-map reader and dataset builder."""
    import gc
    import logging
    import shutil
    import struct
    import time
    import typing
    from abc import ABC, abstractmethod
    from collections.abc import Iterable as _Iterable
    from enum import Enum
    from functools import lru_cache
    from types import TracebackType

    import numpy

    # Megatron's own switch to object storage (off, as in a run without --enable-msc), and at
    # pins that have it the ``maybe_msc`` that then opens local files with the builtin open.
    msc_utils = module(UPSTREAM, "megatron/core/msc_utils.py")
    scope = {k: getattr(typing, k) for k in ("List", "Optional", "Tuple", "Type", "Union")}
    scope.update(
        numpy=numpy,
        struct=struct,
        time=time,
        gc=gc,
        shutil=shutil,
        torch=torch,
        Enum=Enum,
        lru_cache=lru_cache,
        ABC=ABC,
        abstractmethod=abstractmethod,
        Iterable=_Iterable,
        TracebackType=TracebackType,
        logger=_QUIET,
        logging=logging,
        log_single_rank=lambda *a, **k: None,
        MultiStorageClientFeature=msc_utils.MultiStorageClientFeature,
    )
    if hasattr(msc_utils, "maybe_msc"):
        scope["maybe_msc"] = msc_utils.maybe_msc
    names = [
        "_INDEX_HEADER",
        "DType",
        "_IndexWriter",
        "_IndexReader",
        "_BinReader",
        "_MMapBinReader",
        "IndexedDatasetBuilder",
        "get_idx_path",
        "get_bin_path",
    ]
    return definitions(UPSTREAM, "megatron/core/datasets/indexed_dataset.py", names, scope)


def megatron_gpt_indices(
    reader: Any, seq_length: int, num_samples: int, seed: int
) -> tuple[Any, Any, Any]:
    """The document, sample and shuffle indices of Megatron's ``GPTDataset`` at the pin.

    Megatron's own method decides the epochs, whether the last epoch is kept apart, and does
    the shuffles; the sample index, which Megatron builds in C++ (``helpers.cpp``), is supplied
    by this chapter's :func:`~atlas.labkit.training.data.sample_index`.
    """
    import logging
    import os
    import time
    import typing

    import numpy

    from atlas.labkit.training.data import sample_index

    helpers = types.ModuleType("megatron.core.datasets.helpers")
    helpers.build_sample_idx = lambda sizes, doc_idx, seq, *rest: sample_index(sizes, doc_idx, seq)
    pkg = types.ModuleType("megatron.core.datasets")
    pkg.helpers = helpers
    split = types.SimpleNamespace(
        **{k: types.SimpleNamespace(name=k) for k in ("train", "valid", "test")}
    )
    scope = {k: getattr(typing, k) for k in ("Dict", "Optional", "Tuple")}
    scope.update(
        numpy=numpy,
        os=os,
        time=time,
        torch=torch,
        logging=logging,
        Split=split,
        logger=_QUIET,
        log_single_rank=lambda *a, **k: None,
    )
    ns = definitions(
        UPSTREAM,
        "megatron/core/datasets/gpt_dataset.py",
        [
            "GPTDataset._build_document_sample_shuffle_indices",
            "GPTDataset._get_num_tokens_per_epoch",
            "GPTDataset._get_num_epochs",
            "_build_document_index",
            "_build_shuffle_index",
        ],
        scope,
    )
    config = types.SimpleNamespace(
        defer_npy_index_mmap=False,
        path_to_cache=None,
        mock=True,
        fast_cache_load=False,
        sequence_length=seq_length,
        add_extra_token_to_sequence=1,
        random_seed=seed,
        drop_last_partial_validation_sequence=True,
    )
    fake = types.SimpleNamespace(
        config=config,
        dataset=types.SimpleNamespace(sequence_lengths=reader.sequence_lengths),
        indices=numpy.arange(len(reader), dtype=numpy.int32),
        num_samples=num_samples,
        index_split=split.train,
        unique_description_hash="x",
    )
    fake._get_num_tokens_per_epoch = types.MethodType(ns._get_num_tokens_per_epoch, fake)
    fake._get_num_epochs = types.MethodType(ns._get_num_epochs, fake)
    with registered({"megatron.core.datasets": pkg, "megatron.core.datasets.helpers": helpers}):
        return ns._build_document_sample_shuffle_indices(fake)


def megatron_sampler() -> type:
    """Megatron's ``MegatronPretrainingSampler`` class."""
    ns = definitions(
        UPSTREAM, "megatron/training/datasets/data_samplers.py", ["MegatronPretrainingSampler"]
    )
    return ns.MegatronPretrainingSampler
