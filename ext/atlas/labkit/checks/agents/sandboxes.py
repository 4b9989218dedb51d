"""Checks of the labs of ``agents/sandboxes.md``.

The chapter's checks: Checks, scripted models, synthetic sessions and upstream readers for the
agents labs.
"""

from __future__ import annotations

import sys

ROLE = "check"


CPU_HOG = "while True: pass"
SLEEPER = "import time; time.sleep(60)"
MEMORY_HOG = """
def peak():
    for line in open('/proc/self/status'):
        if line.startswith('VmPeak:'):
            return int(line.split()[1]) * 1024
keep = []
print(peak(), flush=True)
while True:
    keep.append(bytearray(16 * 2**20))
    print(peak(), flush=True)
"""
FILE_WRITER = """
with open('out.bin', 'wb') as f:
    for _ in range(64):
        f.write(b'x' * 2**20)
        f.flush()
"""


def python(code: str) -> list[str]:
    return [sys.executable, "-S", "-c", code]
