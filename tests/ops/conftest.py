"""Fixtures for the operator tests (tests/ops/).

``opcheck.py`` holds the differential machinery; it is loaded here by path and registered as the
module ``opcheck`` (test modules ``from opcheck import F, P, K, ...``), since pytest runs with
``--import-mode=importlib`` and test folders have no ``__init__.py``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def _load(name: str):
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


opcheck = _load("opcheck")
sweeps = _load("sweeps")


@pytest.fixture(autouse=True)
def _remember_test_id(request):
    """Seeds the input generator of `parity.check` with the test id (deterministic, distinct per case)."""
    opcheck._CURRENT["id"] = request.node.nodeid
    yield
    opcheck._CURRENT["id"] = None


@pytest.fixture(scope="session")
def parity(torch):
    """The differential checker against PyTorch (skips without torch, fails without it under CI=true)."""
    return opcheck.Parity(torch)
