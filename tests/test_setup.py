"""Checks of the packaging and CI setup: pyproject.toml, .ci/run, the nbval sanitizers.

These guard the promises the README makes: the core needs NumPy only, the extras hold what the
course and the tests need, and nothing ever asks pip for a torch other than the local wheel.
"""

from __future__ import annotations

import fnmatch
import importlib.metadata
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
DIST_NAME = "minigrad-lab"

# pillow: player.save_gif (issue 17 makes it a dependency of the lab extra); notebook: the course and the
# player also run in Notebook 7
LAB_NEEDS = {"pygraphviz", "graphviz", "ipywidgets", "anywidget", "jupyterlab", "tqdm", "scikit-learn", "pillow",
             "notebook"}
TEST_NEEDS = {"pytest", "hypothesis", "nbval", "playwright", "ruff", "latex2mathml", "marimo"}


@pytest.fixture(scope="module")
def pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _names(specs: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(s).name) for s in specs}


def _all_specs(pyproject: dict) -> list[str]:
    project = pyproject["project"]
    specs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        specs += extra
    specs += pyproject.get("build-system", {}).get("requires", [])
    return specs


def test_project_metadata(pyproject):
    project = pyproject["project"]
    assert project["name"] == DIST_NAME  # `minigrad` on PyPI is another project
    assert project["version"] == "0.1.0"
    assert project["license"] == "MIT"
    assert Requirement(f"x{project['requires-python']}").specifier.contains("3.10")
    assert not Requirement(f"x{project['requires-python']}").specifier.contains("3.9")
    assert pyproject["build-system"]["build-backend"] == "setuptools.build_meta"
    assert "MIT License" in (ROOT / "LICENSE").read_text()


def test_runtime_dependency_is_numpy_only(pyproject):
    assert _names(pyproject["project"]["dependencies"]) == {"numpy"}


def test_extras_hold_what_the_design_names(pyproject):
    extras = pyproject["project"]["optional-dependencies"]
    assert _names(extras["lab"]) == LAB_NEEDS
    test = [Requirement(s) for s in extras["test"]]
    assert {canonicalize_name(r.name) for r in test} == TEST_NEEDS | {DIST_NAME}
    (self_ref,) = [r for r in test if canonicalize_name(r.name) == DIST_NAME]
    assert self_ref.extras == {"lab"}
    site = [Requirement(s) for s in extras["site"]]  # the website (make site): the lab and latex2mathml, in test too
    assert {canonicalize_name(r.name) for r in site} == {DIST_NAME, "latex2mathml"}
    assert {str(r) for r in site if r.name == "latex2mathml"} <= {str(r) for r in test}
    marimo = [Requirement(s) for s in extras["marimo"]]  # marimo has its own extra, not the lab's
    assert {canonicalize_name(r.name) for r in marimo} == {DIST_NAME, "marimo"}
    assert {str(r) for r in marimo if r.name == "marimo"} <= {str(r) for r in test}
    assert "marimo" not in _names(extras["lab"])


def test_no_dependency_spec_mentions_torch(pyproject):
    # Any torch spec other than the exact local wheel downloads gigabytes: torch is installed by
    # .ci/run (or `make torch`) only, never through the package metadata.
    specs = _all_specs(pyproject)
    assert specs
    offenders = [s for s in specs if "torch" in s.lower()]
    assert offenders == []


def test_packages_and_package_data(pyproject):
    setuptools_cfg = pyproject["tool"]["setuptools"]
    include = setuptools_cfg["packages"]["find"]["include"]
    assert {"minigrad*", "viz*"} <= set(include)
    globs = setuptools_cfg["package-data"]["viz"]
    assert {"*.js", "*.css"} <= set(globs)
    # Every non-Python file viz ships must be covered by a package-data glob, or the widget
    # breaks in a non-editable install.
    viz = ROOT / "viz"
    if not viz.is_dir():
        return
    uncovered = [
        str(p.relative_to(ROOT))
        for p in viz.iterdir()
        if p.is_file()
        and p.suffix not in {".py", ".pyc"}
        and not any(fnmatch.fnmatch(p.name, g) for g in globs)
    ]
    assert uncovered == []


