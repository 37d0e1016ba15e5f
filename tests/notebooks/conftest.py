"""Fixtures for the course tests: notebooks/build.py and tests/notebooks/answers.py loaded by path
(neither folder is a package), and the installed checks module ``minigrad_course``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _load(name: str, path: Path):
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def notebooks_dir() -> Path:
    return NOTEBOOKS


@pytest.fixture(scope="session")
def build():
    """notebooks/build.py as a module."""
    return _load("course_build", NOTEBOOKS / "build.py")


@pytest.fixture(scope="session")
def course():
    """The checks: minigrad_course, installed with the project (from notebooks/minigrad_course/)."""
    import minigrad_course

    return minigrad_course


@pytest.fixture(scope="session")
def answers():
    """tests/notebooks/answers.py: right and wrong answers to every exercise."""
    return _load("course_answers", Path(__file__).resolve().parent / "answers.py")
