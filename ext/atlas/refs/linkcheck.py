"""``make linkcheck``: Sphinx's linkcheck builder, with what the book's hosts need on top.

Sphinx 9.0.4 already follows redirects, checks anchors, honours ``Retry-After`` on 429 and
retries (immediately). Added here, as a builder of the same name:

- per-host pacing (``atlas_linkcheck_host_intervals``: arXiv asks for one request per 3 s);
- retries with exponential back-off, only for what can heal (timeouts, connection errors, 5xx);
- a circuit breaker per server (host:port): once it failed ``atlas_linkcheck_host_failures``
  times in a row (refused, reset, timed out), or at once when its name does not resolve, its
  other links are reported unreachable without being requested: an offline run ends in seconds;
- a time budget for the whole check (``atlas_linkcheck_budget_s``), after which nothing is sent;
- a cap on 429s: a ``Retry-After`` beyond ``linkcheck_rate_limit_timeout`` or more than
  ``atlas_linkcheck_max_rate_limits`` 429s for one link ends as "rate-limited" instead of waiting;
- pinned GitHub links answered from the local git objects (:mod:`atlas.refs.github`);
- a cache of recent answers (:mod:`atlas.refs.cache`, ``atlas_linkcheck_cache_days``);
- ``atlas-linkcheck.json``: every link with its category, for :mod:`atlas.refs.report`.

Where each lives: pacing, the breaker and what a failure said in :mod:`atlas.refs.pacing`; the
checker and its workers (local answers, back-off, budget, 429 cap) in :mod:`atlas.refs.checker`;
this module is the builder and the report it writes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from sphinx.builders.linkcheck import CheckExternalLinksBuilder, _Status
from sphinx.util import logging

from atlas.bookroot import BookPaths
from atlas.refs.arxiv import paper_identity
from atlas.refs.cache import LinkCache
from atlas.refs.checker import AtlasChecker
from atlas.refs.config import RefsConfig
from atlas.refs.github import Verifier

logger = logging.getLogger(__name__)

REPORT_JSON = "atlas-linkcheck.json"


def category(status: str, detail: dict[str, Any]) -> str:
    """The report's bucket for one result."""
    if detail.get("gave_up_429"):
        return "rate-limited"
    if status == "working":
        return "verified-locally" if detail.get("source") == "git" else "working"
    if status == "broken":
        return "unreachable" if detail.get("outcome") == "unreachable" else "broken"
    if status in {"ignored", "unchecked"}:
        return "skipped"
    return status  # redirected, timeout


def bib_locations(app: Any) -> dict[str, str]:
    """Paper identity -> "references.bib:LINE (key)", so a bad bibliography link names its entry."""
    from atlas.refs.checks import bibliographies, shown

    found: dict[str, str] = {}
    for bib in bibliographies(app):
        for ident, key in bib.identities().items():
            entry = bib.entries[key]
            where = f"{shown(app, bib.path)}:{entry.line_of('url')} ({key})"
            found.setdefault(ident, where)
    return found


class AtlasLinkcheckBuilder(CheckExternalLinksBuilder):
    """Sphinx's ``linkcheck`` builder with :class:`AtlasChecker` and a categorised JSON."""

    name = "linkcheck"

    def finish(self) -> None:
        config = self.config
        settings = RefsConfig.of(config)
        outdir = Path(self.outdir)
        cache = LinkCache(settings.cache_path or outdir / "cache.json", settings.cache_days)
        paths = BookPaths.from_app(self._app)
        verifier = Verifier(Path(settings.repo or paths.root), paths.stores_root)
        checker = AtlasChecker(config, cache=cache, verifier=verifier)
        records: list[dict[str, Any]] = []
        bib_entries = bib_locations(self._app)
        started = time.monotonic()
        logger.info("")
        with (
            open(outdir / "output.txt", "w", encoding="utf-8") as self.txt_outfile,
            open(outdir / "output.json", "w", encoding="utf-8") as self.json_outfile,
        ):
            for result in checker.check(self.hyperlinks):
                self.process_result(result)
                if result.status == _Status.UNCHECKED:
                    continue  # in-page anchors, mailto: and the like: not external links
                detail = checker.details.get(result.uri, {})
                records.append(
                    {
                        "uri": result.uri,
                        "filename": str(self.env.doc2path(result.docname, False)),
                        "lineno": result.lineno,
                        "status": str(result.status),
                        "code": result.code,
                        "info": result.message.removeprefix(" - "),
                        "category": category(str(result.status), detail),
                        "source": detail.get(
                            "source", "network" if result.status != _Status.IGNORED else "none"
                        ),
                        "attempts": detail.get("attempts", 0),
                        "rate_limited": detail.get("rate_limited", 0),
                        "unverified": detail.get("unverified", ""),
                        "bib": bib_entries.get(paper_identity(result.uri) or "", ""),
                    }
                )
        cache.save()
        records.sort(key=lambda r: (r["filename"], r["lineno"], r["uri"]))
        counts: dict[str, int] = {}
        for record in records:
            counts[record["category"]] = counts.get(record["category"], 0) + 1
        report = {
            "version": 1,
            "elapsed_s": round(time.monotonic() - started, 2),
            "requests_sent": checker.requests_sent,
            "counts": dict(sorted(counts.items())),
            "hosts_down": dict(sorted(checker.breaker.down.items())),
            "links": records,
        }
        (outdir / REPORT_JSON).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        if self.broken_hyperlinks or self.timed_out_hyperlinks:
            self._app.statuscode = 1
