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
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
from sphinx.builders.linkcheck import (
    CheckExternalLinksBuilder,
    CheckResult,
    Hyperlink,
    HyperlinkAvailabilityChecker,
    HyperlinkAvailabilityCheckWorker,
    _Status,
)
from sphinx.util import logging
from sphinx.util.http_date import rfc1123_to_epoch

from atlas.bookroot import BookPaths
from atlas.refs.arxiv import paper_identity
from atlas.refs.cache import LinkCache
from atlas.refs.config import RefsConfig
from atlas.refs.github import Verifier

logger = logging.getLogger(__name__)

REPORT_JSON = "atlas-linkcheck.json"
MAX_BACKOFF_S = 30.0


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def service_of(url: str) -> str:
    """host:port, what the circuit breaker tracks (another port is another server)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{(parts.hostname or '').lower()}:{port}"


class HostPacer:
    """At most one request per interval to a host (matched by name or parent domain)."""

    def __init__(self, intervals: dict[str, float]) -> None:
        self.intervals = {h.lower(): float(s) for h, s in intervals.items()}
        self.next_slot: dict[str, float] = {}
        self.lock = threading.Lock()

    def interval(self, host: str) -> tuple[str, float] | None:
        for domain, seconds in self.intervals.items():
            if host == domain or host.endswith("." + domain):
                return domain, seconds
        return None

    def wait(self, host: str, give_up: Callable[[], bool] = lambda: False) -> float:
        """Sleep until this host may be asked again (or until ``give_up()``); seconds slept."""
        found = self.interval(host)
        if found is None:
            return 0.0
        domain, seconds = found
        with self.lock:
            now = time.monotonic()
            slot = max(now, self.next_slot.get(domain, now))
            self.next_slot[domain] = slot + seconds
        while time.monotonic() < slot and not give_up():
            time.sleep(min(0.2, slot - time.monotonic()))
        return max(0.0, time.monotonic() - now)


class HostBreaker:
    """Stops asking a host that failed at the connection level too often in a row."""

    def __init__(self, threshold: int) -> None:
        self.threshold = max(1, threshold)
        self.failures: dict[str, int] = {}
        self.down: dict[str, str] = {}
        self.lock = threading.Lock()

    def reason(self, host: str) -> str | None:
        return self.down.get(host)

    def failure(self, host: str, error: str, *, fatal: bool = False) -> None:
        with self.lock:
            count = self.failures.get(host, 0) + 1
            self.failures[host] = count
            if fatal or count >= self.threshold:
                self.down.setdefault(
                    host,
                    f"{error} ({count} failed connection(s) to {host}; "
                    "its other links not requested)",
                )

    def success(self, host: str) -> None:
        with self.lock:
            self.failures[host] = 0


def short_error(exc: BaseException) -> str:
    """The useful part of a requests error ("Failed to resolve 'x'", "Connection refused")."""
    text = str(exc)
    for pattern in (
        r"Failed to resolve '[^']+'",
        r"Connection refused",
        r"Network is unreachable",
        r"timed out",
        r"Name or service not known",
        r"No route to host",
        r"Connection reset",
    ):
        match = re.search(pattern, text)
        if match:
            return match.group(0)
    return text[:200]


class PacedSession:
    """Wraps a worker's Sphinx session: pacing, breaker, and what the last request got."""

    def __init__(self, inner: Any, checker: AtlasChecker) -> None:
        self.inner = inner
        self.checker = checker
        self.last: tuple[str, int] = ("none", 0)

    def head(self, url: str, **kwargs: Any) -> Any:
        return self._call(self.inner.head, url, **kwargs)

    def get(self, url: str, **kwargs: Any) -> Any:
        return self._call(self.inner.get, url, **kwargs)

    def _call(self, method: Any, url: str, **kwargs: Any) -> Any:
        host, service = host_of(url), service_of(url)
        reason = self.checker.breaker.reason(service) or self.checker.budget_spent()
        if reason:
            self.last = ("unreachable", 0)
            raise requests.exceptions.ConnectionError(f"not requested: {reason}")
        self.checker.pacer.wait(host, lambda: self.checker.breaker.reason(service) is not None)
        reason = self.checker.breaker.reason(service)  # went down while we waited our turn
        if reason:
            self.last = ("unreachable", 0)
            raise requests.exceptions.ConnectionError(f"not requested: {reason}")
        self.checker.count_request(url)
        try:
            response = method(url=url, **kwargs)
        except requests.exceptions.Timeout as exc:  # no answer in time: counts, as a refusal
            self.last = ("timeout", 0)
            self.checker.breaker.failure(service, short_error(exc))
            raise
        except requests.exceptions.ConnectionError as exc:
            self.last = ("unreachable", 0)
            text = str(exc)
            self.checker.breaker.failure(service, short_error(exc), fatal="resolve" in text.lower())
            raise
        self.last = ("http", response.status_code)
        self.checker.breaker.success(service)
        return response

    def close(self) -> None:
        self.inner.close()


def retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        try:
            return rfc1123_to_epoch(value) - time.time()
        except (ValueError, TypeError):
            return None


class AtlasWorker(HyperlinkAvailabilityCheckWorker):
    """Sphinx's worker with back-off retries, pacing and the breaker."""

    def __init__(
        self, config: Any, rqueue: Any, wqueue: Any, rate_limits: Any, checker: AtlasChecker
    ) -> None:
        super().__init__(config, rqueue, wqueue, rate_limits)
        self.checker = checker
        settings = RefsConfig.of(config)
        self.backoff = settings.backoff
        self.max_rate_limits = settings.max_rate_limits
        self._session = PacedSession(self._session, checker)  # type: ignore[assignment]
        self._uri = ""

    def _check(self, docname: str, uri: str, hyperlink: Hyperlink) -> tuple[_Status, str, int]:
        try:
            return self._check_with_retries(docname, uri, hyperlink)
        except Exception as exc:  # a dead worker thread would hang the build: report instead
            return (
                _Status.BROKEN,
                f"link checker failed on this link: {type(exc).__name__}: {exc}",
                0,
            )

    def _check_with_retries(
        self, docname: str, uri: str, hyperlink: Hyperlink
    ) -> tuple[_Status, str, int]:
        if not uri.startswith(("http:", "https:")) or any(
            m.match(docname) for m in self.documents_exclude
        ):
            return super()._check(docname, uri, hyperlink)
        session: PacedSession = self._session  # type: ignore[assignment]
        detail = self.checker.detail(uri)
        service = service_of(uri)
        self._uri = uri
        status, info, code = _Status.UNKNOWN, "", 0
        for attempt in range(max(1, self.retries)):
            if attempt:  # back off, unless the server is given up meanwhile
                until = time.monotonic() + min(MAX_BACKOFF_S, self.backoff * 2 ** (attempt - 1))
                while time.monotonic() < until and not self.checker.breaker.reason(service):
                    time.sleep(min(0.1, max(0.0, until - time.monotonic())))
            session.last = ("none", 0)
            status, info, code = self._check_uri(uri, hyperlink)
            detail["attempts"] = detail.get("attempts", 0) + 1
            kind, http = session.last
            detail["outcome"] = kind
            detail["http_status"] = http
            if status == _Status.RATE_LIMITED or detail.get("gave_up_429"):
                break
            transient = status == _Status.TIMEOUT or (
                status == _Status.BROKEN and (kind in {"timeout", "unreachable"} or http >= 500)
            )
            if not transient or self.checker.breaker.reason(service):
                break
        kind = detail.get("outcome")
        if detail.get("gave_up_429"):
            info = f"rate-limited: {detail['gave_up_429']}"
        elif status == _Status.BROKEN and kind == "unreachable":
            reason = self.checker.breaker.reason(service_of(uri))
            info = f"unreachable: {reason or info}"
        return status, info, code

    def limit_rate(self, response_url: str, retry_after: str | None) -> float | None:
        detail = self.checker.detail(self._uri or response_url)
        detail["rate_limited"] = detail.get("rate_limited", 0) + 1
        detail.setdefault("retry_after", []).append(retry_after or "")
        wait = retry_after_seconds(retry_after)
        if wait is not None and wait > self.rate_limit_timeout:
            detail["gave_up_429"] = (
                f"Retry-After {retry_after} exceeds linkcheck_rate_limit_timeout "
                f"({self.rate_limit_timeout:g} s)"
            )
            return None
        if detail["rate_limited"] > self.max_rate_limits:
            detail["gave_up_429"] = (
                f"{detail['rate_limited']} responses 429 (atlas_linkcheck_max_rate_limits)"
            )
            return None
        next_check = super().limit_rate(response_url, retry_after)
        if next_check is None:
            detail["gave_up_429"] = (
                f"back-off beyond linkcheck_rate_limit_timeout ({self.rate_limit_timeout:g} s)"
            )
        return next_check


