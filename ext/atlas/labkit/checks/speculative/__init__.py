"""Checking code of the speculative chapter's pages, one module per page."""

ROLE = "check"
