"""``python -m atlas.upstream fetch``: make every object the book cites local, and nothing more.

Each pinned upstream gets a bare partial clone at ``<git-common-dir>/atlas-upstreams/NAME.git``
holding the cited commits and their trees only (``--depth=1 --filter=blob:none``: no history,
no blobs), then the cited blobs, fetched by id in one batch per upstream. A second run finds
everything present and transfers nothing. A clone is built in a temporary folder and renamed
into place, so an interrupted first run leaves nothing half-made; an interrupted later fetch
leaves git's own atomic packs, and the next run completes them.

This is the only code that transfers objects: reads during a build never fetch (atlas.git).

One job per module, in the order a run takes them:

- :mod:`.needs`: what the book needs from each upstream (commits, cited paths, the files labs
  read at the pin), short revisions expanded offline, and the ones nothing can expand;
- :mod:`.transfer`: the fetch of one upstream (commits and tags, then blobs), and how many
  cited objects are still missing;
- :mod:`.cli`: the command line, its progress lines and its summary.

The git commands that transfer (clone, fetch, pack sizes) are :mod:`atlas.upstream.partialclone`'s.
"""

from __future__ import annotations

from atlas.upstream.fetch.cli import main

__all__ = ["main"]
