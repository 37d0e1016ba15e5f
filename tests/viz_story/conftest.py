"""Fixtures for the story modes (source lines, sessions, the backward-pass layer).

``lib`` runs a test once with minigrad and once with PyTorch (through the ``torch`` fixture of
tests/conftest.py: skipped without torch, a failure under CI=true).
"""

from __future__ import annotations

import pytest


@pytest.fixture(params=["minigrad", "torch"])
def lib(request):
    if request.param == "torch":
        return request.getfixturevalue("torch")
    import minigrad

    return minigrad


@pytest.fixture(scope="session")
def pgv():
    try:
        import pygraphviz
    except ImportError as exc:
        pytest.skip(f"missing tool: pygraphviz is not importable ({exc})")
    return pygraphviz


@pytest.fixture(scope="session")
def mg():
    import minigrad

    return minigrad
