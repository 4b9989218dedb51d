"""Checking code of the pytorch chapter's pages, one module per page."""

ROLE = "check"
