"""`make linkcheck` (atlas.refs.linkcheck) against a local HTTP server; never the internet.

The server listens on 127.0.0.1 only and records every request, so tests can assert what was
sent (retries, pacing, a cache that sends nothing), not only what was reported.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from atlas.refs import report
from atlas.refs.github import Verifier
from gitfixtures import FixtureUpstream, make_book, make_repo

PAGE = b'<html><body><h1 id="present">Here</h1><a name="named">n</a></body></html>'


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.log: list[tuple[float, str, str]] = []
        self.hits: dict[str, int] = {}
        self.lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def _answer(self, body: bool) -> None:
        path = self.path
        with self.server.lock:
            self.server.log.append((time.monotonic(), self.command, path))
            self.server.hits[path] = self.server.hits.get(path, 0) + 1
            hits = self.server.hits[path]
        if path == "/slow":
            time.sleep(1.5)
        if path in {"/ok", "/slow"} or path.startswith("/paced/"):
            return self._send(200, PAGE if body else b"")
        if path == "/r1":
            return self._send(301, b"", {"Location": "/r2"})
        if path == "/r2":
            return self._send(302, b"", {"Location": "/ok"})
        if path == "/limited" and hits == 1:
            return self._send(429, b"", {"Retry-After": "1"})
        if path == "/limited":
            return self._send(200, PAGE if body else b"")
        if path == "/limited-long":
            return self._send(429, b"", {"Retry-After": "3600"})
        if path == "/flaky" and hits <= 2:
            return self._send(502, b"")
        if path == "/flaky":
            return self._send(200, b"")
        return self._send(404, b"not here")

    def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(False)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(True)


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def closed_port() -> int:
    """A local port nobody listens on (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


CONF = """import os, runpy
globals().update({k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items()
                  if k[:2] != "__"})
"""

FAST = {
    "linkcheck_timeout": 0.5,
    "linkcheck_retries": 2,
    "linkcheck_workers": 4,
    "linkcheck_rate_limit_timeout": 10.0,
    "atlas_linkcheck_backoff": 0.05,
    "atlas_linkcheck_host_intervals": {},
    "atlas_linkcheck_cache_days": 0,
}


def book(path: Path, links: list[str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "conf.py").write_text(CONF)
    body = "\n\n".join(f"Link {n}: <{url}>" for n, url in enumerate(links))
    (path / "index.md").write_text(f"# Links\n\n{body}\n")
    return path


def linkcheck(make_app: Any, srcdir: Path, **overrides: Any) -> dict[str, Any]:
    app = make_app("linkcheck", srcdir=srcdir, freshenv=True, confoverrides={**FAST, **overrides})
    app.build()
    data = json.loads((Path(app.outdir) / "atlas-linkcheck.json").read_text())
    data["statuscode"] = app.statuscode
    data["by_uri"] = {link["uri"]: link for link in data["links"]}
    data["app"] = app
    return data


def test_each_kind_of_answer_gets_its_category(make_app, tmp_path: Path, server: Server) -> None:
    b = server.base
    refused = f"http://127.0.0.1:{closed_port()}/gone"
    links = [
        f"{b}/ok", f"{b}/missing", f"{b}/r1", f"{b}/ok#present", f"{b}/ok#absent",
        f"{b}/slow", f"{b}/limited", f"{b}/limited-long", f"{b}/flaky", refused,
    ]  # fmt: skip
    data = linkcheck(make_app, book(tmp_path / "book", links))
    got = {
        uri.removeprefix(b): (link["category"], link["info"])
        for uri, link in data["by_uri"].items()
    }
    assert got[f"{b}/ok".removeprefix(b)] == ("working", "")
    assert got["/missing"][0] == "broken" and "404" in got["/missing"][1]
    assert got["/r1"][0] == "redirected" and got["/r1"][1] == f"{b}/ok"
    assert data["by_uri"][f"{b}/r1"]["code"] == 302  # the last hop of the 301 -> 302 chain
    assert got["/ok#present"] == ("working", "")
    assert got["/ok#absent"] == ("broken", "Anchor 'absent' not found")
    assert got["/slow"][0] == "timeout"
    assert got["/limited"][0] == "working"
    assert data["by_uri"][f"{b}/limited"]["rate_limited"] == 1  # waited its Retry-After, then OK
    assert got["/limited-long"][0] == "rate-limited"
    assert "Retry-After 3600 exceeds linkcheck_rate_limit_timeout" in got["/limited-long"][1]
    assert got["/flaky"][0] == "working"  # two 502s, healed by the retries
    assert got[refused][0] == "unreachable" and "Connection refused" in got[refused][1]
    assert data["statuscode"] == 1
    # what was sent: a 404 is not retried; a timeout is retried (2 attempts), a 502 too
    assert data["by_uri"][f"{b}/missing"]["attempts"] == 1
    assert data["by_uri"][f"{b}/slow"]["attempts"] == 2
    assert server.hits["/slow"] == 2
    assert server.hits["/limited-long"] == 1  # never waits an hour, never asks again


def test_report_is_readable_and_fails_on_broken_links(
    make_app, tmp_path: Path, server: Server, capsys
) -> None:
    data = linkcheck(
        make_app, book(tmp_path / "book", [f"{server.base}/ok", f"{server.base}/missing"])
    )
    outdir = Path(data["app"].outdir)
    assert report.main([str(outdir)]) == 1
    text = capsys.readouterr().out
    assert "Link check: 2 links" in text
    assert "Broken (the host answered" in text
    assert f"index.md:5: {server.base}/missing - " in text
    assert (outdir / "report.txt").read_text() in text
    assert report.main([str(tmp_path / "nowhere")]) == 2


def test_a_rerun_within_the_cache_age_sends_nothing(
    make_app, tmp_path: Path, server: Server
) -> None:
    links = [f"{server.base}/ok", f"{server.base}/missing", f"{server.base}/r1"]
    src = book(tmp_path / "book", links)
    cache = {
        "atlas_linkcheck_cache_days": 1,
        "atlas_linkcheck_cache_path": str(tmp_path / "c.json"),
    }
    first = linkcheck(make_app, src, **cache)
    sent = len(server.log)
    assert sent > 0 and first["requests_sent"] > 0  # redirects followed are not counted
    second = linkcheck(make_app, src, **cache)
    assert len(server.log) == sent  # nothing sent
    assert second["requests_sent"] == 0
    assert {link["source"] for link in second["links"]} == {"cache"}
    assert [link["category"] for link in second["links"]] == [
        link["category"] for link in first["links"]
    ]
    # with the cache off, the same run asks again
    linkcheck(make_app, src, atlas_linkcheck_cache_path=str(tmp_path / "c.json"))
    assert len(server.log) > sent


def test_a_host_is_paced_and_a_dead_host_is_not_hammered(
    make_app, tmp_path: Path, server: Server
) -> None:
    links = [f"{server.base}/paced/{n}" for n in range(4)]
    dead = f"127.0.0.1:{closed_port()}"
    links += [f"http://{dead}/a", f"http://{dead}/b", f"http://{dead}/c"]
    data = linkcheck(
        make_app, book(tmp_path / "book", links),
        atlas_linkcheck_host_intervals={"127.0.0.1": 0.3}, atlas_linkcheck_host_failures=1,
    )  # fmt: skip
    times = sorted(t for t, _, path in server.log if path.startswith("/paced/"))
    assert len(times) == 4
    # Sent 0.3 s apart, so the four span 0.9 s (unpaced, parallel workers send them within
    # milliseconds). Arrival jitters under load, and one late request can shrink a single gap to
    # almost nothing (seen in CI on two busy cores), so the test bounds the span, not each gap.
    assert times[-1] - times[0] >= 0.6
    dead_links = [link for link in data["links"] if dead in link["uri"]]
    assert {link["category"] for link in dead_links} == {"unreachable"}
    assert sum("its other links not requested" in link["info"] for link in dead_links) >= 2


def fixture_upstream(tmp_path: Path) -> tuple[Path, str]:
    text = "".join(f"line {n}\n" for n in range(1, 11))  # ten lines we wrote
    repo = make_repo(tmp_path / "demo", [{"src/ten.py": text, "docs/readme.md": "hi\n"}])
    root = make_book(
        tmp_path / "registry",
        {"README.md": "fixture\n"},
        {"demo": FixtureUpstream(repo, url="https://github.com/fixture/demo", init=True)},
    )
    return root, repo.head


def test_pinned_github_links_are_verified_from_git_objects(make_app, tmp_path: Path) -> None:
    root, sha = fixture_upstream(tmp_path)
    base = f"https://github.com/fixture/demo/blob/{sha}"
    links = [
        f"{base}/src/ten.py#L2-L5",
        f"{base}/src/ten.py#L10",
        f"{base}/src/ten.py#L5-L40",
        f"{base}/src/nope.py",
        f"https://github.com/fixture/demo/tree/{sha}/docs",
        f"https://github.com/fixture/demo/blob/{sha[:10]}/src/ten.py#L1-L3",
    ]
    data = linkcheck(make_app, book(tmp_path / "book", links), atlas_linkcheck_repo=str(root))
    got = {link["uri"]: link for link in data["links"]}
    assert data["requests_sent"] == 0  # the network is never asked
    assert got[links[0]]["category"] == "verified-locally"
    assert "has lines 2-5" in got[links[0]]["info"]
    assert got[links[1]]["category"] == "verified-locally"
    assert got[links[2]]["category"] == "broken"
    assert "src/ten.py has 10 lines at demo@" in got[links[2]]["info"]
    assert "the link cites L5-L40" in got[links[2]]["info"]
    assert got[links[3]]["category"] == "broken" and "does not exist" in got[links[3]]["info"]
    assert got[links[4]]["category"] == "verified-locally"
    assert got[links[5]]["category"] == "verified-locally"  # a short SHA resolves


def test_without_local_objects_a_pinned_link_is_unverified_offline(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "demo", [{"a.py": "x\n"}])
    root = make_book(
        tmp_path / "registry", {"README.md": "fixture\n"},
        {"demo": FixtureUpstream(repo, url="https://github.com/fixture/demo")},
    )  # fmt: skip
    verdict = Verifier(root).verify(f"https://github.com/fixture/demo/blob/{repo.head}/a.py#L1")
    assert verdict is not None and verdict.ok is None
    assert (
        verdict.message
        == "unverified offline: upstream 'demo' has no local objects (make upstreams)"
    )
    assert Verifier(root).verify(f"https://github.com/other/repo/blob/{repo.head}/a.py") is None


def test_the_stores_folder_answers_pinned_links(tmp_path: Path, monkeypatch) -> None:
    """The folder of extra stores (``atlas_upstreams_root``) is searched, as for citations."""
    monkeypatch.delenv("ATLAS_UPSTREAMS_ROOT", raising=False)
    repo = make_repo(tmp_path / "stores" / "demo", [{"a.py": "x\n"}])
    root = make_book(
        tmp_path / "registry", {"README.md": "fixture\n"},
        {"demo": FixtureUpstream(repo, url="https://github.com/fixture/demo")},
    )  # fmt: skip
    link = f"https://github.com/fixture/demo/blob/{repo.head}/a.py#L1"
    offline = Verifier(root).verify(link)  # without the folder: no objects here
    assert offline is not None and offline.ok is None
    verdict = Verifier(root, tmp_path / "stores").verify(link)
    assert verdict is not None and verdict.ok is True, verdict


@pytest.mark.sphinx("linkcheck", testroot="refs", freshenv=True)
def test_bibliography_urls_reach_the_link_checker(make_app, app_params) -> None:
    args, kwargs = app_params
    # every URL ignored: nothing is sent, yet each one must be collected (and listed)
    kwargs["confoverrides"] = {**FAST, "linkcheck_ignore": [r"https?://.*"]}
    app = make_app(*args, **kwargs)
    app.build()
    data = json.loads((Path(app.outdir) / "atlas-linkcheck.json").read_text())
    uris = {link["uri"] for link in data["links"]}
    assert {
        "https://arxiv.org/abs/1909.00001",
        "https://arxiv.org/abs/2101.00002",
        "https://doi.org/10.0000/fixture.3",
        "https://blog.example.invalid/posts/fixture",
        "https://example.invalid/other",
    } <= uris
    assert data["requests_sent"] == 0
    assert {link["category"] for link in data["links"]} == {"skipped"}


def test_no_request_is_sent_once_the_time_budget_is_spent(
    make_app, tmp_path: Path, server: Server
) -> None:
    links = [f"{server.base}/ok", f"{server.base}/missing"]
    data = linkcheck(make_app, book(tmp_path / "book", links), atlas_linkcheck_budget_s=1e-9)
    assert server.log == []
    for link in data["links"]:
        assert link["category"] == "unreachable"
        assert "budget of 1e-09 s is spent (atlas_linkcheck_budget_s)" in link["info"]


def test_a_server_that_never_answers_is_given_up_after_its_failures(
    make_app, tmp_path: Path
) -> None:
    with socket.socket() as silent:  # accepts connections (kernel backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        base = f"http://127.0.0.1:{silent.getsockname()[1]}"
        links = [f"{base}/page{n}" for n in range(5)]
        data = linkcheck(
            make_app, book(tmp_path / "book", links),
            linkcheck_workers=1, linkcheck_timeout=0.3, atlas_linkcheck_host_failures=2,
        )  # fmt: skip
    got = [(link["category"], link["info"]) for link in data["links"]]
    assert sum(cat == "timeout" for cat, _ in got) == 1  # two attempts, then the breaker opens
    assert sum("its other links not requested" in info for _, info in got) == 4, got
    assert data["requests_sent"] == 2
