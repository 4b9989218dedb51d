"""One answer to "which commit does ``NAME@REV`` mean": a short SHA or a tag to a full SHA.

A citation may name its commit by a SHA prefix or a tag. When the upstream's objects are here,
they decide (:meth:`atlas.git.store.GitStore.resolve`: a prefix of a commit the store holds, or
a tag). Without them (CI with no mirrors, a fetch that has not run yet), the book still knows
full SHAs: the pin, what ``upstreams.lock`` recorded for each tag or short SHA, the full SHAs
its keys name, the pins of the book's history. :func:`expand_rev` is that one rule, as a pure
function of what the caller knows (:class:`KnownRevs`), so that the directive, ``check``,
``lock`` and ``fetch`` cannot disagree about it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from atlas.git.store import FULL_SHA, HEX, check_rev

if TYPE_CHECKING:
    from atlas.git.store import GitStore


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