def test_installed_metadata_matches(pyproject):
    try:
        dist = importlib.metadata.distribution(DIST_NAME)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{DIST_NAME} is not installed (make install does it)")
    requires = [Requirement(s) for s in dist.requires or []]
    unconditional = {canonicalize_name(r.name) for r in requires if r.marker is None}
    assert unconditional == {"numpy"}
    assert not [r for r in requires if "torch" in r.name.lower()]
    assert set(dist.metadata.get_all("Provides-Extra") or []) >= {"lab", "test"}
    # `make install` installs this checkout in editable mode.
    direct_url = dist.read_text("direct_url.json")
    if direct_url is not None:
        info = json.loads(direct_url)
        if info.get("dir_info", {}).get("editable"):
            installed_from = Path(url2pathname(urlparse(info["url"]).path)).resolve()
            assert installed_from == ROOT, "the venv's editable install points at another checkout"


def test_pytest_config_hides_no_warning_category(pyproject):
    # tests assert warnings; an `ignore` filter may only target one exact message.
    filters = pyproject["tool"]["pytest"]["ini_options"].get("filterwarnings", [])
    for f in filters:
        action, _, rest = f.partition(":")
        message = rest.split(":")[0] if rest else ""
        if action == "ignore":
            assert message.strip(), f"filterwarnings {f!r} hides a whole category"
    ini = pyproject["tool"]["pytest"]["ini_options"]
    assert ini["testpaths"] == ["tests"]
    assert "--import-mode=importlib" in ini["addopts"] and "-ra" in ini["addopts"]


def _ci_run_commands() -> list[list[str]]:
    text = (ROOT / ".ci" / "run").read_text()
    commands = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            commands.append(shlex.split(line, comments=True))
    return commands


def test_ci_run_installs_exactly_the_local_torch_and_runs_make_test():
    path = ROOT / ".ci" / "run"
    text = path.read_text()
    assert text.startswith("#!/usr/bin/env bash") or text.startswith("#!/bin/bash")
    assert os.access(path, os.X_OK), ".ci/run must be executable"
    commands = _ci_run_commands()
    assert ["set", "-euo", "pipefail"] in commands
    pip_installs = [c for c in commands if "pip" in Path(c[0]).name and "install" in c]
    torch_args = [a for c in pip_installs for a in c if "torch" in a.lower()]
    assert torch_args == ["torch==2.13.0"]
    assert all(Path(c[0]).parts[:1] == (".venv",) for c in pip_installs), pip_installs
    # make test comes last, after torch is in the venv.
    make_test = [i for i, c in enumerate(commands) if c[:2] == ["make", "test"]]
    torch_install = [i for i, c in enumerate(commands) if "torch==2.13.0" in c]
    assert make_test and torch_install and torch_install[0] < make_test[-1]
    assert re.search(r'^export CI="\$\{CI:-true\}"$', text, re.MULTILINE)


