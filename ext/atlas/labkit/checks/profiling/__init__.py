"""Checking code of the profiling chapter's pages, one module per page."""

ROLE = "check"
