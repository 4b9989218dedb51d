"""Structured output: mask every token that would leave the language of a regular expression.

Following Willard and Louf (2023), the pattern becomes a deterministic automaton over
characters, and for each of its states the engine precomputes which tokens of the vocabulary
can be read from that state without reaching the dead state (a token is several characters).
Decoding then keeps the automaton's state, and before sampling sets the logits of every other
token to minus infinity: one table lookup per step, whatever the vocabulary.

The automaton here is written by hand for one small pattern, ``{"n": [0-9]+}``: the literal
``{"n": `` (states 0 to 6), one or more digits (state 7), the closing brace (state 8, final).
"""

from __future__ import annotations

ROLE = "taught"

DEAD = -1
PREFIX = '{"n": '
DIGITS = 7
FINAL = 8


def step(state: int, ch: str) -> int:
    """The automaton's transition on one character (``DEAD`` when the pattern is left)."""
    if state < len(PREFIX):
        return state + 1 if ch == PREFIX[state] else DEAD
    if state in (len(PREFIX), DIGITS) and ch.isdigit() and ch.isascii():
        return DIGITS
    if state == DIGITS and ch == "}":
        return FINAL
    return DEAD


def read(state: int, token: str) -> int:
    """The state after reading every character of ``token`` from ``state``."""
    for ch in token:
        if state == DEAD:
            break
        state = step(state, ch)
    return state


def token_masks(vocab: list[str]) -> dict[int, list[bool]]:
    """For every live state, which tokens may be sampled next (Outlines' index, precomputed
    once per pattern and vocabulary)."""
    return {s: [read(s, tok) != DEAD for tok in vocab] for s in range(FINAL + 1)}
