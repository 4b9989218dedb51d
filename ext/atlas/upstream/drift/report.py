"""A plan as ``drift`` and ``bump`` print it, for git and package upstreams alike: a table for
people (one row per citation, the summary, then the diffs of what needs a human), or one JSON
record per citation."""

from __future__ import annotations

import json

from atlas.upstream.drift.model import SHORT, STATUSES, DriftStatus, Plan


def table(the_plan: Plan) -> str:
    """The plan for people: one row per citation, then the diffs of what needs a human."""
    up = the_plan.upstream
    rows = [f"{up.name}: {the_plan.old[:SHORT]} -> {the_plan.new[:SHORT]}"]
    width = max((len(f"{r.page}:{r.line}") for r in the_plan.records), default=10)
    for r in the_plan.records:
        arrow = r.new if r.new != r.old else "(as is)"
        if r.status is DriftStatus.MOVED and r.new == r.old and r.detail:
            arrow += f" ({r.detail})"
        rows.append(f"  {r.status:<9} {f'{r.page}:{r.line}':<{width}}  {r.old}  ->  {arrow}")
    counts = the_plan.counts()
    rows.append(
        "summary: "
        + ", ".join(f"{counts[s]} {s}" for s in STATUSES)
        + (
            f"; {len(the_plan.kept)} citation(s) with an explicit @REV left alone"
            if the_plan.kept
            else ""
        )
    )
    for r in the_plan.records:
        if not r.carried and (r.detail or r.suggestion):
            rows += ["", f"{r.status}: {r.page}:{r.line}  {r.old}", r.detail]
            if r.suggestion:
                rows.append(f"suggestion: {r.suggestion} ({r.suggestion_note})")
    return "\n".join(rows)


def print_plan(the_plan: Plan, as_json: bool) -> None:
    """The plan on stdout: one JSON record per citation, or the table."""
    if as_json:
        print(json.dumps([r.to_json() for r in the_plan.records], indent=1, ensure_ascii=False))
    else:
        print(table(the_plan))
