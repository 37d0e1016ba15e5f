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


class OptimizerSteps:
    """One optimizer compared with PyTorch's step by step on the same small float64 model (two Linear layers and a
    parameter that never gets a gradient, which step() must skip), trained on a fixed (X, Y) by mse_loss."""

    RTOL, ATOL = 1e-9, 1e-12

    def __init__(self, torch, sync, seed: int):
        self.torch, self.sync = torch, sync
        rng = np.random.default_rng(seed)
        self.X, self.Y = rng.standard_normal((8, 4)), rng.standard_normal((8, 2))

    @staticmethod
    def model(lib):
        nn = lib.nn
        m = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2)).double()
        m.unused = nn.Parameter(lib.ones(2, dtype=lib.float64))
        return m

    def models(self) -> tuple:
        """(torch's model, minigrad's), with the same parameters."""
        tmodel, mmodel = self.model(self.torch), self.model(minigrad)
        self.sync(tmodel, mmodel)
        return tmodel, mmodel

    def step(self, lib, model, opt) -> float:
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(model(lib.tensor(self.X)), lib.tensor(self.Y))
        loss.backward()
        opt.step()
        return loss.item()

    def check_update_rule(self, name: str, kwargs: dict, steps: int) -> None:
        """Losses and parameters after every step, then the state (keys in order, values, dtypes), param_groups
        and repr equal PyTorch's."""
        tmodel, mmodel = self.models()
        topt = getattr(self.torch.optim, name)(tmodel.parameters(), **kwargs)
        mopt = getattr(minigrad.optim, name)(mmodel.parameters(), **kwargs)
        for step in range(steps):
            tl, ml = self.step(self.torch, tmodel, topt), self.step(minigrad, mmodel, mopt)
            np.testing.assert_allclose(ml, tl, rtol=self.RTOL, atol=self.ATOL, err_msg=f"loss at step {step}")
            for (n, tp), mp in zip(tmodel.named_parameters(), mmodel.parameters()):
                np.testing.assert_allclose(mp.detach().numpy(), tp.detach().numpy(), rtol=self.RTOL, atol=self.ATOL,
                                           err_msg=f"{n} after step {step}")
        tstate, mstate = topt.state_dict(), mopt.state_dict()
        assert mstate["param_groups"] == tstate["param_groups"]
        assert list(mstate["state"]) == list(tstate["state"])
        for k, tvalues in tstate["state"].items():
            assert list(mstate["state"][k]) == list(tvalues), "state keys and their order"
            for key, tv in tvalues.items():
                mv = mstate["state"][k][key]
                np.testing.assert_allclose(mv.numpy(), tv.numpy(), rtol=self.RTOL, atol=self.ATOL, err_msg=key)
                assert str(mv.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], key
        assert repr(mopt) == repr(topt)


@pytest.fixture
def optimizer_steps(torch, sync):
    """`optimizer_steps(seed)`: an OptimizerSteps on the data of that seed."""
    return lambda seed: OptimizerSteps(torch, sync, seed)
