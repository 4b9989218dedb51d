"""Both editions (``make html``: English, then Chinese) against the English edition alone.

The book is cloned from the last commit into a temporary folder (as in ``noop_build.py``),
with this checkout's .venv, node_modules and upstream objects; a first English build, untimed,
runs every lab once, so that every timed build finds the lab cache warm. ``--in-place`` builds
this checkout in ``_build`` instead, whose lab cache a ``make html`` has already warmed. Each run
then removes the doctrees and the HTML (never the lab cache) and times, interleaved so that load
on the machine hits both alike:

- English alone: ``python -m sphinx -M html source BUILD -c .``;
- both editions: ``make html`` (the upstream check, the English build, the Chinese build).

Sphinx's own counts say what each build did (documents read, pages written), and the
progress lines of the labs say whether the Chinese build ran any. Then a no-op ``make html``
must read and write nothing in either edition.

Target: both / English <= 1.6; the Chinese build runs 0 labs; the no-op reads 0 and writes 0
documents in each edition.

Measured on 2 idle cores, ``--in-place``:

- commit 7730a47 (``--runs 1``): English alone 94.7 s, both editions 249.8 s, ratio 2.64; the
  no-op read 3 documents and wrote 4 pages in each edition (the freshness page re-read itself
  every build, and the labs and problems index pages followed it), and the Chinese build alone
  took 231 s (its doctrees, 389 MB against 22 MB, pickled every translated message's own
  document: ``atlas.i18n.adopt``);
- commit ed9e5cc, those two fixed (``--runs 1``): 77.3 s, 147.9 s, ratio 1.91; the no-op read
  and wrote 0 in each edition;
- commit 6b6d153, with the glossary check and MyST's per-message document made cheap and the
  Chinese build on every core (``-j auto``): ratio 1.28 (81.6 s, 104.8 s) and 1.77 (77.5 s,
  136.7 s) in two runs of one, 1.29 (medians 90.9 s, 117.5 s) with ``--runs 2``; the Chinese
  build ran 0 labs; the no-op read and wrote 0 documents in each edition. The second run's
  spread is reported as measured, not explained.

Run: ``.venv/bin/python benchmarks/i18n_build.py [--runs N] [--in-place]``. The last line
printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from noop_build import BUILD, KEEP, REPO, clone, counts, run  # noqa: E402

ZH_MARK = "-D language=zh_CN"  # in the Chinese build's command line, which make echoes
RECIPE = re.compile(r"^\S*python\S* -m sphinx .*$", re.M)  # each build's output starts there
SPHINX_PAGES = {"genindex.html", "search.html"}  # written by every build, of no document
LAB_LINE = re.compile(r"^labs \[\d+/\d+\] ", re.M)


def editions(log: str) -> dict[str, str]:
    """The log of ``make html`` split into the English and the Chinese build's parts (make
    shows each build's output whole, in the order they finish, after its command line)."""
    starts = [m.start() for m in RECIPE.finditer(log)] + [len(log)]
    parts = {"en": "", "zh_CN": ""}
    for begin, end in zip(starts, starts[1:], strict=False):
        block = log[begin:end]
        parts["zh_CN" if ZH_MARK in block[:400] else "en"] += block  # the command line
    return parts


def pages_written(html: Path, language: str, since_ns: int) -> int:
    """HTML pages of the book's documents in one edition, written since ``since_ns``. Counted on
    disk, not in the log: the Chinese build runs with ``-j``, whose log names chunks of pages,
    not pages. Sphinx's own index and search pages are left out: it rewrites them on every
    build, no-op or not, and they are no document of the book."""
    folder = html / "zh" if language == "zh_CN" else html
    pages = folder.rglob("*.html")
    skip = {"_static", "_labs"} | ({"zh"} if language == "en" else set())
    return sum(
        1
        for page in pages
        if not skip & set(page.relative_to(folder).parts[:-1])
        and page.relative_to(folder).as_posix() not in SPHINX_PAGES
        and page.stat().st_mtime_ns >= since_ns
    )


def summary(log: str, html: Path, language: str, since_ns: int) -> dict[str, object]:
    return {
        "read": counts(log)["read"],
        "written": pages_written(html, language, since_ns),
        "labs_run": len(LAB_LINE.findall(log)),
    }


def fresh(book: Path, build: str) -> None:
    for name in ("doctrees", "doctrees-zh", "html"):
        shutil.rmtree(book / build / name, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="timed runs of each command")
    parser.add_argument(
        "--in-place",
        action="store_true",
        help="build this checkout in _build (its lab cache must be warm: run make html first)",
    )
    args = parser.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = "ext"
    stores = REPO / ".git" / "atlas-upstreams"
    if stores.is_dir():
        env["ATLAS_UPSTREAMS_ROOT"] = str(stores)
    build = "_build" if args.in_place else BUILD
    make_html = ["make", *KEEP, "html", f"BUILDDIR={build}"]
    english = [".venv/bin/python", "-m", "sphinx", "-M", "html", "source", build, "-c", "."]
    with tempfile.TemporaryDirectory(prefix="atlas-i18n-") as tmp:
        book = REPO if args.in_place else clone(Path(tmp))
        if not args.in_place:
            # Untimed: runs every lab once (the cache key holds the book's own paths, so a copy
            # of another checkout's cache would miss); the cache is warm from here on.
            run(book, english, env)
        en_times, both_times = [], []
        en_log = both_log = ""
        html = book / build / "html"
        for _ in range(args.runs):
            fresh(book, build)
            en_started = time.time_ns()
            seconds, en_log, status = run(book, english, env)
            assert status == 0, en_log[-3000:]
            en_times.append(seconds)
            english_alone = summary(en_log, html, "en", en_started)
            fresh(book, build)
            both_started = time.time_ns()
            seconds, both_log, status = run(book, make_html, env)
            assert status == 0, both_log[-3000:]
            both_times.append(seconds)
        both = {
            lang: summary(part, html, lang, both_started)
            for lang, part in editions(both_log).items()
        }
        noop_started = time.time_ns()
        _, noop_log, status = run(book, make_html, env)
        noop = {
            lang: summary(part, html, lang, noop_started)
            for lang, part in editions(noop_log).items()
        }
    result = {
        "english_s": round(statistics.median(en_times), 2),
        "both_s": round(statistics.median(both_times), 2),
        "ratio": round(statistics.median(both_times) / statistics.median(en_times), 3),
        "target_ratio": 1.6,
        "runs": args.runs,
        "in_place": args.in_place,
        "english_alone": english_alone,
        "both": both,
        "noop_both": noop,
        "noop_exit": status,
        "commit": subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
    }
    print(
        f"both editions {result['both_s']} s, English alone {result['english_s']} s: "
        f"ratio {result['ratio']} (target <= 1.6)"
    )
    zh = result["both"]["zh_CN"]
    print(
        f"  the Chinese build: {zh['read']} read, {zh['written']} written, "
        f"{zh['labs_run']} labs run"
    )
    for lang, c in result["noop_both"].items():
        print(
            f"  no-op make html, {lang}: {c['read']} documents read, {c['written']} pages written"
        )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
