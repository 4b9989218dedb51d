"""Checking code of the moe chapter's pages, one module per page."""

ROLE = "check"
