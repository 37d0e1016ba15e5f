"""Fixtures for the grader's tests: notebooks/build.py, grade.py, handouts.py and tests/notebooks/answers.py
loaded by path (none of these folders is a package)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


def load(name: str, path: Path):
    """Import a file as a module once per session (the same module object for every test)."""
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def build():
    return load("course_build", NOTEBOOKS / "build.py")


@pytest.fixture(scope="session")
def answers():
    return load("course_answers", ROOT / "tests" / "notebooks" / "answers.py")


@pytest.fixture(scope="session")
def handouts():
    return load("course_handouts", NOTEBOOKS / "handouts.py")


@pytest.fixture(scope="session")
def otter_tests():
    """otter-grader's test-file module (the `grade` extra, which `make install` installs): a test that
    needs it is skipped without it, and fails under CI=true, as the conventions ask."""
    try:
        from otter.test_files import exception_test
    except ImportError:
        message = "otter-grader is missing: `make install` installs it (pip install -e .[test,grade])"
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return exception_test


@pytest.fixture(scope="session")
def grader():
    return load("course_grade", NOTEBOOKS / "grade.py")
