"""Moving one pin: the lab pages a rebuild re-runs, per upstream, with the cache key of every
pin (the baseline: the key before issue 36) against the key of only the pins a page's labs read.

Read from the book's last build (``_build/doctrees/environment.pickle``: each page's labs and
the seconds each lab took when it last ran), so it needs one ``make html`` first; nothing runs.
For each upstream: pages re-run and their recorded lab seconds under both keys, and the ratio.

Run: ``.venv/bin/python benchmarks/lab_pins.py``. The last line printed is one JSON object.
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "ext"))

from atlas.bookroot import BookPaths  # noqa: E402
from atlas.labs.cache import upstream_states, upstreams_read  # noqa: E402
from atlas.labs.imports import LABKIT  # noqa: E402
from atlas.labs.state import LabsState  # noqa: E402
from atlas.project.envstate import state_of  # noqa: E402


def main() -> int:
    pickled = ROOT / "_build" / "doctrees" / "environment.pickle"
    if not pickled.is_file():
        print(f"{pickled} is missing: run `make html` first", file=sys.stderr)
        return 2
    with pickled.open("rb") as fh:
        env = pickle.load(fh)
    state = state_of(env, LabsState)
    names = set(upstream_states(BookPaths.at(ROOT)))
    seconds = {
        doc: sum(lab.seconds for lab in result.labs) for doc, result in state.results.items()
    }
    reads = {doc: upstreams_read(specs, names, LABKIT) for doc, specs in state.specs.items()}
    pages = sorted(reads)
    all_seconds = sum(seconds.get(d, 0.0) for d in pages)
    rows = {}
    for name in sorted(names):
        hit = [d for d in pages if name in reads[d]]
        s = sum(seconds.get(d, 0.0) for d in hit)
        rows[name] = {
            "pages_before": len(pages),
            "pages_after": len(hit),
            "seconds_before": round(all_seconds, 1),
            "seconds_after": round(s, 1),
            "ratio": round(s / all_seconds, 3) if all_seconds else None,
        }
        print(
            f"{name:<18} re-runs {len(hit):>3} of {len(pages)} pages, "
            f"{s:7.1f} s of {all_seconds:.1f} s recorded ({rows[name]['ratio']})"
        )
    print(json.dumps({"lab_pages": len(pages), "upstreams": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
