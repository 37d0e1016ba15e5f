"""Fixtures for the animation tests.

``pgv`` (pygraphviz) and ``mg`` (minigrad) come from tests/conftest.py.
``graphs``: builders of small graphs that return everything a test compares, so the same
computation can be built twice (one copy animated, one run by a plain ``backward()``).
"""

from __future__ import annotations

import numpy as np
import pytest


class Built:
    """A graph built by a builder: the loss, its leaves and its named intermediates."""

    def __init__(self, loss, leaves: dict, inter: dict):
        self.loss = loss
        self.leaves = leaves
        self.inter = inter


def _mlp(T, retain: bool = False) -> Built:
    """A small network with a matmul, a broadcast bias, relu, a reused tensor, mean."""
    rng = np.random.default_rng(0)
    x = T.tensor(rng.normal(size=(4, 3)), dtype=T.float64)
    w = T.tensor(rng.normal(size=(3, 2)), dtype=T.float64, requires_grad=True)
    b = T.tensor([0.5, -0.25], dtype=T.float64, requires_grad=True)
    s = T.tensor(1.5, dtype=T.float64, requires_grad=True)
    h = x @ w
    z = h + b
    r = z.relu()
    u = r * s
    uu = u * u
    v = uu + r  # r is used twice: its gradients meet and are summed
    loss = v.mean()
    inter = {"h": h, "z": z, "r": r, "u": u, "uu": uu, "v": v}
    if retain:
        for t in inter.values():
            t.retain_grad()
    return Built(loss, {"w": w, "b": b, "s": s}, inter)


def _small(T, retain: bool = False) -> Built:
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = T.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    d = c * a
    e = d + c
    loss = e.sum()
    inter = {"c": c, "d": d, "e": e}
    if retain:
        for t in inter.values():
            t.retain_grad()
    return Built(loss, {"a": a, "b": b}, inter)


@pytest.fixture(scope="session")
def graphs():
    return {"mlp": _mlp, "small": _small}
