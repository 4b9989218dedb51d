"""Demo chapter."""
