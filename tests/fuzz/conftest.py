"""Fixtures for the differential fuzzer's tests (tests/fuzz/).

The fuzzer is the package ``parityfuzz`` beside this file; pytest runs with ``--import-mode=importlib``
and test folders have no ``__init__.py``, so it is loaded here by path and registered in
``sys.modules`` (test modules ``import parityfuzz``). ``make fuzz`` runs it with ``tests/fuzz`` on
``PYTHONPATH`` instead.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def _load_package(name: str):
    if name not in sys.modules:
        folder = Path(__file__).with_name(name)
        spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


_load_package("parityfuzz")


@pytest.fixture(scope="session")
def libraries(torch):
    """(PyTorch, minigrad) as the fuzzer runs them."""
    from parityfuzz.runner import minigrad_library, torch_library

    import minigrad

    return torch_library(torch), minigrad_library(minigrad)
