"""Checking code: what the labs use to check the taught code, which the pages need not show.

One module per page (``checks/<chapter>/<page>.py``) holds that page's checkers, loaders of
upstream code (through :mod:`atlas.labkit.pinned`), fakes and data builders; what several
pages share lives in :mod:`atlas.labkit.checks.common`. Taught code never imports from here
(``tests/labkit/test_labkit_roles.py`` walks the imports).
"""

ROLE = "check"
