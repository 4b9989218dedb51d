"""Every maintainer command finds the book the same way: from any folder inside it, or --root;
a book that cites upstreams but where a command finds none is an error, not "0 found"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from atlas import bookroot
from atlas.refs import report
from atlas.upstream import check, drift, fetch
from gitfixtures import FixtureUpstream, make_book

PAGE = "# Page\n\n```{upstream} demo pkg/net.py:8-9\n```\n"


@pytest.fixture
def book(tmp_path, demo) -> Path:
    files = {"conf.py": "# settings\n", "source/index.md": PAGE, "source/ch/p.md": "# P\n"}
    return make_book(tmp_path / "book", files, {"demo": FixtureUpstream(demo, pin=demo.head)})


def test_find_root_from_any_folder_inside_or_given(book, tmp_path) -> None:
    assert bookroot.find_root(start=book / "source" / "ch") == book
    assert bookroot.find_root(start=book) == book
    assert bookroot.find_root(book / "source" / "..") == book
    with pytest.raises(bookroot.NotABook, match=r"no book here: .* give --root PATH"):
        bookroot.find_root(start=tmp_path)
    with pytest.raises(bookroot.NotABook, match=r"is not a book"):
        bookroot.find_root(tmp_path)


def test_check_from_source_finds_the_same_citations(book, stores, monkeypatch, capsys) -> None:
    outputs = []
    for where in (book, book / "source", book / "source" / "ch"):
        monkeypatch.chdir(where)
        code = check.main(["check", "--stores", str(stores)])
        out = capsys.readouterr().out
        assert code == 1 and "source/index.md" in out and "unlocked" in out
        outputs.append(out.splitlines()[:3])
    assert outputs[0] == outputs[1] == outputs[2]


def test_check_run_outside_the_book_is_an_error(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert check.main(["check"]) == 2
    assert "check: no book here" in capsys.readouterr().err


def test_finding_no_citation_in_a_book_that_cites_is_an_error(book, stores, capsys) -> None:
    assert check.main(["lock", "--root", str(book), "--stores", str(stores)]) == 0
    capsys.readouterr()
    # pages moved elsewhere, or a wrong --source: the lock still records the book's citations
    (book / "source" / "index.md").write_text("# Page without citations\n")
    code = check.main(["check", "--root", str(book), "--stores", str(stores)])
    err = capsys.readouterr().err
    assert code == 2
    assert "no upstream citation found in 2 page(s)" in err and "records 1" in err
    code = check.main(["check", "--root", str(book), "--source", "nowhere"])
    assert code == 2


def test_fetch_drift_and_report_find_the_book_from_a_subfolder(book, monkeypatch, capsys) -> None:
    monkeypatch.chdir(book / "source" / "ch")
    assert fetch.main(["fetch", "nope"]) == 2
    assert "unknown upstream(s) nope; known: demo" in capsys.readouterr().err
    assert drift.main(["drift", "nope"]) == 2
    assert "unknown upstream 'nope'; known: demo" in capsys.readouterr().err
    assert drift.main(["bump", "nope", "HEAD", "--dry-run"]) == 2
    assert "unknown upstream 'nope'" in capsys.readouterr().err
    out = book / "_build" / "linkcheck"
    out.mkdir(parents=True)
    (out / "atlas-linkcheck.json").write_text(json.dumps({"links": [], "counts": {}}))
    assert report.main([]) == 0
    assert (out / "report.txt").is_file()


def test_command_line_from_a_subfolder(book, stores) -> None:
    cmd = [sys.executable, "-m", "atlas.upstream", "check", "--stores", str(stores)]
    proc = subprocess.run(cmd, cwd=book / "source", capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "source/index.md" in proc.stdout


def test_printed_commands_work_where_they_are_printed(book, tmp_path) -> None:
    python = bookroot.python(book)
    assert bookroot.command(book, "lock", cwd=book) == f"{python} -m atlas.upstream lock"
    (book / "Makefile").write_text("lock:  ## refresh upstreams.lock\n\techo\n")
    assert bookroot.command(book, "lock", cwd=book) == "make lock"
    assert bookroot.command(book, "lock", cwd=book / "source").endswith("-m atlas.upstream lock")
    outside = bookroot.command(book, "lock", cwd=tmp_path)
    assert outside.endswith(f"-m atlas.upstream lock --root {book}")
    assert Path(outside.split()[0]).is_absolute()
