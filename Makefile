# LLM Infra Atlas. `make help` lists the targets.
# Everything runs from a virtual environment (.venv) and npm packages (node_modules) that the
# targets create on first use; only Python 3.11, git, make and Node/npm are needed beforehand.

PYTHON      ?= python3
VENV        := .venv
PY          := $(VENV)/bin/python
SPHINXBUILD := $(PY) -m sphinx
SOURCEDIR   := source
BUILDDIR    := _build
SPHINXOPTS  ?=
# Warnings that a strict build tolerates: a citation whose upstream objects are absent renders
# as a visible placeholder (CI has no network to fetch upstreams). A release build sets
# STRICT_ALLOW= to forbid even that. Passed as atlas_strict_allow, which (unlike
# suppress_warnings) re-reads nothing: `make check` after `make html` shares its environment,
# and the warning ledger (atlas.project.ledger) repeats the problems of pages it does not read.
STRICT_ALLOW ?= upstream.missing
STRICT        = -W --keep-going $(if $(STRICT_ALLOW),-D atlas_strict_allow=$(STRICT_ALLOW))
SPHINX_CMD   = $(SPHINXBUILD) -M $(1) $(SOURCEDIR) $(BUILDDIR) -c . $(SPHINXOPTS)
# The Chinese edition (atlas.i18n): the same pages through locales/zh_CN, into html/zh, with its
# own doctrees (a language change re-reads every page) but the same lab cache (_build/.labs-cache,
# keyed on code): it runs no lab the English build ran.
# It is the longer of the two (Sphinx parses each of its 13,485 translated messages on its own),
# so it reads and writes its pages on every core (ZH_JOBS, Sphinx's -j) while the English build
# takes one; its labs still run one at a time (atlas_labs_jobs=1), as the English build's do.
ZH_LANG      := zh_CN
ZH_JOBS      ?= auto
ZH_CMD       = $(SPHINXBUILD) -b html $(SOURCEDIR) $(BUILDDIR)/html/zh -d $(BUILDDIR)/doctrees-zh \
               -c . -D language=$(ZH_LANG) -j $(ZH_JOBS) -D atlas_labs_jobs=1 $(SPHINXOPTS)

.DEFAULT_GOAL := help
.PHONY: help setup html html-en html-zh check check-en check-zh labs pdf po i18n-status linkcheck upstreams lock test test-slow lint serve clean

help:  ## list the targets
	@echo "LLM Infra Atlas"
	@awk 'BEGIN {FS = ":.*## "} /^[a-z0-9-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $@

node_modules/.installed: package.json package-lock.json
	PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
	@touch $@

setup: $(VENV)/.installed node_modules/.installed  ## create .venv and node_modules (done on first use)

upstreams: $(VENV)/.installed  ## fetch the upstream objects the book cites (partial clones)
	$(PY) -m atlas.upstream fetch

lock: $(VENV)/.installed  ## rewrite upstreams.lock to the book's citations (commit it)
	$(PY) -m atlas.upstream lock

# The two editions build side by side (each Sphinx build is one process); whichever reaches
# its labs first runs them, the other waits and finds them in the cache. Each build's output is
# shown whole when it ends (--output-sync).
EDITIONS     = $(MAKE) --no-print-directory -j2 --output-sync=target

html: setup  ## build both editions: _build/html (English) and _build/html/zh (Chinese)
	@$(PY) -m atlas.upstream fetch --if-needed || true
	@$(EDITIONS) html-en html-zh
	@echo "The book is in $(BUILDDIR)/html/index.html (Chinese: $(BUILDDIR)/html/zh/index.html)"

html-en:
	$(call SPHINX_CMD,html)

html-zh:
	$(ZH_CMD)

check: setup  ## strict build of both editions: warnings are errors, the lock is frozen
	@$(EDITIONS) check-en check-zh

check-en:
	$(call SPHINX_CMD,html) $(STRICT) -D atlas_upstream_lock=frozen

check-zh:
	$(ZH_CMD) $(STRICT) -D atlas_upstream_lock=frozen

labs: setup  ## run every lab afresh; JUnit report in _build/labs/junit.xml
	$(call SPHINX_CMD,html) -D atlas_labs_mode=force
	@echo "Lab report: $(BUILDDIR)/labs/junit.xml"

pdf: setup  ## build the offline PDFs: _build/pdf/atlas.pdf and atlas-zh.pdf (as strict as `make check`)
	@$(PY) -m atlas.upstream fetch --if-needed || true
	$(PY) -m atlas.latex build --source $(SOURCEDIR) --build $(BUILDDIR) -- \
	  $(STRICT) $(SPHINXOPTS)
	$(PY) -m atlas.latex build --source $(SOURCEDIR) --build $(BUILDDIR) --edition $(ZH_LANG):zh -- \
	  $(STRICT) $(SPHINXOPTS)

po: setup  ## refresh the Chinese catalogs (locales/zh_CN/LC_MESSAGES, one per page) from the pages
	@$(PY) -m atlas.upstream fetch --if-needed || true
	$(SPHINXBUILD) -b gettext $(SOURCEDIR) $(BUILDDIR)/gettext -d $(BUILDDIR)/doctrees-gettext \
	  -c . -q $(SPHINXOPTS)
	$(VENV)/bin/sphinx-intl update -p $(BUILDDIR)/gettext -l zh_CN -d locales -w 100

i18n-status: setup  ## per page of the Chinese edition: translated / fuzzy / untranslated units
	@$(PY) -m atlas.i18n status --locales locales --language $(ZH_LANG)

linkcheck: setup  ## check every external link (needs network); report in _build/linkcheck/report.txt
	@status=0; $(call SPHINX_CMD,linkcheck) -q || status=$$?; \
	$(PY) -m atlas.refs.report $(BUILDDIR)/linkcheck || status=$$?; exit $$status

# The suite runs in parallel (pytest-xdist; TEST_WORKERS=0 runs it in one process), a file's
# tests on one worker, so that a module's fixture book or repositories are built once. The real
# book's build is marked slow: `make test-slow` runs it, and CI runs both.
TEST_WORKERS ?= auto
test: setup  ## run the test suite in parallel, the real book's build excepted (make test-slow)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not slow"

test-slow: setup  ## the tests marked slow: the real book's build
	$(PY) -m pytest -m slow

lint: setup  ## ruff's checks and formatting, on the whole tree
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

serve: setup  ## live rebuild on http://127.0.0.1:8000
	$(VENV)/bin/sphinx-autobuild $(SOURCEDIR) $(BUILDDIR)/html -c . --host 127.0.0.1 --port 8000 --watch ext

clean:  ## remove build outputs (keeps .venv, node_modules and snippets_cache)
	rm -rf $(BUILDDIR)
