"""Checking code of the edge chapter's pages, one module per page."""

ROLE = "check"
