"""Checking code of the kernels chapter's pages, one module per page."""

ROLE = "check"
