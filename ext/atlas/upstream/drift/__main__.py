"""``python -m atlas.upstream.drift``: the same command as ``python -m atlas.upstream drift``."""

import sys

from atlas.upstream.drift.cli import main

sys.exit(main())
