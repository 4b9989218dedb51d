"""The book builds, works offline, and never loads anything from a CDN."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Any absolute http(s) URL in a src= or href= of a script, link (stylesheet) or img tag.
REMOTE_ASSET = re.compile(
    r"<(?:script|link|img)\b[^>]*\b(?:src|href)=[\"'](?:https?:)?//", re.IGNORECASE
)
CDN_HOSTS = ("jsdelivr", "unpkg", "cdnjs", "googleapis", "gstatic", "mathjax.org")


def remote_assets(outdir: Path) -> list[str]:
    """Every built page, script or stylesheet that would load something from the network."""
    found = []
    for path in outdir.rglob("*"):
        if path.suffix not in {".html", ".js", ".css"} or "vendor" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".html" and REMOTE_ASSET.search(text):
            found.append(f"{path.relative_to(outdir)}: {REMOTE_ASSET.search(text).group(0)}")
        for host in CDN_HOSTS:
            if host in text:
                found.append(f"{path.relative_to(outdir)}: mentions {host}")
    return found


@pytest.mark.sphinx("html", testroot="offline")
def test_fixture_book_loads_nothing_from_a_cdn(app) -> None:
    app.build()
    assert app.statuscode == 0
    assert remote_assets(Path(app.outdir)) == []
    html = (Path(app.outdir) / "index.html").read_text()
    assert "_static/vendor/mermaid/mermaid.min.js" in html
    assert "_static/vendor/mathjax/tex-mml-chtml.js" in html
    assert (Path(app.outdir) / "_static/vendor/mathjax/output/chtml/fonts/woff-v2").is_dir()


@pytest.mark.sphinx("html", testroot="offline")
def test_the_cdn_check_can_fail(app, tmp_path) -> None:
    app.build()
    outdir = shutil.copytree(app.outdir, tmp_path / "html")
    page = outdir / "index.html"
    page.write_text(page.read_text() + '<script src="https://cdn.jsdelivr.net/npm/x.js"></script>')
    assert remote_assets(outdir) == [
        'index.html: <script src="https://',
        "index.html: mentions jsdelivr",
    ]


@pytest.mark.sphinx("html", testroot="offline")
def test_missing_npm_assets_is_one_clear_error(make_app, app_params, tmp_path, capsys) -> None:
    args, kwargs = app_params
    kwargs["confoverrides"] = {"atlas_node_modules": str(tmp_path / "nowhere")}
    with pytest.raises(SystemExit) as stopped:  # one clean error, exit 2 (atlas.project.files)
        make_app(*args, **kwargs)
    assert stopped.value.code == 2
    assert "run `npm ci` in the repository root" in capsys.readouterr().err


def chromium() -> str | None:
    return shutil.which("chromium")


@pytest.mark.browser
@pytest.mark.sphinx("html", testroot="offline")
def test_page_from_disk_renders_diagram_and_math_offline(app) -> None:
    """Opened from file:// with networking off: mermaid becomes SVG, math is typeset."""
    if chromium() is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    app.build()
    console: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium(),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_context(offline=True).new_page()
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
            page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
            page.on("requestfailed", lambda r: console.append(f"requestfailed: {r.url}"))
            page.goto((Path(app.outdir) / "index.html").as_uri())
            page.wait_for_selector("pre.mermaid svg", timeout=20_000)
            page.wait_for_selector("mjx-container", timeout=20_000)
            assert page.locator("mjx-container").count() == 2
            assert page.locator("button.copybtn").count() >= 1
            # furo's dark mode re-draws the diagram in the dark theme
            page.evaluate("document.body.dataset.theme = 'dark'")
            page.wait_for_selector("pre.mermaid svg", timeout=20_000)
        finally:
            browser.close()
    errors = [m for m in console if not m.startswith(("log:", "info:", "debug:"))]
    assert errors == []


def sphinx_build(src: str | Path, out: Path, *options: str, cwd: Path | None = None):
    """``sphinx-build -M html SRC OUT -q OPTIONS`` in a fresh process, as make runs it."""
    cmd = [sys.executable, "-m", "sphinx", "-M", "html", str(src), str(out), "-q", *options]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_real_book_builds_strictly(repo_root: Path, tmp_path: Path) -> None:
    """The book itself, with warnings as errors (as `make check` builds it).

    Every page is read and written afresh in ``tmp_path``; the labs' results are seeded from
    the checkout's lab cache (``_build/.labs-cache``) when there is one. That cache is keyed on
    the labs' code and inputs, not on the build folder, so a seeded entry is exactly the result
    this build would compute, and a lab whose code changed still runs. CI runs ``make check``
    first, so that this build runs no lab a second time."""
    cache = repo_root / "_build" / ".labs-cache"
    if cache.is_dir():
        shutil.copytree(cache, tmp_path / ".labs-cache")
    strict = ("-c", ".", "-W", "--keep-going", "-n", "-D", "suppress_warnings=upstream.missing")
    proc = sphinx_build("source", tmp_path, *strict, cwd=repo_root)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (tmp_path / "html" / "index.html").exists()


def test_two_builds_of_the_same_sources_give_the_same_html(repo_root: Path, tmp_path: Path) -> None:
    """Reproducible output: no dates, random ids or absolute paths in the pages."""
    outputs = []
    for name in ("first", "second"):
        src = shutil.copytree(repo_root / "tests/roots/test-offline", tmp_path / name / "src")
        proc = sphinx_build(src, src.parent / "out")
        assert proc.returncode == 0, proc.stderr[-2000:]
        html = src.parent / "out" / "html"
        outputs.append(
            {p.relative_to(html): p.read_bytes() for p in sorted(html.rglob("*")) if p.is_file()}
        )
    assert outputs[0].keys() == outputs[1].keys()
    assert [p for p in outputs[0] if outputs[0][p] != outputs[1][p]] == []
