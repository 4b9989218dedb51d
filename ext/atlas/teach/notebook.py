"""A Jupyter notebook of each page's labs, beside its runnable file: ``_labs/<page>.ipynb``.

Written with nbformat (the format's reference library, which validates what it writes), not as
hand-made JSON. One markdown cell per lab (its title, linked to the page) and one code cell per
example, holding the example's code without its prompts and, as its output, what the page
expects: the notebook reads like the page before it is run, and running it shows whether the
reader's machine agrees. A first cell sets up what the build's worker sets up (one thread), and
each lab opens with the seeding the build does before it. Like the runnable file, it needs the
book installed (``pip install -e .`` in a clone, ``make setup``); labs that need upstream
objects need ``make upstreams`` too.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from atlas.labs.model import LabSpec

OUTPUT_FOLDER = "_labs"
SETUP = """import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # as in the build: one thread, stable timings

from atlas.processes import seed_everything  # the book's package: pip install -e . in a clone"""
SEED = "seed_everything(0)  # as the build seeds each lab"


def file_name(docname: str) -> str:
    """``_labs/serving/paged-attention.ipynb`` for page ``serving/paged-attention``."""
    return f"{OUTPUT_FOLDER}/{docname}.ipynb"


def render(title: str, page_url: str, page_path: str, specs: list[LabSpec]) -> str:
    """The notebook's JSON text. ``page_url``: the page, relative to the notebook."""
    cells = [
        new_markdown_cell(
            f"# The labs of “{title}”\n\n"
            f"From the LLM Infra Atlas, [{page_path}]({page_url}). Run it in a clone of the book, "
            "after `make setup` (or `pip install -e .`); labs that read upstream code need "
            "`make upstreams` first. Each code cell is one example of a lab, and the output "
            "under it is what the page expects."
        ),
        new_code_cell(SETUP),
    ]
    for spec in specs:
        kind = " (a model illustration)" if spec.kind == "model" else ""
        needs = f" Needs {spec.needs}." if spec.needs else ""
        cells.append(
            new_markdown_cell(f"## Lab: [{spec.title}]({page_url}#{spec.anchor}){kind}{needs}")
        )
        cells.append(new_code_cell(SEED))
        for example in spec.examples:
            outputs = []
            if example.want:
                outputs = [new_output("stream", name="stdout", text=example.want)]
            cells.append(new_code_cell(example.source.rstrip("\n"), outputs=outputs))
    notebook = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
    )
    nbformat.validate(notebook)
    return nbformat.writes(notebook) + "\n"


def write(outdir: Path, docname: str, title: str, page_path: str, specs: list[LabSpec]) -> Path:
    """Write the page's notebook when its text changed (reproducible, incremental)."""
    path = outdir / file_name(docname)
    depth = docname.count("/") + 1  # _labs/<folders>/page.ipynb back to the book's root
    page_url = "../" * depth + f"{docname}.html"
    text = render(title, page_url, page_path, specs)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path
