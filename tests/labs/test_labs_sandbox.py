"""The lab sandbox holds: each fault a lab tried on the real book is an error at that lab, and
no fault loses the build's environment or the lab cache.

The faults: a child left running (the build used to wait on it for ever), a write into the
book's tree (it used to be published), a lab that kills the lab server (it used to pass and
the next page was blamed), output with undecodable bytes and ``:timeout: inf`` (both used to
crash Sphinx, which deletes ``environment.pickle``). Each is checked with Landlock where the
kernel has it and with the detecting fallback (``ATLAS_LABS_SANDBOX=detect``).
"""

from __future__ import annotations

import math
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from atlas.labs import landlock
from atlas.labs.directive import _positive_float, parse_examples
from atlas.labs.model import ExampleResult, LabResult, LabSpec, PageResult
from atlas.labs.runner import Job, LabRunner
from atlas.labs.sandbox import MODE_VARIABLE, Snapshot
from atlas.settings import Invalid, number

HAS_LANDLOCK = landlock.abi_version() >= 1
SCOPES_SIGNALS = landlock.abi_version() >= 6
MODES = [
    pytest.param("landlock", marks=pytest.mark.skipif(not HAS_LANDLOCK, reason="no Landlock")),
    "detect",
]
RUN_DEADLINE = 120.0  # seconds: a run that takes longer has hung (it used to hang for ever)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The sandbox the workers get: Landlock, or detection only (as on a kernel without it)."""
    if request.param == "detect":
        monkeypatch.setenv(MODE_VARIABLE, "detect")
    else:
        monkeypatch.delenv(MODE_VARIABLE, raising=False)
    return request.param


def _job(name: str, text: str, timeout: float = 30.0, book: Path | None = None) -> Job:
    spec = LabSpec(name, 0, "lab", name, text, 1, 1, parse_examples(text, 1), timeout)
    return Job(name, name, [spec], book_root=str(book or ""))


def run(jobs: list[Job], log: Path) -> dict[str, PageResult]:
    """Run the jobs in one runner; fail (not hang) if they are not all done in time."""
    pages: dict[str, PageResult] = {}
    errors: list[BaseException] = []

    def target() -> None:
        try:
            with LabRunner(log, jobs=1) as runner:
                for job, page in runner.run(jobs):
                    pages[job.docname] = page
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(RUN_DEADLINE)
    if thread.is_alive():
        pytest.fail(f"the labs hung: {sorted(pages)} of {[job.docname for job in jobs]} done")
    if errors:
        raise errors[0]
    return pages


def _pid_file() -> Path:
    """A file a lab may write under any sandbox (torch shares memory in /dev/shm)."""
    return Path("/dev/shm") / f"atlas-sandbox-test-{uuid.uuid4().hex}"


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


@pytest.fixture
def pid_file() -> Iterator[Path]:
    path = _pid_file()
    yield path
    path.unlink(missing_ok=True)


# -- 1. no process outlives its lab --------------------------------------------------------------
def test_a_child_left_running_fails_its_lab_and_nothing_hangs(tmp_path: Path, pid_file) -> None:
    orphan = ">>> import os, time\n>>> if os.fork() == 0:\n...     time.sleep(600); os._exit(0)\n"
    daemon = (
        ">>> import os, time\n"
        ">>> if os.fork() == 0:\n"
        "...     os.setsid()\n"
        "...     if os.fork() == 0:\n"
        f"...         open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "...         time.sleep(600)\n"
        "...     os._exit(0)\n"
        ">>> while not os.path.exists(" + repr(str(pid_file)) + "): time.sleep(0.01)\n"
    )
    started = time.monotonic()
    pages = run(
        [_job("orphan", orphan), _job("daemon", daemon), _job("fine", ">>> 1\n1\n")],
        tmp_path / "worker.log",
    )
    assert time.monotonic() - started < 60
    for name in ("orphan", "daemon"):
        lab = pages[name].labs[0]
        assert lab.status == "failed", (name, lab)
        assert lab.failed_example is None  # the error is at the lab's line, not an example's
        assert "it left 1 process running after its last example" in lab.message
        assert "a lab must wait for every process it starts" in lab.message
    assert "(a fork of the lab's process)" in pages["orphan"].labs[0].message
    assert pages["fine"].labs[0].status == "passed"
    assert _gone(int(pid_file.read_text()))  # the double-forked daemon was found and killed


