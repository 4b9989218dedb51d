"""Labkit of the Profiling chapter: reading traces, memory snapshots and roofline placements."""

ROLE = "taught"
