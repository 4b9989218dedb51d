"""Decide which pages' labs to run, run them, cache the outcomes and hand them to the reports.

Called at ``env-updated`` in Sphinx's main process. Modes (``atlas_labs_mode``): "auto" runs
pages whose results are in neither the environment nor the cache; "force" runs every page and
refreshes the cache (``make labs``); "off" runs nothing and marks every lab "not run". Every
build re-reports every lab that is not fine, cached or not: a failing lab never goes quiet.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from atlas.bookroot import BookPaths
from atlas.labs.cache import (
    ResultCache,
    imports_digest,
    page_key,
    states_digest,
    upstream_states,
    upstreams_read,
)
from atlas.labs.config import LabsConfig
from atlas.labs.imports import labkit_root
from atlas.labs.junit import write_junit
from atlas.labs.log import progress_line, report_problems, slowest
from atlas.labs.model import LabResult, LabSpec, LabStatus, PageResult
from atlas.labs.runner import Job, LabRunner, ZygoteError

logger = logging.getLogger(__name__)

NO_RUN_BUILDERS = frozenset({"linkcheck", "gettext", "changes"})
LAB_MARKER = "{lab}"  # in a page's source: it has a lab (MyST fence or colon fence)
_PRESTARTED: dict[int, LabRunner] = {}  # id(app) -> runner launched at env-before-read-docs
_FAILED: dict[int, int] = {}  # id(app) -> labs of this build that failed, crashed or timed out


def build_folder(app: Sphinx) -> Path:
    """``_build`` for ``sphinx-build -M html source _build`` (the doctrees' parent)."""
    return Path(app.doctreedir).parent


def _not_run(specs: list[LabSpec], key: str, why: str) -> PageResult:
    return PageResult(
        key=key, environment="", labs=[LabResult(LabStatus.NOT_RUN, message=why) for _ in specs]
    )


def run_labs(
    app: Sphinx,
    specs: dict[str, list[LabSpec]],
    results: dict[str, PageResult],
    reports: set[str],
) -> list[str]:
    """Bring ``results`` up to date for every page with labs; return the pages to rewrite."""
    if not specs or app.builder.name in NO_RUN_BUILDERS:
        return []
    settings = LabsConfig.of(app)
    mode = settings.mode
    changed: set[str] = set()
    if mode == "off":
        for docname, page_specs in specs.items():
            if results.get(docname, _not_run([], "", "")).key != "off":
                changed.add(docname)
            why = "labs are off in this build (atlas_labs_mode = 'off')"
            results[docname] = _not_run(page_specs, "off", why)
        return sorted(changed | (reports if changed else set()))

    paths = BookPaths.from_app(app)
    states = upstream_states(paths)  # read once; each page keys its own
    labkit_folder = labkit_root(app)  # atlas_labkit_root (atlas.teach's), or ext/atlas/labkit
    memory = settings.memory_limit_mb
    seed = settings.seed
    cache = ResultCache(build_folder(app) / ".labs-cache")
    # One build at a time decides and runs: the other edition, built side by side, then finds
    # every result in the cache and runs no lab.
    with cache.exclusive():
        jobs: list[Job] = []
        for docname in sorted(specs):
            # only the files this page reaches
            labkit = imports_digest(specs[docname], labkit_folder)
            read = upstreams_read(specs[docname], states, labkit_folder)
            key = page_key(specs[docname], labkit, seed, memory, states_digest(states, read))
            if mode != "force":
                current = results.get(docname)
                if current is not None and current.key == key and current.cacheable:
                    continue  # timeouts and crashes are retried on the next build
                cached = cache.load(key)
                if cached is not None:
                    results[docname] = cached
                    changed.add(docname)
                    continue
            jobs.append(Job(docname, key, specs[docname], memory, seed, str(paths.root)))

        if jobs:
            changed.update(_run(app, jobs, results, cache))
    stop_prestarted(app)
    _FAILED[id(app)] = report_problems(specs, results)
    junit = build_folder(app) / "labs" / "junit.xml"
    # Paths relative to conf.py's folder (the repository root): what CI annotations expect.
    write_junit(
        junit,
        specs,
        results,
        lambda docname: os.path.relpath(app.env.doc2path(docname), app.confdir),
    )
    return sorted(changed | (reports if changed else set()))


def _new_runner(app: Sphinx) -> LabRunner:
    workers = LabsConfig.of(app).jobs or max(1, app.parallel)
    return LabRunner(build_folder(app) / "labs" / "worker.log", workers)


def prestart(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Launch the zygote while Sphinx reads, when a page about to be read has a lab.

    Its ~1.5 s of ``import torch`` then overlaps the read phase instead of following it. If the
    labs turn out to be cached, :func:`stop_prestarted` closes it unused.
    """
    if LabsConfig.of(app).mode == "off" or app.builder.name in NO_RUN_BUILDERS:
        return
    for docname in docnames:
        try:
            text = Path(env.doc2path(docname)).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if LAB_MARKER in text:
            try:
                _PRESTARTED[id(app)] = _new_runner(app).start()
            except OSError:
                pass  # reported properly when the labs actually run
            return


def stop_prestarted(app: Sphinx, *_: object) -> None:
    """Close a prestarted zygote that was not needed (or after a failed build)."""
    runner = _PRESTARTED.pop(id(app), None)
    if runner is not None:
        runner.__exit__(None, None, None)


def _run(
    app: Sphinx, jobs: list[Job], results: dict[str, PageResult], cache: ResultCache
) -> set[str]:
    """Run the jobs, one line of progress per page as it finishes, the slowest labs at the end."""
    done: set[str] = set()
    started = time.monotonic()
    try:
        with _PRESTARTED.pop(id(app), None) or _new_runner(app) as runner:
            for job, page in runner.run(jobs):
                results[job.docname] = page
                done.add(job.docname)
                if page.cacheable:
                    cache.store(page)
                logger.info(progress_line(len(done), len(jobs), job, page))
    except (ZygoteError, OSError) as exc:  # the runner itself failed: report, never traceback
        for job in jobs:
            if job.docname not in done:
                results[job.docname] = PageResult(
                    job.key, "", [LabResult(LabStatus.CRASHED, message=str(exc)) for _ in job.specs]
                )
                done.add(job.docname)
    ran = {job.docname: job.specs for job in jobs}
    slow = slowest(ran, results)
    if slow:
        elapsed = time.monotonic() - started
        logger.info(f"labs: {len(jobs)} pages in {elapsed:.1f} s; slowest labs:")
        for line in slow:
            logger.info(line)
    return done


def fail_build(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: a lab that failed, crashed, timed out or passed against
    ``:expect-failure:`` fails the build (exit 1), even without ``-W``, as a wrong citation
    does: the book promises that its labs pass. The page still shows the failure box."""
    failed = _FAILED.pop(id(app), 0)
    if exception is None and failed:
        logger.error(
            "%d lab(s) failed (each reported at its page and line); the book must not publish "
            "a claim its lab contradicts",
            failed,
            type="lab",
            subtype="summary",
        )
        app.statuscode = 1
