"""Checking code of the serving chapter's pages, one module per page."""

ROLE = "check"
