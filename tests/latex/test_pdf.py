"""The offline PDF: `python -m atlas.latex build` on a fixture book, read back with poppler.

One real build (xelatex, mermaid-cli, Chromium) shared by the assertions of this module; the
fast tests below it need no TeX at all.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from atlas.latex import build as pdf_build
from atlas.latex import logscan, tools
from atlas.latex.errors import PdfError

REPO = Path(__file__).resolve().parents[2]
ROOT = Path(__file__).resolve().parents[1] / "roots" / "test-pdf"


def _need_pdf_tools() -> None:
    absent = tools.missing(tools.requirements())
    if shutil.which("pdftotext") is None:
        absent.append(tools.Requirement("pdftotext", "poppler-utils", lambda: False))
    if not (REPO / "node_modules" / ".bin" / "mmdc").exists():
        pytest.skip("mermaid-cli is not installed: run `make setup`")
    if absent and not os.environ.get("CI"):
        pytest.skip(tools.report(absent))


def _cli(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "atlas.latex", *args],
        cwd=cwd,
        env=env or dict(os.environ),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def pdf(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Build the fixture book once; return its text, layout text and build folder."""
    _need_pdf_tools()
    out = tmp_path_factory.mktemp("pdf")
    proc = _cli("build", "--source", str(ROOT), "--build", str(out), "--conf-dir", str(ROOT))
    assert proc.returncode == 0, proc.stderr[-4000:]
    path = out / "pdf" / "atlas.pdf"

    def text(*opts: str) -> str:
        return subprocess.run(
            ["pdftotext", *opts, str(path), "-"], capture_output=True, text=True, check=True
        ).stdout

    return {
        "path": path,
        "out": out,
        "stderr": proc.stderr,
        "text": text(),
        "layout": text("-layout"),
    }


def test_snippet_keeps_upstream_line_numbers(pdf: dict) -> None:
    layout = pdf["layout"]
    assert re.search(r"^\s*41\s+def attention\(q, k, v, scale\):", layout, re.M)
    assert re.search(r"^\s*45\s+out = probs @ v", layout, re.M)
    assert re.search(r"^\s*47\s+WRAPPED_CONSTANT_NAME_THAT_NEVER_ENDS", layout, re.M)


def test_long_code_lines_wrap_inside_the_page(pdf: dict) -> None:
    """The 150-character token is broken onto a continuation line, not cut at the margin."""
    assert "_wrap_tail_marker" in pdf["text"]
    report, _ = logscan.read(pdf["out"] / "latex", "atlas")
    assert [pts for pts, _ in report.overfull if pts > 1] == []
    # the continuation line starts with Sphinx's wrap marker, and holds the token's tail
    assert re.search(r"^\s*\S*a+_wrap_tail_marker\"$", pdf["layout"], re.M)


def test_caption_names_the_citation_and_footnotes_the_permalink(pdf: dict) -> None:
    text = " ".join(pdf["text"].split())
    assert "Listing 1.1: fixture@0123abcd · fixture/attention.py · L41–L47" in text
    # the permalink is printed in full as a footnote (a printout has no hyperlinks)
    url = "https://example.org/fixture/blob/0123abcdef/fixture/attention.py#L41-L47"
    assert url in text.replace(" ", "")


def test_no_footnote_repeats_a_url_printed_beside_its_link(pdf: dict) -> None:
    text = pdf["text"].replace("\n", " ")
    assert "arXiv:1234.5678" in text
    assert text.count("https://example.org/papers/1234") == 1


def test_lab_code_and_verified_output(pdf: dict) -> None:
    layout = pdf["layout"]
    assert re.search(
        r"^\s*>>> torch\.randn\(3, 4\)\.softmax\(dim=-1\)\.sum\(dim=-1\)$", layout, re.M
    )
    assert re.search(r"^\s*tensor\(\[1\.0000, 1\.0000, 1\.0000\]\)$", layout, re.M)
    assert "Lab: softmax rows sum to one" in pdf["text"]


