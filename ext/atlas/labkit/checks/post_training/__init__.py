"""Checking code of the post-training chapter's pages, one module per page."""

ROLE = "check"
