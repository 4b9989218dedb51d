"""Quoting code, without Sphinx: what a citation names (``spec``), the lines it picks
(``select``, ``symbols``), how they are shown (``codeblocks``), the directives' options
(``options``) and GitHub permalinks (``permalink``). Shared by ``upstream`` (code at a pin) and
``teach`` (our own labkit code), and by the commands that run without a build; importing it
loads neither Sphinx nor docutils (tests/test_code_package.py).
"""
