"""One answer to "which commit does ``NAME@REV`` mean": a short SHA or a tag to a full SHA.

A citation may name its commit by a SHA prefix or a tag. When the upstream's objects are here,
they decide (:meth:`atlas.git.store.GitStore.resolve`: a prefix of a commit the store holds, or
a tag). Without them (CI with no mirrors, a fetch that has not run yet), the book still knows
full SHAs: the pin, what ``upstreams.lock`` recorded for each tag or short SHA, the full SHAs
its keys name, the pins of the book's history. :func:`expand_rev` is that one rule, as a pure
function of what the caller knows (:class:`KnownRevs`, assembled for an upstream by
:func:`atlas.upstream.lock.known_revs`), so that the directive, ``check``, ``lock`` and
``fetch`` cannot disagree about it.

What reads as a commit SHA is defined here too, once: :func:`is_full_sha`, :func:`is_sha_prefix`
(each caller gives its bounds) and :func:`check_rev` (the revs a citation may write at all).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atlas.git.store import GitStore

# What reads as an object id. HEX is every name git takes for an object (a prefix of 4 digits up
# to a SHA-256 id); a citation must give at least MIN_SHA_DIGITS, and SHA-1 ids have 40.
HEX = re.compile(r"^[0-9a-f]{4,64}$")
FULL_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
MIN_SHA_DIGITS = 7
SHA1_DIGITS = 40
# A tag name we accept: git's ref rules, narrowed (no leading dash, no "..", "@{", ":", "^").
TAG = re.compile(r"^(?!-)(?!.*\.\.)(?!.*@\{)(?!.*//)[A-Za-z0-9._/+-]{1,200}(?<![./])$")
_HEX_DIGITS = frozenset("0123456789abcdef")


class UnsafePath(ValueError):
    """A path or rev that could act as an option or reach outside the repository."""


def is_full_sha(text: str) -> bool:
    """A whole object id, in lower case: 40 hex digits (SHA-1) or 64 (SHA-256)."""
    return FULL_SHA.fullmatch(text) is not None


def is_sha_prefix(
    text: str,
    min_digits: int = MIN_SHA_DIGITS,
    max_digits: int = SHA1_DIGITS,
    *,
    any_case: bool = False,
) -> bool:
    """``text`` is ``min_digits`` to ``max_digits`` hex digits (lower case only, unless
    ``any_case``): what may be a commit's SHA, abbreviated or not. The bounds are the caller's
    rule: 7 to 40 for a citation, 1 to 6 for one that is too short, 4 to 64 for git itself."""
    digits = text.lower() if any_case else text
    return min_digits <= len(digits) <= max_digits and _HEX_DIGITS.issuperset(digits)


def check_rev(rev: str) -> str:
    """The rev if it is a SHA prefix or a plain tag name, else UnsafePath."""
    if HEX.match(rev.lower()) or TAG.match(rev):
        if rev.endswith(".lock"):
            raise UnsafePath(f"rev {rev!r} is not a valid tag name")
        return rev
    raise UnsafePath(
        f"rev {rev!r} is neither a commit SHA (7 to 40 hex digits) nor a tag name; "
        "revision expressions (HEAD~1, @{...}, ranges, options) are not accepted"
    )


@dataclass(frozen=True)
class KnownRevs:
    """What the book knows about one upstream's commits without reading its objects."""

    pin: str | None = None
    recorded: Mapping[str, str] = field(default_factory=dict)  # REV -> full SHA (lock revs)
    shas: Iterable[str] = ()  # full SHAs named elsewhere (lock keys, past pins)

    def expand(self, rev: str) -> str | None:
        """The full SHA of ``rev`` from what is known, else None. In order: a full SHA as
        written; the pin when it starts with ``rev``; what was recorded for ``rev``; the only
        known SHA that starts with ``rev`` (two or more: None, it is ambiguous here)."""
        low = rev.lower()
        if FULL_SHA.match(low):
            return low
        hexlike = bool(HEX.match(low))
        if hexlike and self.pin and self.pin.startswith(low):
            return self.pin
        if rev in self.recorded:
            return self.recorded[rev]
        if hexlike:
            matches = {sha for sha in self.shas if sha.startswith(low)}
            if len(matches) == 1:
                return matches.pop()
        return None


NOTHING_KNOWN = KnownRevs()


def expand_rev(
    rev: str, known: KnownRevs = NOTHING_KNOWN, store: GitStore | None = None
) -> str | None:
    """The full commit SHA that ``rev`` (a SHA prefix or a tag) names, or None.

    With a ``store``, its objects decide: None when it holds no such commit (whatever else is
    known), LookupError when a prefix is ambiguous there. Without one, ``known`` answers
    (:meth:`KnownRevs.expand`). UnsafePath for anything but a SHA prefix or a plain tag name.
    """
    check_rev(rev)
    if store is not None:
        return store.resolve(rev)
    return known.expand(rev)
