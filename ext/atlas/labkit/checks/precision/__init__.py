"""Checking code of the precision chapter's pages, one module per page."""

ROLE = "check"
