"""atlas.refs.pacing on plain data: hosts, the breaker, the pacer and the paced session, with a
fake session and a fake gate instead of Sphinx's checker and the network."""

from __future__ import annotations

import time
from email.utils import formatdate
from typing import Any

import pytest
import requests
from atlas.refs.pacing import (
    HostBreaker,
    HostPacer,
    PacedSession,
    host_of,
    retry_after_seconds,
    service_of,
    short_error,
)


def test_a_server_is_its_host_and_port() -> None:
    assert host_of("https://ArXiv.org/abs/1706.03762") == "arxiv.org"
    assert service_of("https://arxiv.org/abs/1") == "arxiv.org:443"
    assert service_of("http://Example.com/x") == "example.com:80"
    assert service_of("http://127.0.0.1:8123/x") == "127.0.0.1:8123"
    assert host_of("mailto:someone") == ""


def test_short_error_keeps_the_useful_part() -> None:
    long = "HTTPSConnectionPool(host='x.invalid'): (Failed to resolve 'x.invalid' (...))"
    assert short_error(ValueError(long)) == "Failed to resolve 'x.invalid'"
    assert short_error(OSError("[Errno 111] Connection refused")) == "Connection refused"
    assert short_error(RuntimeError("y" * 500)) == "y" * 200


def test_retry_after_is_seconds_or_an_http_date() -> None:
    assert retry_after_seconds("120") == 120.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("") is None
    assert retry_after_seconds("soon") is None
    later = retry_after_seconds(formatdate(time.time() + 600, usegmt=True))
    assert later is not None and 590 < later <= 600


def test_the_pacer_matches_a_host_by_name_or_parent_domain() -> None:
    pacer = HostPacer({"ArXiv.org": 3})
    assert pacer.interval("arxiv.org") == ("arxiv.org", 3.0)
    assert pacer.interval("export.arxiv.org") == ("arxiv.org", 3.0)
    assert pacer.interval("notarxiv.org") is None
    assert pacer.wait("example.com") == 0.0


def test_the_pacer_spaces_requests_and_gives_up_when_told() -> None:
    pacer = HostPacer({"a.test": 0.6})
    assert pacer.wait("a.test") < 0.3  # the first request goes at once
    assert pacer.wait("a.test") >= 0.3  # the second waits its turn
    assert pacer.wait("a.test", give_up=lambda: True) < 0.3  # unless the host is given up


def test_the_breaker_opens_after_failures_in_a_row_or_at_once_when_fatal() -> None:
    breaker = HostBreaker(2)
    breaker.failure("a:443", "Connection refused")
    breaker.success("a:443")  # an answer resets the count
    breaker.failure("a:443", "Connection refused")
    assert breaker.reason("a:443") is None
    breaker.failure("a:443", "Connection refused")
    assert breaker.reason("a:443") == (
        "Connection refused (2 failed connection(s) to a:443; its other links not requested)"
    )
    breaker.failure("b:443", "Failed to resolve 'b'", fatal=True)
    assert breaker.reason("b:443") is not None
    assert HostBreaker(0).threshold == 1


class Gate:
    def __init__(self, threshold: int = 1, spent: str | None = None) -> None:
        self.pacer = HostPacer({})
        self.breaker = HostBreaker(threshold)
        self.spent = spent
        self.sent: list[str] = []

    def budget_spent(self) -> str | None:
        return self.spent

    def count_request(self, url: str) -> None:
        self.sent.append(url)


class Response:
    status_code = 204


class Inner:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error

    def get(self, url: str, **kwargs: Any) -> Response:
        if self.error is not None:
            raise self.error
        return Response()

    head = get


def test_the_session_records_answers_and_refusals_and_stops_asking_a_dead_server() -> None:
    gate = Gate(threshold=1)
    ok = PacedSession(Inner(), gate)
    assert ok.head(url="http://a.test/x").status_code == 204
    assert ok.last == ("http", 204)

    down = PacedSession(Inner(requests.exceptions.ConnectionError("Connection refused")), gate)
    with pytest.raises(requests.exceptions.ConnectionError):
        down.get("http://b.test/1")
    assert down.last == ("unreachable", 0)
    with pytest.raises(requests.exceptions.ConnectionError, match="not requested: Connection"):
        down.get("http://b.test/2")  # the breaker is open: nothing sent
    assert gate.sent == ["http://a.test/x", "http://b.test/1"]

    slow = PacedSession(Inner(requests.exceptions.ReadTimeout("read timed out")), Gate(2))
    with pytest.raises(requests.exceptions.Timeout):
        slow.get("http://c.test/")
    assert slow.last == ("timeout", 0)


def test_nothing_is_sent_once_the_budget_is_spent() -> None:
    gate = Gate(spent="the budget is spent")
    session = PacedSession(Inner(), gate)
    with pytest.raises(requests.exceptions.ConnectionError, match="not requested: the budget"):
        session.get("http://a.test/")
    assert session.last == ("unreachable", 0) and gate.sent == []
