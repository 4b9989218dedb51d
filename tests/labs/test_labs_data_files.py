"""The lab cache keys a page on the kernel sources its labkit modules compile (atlas.labs.imports
``data_files``): editing a ``.cu`` file beside an imported module re-runs the page's labs, and a
file inside a sub-package does not count for a module above it."""

from __future__ import annotations

from pathlib import Path

from atlas.labs.cache import imports_digest
from atlas.labs.model import ExampleSpec, LabSpec


def _specs(source: str) -> list[LabSpec]:
    example = ExampleSpec(source=source + "\n", want="", line=1)
    return [LabSpec("page", 0, "lab-0", "t", source, 1, 1, (example,), 30.0)]


def test_a_kernel_file_beside_an_imported_module_is_part_of_the_key(tmp_path: Path) -> None:
    package = tmp_path / "cuda"
    (package / "kernels").mkdir(parents=True)
    (package / "sub").mkdir()
    (tmp_path / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "nvcc.py").write_text("X = 1\n", encoding="utf-8")
    (package / "sub" / "__init__.py").write_text("", encoding="utf-8")
    kernel, other = package / "kernels" / "reduce.cu", package / "sub" / "other.cu"
    kernel.write_text("// one\n", encoding="utf-8")
    other.write_text("// one\n", encoding="utf-8")
    specs = _specs("from atlas.labkit.cuda.nvcc import X")
    before = imports_digest(specs, tmp_path)
    other.write_text("// two\n", encoding="utf-8")  # a sub-package's file: not this module's
    assert imports_digest(specs, tmp_path) == before
    kernel.write_text("// two\n", encoding="utf-8")
    assert imports_digest(specs, tmp_path) != before
