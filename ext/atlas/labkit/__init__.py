"""Helpers that labs import: multi-rank runs on gloo, reference implementations."""
