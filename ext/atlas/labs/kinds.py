"""A lab's kind, ``check`` or ``model``, and the rule that a ``check`` asserts something.

Why a kind: a lab that prints what our own code computed passes whatever that code does. Such a
lab can still be worth showing (a table of our model's numbers), but the page must say that it
checks nothing; a lab that claims to check must compare, inside the lab, with something that
does not share the code under test (CONTRIBUTING.md, "What counts as an independent check").

The rule is read from the doctest alone, at read time, without running anything: a ``check``
lab needs at least one *asserting* example, one whose failure can only mean a disagreement:

- its source holds an ``assert`` statement, or calls a function whose name starts with
  ``assert`` (``torch.testing.assert_close``, ``numpy.testing.assert_allclose``, a harness's
  ``assert_matches``): these raise when the two sides differ, whatever the output;
- or its expected output shows a ``True``, alone or among other values (``True``,
  ``(True, True)``, ``tensor(True)``, ``(True, 69)``, ``agree: True``, ``'mlp_ok': True``),
  and no string of its source spells the word out: a value printed as ``True`` is a
  comparison's result (``torch.allclose(ours, ref)``, ``abs(a - b) < tol``, ``ours == theirs``);
- or its expected output is a mapping whose every value is empty (``{'llama-3.1-8b': {}}``):
  "no differences" for each key, what a comparison per key returns;
- or its source compares (``==``, ``<``, ``in``, ..., or calls ``allclose``, ``isclose``,
  ``equal``, ``all``, ``any``) and its expected output shows a ``False`` or an empty collection
  among other values (the idiom ``[n for n in names if ours(n) != theirs(n)]`` giving ``[]``).
  Without the comparison a ``False`` or a ``[]`` is as likely a plain value (a flag, an empty
  list of results), so it does not count alone.

An example that expects a ``Traceback`` checks that bad input is refused, not a number against a
reference, so it does not count. Which side of the comparison is independent the rule cannot
read; that is the reviewer's (and ``benchmarks/mutations.py``'s) job.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence

from atlas.labs.model import ExampleSpec
from atlas.ui import N_

KINDS = ("check", "model")
DEFAULT_KIND = "check"
MODEL_SENTENCE = N_(
    "This lab shows our model's numbers; it checks them against nothing independent."
)
MODEL_BADGE = N_("model")

_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9.]*")


def kind_option(argument: str | None) -> str:
    """The value of ``:kind:``; raises ``ValueError`` naming the known kinds."""
    value = (argument or "").strip().lower()
    if value not in KINDS:
        known = ", ".join(f'":kind: {kind}"' for kind in KINDS)
        raise ValueError(f'":kind: {argument}" is unknown; a lab is {known}')
    return value


def _calls_assert(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name.lower().startswith("assert"):
                return True
    return False


_COMPARING_CALLS = frozenset(
    {"allclose", "isclose", "equal", "array_equal", "all", "any", "isdisjoint", "issubset"}
)
_EMPTY = re.compile(r"(?<![\w\]])(\[\]|\{\}|set\(\))")


def _compares(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _COMPARING_CALLS:
                return True
    return False


def _shows_true(want: str) -> bool:
    return re.search(r"\bTrue\b", _QUOTED.sub("", want)) is not None


def _writes_true(source: str) -> bool:
    """Whether the word ``True`` is written in a string of the source (``print("True ...")``):
    then a printed ``True`` may be text, not a computed result."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.search(r"\bTrue\b", node.value)
        for node in ast.walk(tree)
    )


def _shows_false_or_empty(want: str) -> bool:
    text = _QUOTED.sub("", want)
    return bool(re.search(r"\bFalse\b", text) or _EMPTY.search(text))


def _only_empty_per_key(want: str) -> bool:
    """A mapping whose every value is an empty collection: "no differences" for each key
    (``{'llama-3.1-8b': {}, 'qwen3-8b': {}}``), the result of a comparison per key."""
    text = want.strip()
    if not (text.startswith("{") and _QUOTED.search(text) and _EMPTY.search(text)):
        return False
    rest = _EMPTY.sub("", _QUOTED.sub("", text))
    return re.fullmatch(r"[\s{},:]*", rest) is not None


def asserts(example: ExampleSpec, earlier: Sequence[str] = ()) -> bool:
    """Whether ``example`` fails only when two sides disagree (see the module's rule).

    ``earlier``: the source of the lab's examples before it, where the comparison whose result
    it shows may have been made (``bad = [n for n in names if ours(n) != theirs(n)]``, then
    ``bad`` giving ``[]``).
    """
    if example.want.lstrip().startswith("Traceback (most recent call last)"):
        return _calls_assert(example.source)
    return (
        _calls_assert(example.source)
        or _only_empty_per_key(example.want)
        or (_shows_true(example.want) and not _writes_true(example.source))
        or (
            any(_compares(source) for source in (*earlier, example.source))
            and _shows_false_or_empty(example.want)
        )
    )


def assertion_problem(kind: str, examples: Iterable[ExampleSpec]) -> str | None:
    """Why a lab of ``kind`` breaks the rule, or ``None``: a check needs an asserting example."""
    if kind != "check":
        return None
    earlier: list[str] = []
    for example in examples:
        if asserts(example, earlier):
            return None
        earlier.append(example.source)
    return (
        "it is a check (the default kind) but none of its examples asserts: each prints a value "
        "and expects what was printed, so a wrong formula would pass. Compare with something "
        "independent inside the lab (torch, the upstream's code, a dense or brute-force "
        "reference, a measurement, a cited figure) and show the comparison's result "
        '("torch.allclose(ours, reference)" giving "True", or an "assert"); or, if the lab '
        'only shows our own model\'s numbers, say so with ":kind: model"'
    )
