"""Fixtures of the labkit's tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def cuda_compile_cache(tmp_path_factory: pytest.TempPathFactory):
    """Compile CUDA C into a cache of the test module's own, not the repository's _build (a
    module that compiles kernels marks itself ``pytestmark = pytest.mark.usefixtures(...)``)."""
    patch = pytest.MonkeyPatch()
    patch.setenv("ATLAS_CUDA_CACHE", str(tmp_path_factory.mktemp("cuda-cache")))
    yield
    patch.undo()
