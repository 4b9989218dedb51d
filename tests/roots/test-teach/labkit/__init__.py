"""A fixture labkit: a taught module and a harness."""
