"""Checking code of the normalization chapter's pages, one module per page."""

ROLE = "check"
