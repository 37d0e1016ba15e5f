"""nn.init: PyTorch's distributions (checked statistically) and gains, drawn from minigrad's generator."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad
import minigrad.nn as nn
from minigrad.nn import init


@pytest.fixture(autouse=True)
def _seeded():
    minigrad.manual_seed(2024)  # statistical checks: fixed draws, so a tolerance can never flake


def _big(*shape):
    return nn.Parameter(minigrad.empty(*shape))


def test_calculate_gain_matches_torch(torch):
    cases = [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
             ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("selu", None)]
    for name, param in cases:
        assert init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)
    for lib in (torch, minigrad):
        with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
            lib.nn.init.calculate_gain("foo")


def test_fans_match_torch(torch):
    for shape in [(3, 4), (5, 2, 3, 3), (7, 1, 2)]:
        assert init._calculate_fan_in_and_fan_out(minigrad.empty(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    for lib in (torch, minigrad):
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            lib.nn.init.xavier_uniform_(lib.empty(3))


@pytest.mark.parametrize("fn,kwargs,bound", [
    ("uniform_", {"a": -0.3, "b": 0.7}, (-0.3, 0.7)),
    ("xavier_uniform_", {}, math.sqrt(6 / (300 + 200))),
    ("xavier_uniform_", {"gain": 2.0}, 2 * math.sqrt(6 / (300 + 200))),
    ("kaiming_uniform_", {}, math.sqrt(2) * math.sqrt(3 / 200)),  # a=0: leaky_relu gain with slope 0
    ("kaiming_uniform_", {"a": 0.3}, math.sqrt(2 / (1 + 0.3**2)) * math.sqrt(3 / 200)),
    ("kaiming_uniform_", {"a": math.sqrt(5)}, 1 / math.sqrt(200)),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}, math.sqrt(2) * math.sqrt(3 / 300)),
])
def test_uniform_initialisers_stay_in_bounds_and_fill_them(fn, kwargs, bound):
    w = _big(300, 200)
    assert getattr(init, fn)(w, **kwargs) is w
    lo, hi = bound if isinstance(bound, tuple) else (-bound, bound)
    arr = w.detach().numpy()
    assert arr.min() >= lo and arr.max() <= hi
    width = hi - lo
    assert arr.min() < lo + 0.01 * width and arr.max() > hi - 0.01 * width
    assert abs(arr.std() - width / math.sqrt(12)) < 0.005 * width  # std error: 0.0009 width
    assert w.requires_grad and w.is_leaf and w.grad_fn is None and w._version == 1


@pytest.mark.parametrize("fn,kwargs,mean,std", [
    ("normal_", {"mean": 1.5, "std": 0.2}, 1.5, 0.2),
    ("xavier_normal_", {}, 0.0, math.sqrt(2 / 500)),
    ("kaiming_normal_", {"nonlinearity": "relu"}, 0.0, math.sqrt(2 / 200)),
    ("kaiming_normal_", {"mode": "fan_out", "a": 0.1}, 0.0, math.sqrt(2 / 1.01) / math.sqrt(300)),
])
def test_normal_initialisers_have_the_right_moments(fn, kwargs, mean, std):
    w = getattr(init, fn)(_big(300, 200), **kwargs).detach().numpy()
    # 60000 draws: the mean's standard error is 0.004 std, the std's 0.003 std (tolerances are 5 of them)
    assert abs(w.mean() - mean) < 0.02 * std
    assert abs(w.std() - std) < 0.015 * std


def test_constant_initialisers():
    w = _big(3, 4)
    assert init.zeros_(w) is w and w.abs().sum().item() == 0
    init.ones_(w)
    assert w.sum().item() == 12
    init.constant_(w, 0.25)
    assert w.sum().item() == 3


def test_initialisers_are_reproducible_and_take_a_generator():
    minigrad.manual_seed(11)
    a = init.kaiming_uniform_(_big(4, 5)).detach().numpy()
    minigrad.manual_seed(11)
    b = init.kaiming_uniform_(_big(4, 5)).detach().numpy()
    np.testing.assert_array_equal(a, b)
    g1, g2 = minigrad.Generator().manual_seed(3), minigrad.Generator().manual_seed(3)
    np.testing.assert_array_equal(init.normal_(_big(6), generator=g1).detach().numpy(),
                                  init.normal_(_big(6), generator=g2).detach().numpy())


def test_zero_element_tensors_warn_like_torch(torch):
    for lib in (torch, minigrad):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            lib.nn.init.kaiming_uniform_(lib.empty(0, 3))
