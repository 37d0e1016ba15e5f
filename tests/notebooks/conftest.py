"""Fixtures for the course tests: notebooks/build.py and notebooks/course.py loaded by path
(notebooks/ is not a package), and the list of sources with their stored notebooks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _load(name: str, path: Path):
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
    """notebooks/course.py as a module (the checkers)."""
    return _load("course", NOTEBOOKS / "course.py")
