"""``python -m atlas.upstream.fetch``: the same command as ``python -m atlas.upstream fetch``."""

import sys

from atlas.upstream.fetch.cli import main

sys.exit(main(sys.argv[1:]))
