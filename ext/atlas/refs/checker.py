"""The link checker and its workers: Sphinx's, with what the book's hosts need on top.

- :class:`AtlasChecker` answers a link from the local git objects (pinned GitHub links,
  :mod:`atlas.refs.github`) or the cache of recent answers (:mod:`atlas.refs.cache`) first,
  sends the rest to the workers, keeps what each link went through (attempts, 429s, where the
  answer came from) for the report, and stops sending once the check's time budget
  (``atlas_linkcheck_budget_s``) is spent;
- :class:`AtlasWorker` retries with exponential back-off only what can heal (timeouts,
  connection errors, 5xx), sends through a :class:`~atlas.refs.pacing.PacedSession`, and caps
  429s: a ``Retry-After`` beyond ``linkcheck_rate_limit_timeout`` or more than
  ``atlas_linkcheck_max_rate_limits`` of them for one link ends as "rate-limited".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

from sphinx.builders.linkcheck import (
    CheckResult,
    Hyperlink,
    HyperlinkAvailabilityChecker,
    HyperlinkAvailabilityCheckWorker,
    _Status,
)

from atlas.refs.cache import LinkCache
from atlas.refs.config import RefsConfig
from atlas.refs.github import Verifier
from atlas.refs.pacing import HostBreaker, HostPacer, PacedSession, retry_after_seconds, service_of

MAX_BACKOFF_S = 30.0


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
