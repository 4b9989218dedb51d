"""Pacing and circuit breaking per host, for the link checker's requests.

Sphinx's linkcheck asks every host as fast as its workers go and asks a dead host once per
link. Here, wrapped around each worker's session (:class:`PacedSession`):

- :class:`HostPacer`: at most one request per interval to a host
  (``atlas_linkcheck_host_intervals``: arXiv asks for one request per 3 s);
- :class:`HostBreaker`: once a server (host:port) failed ``atlas_linkcheck_host_failures``
  times in a row (refused, reset, timed out), or at once when its name does not resolve, its
  other links are not requested: an offline run ends in seconds;
- :func:`short_error` and :func:`retry_after_seconds`: what a failure or a 429 said, in a form
  the report and the back-off can use.

Nothing here knows Sphinx's checker: the session asks a :class:`RequestGate` (the checker, in
practice) whether it may send, and tells it what each request got.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

import requests
from sphinx.util.http_date import rfc1123_to_epoch


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


class RequestGate(Protocol):
    """What a :class:`PacedSession` asks before each request and tells after it."""

    pacer: HostPacer
    breaker: HostBreaker

    def budget_spent(self) -> str | None:
        """Why nothing more may be sent (the check's time budget is over), or None."""
        ...

    def count_request(self, url: str) -> None:
        """One request is about to leave."""
        ...


class PacedSession:
    """Wraps a worker's Sphinx session: pacing, breaker, and what the last request got."""

    def __init__(self, inner: Any, checker: RequestGate) -> None:
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
