"""Fixtures for the PyTorch-parity tests, and the harness import.

The project runs pytest with ``--import-mode=importlib`` and no ``__init__.py`` in tests, so test
modules here cannot import a sibling module by plain name. This conftest (loaded before the test
modules are collected, in every import mode) loads ``harness.py`` by path and registers it as the
module ``torch_parity_harness``; test modules do ``import torch_parity_harness``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path

import pytest


def _load_harness():
    name = "torch_parity_harness"
    if name not in sys.modules:
        path = Path(__file__).with_name("harness.py")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


_load_harness()


@pytest.fixture(scope="session")
def torch():
    """PyTorch 2.13, the reference. Skipped when missing, except on CI (CI=true), where that is a failure.

    Same contract as the ``torch`` fixture of tests/conftest.py (whose hooks also turn a
    "missing tool:" skip into a failure under CI=true); repeated here so this folder stands alone.
    """
    try:
        return importlib.import_module("torch")
    except Exception as exc:  # ImportError, or a broken install raising something else
        reason = f"{type(exc).__name__}: {exc}"
        message = f"missing tool: torch is not importable ({reason}); the parity tests need torch 2.13.0"
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail(f"CI=true and {message}", pytrace=False)
        pytest.skip(message)


class _Unimportable:
    """Stands for a minigrad that cannot be imported: any use FAILS the test (not skip, not error)."""

    def __init__(self, message: str):
        self._message = message

    def __getattr__(self, name):
        if name.startswith("__") and name != "__name__":  # let copy/pickle/hasattr probes say "no"
            raise AttributeError(name)
        pytest.fail(self._message, pytrace=False)


@pytest.fixture(scope="session")
def minigrad():
    """The library under test. If ``minigrad`` (or ``minigrad.autograd.Variable``) cannot be imported,
    every test using it fails, with the import traceback."""
    try:
        module = importlib.import_module("minigrad")
        importlib.import_module("minigrad.autograd").Variable
    except Exception:
        message = "cannot import minigrad / minigrad.autograd.Variable:\n" + traceback.format_exc()
        return _Unimportable(message)
    return module
