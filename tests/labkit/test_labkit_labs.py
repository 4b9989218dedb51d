"""The pages' labs as pytest items: ``ATLAS_LABS=parallelism pytest tests/test_labkit_labs.py``.

The labs are the book's checks of the labkit: what a page claims about its code is asserted in
its labs, and the build runs them. This collector runs the same labs without Sphinx, one item
per page (its labs in order, in one namespace, seeded, each through the build's own
:func:`atlas.labs.worker.run_lab`), so that a change to one labkit module can be checked
against the chapters that use it in seconds, and so that ``test_labkit_*`` files need not
repeat what the labs already assert.

``ATLAS_LABS`` selects pages: ``all``, or comma-separated prefixes of their paths under
``source/`` (``parallelism``, ``moe/deepep``). Unset, nothing is collected: the whole book's
labs are run by its build (``make check``), not by every ``make test``.

A lab that raises ``unittest.SkipTest`` (an upstream's objects absent) makes the item skip
with its reason, as the build shows it skipped.
"""

from __future__ import annotations

import os
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[2]
SOURCE = BOOK / "source"
FENCE = re.compile(r"^(?P<fence>`{3,})\{lab\}\s*(?P<title>.*)$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")


@dataclass(frozen=True)
class PageLab:
    """One ``lab`` fence of a page: where it starts, its options and its doctest text."""

    page: str
    line: int  # 1-based line of the first content line
    title: str
    options: dict[str, str]
    text: str


def page_labs(path: Path) -> list[PageLab]:
    """The lab fences of one MyST page, in order (also those inside problems and solutions,
    which MyST fences at the top level of the text: labs are never indented)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    page = str(path.relative_to(SOURCE))
    labs, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, title, options = match["fence"], match["title"].strip(), {}
        i += 1
        while i < len(lines) and (option := OPTION.match(lines[i])):
            options[option["key"]] = option["value"].strip()
            i += 1
        start, body = i + 1, []
        while i < len(lines) and lines[i].rstrip() != fence:
            body.append(lines[i])
            i += 1
        labs.append(PageLab(page, start, title, options, "\n".join(body).strip("\n") + "\n"))
        i += 1
    return labs


def selected_pages() -> list[Path]:
    wanted = [w.strip() for w in os.environ.get("ATLAS_LABS", "").split(",") if w.strip()]
    if not wanted:
        return []
    pages = sorted(p for p in SOURCE.rglob("*.md") if "{lab}" in p.read_text(encoding="utf-8"))
    if wanted == ["all"]:
        return pages
    return [p for p in pages if any(str(p.relative_to(SOURCE)).startswith(w) for w in wanted)]


def run_page(labs: list[PageLab]) -> list[tuple[PageLab, object]]:
    """Run a page's labs as the build's worker does: one ``__lab__`` namespace, in order."""
    from atlas.labs.worker import run_lab

    module = types.ModuleType("__lab__")
    saved = sys.modules.get("__lab__")
    sys.modules["__lab__"] = module
    devnull = os.open(os.devnull, os.O_WRONLY)  # the worker's progress events go nowhere
    try:
        results = []
        for index, lab in enumerate(labs):
            job = {
                "needs": lab.options.get("needs", ""),
                "seed": 0,
                "text": lab.text,
                "filename": f"{lab.page} (lab {index + 1}, line {lab.line})",
                "expect_failure": "expect-failure" in lab.options,
                "memory_limit_mb": 0,
            }
            results.append((lab, run_lab(index, job, module.__dict__, devnull)))
        return results
    finally:
        os.close(devnull)
        if saved is None:
            sys.modules.pop("__lab__", None)
        else:
            sys.modules["__lab__"] = saved


def test_the_parser_finds_labs_in_solutions_and_their_options(tmp_path) -> None:  # type: ignore[no-untyped-def]
    page = SOURCE / "models" / "problems.md"
    labs = page_labs(page)
    assert labs and all(lab.text.lstrip().startswith(">>>") for lab in labs)
    lines = page.read_text(encoding="utf-8").splitlines()
    for lab in labs:
        assert lines[lab.line - 1].startswith(">>>")  # the line the build reports


PAGES = selected_pages()
if PAGES:  # unset, nothing is collected: not even a skip in every ``make test``

    @pytest.mark.parametrize(
        "page", PAGES, ids=[str(p.relative_to(SOURCE).with_suffix("")) for p in PAGES]
    )
    def test_page_labs(page: Path) -> None:
        from atlas.labs.model import LabStatus

        bad, skipped = [], []
        for lab, result in run_page(page_labs(page)):
            if result.status == LabStatus.SKIPPED:
                skipped.append(f"{lab.title}: {result.message}")
            elif result.status not in (LabStatus.PASSED, LabStatus.XFAIL):
                first = (
                    result.examples[result.failed_example]
                    if result.failed_example is not None
                    else None
                )
                got = first.got if first is not None else result.message
                bad.append(f"{lab.page}:{lab.line} {lab.title} [{result.status.value}]\n{got}")
        assert not bad, "\n\n".join(bad)
        if skipped:
            pytest.skip("; ".join(skipped))
