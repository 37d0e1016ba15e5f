# minigrad: the whole setup is `make lab` or `make test`.
# Every target runs tools as `.venv/bin/python -m ...`: no activation needed.
# The venv is created when missing and reused otherwise. `make lab` installs the `lab` extra only
# (the course), `make test` the `test` extra and torch 2.13.0 (the parity tests); each editable
# install is redone only when pyproject.toml is newer than its stamp file inside .venv.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
LAB_STAMP  := $(VENV)/.minigrad-lab-lab
GRADE_STAMP := $(VENV)/.minigrad-lab-grade
SITE_STAMP := $(VENV)/.minigrad-lab-site
TEST_STAMP := $(VENV)/.minigrad-lab-test
# Exactly this spec: it resolves to the local CPU wheel. Any other torch spec downloads gigabytes.
TORCH_SPEC := torch==2.13.0
# JupyterLab settings shipped with the course (added to Jupyter's config search path for `make lab`
# only, never written to the user's ~/.jupyter): labconfig/page_config.json turns off the plugin
# that asks to fetch Jupyter news and checks for updates.
LAB_CONFIG := notebooks/.jupyter

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
# The stored lessons print the checks' verdicts in their own language: English in notebooks/, Chinese in
# notebooks/zh/ (whose first code cell sets MINIGRAD_LANG=zh). Whatever the machine's locale, the English ones
# run in English when built and compared.
COURSE_ENV := MINIGRAD_LANG=en
# The Chinese course (notebooks/zh/): its solutions run here in full (every output, the Chinese verdicts
# included); its lessons hold the English lessons' code cells and outputs, which the English run checks, so
# tests/notebooks/test_translations.py compares them with those instead of running them again (CI time).
FIND_NOTEBOOKS := find notebooks -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' -not -path 'notebooks/zh/[0-9]*'

.PHONY: help venv install install-lab lab test test-pythons pytest nbval lint format bench torch browser-deps cjk-font clean \
        fuzz fuzz-known fuzz-known-forward fuzz-known-transform census sweep-extremes install-grade grade autograder student handouts site install-site

# The browser test (tests/browser) drives Debian's chromium through Playwright's Python package.
CHROMIUM := /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

help:
	@echo "make lab     create .venv if needed, install the course ([lab]), open JupyterLab on notebooks/"
	@echo "make test    create .venv if needed, install [test] and torch 2.13.0, run ruff, pytest, nbval"
	@echo "make test-pythons  on Python 3.10, 3.12 and 3.13 (.venv-3.X each): the tests that need no torch, a lesson"
	@echo "make pytest  only pytest on tests/ (PYTEST_ARGS=\"-k name -x\" to narrow); make nbval: only notebooks"
	@echo "make lint    ruff on minigrad viz tests bench notebooks"
	@echo "make format  ruff format + ruff check --fix on minigrad viz tests bench"
	@echo "make bench   run bench/run.py"
	@echo "make torch   install torch==2.13.0 into .venv when missing (make test and make pytest do it)"
	@echo "make notebooks  regenerate the lessons (English and notebooks/zh/), solutions and marimo lessons from notebooks/src/"
	@echo "make grade SUBMISSIONS=DIR  grade every student's notebooks (one folder each) -> DIR/grades.csv, feedback.md"
	@echo "make autograder  write the autograder version (otter-grader tests, zips) into build/autograder/"
	@echo "make student  write the student release (no solutions, no hidden tests) into build/student/ and its zip"
	@echo "make site    the course as a website into build/site/: players play, quizzes score, no install (SITE_ARGS=\"00 03\")"
	@echo "make handouts  static HTML and PDF of every lesson into build/handouts/ (Debian's chromium prints)"
	@echo "make fuzz    the differential fuzzer, N programs per seed: make fuzz N=2000 SEED=0-4 (needs torch)"
	@echo "make sweep-extremes  every op at inf, nan, -0., subnormal and huge inputs against torch (the full sweep)"
	@echo "make fuzz-known  rewrite tests/fuzz/parityfuzz/known_failures.md from today's results (review the diff)"
	@echo "make fuzz-known-forward  the same for forward mode's CI set (known_failures_forward.md)"
	@echo "make fuzz-known-transform  the same for the function transforms' CI set (known_failures_transform.md)"
	@echo "make census  tests/teaching_code/CENSUS.md from the census's name lists; prints the coverage figure"
	@echo "make browser-deps  apt-get install chromium when $(CHROMIUM) is missing (the browser test needs it)"
	@echo "make cjk-font  apt-get install fonts-noto-cjk when no CJK font is found (Chinese in PNG/GIF exports)"
	@echo "make clean   remove .venv, caches and build artefacts"

