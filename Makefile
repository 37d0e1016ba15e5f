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

# Folders ruff checks (only those that exist yet).
LINT_DIRS := $(wildcard minigrad viz tests bench)

# Extra arguments for `jupyter lab`, e.g. make lab LAB_ARGS="--ServerApp.open_browser=False --port 8899"
LAB_ARGS ?=
# Extra arguments for pytest on tests/, e.g. make pytest PYTEST_ARGS="-k grad_mode -x"
PYTEST_ARGS ?=
ROOT_ARGS := $(if $(filter 0,$(shell id -u)),--allow-root,)

# nbval: notebooks whose file name contains "learner" are exercise versions, stored unexecuted
# and run with --nbval-lax; every other notebook is stored executed and compared in full.
NBVAL_COMMON := --nbval-current-env --nbval-sanitize-with .ci/nbval-sanitize.cfg
FIND_NOTEBOOKS := find notebooks -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*'

.PHONY: help venv install lab test pytest nbval lint format bench torch browser-deps clean fuzz fuzz-known

# The browser test (tests/browser) drives Debian's chromium through Playwright's Python package.
CHROMIUM := /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

help:
	@echo "make lab     create .venv if needed, install, open JupyterLab on notebooks/"
	@echo "make test    create .venv if needed, install, run ruff, pytest on tests/, nbval on notebooks/"
	@echo "make pytest  only pytest on tests/ (PYTEST_ARGS=\"-k name -x\" to narrow); make nbval: only notebooks"
	@echo "make lint    ruff on minigrad viz tests bench"
	@echo "make format  ruff format + ruff check --fix on the same folders"
	@echo "make bench   run bench/run.py"
	@echo "make fuzz    the differential fuzzer, N programs per seed: make fuzz N=2000 SEED=0-4 (needs torch)"
	@echo "make fuzz-known  rewrite tests/fuzz/parityfuzz/known_failures.md from today's results (review the diff)"
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
	@echo "format: ruff format + ruff check --fix $(LINT_DIRS)"
	@$(PY) -m ruff format $(LINT_DIRS)
	@$(PY) -m ruff check --fix $(LINT_DIRS)

pytest: install
	@echo "pytest: tests/ $(PYTEST_ARGS)"
	@$(PY) -m pytest tests $(PYTEST_ARGS)

nbval: install
	@set -f; IFS=$$'\n'; \
	full=(); lax=(); \
	if [ -d notebooks ]; then \
	  full=($$($(FIND_NOTEBOOKS) -not -name '*learner*' | sort)); \
	  lax=($$($(FIND_NOTEBOOKS) -name '*learner*' | sort)); \
	fi; \
	if [ $${#full[@]} -eq 0 ] && [ $${#lax[@]} -eq 0 ]; then \
	  echo "nbval: no notebooks in notebooks/ yet, skipped"; exit 0; \
	fi; \
	if [ $${#full[@]} -gt 0 ]; then \
	  echo "nbval: $${#full[@]} notebook(s), outputs compared (--nbval)"; \
	  $(PY) -m pytest --nbval $(NBVAL_COMMON) "$${full[@]}"; \
	fi; \
	if [ $${#lax[@]} -gt 0 ]; then \
	  echo "nbval: $${#lax[@]} learner notebook(s), run only (--nbval-lax)"; \
	  $(PY) -m pytest --nbval-lax $(NBVAL_COMMON) "$${lax[@]}"; \
	fi

# Regenerate the course from notebooks/src/: NN_name.ipynb (executed) and exercises/NN_name_learner.ipynb.
.PHONY: notebooks
notebooks: install
	$(PY) notebooks/build.py

# The differential fuzzer (tests/fuzz/parityfuzz): N random programs per seed run on torch 2.13 and on
# minigrad; prints the mismatches by category and the coverage table. SEED is a number, a range (0-4)
# or a list (0,3). FUZZ_ARGS="--show 3" prints 3 shrunk snippets per category.
N ?= 2000
SEED ?= 0
FUZZ_ARGS ?=
fuzz: install
	@echo "fuzz: $(N) programs per seed, seeds $(SEED)"
	@PYTHONPATH=tests/fuzz $(PY) -m parityfuzz run --n $(N) --seed $(SEED) $(FUZZ_ARGS)

fuzz-known: install
	@PYTHONPATH=tests/fuzz $(PY) -m parityfuzz known --update

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
