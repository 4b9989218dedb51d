"""Checking code of the training chapter's pages, one module per page."""

ROLE = "check"
