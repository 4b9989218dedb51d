"""Package upstreams: a Python distribution at an exact version, quoted from its installed files.

Some upstreams are too large to fetch as git objects (PyTorch's repository is 4 GB) but ship
their Python sources in a wheel whose ``RECORD`` gives a sha256 for every file. Such a wheel,
pinned by version and installed by the book's own environment, is an upstream that can be
checked byte for byte, as a git object is.

The registry is ``pyproject.toml``, and nothing is said twice:

- the pin is the exact requirement ``NAME==VERSION`` in ``[project] dependencies`` (the line
  that installs it);
- ``[tool.atlas.upstream-packages.NAME]`` adds what permalinks need: ``repository`` (its web
  address), ``tag`` (a template, default ``v{version}``) and ``paths`` (wheel folder ->
  repository folder, longest prefix first; a path no prefix matches is the same in both).

Reads: :mod:`importlib.metadata` finds the installed distribution (on ``sys.path``, or on the
folders of ``$ATLAS_PACKAGE_PATH``); a file is quoted only when it is listed in ``RECORD`` and
its bytes hash to the recorded sha256. A different installed version, a file the wheel does not
ship, a file missing on disk and a file that does not match its hash are each one error with
the fix. A package that is not installed is not an error: the snippet comes from
``snippets_cache/`` or the citation shows a placeholder (``upstream.missing``), provided the lock
proves it was once checked. Only text files are quoted; compiled code is out of scope.

One job per module; import each name from the module that owns it (this package re-exports
nothing):

- :mod:`.registry`: the package upstreams ``pyproject.toml`` declares (:class:`PackageUpstream`,
  :func:`load_packages`, the exact pins of ``[project] dependencies``);
- :mod:`.files`: one version's files, each read only after its ``RECORD`` hash matched, from an
  installation (:class:`InstalledFiles`) or a wheel file (:class:`WheelFiles`, which drift and
  bump compare with the installed version); :class:`PackageError`;
- :mod:`.installed`: which version is installed where (``$ATLAS_PACKAGE_PATH`` or
  ``sys.path``), looked up once per resolver (:class:`Installed`);
- :mod:`.snippet`: one citation resolved to its snippet, for :mod:`atlas.upstream.resolve`;
- :mod:`.status`: the line per package that ``python -m atlas.upstream check`` prints;
- :mod:`.links`: the link checker's answer for a GitHub link at a package's tag, read with the
  one permalink parser (:func:`atlas.code.permalink.parse`) and line counter
  (:func:`atlas.code.select.line_count`).

Drift and bump of package upstreams live in :mod:`atlas.upstream.drift` (``wheels``,
``package_plan``, ``package_pin``, ``package_cli``), with those of git upstreams.
"""
