"""Checking code of the multimodal chapter's pages, one module per page."""

ROLE = "check"
