"""Checking code of the hpc chapter's pages, one module per page."""

ROLE = "check"
