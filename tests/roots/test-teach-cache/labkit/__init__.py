"""Fixture labkit."""
