"""SVG figures in the PDF, as vector PDF through ``rsvg-convert``.

The book's own diagrams may be SVGs we drew; LaTeX cannot include SVG, and Sphinx without a
converter drops the figure with a warning. This converter turns each into a PDF (vectors and
text kept). A missing ``rsvg-convert`` or a failed conversion stops the build with the page,
the file and the fix, like a diagram mermaid-cli cannot render.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from docutils import nodes
from docutils.utils import get_source_line
from sphinx.transforms.post_transforms.images import ImageConverter

from atlas.latex.errors import PdfError

FIX = "Fix: install it with `sudo apt-get install --no-install-recommends librsvg2-bin`."


class SvgToPdf(ImageConverter):
    conversion_rules = [("image/svg+xml", "application/pdf")]  # noqa: RUF012 (Sphinx's API)

    def is_available(self) -> bool:
        # Always "available": a missing tool must fail the build in convert(), not make Sphinx
        # drop the figure with a warning.
        return True

    def handle(self, node: nodes.image) -> None:
        self._node = node
        super().handle(node)

    def convert(self, _from: str | os.PathLike[str], _to: str | os.PathLike[str]) -> bool:
        source, line = get_source_line(self._node)
        where = f"{source or '<unknown page>'}:{line or '?'}"
        tool = shutil.which("rsvg-convert")
        if tool is None:
            raise PdfError(f"{where}: the SVG {_from} needs rsvg-convert for the PDF. {FIX}")
        proc = subprocess.run(
            [tool, "--format=pdf", "--output", str(_to), str(_from)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise PdfError(
                f"{where}: rsvg-convert could not convert {_from} to PDF:\n{proc.stderr.strip()}"
            )
        return True
