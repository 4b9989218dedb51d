"""Checking code that several chapters share: references, fakes and toy models."""

ROLE = "check"
