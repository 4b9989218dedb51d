"""How long a link check takes when hosts do not answer: `make linkcheck`'s builder against
Sphinx's stock linkcheck (the baseline), measured in the same run.

Two fixture books of generated links, each checked by both builders with the same settings
(linkcheck_timeout, linkcheck_retries 3, 5 workers):

- ``silent``: N links to a local server that accepts connections and never answers (a host
  that hangs; every request costs the whole timeout);
- ``refused``: N links to a local port nobody listens on (a host that is down).

Nothing leaves 127.0.0.1. Last line: one JSON object (seconds, and the stock/atlas ratios).

    .venv/bin/python benchmarks/linkcheck_offline.py [--links 40] [--timeout 1.0]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BOOK = Path(__file__).resolve().parents[1]
STOCK_CONF = 'extensions = ["myst_parser"]\n'
ATLAS_CONF = (
    "import os, runpy\n"
    "globals().update({k: v for k, v in runpy.run_path(os.environ['ATLAS_BOOK_CONF']).items()"
    " if k[:2] != '__'})\n"
)


SETTINGS = "linkcheck_timeout = {timeout}\nlinkcheck_retries = 3\nlinkcheck_workers = 5\n"


def make_book(path: Path, conf: str, links: list[str]) -> Path:
    path.mkdir(parents=True)
    (path / "conf.py").write_text(conf)
    body = "\n\n".join(f"Link {n}: <{url}>" for n, url in enumerate(links))
    (path / "index.md").write_text(f"# Links\n\n{body}\n")
    return path


def check(book: Path) -> float:
    """Wall seconds of one linkcheck build (interpreter and extension start included)."""
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "linkcheck",
        "-q",
        "-E",
        str(book),
        str(book / "_out"),
    ]
    env = {**os.environ, "ATLAS_BOOK_CONF": str(BOOK / "conf.py")}
    start = time.monotonic()
    subprocess.run(cmd, env=env, capture_output=True, check=False, cwd=book)
    return round(time.monotonic() - start, 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--links", type=int, default=40)
    parser.add_argument("--timeout", type=float, default=1.0)
    args = parser.parse_args()
    with socket.socket() as silent, socket.socket() as probe, tempfile.TemporaryDirectory() as tmp:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1024)
        probe.bind(("127.0.0.1", 0))
        refused_port = probe.getsockname()[1]
        probe.close()
        urls = {
            "silent": f"http://127.0.0.1:{silent.getsockname()[1]}",
            "refused": f"http://127.0.0.1:{refused_port}",
        }
        result: dict[str, float | int] = {"links": args.links, "timeout_s": args.timeout}
        settings = SETTINGS.format(timeout=args.timeout)
        confs = {
            "stock": STOCK_CONF + settings,
            "atlas": ATLAS_CONF + settings + "atlas_linkcheck_cache_days = 0\n",
        }
        start_cost = {}
        for name, conf in confs.items():  # what a build with no links costs: subtracted below
            start_cost[name] = check(make_book(Path(tmp) / f"empty-{name}", conf, []))
            result[f"startup_{name}_s"] = start_cost[name]
        for case, base in urls.items():
            links = [f"{base}/page{n}" for n in range(args.links)]
            for name, conf in confs.items():
                book = make_book(Path(tmp) / f"{case}-{name}", conf, links)
                spent = round(max(0.0, check(book) - start_cost[name]), 2)
                result[f"{case}_{name}_s"] = spent
                print(f"{case:8} {name:6} {spent:7.2f} s (start excluded)", file=sys.stderr)
            result[f"{case}_stock_over_atlas"] = round(
                float(result[f"{case}_stock_s"]) / max(float(result[f"{case}_atlas_s"]), 1e-3), 2
            )
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