def test_a_helper_the_book_keeps_across_labs_is_not_a_leftover(tmp_path: Path, pid_file) -> None:
    """The persistent git reader (atlas.git.process) is started by one lab, reused by the next,
    and declared with atlas.processes.long_lived; it ends with the worker."""
    first = (
        ">>> import subprocess\n"
        ">>> from atlas.processes import long_lived\n"
        ">>> helper = subprocess.Popen(['sleep', '600'])\n"
        ">>> long_lived(helper.pid)\n"
        f">>> _ = open({str(pid_file)!r}, 'w').write(str(helper.pid))\n"
    )
    second = ">>> helper.poll() is None\nTrue\n"
    spec = [
        LabSpec("page", i, f"lab{i}", f"lab{i}", text, 1, 1, parse_examples(text, 1), 30.0)
        for i, text in enumerate([first, second])
    ]
    pages = run([Job("page", "page", spec)], tmp_path / "worker.log")
    assert [lab.status for lab in pages["page"].labs] == ["passed", "passed"], pages
    helper = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while not _gone(helper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(helper), "the helper outlived its worker"


def test_a_timeout_kills_the_whole_tree(tmp_path: Path, pid_file) -> None:
    text = (
        ">>> import os, time\n"
        ">>> if os.fork() == 0:\n"
        "...     os.setsid()\n"
        f"...     open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "...     time.sleep(600); os._exit(0)\n"
        ">>> time.sleep(600)\n"
    )
    started = time.monotonic()
    pages = run([_job("hangs", text, timeout=2.0), _job("next", ">>> 1\n1\n")], tmp_path / "w.log")
    assert time.monotonic() - started < 60
    lab = pages["hangs"].labs[0]
    assert (lab.status, lab.failed_example) == ("timeout", 2)
    assert "timed out after 2 s in example 3" in lab.message
    assert pages["next"].labs[0].status == "passed"
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child), "the lab's child outlived the lab's timeout"


# -- 2. no write outside the scratch folder ------------------------------------------------------
def _writer(book: Path) -> str:
    return (
        ">>> import os\n"
        f">>> with open({str(book / 'index.md')!r}, 'a') as page:\n"
        "...     _ = page.write('appended by a lab')\n"
        f">>> with open({str(book / 'planted.md')!r}, 'w') as page:\n"
        "...     _ = page.write('# Planted')\n"
    )


SCRATCH_LAB = (
    ">>> import os, tempfile\n"
    ">>> with open('out.txt', 'w') as out:\n"
    "...     _ = out.write('scratch')\n"
    ">>> open(os.path.join(tempfile.mkdtemp(), 'x'), 'w').close()\n"
    ">>> open('out.txt').read(), os.getcwd() == tempfile.gettempdir()\n"
    "('scratch', True)\n"
)


def test_a_write_into_the_book_is_an_error_at_the_lab(tmp_path: Path, mode: str) -> None:
    book = tmp_path / "book"
    (book / "sub").mkdir(parents=True)
    (book / "index.md").write_text("# Index\n")
    before = Snapshot.of(book)
    pages = run(
        [_job("writer", _writer(book), book=book), _job("scratch", SCRATCH_LAB, book=book)],
        tmp_path / "worker.log",
    )
    lab = pages["writer"].labs[0]
    assert lab.status == "failed"
    if mode == "landlock":  # refused: nothing written, the example that tried fails
        assert lab.failed_example == 1
        got = lab.examples[1].got
        assert "PermissionError" in got and "index.md" in got
        assert "the lab sandbox refused this write" in got
        assert Snapshot.of(book).changes(before) == []
    else:  # detected: the lab fails, naming what it changed
        assert lab.failed_example is None
        assert (
            "it wrote outside its scratch folder, into the book's tree: index.md (modified), "
            "planted.md (created)"
        ) in lab.message
    assert pages["scratch"].labs[0].status == "passed", pages["scratch"].labs[0]


# -- 3. a lab that kills the lab server is blamed, and the build goes on -------------------------
def test_a_lab_that_kills_the_server_is_blamed_and_the_next_pages_run(
    tmp_path: Path, mode: str
) -> None:
    killer = ">>> import os, signal\n>>> os.kill(os.getppid(), signal.SIGKILL)\n"
    jobs = [_job("before", ">>> 1\n1\n"), _job("killer", killer)]
    jobs += [_job(f"after{i}", ">>> 2 * 21\n42\n") for i in range(3)]
    pages = run(jobs, tmp_path / "worker.log")
    assert [pages[f"after{i}"].labs[0].status for i in range(3)] == ["passed"] * 3
    assert pages["before"].labs[0].status == "passed"
    lab = pages["killer"].labs[0]
    if mode == "landlock" and SCOPES_SIGNALS:  # the kernel refuses the signal
        assert (lab.status, lab.failed_example) == ("failed", 1)
        assert "PermissionError" in lab.examples[1].got
    else:
        assert (lab.status, lab.failed_example) == ("crashed", 1)
        assert "the lab server (the zygote that forks each page's worker) died (killed by " in (
            lab.message
        )
        assert "a lab must not kill the processes that run it" in lab.message