def test_mermaid_diagram_is_included_as_vector_graphics(pdf: dict) -> None:
    latex = pdf["out"] / "latex"
    tex = (latex / "atlas.tex").read_text(encoding="utf-8")
    included = re.findall(r"\\atlasdiagram\{(mermaid-[0-9a-f]+\.pdf)\}", tex)
    assert len(included) == 1 and (latex / included[0]).is_file()
    # the diagram's labels are text in the PDF (vector, not a bitmap), CJK included; they
    # occur nowhere else in the book
    assert "Decode loop" in pdf["text"]
    assert "Prefill预填充Decodeloop" in re.sub(r"\s+", "", pdf["text"])
    images = subprocess.run(
        ["pdfimages", "-list", str(pdf["path"])], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert len(images) == 2  # the header only: no raster image anywhere


def test_svg_figure_is_converted_to_vector_pdf(pdf: dict) -> None:
    tex = (pdf["out"] / "latex" / "atlas.tex").read_text(encoding="utf-8")
    assert re.search(r"\\sphinxincludegraphics(\[[^]]*\])?\{\{ledger\}\.pdf\}", tex)
    assert "KV blocks" in pdf["text"]  # the SVG's label, as text: vector, not a bitmap
    caption = "Figure 2.1: A drawn SVG figure: memory split between weights and KV blocks."
    assert caption in " ".join(pdf["text"].split())


def test_cjk_text_is_intact_in_prose_and_code(pdf: dict) -> None:
    compact = re.sub(r"\s+", "", pdf["text"])
    assert "注意力机制与键值缓存" in compact
    assert "#计算注意力分数(computetheattentionscores)" in compact
    fonts = subprocess.run(
        ["pdffonts", str(pdf["path"])], capture_output=True, text=True, check=True
    ).stdout
    assert "NotoSerifCJK" in fonts and "NotoSansCJK" in fonts


def test_book_structure_toc_index_bookmarks(pdf: dict) -> None:
    """Front matter unnumbered, one part per toctree caption, back matter; bookmarks; index."""
    text = pdf["text"]
    assert "LLM Infra Atlas" in text.splitlines()[0]
    toc = pdf["layout"].split("\f")[1]  # the page after the title page
    assert re.search(r"^\s*contents$", toc, re.M | re.I)
    for numbered in (
        r"I\s+Mechanisms",
        r"1\s+Cited upstream code",
        r"1\.1\s+A lab",
        r"1\.2\s+A nested page",  # hoisted after the chapter's own sections
        r"2\s+A diagram",
    ):
        assert re.search(rf"^\s*{numbered}\b", toc, re.M), numbered
    for unnumbered in ("Preface", "Conventions", "Reading guide", "Appendix", "Index"):
        assert re.search(rf"^\s*{unnumbered}[\s.]+\d+$", toc, re.M), unnumbered
    assert "Map of the book" not in text  # a heading left with only toctrees is dropped
    # hyperref's bookmark file: one line a PDF bookmark, titles as octal-escaped UTF-16
    out = (pdf["out"] / "latex" / "atlas.out").read_text(encoding="ascii")
    pattern = r"^\\BOOKMARK \[(-?\d+)\]\[.?\]\{[^}]*\}\{([^}]*)\}"
    bookmarks = [(int(level), _bookmark_title(t)) for level, t in re.findall(pattern, out, re.M)]
    assert bookmarks == [
        (0, "Preface"),
        (1, "Conventions"),
        (0, "Reading guide"),
        (-1, "I Mechanisms"),
        (0, "Cited upstream code"),
        (1, "A lab"),
        (1, "A nested page"),
        (0, "A diagram"),
        (1, "Components"),
        (0, "Appendix"),
        (0, "Index"),
    ]
    assert re.search(r"^index$", text, re.M | re.I)
    assert "paged layout" in text  # the index entry


def test_index_lists_cited_upstream_files(pdf: dict) -> None:
    index = pdf["layout"].split("\f")[-2]  # the last page (then an empty tail)
    assert re.search(r"^\s*index$", index, re.M | re.I)
    assert re.search(r"^\s*fixture \(upstream code\)$", index, re.M)
    assert re.search(r"^\s*fixture/attention\.py, \d+$", index, re.M)


def _bookmark_title(escaped: str) -> str:
    raw = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), escaped.encode())
    return raw.decode("utf-16")


def test_sphinx_design_cards_keep_title_and_body(pdf: dict) -> None:
    layout = pdf["layout"]
    assert re.search(r"^\s*Training\s*$", layout, re.M)  # the title on a line of its own
    assert "Splitting a model across devices." in layout
    assert re.search(r"^\s*PyTorch\s*$", layout, re.M) and "Tab two body." in layout


def test_symbols_and_emoji_are_drawn_in_prose_and_code(pdf: dict) -> None:
    """✔ in highlighted code once stopped LaTeX; symbols and emoji come from Symbola."""
    assert re.search(r"^\s*46\s+return out # ✔ checked, ⚠ long line follows$", pdf["layout"], re.M)
    assert "✓ done, ⚠ careful, 🚀 launch." in pdf["text"]
    fonts = subprocess.run(
        ["pdffonts", str(pdf["path"])], capture_output=True, text=True, check=True
    ).stdout
    assert "Symbola" in fonts


