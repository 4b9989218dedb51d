"""A helper that kernel.py imports."""

OFFSET = 1