def test_nbval_sanitizers_cover_addresses_and_kernel_paths():
    plugin = pytest.importorskip("nbval.plugin")
    patterns = plugin.get_sanitize_patterns((ROOT / ".ci" / "nbval-sanitize.cfg").read_text())
    assert len(patterns) >= 3

    def sanitize(s: str) -> str:
        for regex, replace in patterns:
            s = re.sub(regex, replace, s)
        return s

    assert sanitize("<AccumulateGrad object at 0x7f3a2b1c9d50>") == "<AccumulateGrad object at 0xADDRESS>"
    a = "/tmp/ipykernel_12345/3141592653.py:4: UserWarning: The .grad attribute"
    b = "/var/tmp/ipykernel_9/27182818.py:4: UserWarning: The .grad attribute"
    assert sanitize(a) == sanitize(b)
    assert "12345" not in sanitize(a)
    w1 = "(Triggered internally at /pytorch/build/aten/src/ATen/core/TensorBody.h:494.)"
    w2 = "(Triggered internally at C:\\actions-runner\\aten\\src\\ATen\\core\\TensorBody.h:489.)"
    assert sanitize(w1) == sanitize(w2)
    # Ordinary numbers and text are left alone.
    assert sanitize("tensor([1.0000, 2.0000], grad_fn=<MulBackward0>)") == (
        "tensor([1.0000, 2.0000], grad_fn=<MulBackward0>)"
    )


def test_readme_opens_with_the_two_setup_commands():
    head = (ROOT / "README.md").read_text()[:1500]
    assert "make lab" in head and "make test" in head


def test_course_checks_are_one_installed_module(pyproject):
    """The exercise checks live once, in notebooks/minigrad_course/, installed beside minigrad and viz:
    the lessons, their solutions and a grader import the same file (no generated copy)."""
    find = pyproject["tool"]["setuptools"]["packages"]["find"]
    assert find["where"] == [".", "notebooks"]
    assert (ROOT / "notebooks" / "minigrad_course" / "__init__.py").is_file()
    found = importlib.util.find_spec("minigrad_course")
    assert found is not None, "minigrad_course is not installed (make install)"
    assert Path(found.origin).resolve() == ROOT / "notebooks" / "minigrad_course" / "__init__.py"


def test_top_level_stays_as_the_design_asks():
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    top = {line.split("/")[0] for line in listed.stdout.splitlines()}
    allowed = {"pyproject.toml", "minigrad", "notebooks", "viz", "tests", "README.md", "Makefile", ".ci", "bench",
               "binder", "CONTRIBUTING.md", "LICENSE", ".gitignore",
               "README.zh-CN.md",  # the Chinese front door (issue 32)
               "docs",      # the guides (API, viz, differences from PyTorch, ...), pages of the course's website
               ".github"}   # the workflow that publishes the website on GitHub Pages
    assert top <= allowed, sorted(top - allowed)


def _make_rule(makefile: str, target: str) -> tuple[list[str], str]:
    """(prerequisites, recipe) of a Makefile rule."""
    m = re.search(rf"^{re.escape(target)}:(?P<deps>[^\n=]*)\n(?P<recipe>(?:\t[^\n]*\n|[ \t]*\\\n)*)", makefile,
                  re.MULTILINE)
    assert m, f"no rule for {target}"
    return m.group("deps").split(), m.group("recipe")


def test_make_lab_installs_the_course_only_and_make_test_everything():
    makefile = (ROOT / "Makefile").read_text()
    deps, _ = _make_rule(makefile, "lab")
    assert deps == ["install-lab"]
    _, recipe = _make_rule(makefile, "$(LAB_STAMP)")
    assert "-e '.[lab]'" in recipe and "[test]" not in recipe
    deps, _ = _make_rule(makefile, "test")
    assert deps[:2] == ["install", "torch"], "make test installs torch 2.13.0 when missing, so nothing is skipped"
    deps, _ = _make_rule(makefile, "pytest")
    assert "torch" in deps
    _, recipe = _make_rule(makefile, "$(TEST_STAMP)")
    assert "-e '.[test]'" in recipe
    # the only torch spec pip ever sees is the local wheel's
    assert re.search(r"^TORCH_SPEC := torch==2\.13\.0$", makefile, re.MULTILINE)
    _, recipe = _make_rule(makefile, "torch")
    assert "pip install --disable-pip-version-check -q $(TORCH_SPEC)" in recipe
    assert not re.search(r"pip install[^\n]*\btorch(?!==2\.13\.0)\b", makefile.replace("$(TORCH_SPEC)", ""))