venv: $(VENV)/pyvenv.cfg
	@echo "venv: $(VENV) ready ($$($(PY) --version 2>&1))"

$(VENV)/pyvenv.cfg:
	@echo "venv: creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)

# The course: minigrad, viz, the checks and JupyterLab (the `lab` extra).
install-lab: $(LAB_STAMP)

$(LAB_STAMP): pyproject.toml | $(VENV)/pyvenv.cfg
	@echo "install-lab: pyproject.toml changed or first install -> pip install -e .[lab]"
	$(PY) -m pip install --disable-pip-version-check -q -e '.[lab]'
	@touch $(LAB_STAMP)

# Everything the tests need (the `test` extra includes `lab`; `grade` is otter-grader, for tests/grading/).
install: $(TEST_STAMP)

$(TEST_STAMP): pyproject.toml | $(VENV)/pyvenv.cfg
	@echo "install: pyproject.toml changed or first install -> pip install -e .[test], then .[grade]"
	$(PY) -m pip install --disable-pip-version-check -q -e '.[test]'
	$(PY) -m pip install --disable-pip-version-check -q -e '.[grade]'
	@touch $(TEST_STAMP) $(GRADE_STAMP) $(LAB_STAMP) $(SITE_STAMP)

# The grader (the `grade` extra: the lab and otter-grader).
install-grade: $(GRADE_STAMP)

$(GRADE_STAMP): pyproject.toml | $(VENV)/pyvenv.cfg
	@echo "install-grade: pyproject.toml changed or first install -> pip install -e .[grade]"
	$(PY) -m pip install --disable-pip-version-check -q -e '.[grade]'
	@touch $(GRADE_STAMP) $(LAB_STAMP)

lab: install-lab
	@echo "lab: jupyter lab notebooks/ $(ROOT_ARGS) $(LAB_ARGS) (settings from $(LAB_CONFIG)/)"
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" \
	JUPYTER_CONFIG_PATH="$(CURDIR)/$(LAB_CONFIG)$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
	$(PY) -m jupyter lab notebooks/ $(ROOT_ARGS) $(LAB_ARGS)

test: install torch browser-deps cjk-font
	@$(MAKE) lint
	@$(MAKE) pytest
	@$(MAKE) nbval
	@$(MAKE) test-pythons

lint: install
	@echo "lint: ruff check $(LINT_DIRS)"
	@$(PY) -m ruff check $(LINT_DIRS)

format: install
	@echo "format: ruff format + ruff check --fix $(FORMAT_DIRS)"
	@$(PY) -m ruff format $(FORMAT_DIRS)
	@$(PY) -m ruff check --fix $(FORMAT_DIRS)

pytest: install torch
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
	$(COURSE_ENV) $(PY) -m pytest --nbval $(NBVAL_COMMON) "$${nbs[@]}"

# Regenerate the course from notebooks/src/: NN_name.ipynb (the lessons with blanks) and solutions/NN_name.ipynb,
# both executed; then the marimo lessons (notebooks/marimo/NN_name.py) from the lessons (notebooks/marimo_build.py).
# The Chinese course: notebooks/i18n.py first merges the lessons' prose into notebooks/locale/zh/*.po (a changed
# English paragraph keeps its old translation, flagged fuzzy), then build.py --lang zh writes notebooks/zh/ and
# notebooks/zh/solutions/ from the same code cells, executed. LESSONS="03 05" builds only those lessons.
LESSONS ?=
.PHONY: notebooks
notebooks: install
	$(PY) notebooks/i18n.py
	$(COURSE_ENV) $(PY) notebooks/build.py $(LESSONS)
	$(PY) notebooks/build.py --lang zh $(LESSONS)
	$(PY) notebooks/marimo_build.py $(LESSONS)

# Grading (notebooks/grade.py, otter-grader without containers, offline): SUBMISSIONS holds one folder per
# student with that student's learner notebooks. TIMEOUT is the limit per notebook in seconds; JOBS how many
# notebooks are graded at once. Writes SUBMISSIONS/grades.csv and SUBMISSIONS/<student>/feedback.md.
SUBMISSIONS ?=
TIMEOUT ?= 120
JOBS ?= 2
grade: install-grade
	@if [ -z "$(SUBMISSIONS)" ]; then \
	  echo "grade: say where the submissions are: make grade SUBMISSIONS=DIR (one folder per student)"; exit 2; \
	fi
	$(PY) notebooks/grade.py "$(SUBMISSIONS)" --timeout $(TIMEOUT) --jobs $(JOBS)

