"""Checking code of the models chapter's pages, one module per page."""

ROLE = "check"
