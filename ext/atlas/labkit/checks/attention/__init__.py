"""Checking code of the attention chapter's pages, one module per page."""

ROLE = "check"