# The autograder version alone (grade builds it too): build/autograder/NN_name.zip and its tests/ID.py files.
autograder: install-grade
	$(PY) notebooks/build.py --autograder build/autograder

# The student release (notebooks/student.py): build/student/ (the learner lessons, their checks and public tests,
# the library; no solutions, no sources, no hidden tests) and build/student.zip, for a Classroom template or a hub.
student: install-lab
	$(PY) notebooks/student.py

# Handouts for learners without Jupyter (notebooks/handouts.py): build/handouts/NN_name.html (PNG pictures
# embedded) and NN_name.pdf, printed by Debian's headless chromium, for every lesson and solution. The PDFs
# typeset formulas with Debian's MathJax (libjs-mathjax), installed here when missing, like chromium.
MATHJAX := /usr/share/javascript/mathjax/MathJax.js
handouts: install-lab browser-deps
	@if [ ! -f $(MATHJAX) ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "handouts: $(MATHJAX) missing -> $(strip $(SUDO) apt-get install -y libjs-mathjax) (Debian's package)"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q libjs-mathjax \
	    || echo "handouts: could not install libjs-mathjax; the PDFs will show formulas as TeX"; \
	fi
	$(PY) notebooks/handouts.py

# The course as a website (notebooks/website.py): build/site/, every lesson a page whose players play and whose
# quizzes score with no kernel and nothing fetched (open build/site/index.html, or serve the folder). Built from
# the learners' lessons, run again here. SITE_ARGS="00 03" builds only those lessons; .github/workflows/pages.yml
# publishes it on GitHub Pages.
SITE_ARGS ?=
site: install-site
	$(PY) notebooks/website.py $(SITE_ARGS)

install-site: $(SITE_STAMP)

$(SITE_STAMP): pyproject.toml | $(VENV)/pyvenv.cfg
	@echo "install-site: pyproject.toml changed or first install -> pip install -e .[site]"
	$(PY) -m pip install --disable-pip-version-check -q -e '.[site]'
	@touch $(SITE_STAMP) $(LAB_STAMP)

# The differential fuzzer (tests/fuzz/parityfuzz): N random programs per seed run on torch 2.13 and on
# minigrad; prints the mismatches by category and the coverage table. SEED is a number, a range (0-4)
# or a list (0,3). FUZZ_ARGS="--show 3" prints 3 shrunk snippets per category.
N ?= 2000
SEED ?= 0
FUZZ_ARGS ?=
fuzz: install torch
	@echo "fuzz: $(N) programs per seed, seeds $(SEED)"
	@PYTHONPATH=tests/fuzz $(PY) -m parityfuzz run --n $(N) --seed $(SEED) $(FUZZ_ARGS)

# Issue 34's sweeps in full (CI runs a fixed sample of each): every differentiable op at non-finite and extreme
# inputs in float64 and float32 (tests/ops/test_extreme_sweeps.py), every truncation and bit flip of saved files.
sweep-extremes: install torch
	MINIGRAD_SWEEP=full $(PY) -m pytest -q -p no:cacheprovider tests/ops/test_extreme_sweeps.py tests/ops/test_second_order_flags.py \
	    tests/nn/test_serialization_damage.py $(PYTEST_ARGS)

fuzz-known: install torch
	@PYTHONPATH=tests/fuzz $(PY) -m parityfuzz known --update

fuzz-known-forward: install torch
	@PYTHONPATH=tests/fuzz $(PY) -m parityfuzz known --update --mode forward

fuzz-known-transform: install torch
	@PYTHONPATH=tests/fuzz $(PY) -m parityfuzz known --update --mode transform

# The census of what public teaching code calls: tests/teaching_code/CENSUS.md from the committed name lists
# (offline; tests/teaching_code/census/extract.py makes the lists from the sources' snapshots)
census: install
	@$(PY) tests/teaching_code/census/census.py

bench: install
	@if [ -f bench/run.py ]; then \
	  echo "bench: python bench/run.py"; $(PY) bench/run.py && \
	  echo "bench: python bench/models.py (W8, W9)" && $(PY) bench/models.py && \
	  echo "bench: python bench/func_bench.py (W10, torch.func)" && $(PY) bench/func_bench.py; \
	else \
	  echo "bench: no bench/run.py yet, nothing to run"; \
	fi

# The other Pythons the package supports (pyproject's classifiers): on each, in its own venv (.venv-3.X, made
# when missing and reused; the `test` extra installed again only when pyproject.toml is newer than its stamp), the
# tests that need no torch (torch's wheel is for 3.11 only; `--without-torch` deselects the rest): the core's own
# tests, viz without the browser, and one lesson executed and compared. The Python is pyenv's newest 3.X, else
# `python3.X` on PATH; a missing one is skipped locally and fails under CI=true.
PYTHONS ?= 3.10 3.12 3.13
PYTHONS_TESTS := tests/test_engine.py tests/test_engine_parity.py tests/test_tensor.py tests/test_layers.py \
                 tests/test_leaf_edges.py tests/test_printing.py tests/test_sampling.py tests/ops/test_declarations.py \
                 tests/ops/test_registry_sweeps.py tests/ops/test_gradcheck_ops.py tests/ops/test_kinks.py \
                 tests/ops/test_cumprod.py tests/nn tests/viz
PYTHONS_LESSON := notebooks/solutions/03_backward.ipynb
test-pythons:
	@for v in $(PYTHONS); do \
	  py=$$(ls -d $(HOME)/.pyenv/versions/$$v.*/bin/python 2>/dev/null | sort -V | tail -n 1); \
	  if [ -z "$$py" ]; then py=$$(command -v python$$v || true); fi; \
	  if [ -z "$$py" ]; then \
	    echo "test-pythons: missing tool: Python $$v (pyenv install $$v, or python$$v on PATH)"; \
	    if [ "$${CI:-}" = true ]; then exit 1; fi; continue; \
	  fi; \
	  venv=.venv-$$v; \
	  if [ ! -x $$venv/bin/python ]; then echo "test-pythons: creating $$venv with $$py"; $$py -m venv $$venv; fi; \
	  if [ ! -f $$venv/.minigrad-test ] || [ pyproject.toml -nt $$venv/.minigrad-test ]; then \
	    echo "test-pythons: pip install -e .[test] into $$venv"; \
	    $$venv/bin/python -m pip install --disable-pip-version-check -q -e '.[test]'; \
	    touch $$venv/.minigrad-test; \
	  fi; \
	  echo "test-pythons: $$($$venv/bin/python --version): the tests that need no torch, and $(PYTHONS_LESSON)"; \
	  $$venv/bin/python -m pytest -q -p no:cacheprovider --without-torch $(PYTHONS_TESTS); \
	  $(COURSE_ENV) $$venv/bin/python -m pytest -q -p no:cacheprovider --nbval $(NBVAL_COMMON) $(PYTHONS_LESSON); \
	done

# The torch-parity tests compare minigrad with torch 2.13.0: without it they would be skipped (most
# of the suite), so `make test` installs it, as .ci/run does. Nothing happens when it is there.
torch: venv
	@if $(PY) -c 'import importlib.metadata as m, sys; sys.exit(m.version("torch").split("+")[0] != "2.13.0")' \
	    2>/dev/null; then \
	  echo "torch: torch 2.13.0 is in $(VENV)"; \
	else \
	  echo "torch: missing -> pip install $(TORCH_SPEC) into $(VENV) (the local CPU wheel; the parity tests need it)"; \
	  $(PY) -m pip install --disable-pip-version-check -q $(TORCH_SPEC); \
	fi

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

# Chinese in viz's PNG exports, GIF captions and the browser tests' screenshots needs a CJK font (viz finds one
# through fontconfig: viz/i18n.py cjk_font). Debian's fonts-noto-cjk (OFL) is installed here when none is found,
# like chromium above; without apt-get, say so and go on (tests/viz/test_viz_i18n.py then fails and says why).
cjk-font:
	@if fc-list :lang=zh-cn family 2>/dev/null | grep -q .; then \
	  echo "cjk-font: $$(fc-match -f '%{family[0]}' :lang=zh-cn) found"; \
	elif command -v apt-get >/dev/null 2>&1; then \
	  echo "cjk-font: no CJK font -> $(strip $(SUDO) apt-get install -y fonts-noto-cjk) (Debian's package)"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q fonts-noto-cjk \
	    || { $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q fonts-noto-cjk; } \
	    || echo "cjk-font: could not install fonts-noto-cjk; Chinese text in pictures may show as boxes"; \
	else \
	  echo "cjk-font: no CJK font and no apt-get here: install one (Noto Sans CJK) for Chinese in pictures"; \
	fi

clean:
	@echo "clean: removing $(VENV), caches and build artefacts"
	rm -rf $(VENV) .venv-3.* build dist *.egg-info .pytest_cache .ruff_cache .hypothesis test-artifacts
	find . -path ./.git -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -prune -exec rm -rf {} +
