"""A module that only page b imports."""

TRIPLE = 3
