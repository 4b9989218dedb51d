"""Fixture registry: figures with sources, one of them a key the bibliography lacks."""

SOURCES = {
    "hbm": "cite:vendor2024datasheet (memory table)",
    "flops": "cite:vendor2024datashet (compute table)",
}