# -- 4. and 5. output and options that used to crash Sphinx ---------------------------------------
def test_undecodable_output_is_shown_with_replacement_characters() -> None:
    example = ExampleResult("failed", "caf\udce9 \ud800")
    assert example.got == "caf\ufffd \ufffd"
    assert LabResult("crashed", message="\udcff").message == "\ufffd"
    example.got.encode("utf-8")  # what every writer of the page, log and report does


@pytest.mark.parametrize("value", ["inf", "-inf", "Infinity", "1e400", "nan", "0", "-1", "x"])
def test_a_timeout_that_is_not_a_finite_positive_number_is_rejected(value: str) -> None:
    with pytest.raises(ValueError, match=f'":timeout: {value}" is not a'):
        _positive_float(value)
    assert _positive_float("0.5") == 0.5


@pytest.mark.parametrize("value", [math.inf, math.nan])
def test_a_number_setting_rejects_inf_and_nan(value: float) -> None:
    with pytest.raises(Invalid):
        number(0, above=True).check(value)


# -- 6. no fault deletes the environment or the lab cache -----------------------------------------
def test_no_fault_deletes_the_environment_or_the_cache(
    tmp_path: Path, rootdir: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sphinx._cli.util.errors
    from sphinx.cmd.build import build_main

    src = tmp_path / "book"
    shutil.copytree(rootdir / "test-labs-sandbox", src)
    monkeypatch.setenv("ATLAS_TEST_BOOK", str(src))
    crashes: list[BaseException] = []
    monkeypatch.setattr(
        sphinx._cli.util.errors, "handle_exception", lambda exc, **_: crashes.append(exc)
    )
    build = tmp_path / "_build"
    warnings = tmp_path / "warnings.txt"
    index = (src / "index.md").read_text()

    def sphinx_build() -> tuple[int, str]:
        args = ["-b", "html", "-d", str(build / "doctrees"), "-w", str(warnings), "-q"]
        code = build_main([*args, str(src), str(build / "html")])
        return code, warnings.read_text(encoding="utf-8")

    code, log = sphinx_build()
    assert crashes == [], crashes
    assert code == 1  # the labs failed, each reported; not 2 (a crash)
    assert (build / "doctrees" / "environment.pickle").is_file()
    assert list((build / ".labs-cache").glob("*.json"))
    assert 'timeout.md:3: ERROR: lab "An infinite timeout": ":timeout: inf" is not a finite' in log
    assert 'orphan.md:3: ERROR: lab "Forks a child that never exits" FAILED: it left 1' in log
    assert 'surrogate.md:4: ERROR: lab "Prints undecodable bytes" FAILED' in log
    assert "caf\ufffd" in (build / "html" / "surrogate.html").read_text(encoding="utf-8")
    assert "later.md" not in log  # the page after the killer is not blamed
    assert "killer.md:5: ERROR" in log
    if mode == "landlock":
        assert 'writes.md:6: ERROR: lab "Writes into the book\'s tree" FAILED at example 3' in log
        assert (src / "index.md").read_text() == index
        assert not (src / "planted.md").exists()
    else:
        assert 'writes.md:3: ERROR: lab "Writes into the book\'s tree" FAILED: it wrote' in log
        (src / "index.md").write_text(index)  # what the detected lab did, undone
        (src / "planted.md").unlink()
    assert "writes.md:12" not in log  # the lab that writes in its scratch folder passes

    pickled = (build / "doctrees" / "environment.pickle").stat().st_mtime_ns
    code, log = sphinx_build()
    assert crashes == [] and code == 1
    assert (build / "doctrees" / "environment.pickle").stat().st_mtime_ns >= pickled
    assert list((build / ".labs-cache").glob("*.json"))
    assert "orphan.md:3: ERROR" in log  # a failing lab never goes quiet, cached or not
    assert os.listdir(build / "doctrees")  # nothing was thrown away


def test_tool_caches_move_into_the_scratch_folder(tmp_path: Path, monkeypatch) -> None:
    """An inherited TORCHINDUCTOR_CACHE_DIR (inductor sets it to /tmp/torchinductor_USER on first
    use, in whatever process first compiles) must not lead torch.compile out of the scratch
    folder: there the sandbox refuses its lock files and the lab fails (seen in CI)."""
    import tempfile

    from atlas.labs import sandbox

    monkeypatch.setenv(sandbox.MODE_VARIABLE, "detect")  # no Landlock in the test process
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/tmp/torchinductor_elsewhere")
    monkeypatch.setattr(tempfile, "tempdir", tempfile.tempdir)
    monkeypatch.chdir(tmp_path)
    for variable in sandbox.CACHE_VARIABLES:
        monkeypatch.setenv(variable, os.environ.get(variable, ""))
    monkeypatch.setenv("TMPDIR", os.environ.get("TMPDIR", "/tmp"))
    scratch = tmp_path / "scratch"
    sandbox.enter(scratch, None)
    assert Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]).is_relative_to(scratch)
    assert Path(tempfile.gettempdir()) == scratch
