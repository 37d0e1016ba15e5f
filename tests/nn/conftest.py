"""Helpers for the nn/optim differential tests, shared as fixtures (tests here are not importable).

- `graph(root, leaves)`: the structure of a graph as nested tuples of class names, with each
  AccumulateGrad replaced by the index of its leaf in `leaves`, so a minigrad graph and a torch
  graph compare with `==` (names, `next_functions` order, `None` edges and which leaf is where).
- `sync(torch_module, minigrad_module)`: copy torch's parameters into minigrad's (via NumPy).
- `close(a, b, dtype)`: the tolerance of conventions.md (float64 rtol 1e-9/atol 1e-12, float32 rtol 1e-5).
"""

from __future__ import annotations

import numpy as np
import pytest

import minigrad


def _graph(root, leaves: list):
    memo: dict = {}

    def walk(node):
        if node is None:
            return None
        if type(node).__name__ == "AccumulateGrad":
            var = node.variable
            for i, leaf in enumerate(leaves):
                if var is leaf:
                    return ("leaf", i)
            return ("leaf", "?")
        key = id(node)
        if key not in memo:
            memo[key] = (type(node).__name__, tuple((walk(n), nr) for n, nr in node.next_functions))
        return memo[key]

    return walk(root)


@pytest.fixture(scope="session")
def graph():
    return _graph


def _sync(tmod, mmod) -> None:
    tparams = dict(tmod.named_parameters())
    mparams = dict(mmod.named_parameters())
    assert list(tparams) == list(mparams)
    with minigrad.no_grad():
        for name, tp in tparams.items():
            mp = mparams[name]
            mp.data = minigrad.tensor(tp.detach().numpy().copy())


@pytest.fixture(scope="session")
def sync():
    return _sync


def _np(t) -> np.ndarray:
    if hasattr(t, "detach"):
        t = t.detach()
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


def _close(got, want, dtype=None) -> None:
    got, want = _np(got), _np(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype == np.float64:
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    elif got.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.fixture(scope="session")
def close():
    return _close


@pytest.fixture(scope="session")
def as_np():
    return _np
