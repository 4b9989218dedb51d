"""One package citation resolved to its snippet (called by :mod:`atlas.upstream.resolve`).

Only the pinned version is quoted, from the installed files verified against their RECORD.
When the package is not installed, the snippet cache stands in, as it does for git objects that
are absent; without a cached snippet the citation is MISSING (a placeholder), provided the lock
proves it was once checked against the real files.
"""

from __future__ import annotations

import sys

from atlas.code.select import SelectError, decode, select
from atlas.upstream.cache import CachedSnippet, cache_key
from atlas.upstream.lock import lock_key
from atlas.upstream.packages.files import SETUP_HINT, PackageError
from atlas.upstream.packages.registry import PYPROJECT, PackageUpstream
from atlas.upstream.resolve import MISSING, Resolution, Resolver


def package_snippet(
    resolver: Resolver, res: Resolution, options: dict[str, str]
) -> CachedSnippet | None:
    """The snippet of a package citation (None: not installed and not cached, ``res`` then says
    MISSING), or PackageError. Sets ``res.commit`` (the version), ``res.key`` and ``res.entry``.
    """
    spec, up = res.spec, res.upstream
    assert spec is not None and isinstance(up, PackageUpstream)
    if spec.rev is not None and spec.rev not in (up.version, up.tag()):
        raise PackageError(
            f"{spec.name}@{spec.rev}: the book pins {up.requirement} ({PYPROJECT}) and only the "
            f"pinned version is installed and quoted; drop '@{spec.rev}' (or write "
            f"@{up.version}). To move the pin: `python -m atlas.upstream bump {up.name} VERSION`"
        )
    res.commit = up.version
    res.key = lock_key(up.name, up.version, spec.path, spec.selector, options)
    res.entry = resolver.lock.get(res.key)
    files = resolver.installed.pinned(up)
    key = cache_key(up.name, up.version, spec.path, spec.selector)
    if files is None:
        hit = resolver.cache.get(key)
        if hit is not None:
            res.source = "cache"
            return hit
        if res.entry is None:
            raise PackageError(
                f"{up.requirement} is not installed here and upstreams.lock has no entry for "
                f"this citation, so it was never checked against the real files; {SETUP_HINT}, "
                "build, and commit upstreams.lock"
            )
        res.status = MISSING
        res.message = (
            f"{up.requirement} is not installed in this environment ({sys.prefix}); the "
            f"citation shows a placeholder. Run `make setup` to install it"
        )
        return None
    blob, data = files.read(spec.path)
    try:
        segments = select(decode(data, spec.path), spec, resolver.max_lines)
    except SelectError as exc:
        raise PackageError(str(exc)) from None
    snippet = CachedSnippet(blob=blob, segments=tuple(segments), path=spec.path)
    resolver.cache.put(key, snippet)
    res.source = "installed"
    return snippet
