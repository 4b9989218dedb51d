"""The DSA check loads exactly the sibling modules Megatron's dsa.py imports (none at the old
pin, ``dsa_layout`` and ``dsa_masking`` at d98e8a64), so one loader serves both pins."""

from atlas.labkit.checks.attention.sparse import _MEGATRON_DSA_SIBLINGS, _imported_siblings

FOLDER = "megatron/core/transformer/experimental_attention_variant"


def test_the_siblings_imported_from_the_package_are_found() -> None:
    text = (
        "import torch\n"
        "from megatron.core.transformer.experimental_attention_variant import (\n"
        "    dsa_indexer_loss,\n    dsa_layout,\n    dsa_masking,\n)\n"
        "from megatron.core.transformer.enums import AttnMaskType\n"
    )
    found = _imported_siblings(text, FOLDER)
    assert found == {"dsa_indexer_loss", "dsa_layout", "dsa_masking"}
    assert [s for s in _MEGATRON_DSA_SIBLINGS if s in found] == ["dsa_layout", "dsa_masking"]


def test_a_file_without_those_imports_loads_no_sibling() -> None:
    text = "import torch\nfrom megatron.core import parallel_state\n"
    assert _imported_siblings(text, FOLDER) == set()


def test_every_sibling_is_a_path_literal_in_the_dsa_folder() -> None:
    """``make upstreams`` fetches only files the labkit names literally (labpaths)."""
    for short, path in _MEGATRON_DSA_SIBLINGS.items():
        assert path == f"{FOLDER}/{short}.py"