def test_a_glyph_no_font_has_fails_the_build(tmp_path: Path) -> None:
    """Unicode Greek in math: xelatex only logs it; the build must stop and name the page."""
    _need_pdf_tools()
    root = ROOT.parent / "test-pdf-glyph"
    proc = _cli("build", "--source", str(root), "--build", str(tmp_path), "--conf-dir", str(root))
    assert proc.returncode == 1
    assert "U+03B1 'α' (not in cmmi10) on page(s): index" in proc.stderr
    assert "\\alpha" in proc.stderr
    assert not (tmp_path / "pdf" / "atlas.pdf").exists()


# -- fast tests: no TeX ----------------------------------------------------------------------


def test_missing_tools_print_one_apt_get_line(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=str(tmp_path))  # nothing on PATH: no TeX, no fontconfig
    proc = _cli("build", "--build", str(tmp_path / "b"), env=env)
    assert proc.returncode == 3
    apt = [line.strip() for line in proc.stderr.splitlines() if "apt-get" in line]
    # the browser is found by its absolute path, not on PATH: listed only where it is absent
    browser = "" if os.path.isfile(tools.chromium_path()) else " chromium"
    assert apt == [
        "sudo apt-get install --no-install-recommends make texlive-xetex latexmk xindy"
        " fontconfig texlive-latex-recommended texlive-latex-extra texlive-lang-chinese"
        " fonts-freefont-otf fonts-dejavu-core fonts-noto-cjk fonts-symbola librsvg2-bin" + browser
    ]
    assert "xelatex (Debian package texlive-xetex)" in proc.stderr
    assert not (tmp_path / "b").exists()  # nothing was built


@pytest.mark.sphinx("latex", testroot="pdf", confoverrides={"mermaid_cmd": "/nowhere/mmdc"})
def test_missing_mermaid_renderer_stops_the_build(app, monkeypatch, tmp_path: Path) -> None:
    # the fixture's SVG figure is converted first: a stand-in rsvg-convert lets the build reach
    # the diagram on a machine without librsvg2-bin
    fake = tmp_path / "bin" / "rsvg-convert"
    fake.parent.mkdir()
    fake.write_text(
        '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = --output ] && shift && '
        "printf '%%PDF-1.4\\n' > \"$1\"; shift; done\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(PdfError) as info:
        app.build()
    message = str(info.value)
    assert re.search(
        r"diagrams\.md:\d+: the mermaid renderer '/nowhere/mmdc' cannot be run", message
    )
    assert "make setup" in message


@pytest.mark.sphinx("latex", testroot="pdf")
def test_svg_without_rsvg_convert_stops_the_build(app, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(PdfError) as info:
        app.build()
    message = str(info.value)
    assert re.search(r"diagrams\.md:\d+: the SVG \S*ledger\.svg needs rsvg-convert", message)
    assert "librsvg2-bin" in message


def test_log_scan_maps_errors_and_missing_glyphs_to_pages(tmp_path: Path) -> None:
    tex = "\n".join(
        [
            r"\begin{document}",
            r"\phantomsection\label{\detokenize{index::doc}}",
            "intro",
            r"\phantomsection\label{\detokenize{serving/kv::doc}}",
            "rocket \U0001f680 here, $\u03b1$",
            r"\undefinedmacro",
        ]
    )
    log = "\n".join(
        [
            "Missing character: There is no \U0001f680 (U+1F680) in font FreeSerif/OT:x;!",
            'Missing character: There is no \u03b1 ("3B1) in font cmmi10!',
            "Overfull \\hbox (12.5pt too wide) in paragraph at lines 5--5",
            "./atlas.tex:6: Undefined control sequence.",
            "l.6 \\undefinedmacro",
        ]
    )
    (tmp_path / "atlas.tex").write_text(tex, encoding="utf-8")
    (tmp_path / "atlas.log").write_text(log, encoding="utf-8")
    report, pages = logscan.read(tmp_path, "atlas")
    assert report.error_line == 6 and pages.page(6) == "serving/kv"
    assert pages.page(3) == "index" and pages.page(1) == "(front matter)"
    glyph = report.missing["1F680"]
    assert glyph.fonts == {"FreeSerif"} and glyph.pages == {"serving/kv"}
    assert report.missing["03B1"].fonts == {"cmmi10"}
    assert report.missing["03B1"].pages == {"serving/kv"}
    assert report.overfull == [(12.5, 5)]
    message = pdf_build._missing_glyphs_message(report)
    assert "U+1F680" in message and "serving/kv" in message
