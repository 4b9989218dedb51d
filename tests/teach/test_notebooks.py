"""Each page with labs gets a notebook of them beside its runnable file, linked as a download,
and the notebook runs: executed with nbclient, every cell prints what the page expects."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from tinybook import build_book

CONF_EXTRA = "atlas_labs_mode = 'off'\n"
INDEX = "# Book\n\n```{toctree}\nch/sums\n```\n"
PAGE = """# Sums

```{lab} Two and two
>>> x = 2 + 2
>>> x == 4
True
>>> print(f"x is {x}")
x is 4
```
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    pages = {"index.md": INDEX, "ch/sums.md": PAGE}
    html, _ = build_book(tmp_path_factory.mktemp("nb") / "book", pages, CONF_EXTRA)
    return html


def test_the_page_links_its_notebook_as_a_download(built: Path) -> None:
    page = (built / "ch" / "sums.html").read_text(encoding="utf-8")
    link = re.search(
        r'<a class="[^"]*atlas-notebook" href="([^"]+)" download>sums\.ipynb</a>', page
    )
    assert link, "no notebook link under the lab"
    notebook = (built / "ch" / link.group(1)).resolve()
    assert notebook == (built / "_labs" / "ch" / "sums.ipynb").resolve() and notebook.is_file()
    nbformat.validate(nbformat.read(notebook, as_version=4))
    assert (built / "_labs" / "ch" / "sums.py").is_file()  # beside the runnable file


def test_the_notebook_runs_and_prints_what_the_page_expects(built: Path) -> None:
    pytest.importorskip("ipykernel")
    from nbclient import NotebookClient

    notebook = nbformat.read(built / "_labs" / "ch" / "sums.ipynb", as_version=4)
    expected = [_text(cell) for cell in notebook.cells if cell.cell_type == "code"]
    # the setup and the lab's seeding print nothing; then the lab's three examples
    assert expected == ["", "", "", "True\n", "x is 4\n"]
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    assert [_text(cell) for cell in notebook.cells if cell.cell_type == "code"] == expected


def _text(cell) -> str:
    """What a code cell shows: its printed text and its value's repr, as doctest compares."""
    out = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            out.append(output.text)
        elif output.output_type == "execute_result":
            out.append(output.data["text/plain"] + "\n")
    return "".join(out)
