"""fetch's last line, on plain Results: what was ready, what moved, what the citations got wrong."""

from __future__ import annotations

from atlas.upstream.fetch.cli import summary
from atlas.upstream.fetch.transfer import Result


def test_nothing_to_transfer() -> None:
    assert summary([Result("a"), Result("b")]) == (
        "upstreams: 2/2 ready; 0 objects, nothing transferred"
    )


def test_failed_upstreams_count_as_not_ready_and_their_bytes_are_not_counted() -> None:
    done = Result("a", objects=12, bytes=3 * 1024 * 1024)
    failed = Result("b", objects=5, bytes=999, error="offline")
    assert summary([done, failed]) == "upstreams: 1/2 ready; 12 objects, 3.0 MiB transferred"


def test_bad_revisions_are_counted_across_every_upstream() -> None:
    results = [
        Result("a", bad_revs=["p.md:3: a@zz: why"]),
        Result("b", error="refused", bad_revs=["q.md:9: b@1234567: why", "q.md:12: b@x: why"]),
    ]
    assert summary(results) == (
        "upstreams: 1/2 ready; 0 objects, nothing transferred; "
        "3 citation(s) name a revision that does not exist (listed above)"
    )