class AtlasChecker(HyperlinkAvailabilityChecker):
    """Answers from the git objects and the cache first; the rest goes to the workers."""

    def __init__(self, config: Any, *, cache: LinkCache, verifier: Verifier) -> None:
        super().__init__(config)
        self.cache = cache
        self.verifier = verifier
        settings = RefsConfig.of(config)
        self.pacer = HostPacer(dict(settings.host_intervals))
        self.breaker = HostBreaker(settings.host_failures)
        self.details: dict[str, dict[str, Any]] = {}
        self.requests_sent = 0
        self._lock = threading.Lock()
        self.budget = settings.budget_s
        self.deadline = time.monotonic() + self.budget if self.budget > 0 else None

    def budget_spent(self) -> str | None:
        """Why no more requests may be sent: the whole check's time budget is over."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            return (
                f"the link check's budget of {self.budget:g} s is spent (atlas_linkcheck_budget_s)"
            )
        return None

    def detail(self, uri: str) -> dict[str, Any]:
        with self._lock:
            return self.details.setdefault(uri, {})

    def count_request(self, url: str) -> None:
        with self._lock:
            self.requests_sent += 1

    def invoke_threads(self) -> None:
        for _ in range(self.num_workers):
            worker = AtlasWorker(self.config, self.rqueue, self.wqueue, self.rate_limits, self)
            worker.start()
            self.workers.append(worker)

    def _local(self, hyperlink: Hyperlink) -> CheckResult | None:
        uri = hyperlink.uri
        try:
            verdict = self.verifier.verify(uri)
        except Exception as exc:  # never a traceback: say what failed and check online
            verdict = None
            self.detail(uri)["unverified"] = f"unverified offline: {type(exc).__name__}: {exc}"
        if verdict is not None and verdict.ok is None:
            self.detail(uri)["unverified"] = verdict.message
            verdict = None
        if verdict is not None:
            self.detail(uri)["source"] = "git"
            status = _Status.WORKING if verdict.ok else _Status.BROKEN
            message = (
                f" - verified from git objects: {verdict.message}"
                if verdict.ok
                else verdict.message
            )
            return CheckResult(uri, hyperlink.docname, hyperlink.lineno, status, message, 0)
        cached = self.cache.get(uri)
        if cached is not None and not self.is_ignored_uri(uri):
            self.detail(uri).update(source="cache", checked=cached.get("checked"))
            status = _Status(cached["status"])
            return CheckResult(
                uri,
                hyperlink.docname,
                hyperlink.lineno,
                status,
                cached.get("info", ""),
                int(cached.get("code", 0)),
            )
        return None

    def check(self, hyperlinks: dict[str, Hyperlink]) -> Iterator[CheckResult]:
        remaining: dict[str, Hyperlink] = {}
        for uri, hyperlink in hyperlinks.items():
            local = None if self.is_ignored_uri(uri) else self._local(hyperlink)
            if local is not None:
                yield local
            else:
                remaining[uri] = hyperlink
        for result in super().check(remaining):
            detail = self.detail(result.uri)
            detail.setdefault("source", "network")
            answered = detail.get("outcome") == "http" and not detail.get("gave_up_429")
            code = int(detail.get("http_status", 0))
            if answered and code != 429 and code < 500:
                self.cache.put(result.uri, str(result.status), result.message, result.code)
            yield result


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
        root = settings.repo or BookPaths.from_app(self._app).root
        verifier = Verifier(Path(root))
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
