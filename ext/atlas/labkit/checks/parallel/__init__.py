"""Checking code of the parallel chapter's pages, one module per page."""

ROLE = "check"
