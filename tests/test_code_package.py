"""atlas.code (quoting code: spec, select, symbols, codeblocks, permalink) loads no Sphinx and
no docutils, so that the commands that quote code without a build stay light and a page's
rules of selection are testable on plain text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CODE = Path(__file__).resolve().parents[1] / "ext" / "atlas" / "code"


def test_importing_every_module_of_atlas_code_loads_no_sphinx_or_docutils() -> None:
    modules = sorted(
        ".".join(("atlas", "code", *p.relative_to(CODE).with_suffix("").parts)).removesuffix(
            ".__init__"
        )
        for p in CODE.rglob("*.py")
    )
    assert {"atlas.code.spec", "atlas.code.select", "atlas.code.symbols.lookup"} <= set(modules)
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('sphinx', 'docutils'))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(proc.stdout) == []


def test_the_quoting_directives_and_the_page_check_share_one_list_of_options() -> None:
    from atlas.code.options import OPTIONS
    from atlas.code.select import KNOWN_OPTIONS, SelectError, check_options
    from atlas.teach.labcode import LabcodeDirective
    from atlas.upstream.directive import UpstreamDirective

    assert list(UpstreamDirective.option_spec) == list(OPTIONS)
    assert set(LabcodeDirective.option_spec) == set(OPTIONS) - {"language", "behind"}
    assert KNOWN_OPTIONS == set(OPTIONS)
    check_options({"dedent": "", "contains": "x"})
    with pytest.raises(
        SelectError, match=r"^unknown option\(s\) :dedents:; known: :behind:, :caption:"
    ):
        check_options({"dedents": "4"})
