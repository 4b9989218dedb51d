"""Checking code of the agents chapter's pages, one module per page."""

ROLE = "check"
