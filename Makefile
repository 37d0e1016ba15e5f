# minigrad: the whole setup is `make lab` or `make test`.
# Every target runs tools as `.venv/bin/python -m ...`: no activation needed.
# The venv is created when missing and reused otherwise; the editable install is redone only
# when pyproject.toml is newer than the stamp file inside .venv.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.minigrad-lab-installed

# Folders ruff checks (only those that exist yet). `make format` leaves notebooks/ alone: its
# lessons are generated (make notebooks) and its sources keep the course's own layout.
LINT_DIRS := $(wildcard minigrad viz tests bench notebooks)
FORMAT_DIRS := $(wildcard minigrad viz tests bench)

# Extra arguments for `jupyter lab`, e.g. make lab LAB_ARGS="--ServerApp.open_browser=False --port 8899"
LAB_ARGS ?=
# Extra arguments for pytest on tests/, e.g. make pytest PYTEST_ARGS="-k grad_mode -x"
PYTEST_ARGS ?=
ROOT_ARGS := $(if $(filter 0,$(shell id -u)),--allow-root,)

# nbval compares every stored notebook with a fresh run: the lessons (notebooks/*.ipynb, with
# placeholders) in full except their exercise cells, which carry the nbval-ignore-output tag, and
# the solutions (notebooks/solutions/) in full.
NBVAL_COMMON := --nbval-current-env --nbval-sanitize-with .ci/nbval-sanitize.cfg
FIND_NOTEBOOKS := find notebooks -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*'

.PHONY: help venv install lab test pytest nbval lint format bench torch browser-deps clean

# The browser test (tests/browser) drives Debian's chromium through Playwright's Python package.
CHROMIUM := /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

help:
	@echo "make lab     create .venv if needed, install, open JupyterLab on notebooks/"
	@echo "make test    create .venv if needed, install, run ruff, pytest on tests/, nbval on notebooks/"
	@echo "make pytest  only pytest on tests/ (PYTEST_ARGS=\"-k name -x\" to narrow); make nbval: only notebooks"
	@echo "make lint    ruff on minigrad viz tests bench notebooks"
	@echo "make format  ruff format + ruff check --fix on minigrad viz tests bench"
	@echo "make bench   run bench/run.py"
	@echo "make torch   install torch==2.13.0 into .venv (the parity tests need it; .ci/run does this)"
	@echo "make browser-deps  apt-get install chromium when $(CHROMIUM) is missing (the browser test needs it)"
	@echo "make clean   remove .venv, caches and build artefacts"

venv: $(VENV)/pyvenv.cfg
	@echo "venv: $(VENV) ready ($$($(PY) --version 2>&1))"

$(VENV)/pyvenv.cfg:
	@echo "venv: creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)

install: $(STAMP)

$(STAMP): pyproject.toml | $(VENV)/pyvenv.cfg
	@echo "install: pyproject.toml changed or first install -> pip install -e .[test]"
	$(PY) -m pip install --disable-pip-version-check -q -e '.[test]'
	@touch $(STAMP)

lab: install
	@echo "lab: jupyter lab notebooks/ $(ROOT_ARGS) $(LAB_ARGS)"
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m jupyter lab notebooks/ $(ROOT_ARGS) $(LAB_ARGS)

test: install browser-deps
	@$(MAKE) lint
	@$(MAKE) pytest
	@$(MAKE) nbval

lint: install
	@echo "lint: ruff check $(LINT_DIRS)"
	@$(PY) -m ruff check $(LINT_DIRS)

format: install
	@echo "format: ruff format + ruff check --fix $(FORMAT_DIRS)"
	@$(PY) -m ruff format $(FORMAT_DIRS)
	@$(PY) -m ruff check --fix $(FORMAT_DIRS)

pytest: install
	@echo "pytest: tests/ $(PYTEST_ARGS)"
	@$(PY) -m pytest tests $(PYTEST_ARGS)

nbval: install
	@set -f; IFS=$$'\n'; \
	nbs=(); \
	if [ -d notebooks ]; then nbs=($$($(FIND_NOTEBOOKS) | sort)); fi; \
	if [ $${#nbs[@]} -eq 0 ]; then \
	  echo "nbval: no notebooks in notebooks/ yet, skipped"; exit 0; \
	fi; \
	echo "nbval: $${#nbs[@]} notebook(s), outputs compared (--nbval; exercise cells of the lessons run unchecked)"; \
	$(PY) -m pytest --nbval $(NBVAL_COMMON) "$${nbs[@]}"

# Regenerate the course from notebooks/src/: NN_name.ipynb (the lessons with blanks) and solutions/NN_name.ipynb,
# both executed.
.PHONY: notebooks
notebooks: install
	$(PY) notebooks/build.py

bench: install
	@if [ -f bench/run.py ]; then \
	  echo "bench: python bench/run.py"; $(PY) bench/run.py; \
	else \
	  echo "bench: no bench/run.py yet, nothing to run"; \
	fi

torch: venv
	@echo "torch: pip install torch==2.13.0 (the local CPU wheel)"
	$(PY) -m pip install --disable-pip-version-check -q torch==2.13.0

# Never `playwright install`: the browser is Debian's chromium, found at $(CHROMIUM).
# If it cannot be installed here (no apt-get, no sudo), say so and go on: the browser test
# then skips locally and fails under CI=true.
browser-deps:
	@if [ -x $(CHROMIUM) ]; then \
	  echo "browser-deps: $(CHROMIUM) found"; \
	elif command -v apt-get >/dev/null 2>&1; then \
	  echo "browser-deps: $(CHROMIUM) missing -> $(strip $(SUDO) apt-get install -y chromium) (Debian's package)"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium \
	    || echo "browser-deps: could not install chromium; the browser test will skip (and fail under CI=true)"; \
	else \
	  echo "browser-deps: $(CHROMIUM) missing and no apt-get here: install Chromium yourself (tests/browser needs it)"; \
	fi

clean:
	@echo "clean: removing $(VENV), caches and build artefacts"
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .hypothesis test-artifacts
	find . -path ./.git -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -prune -exec rm -rf {} +
