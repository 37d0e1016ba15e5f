"""float32 stays float32, within 1e-5 (relative) of NumPy, for the elementwise ops (property tests).

The reference is NumPy computing in float64 and rounding to float32, so this also checks that minigrad
does not lose precision by computing in float32 where it should not. No torch needed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad

SHAPE = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
PAIR = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)


def f32(lo, hi):
    return st.floats(lo, hi, width=32, allow_subnormal=False)


ANY, POS, SMALL = f32(-10, 10), f32(0.0625, 10), f32(-1.375, 1.375)
_erf = np.vectorize(math.erf, otypes=[np.float64])

UNARY = {
    "neg": (lambda t: -t, lambda x: -x, ANY),
    "exp": (lambda t: t.exp(), np.exp, ANY),
    "exp2": (lambda t: t.exp2(), np.exp2, ANY),
    "log": (lambda t: t.log(), np.log, POS),
    "log1p": (lambda t: t.log1p(), np.log1p, POS),
    "sin": (lambda t: t.sin(), np.sin, ANY),
    "cos": (lambda t: t.cos(), np.cos, ANY),
    "tan": (lambda t: t.tan(), np.tan, SMALL),
    "tanh": (lambda t: t.tanh(), np.tanh, ANY),
    "sigmoid": (lambda t: t.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), ANY),
    "relu": (lambda t: t.relu(), lambda x: np.maximum(x, 0), ANY),
    "abs": (lambda t: t.abs(), np.abs, ANY),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, POS),
    "rsqrt": (lambda t: t.rsqrt(), lambda x: 1 / np.sqrt(x), POS),
    "square": (lambda t: t.square(), np.square, ANY),
    "reciprocal": (lambda t: t.reciprocal(), lambda x: 1 / x, POS),
    "sign": (lambda t: t.sign(), np.sign, ANY),
    "floor": (lambda t: t.floor(), np.floor, ANY),
    "ceil": (lambda t: t.ceil(), np.ceil, ANY),
    "round": (lambda t: t.round(), np.round, ANY),
    "trunc": (lambda t: t.trunc(), np.trunc, ANY),
    "erf": (lambda t: t.erf(), _erf, ANY),
    "clamp": (lambda t: t.clamp(-1.5, 2.5), lambda x: np.clip(x, -1.5, 2.5), ANY),
    "pow-scalar": (lambda t: t ** 2.5, lambda x: x ** 2.5, POS),
    "rpow": (lambda t: 1.5 ** t, lambda x: 1.5 ** x, ANY),
    "mul-scalar": (lambda t: t * 0.3, lambda x: x * 0.3, ANY),
    "rdiv-scalar": (lambda t: 3 / t, lambda x: 3 / x, POS),
    "softmax": (lambda t: t.softmax(-1), lambda x: np.exp(x - np.log(np.exp(x).sum(-1, keepdims=True))), ANY),
    "log_softmax": (lambda t: t.log_softmax(-1), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True)), ANY),
}

BINARY = {
    "add": (lambda a, b: a + b, np.add, ANY, ANY),
    "sub": (lambda a, b: a - b, np.subtract, ANY, ANY),
    "mul": (lambda a, b: a * b, np.multiply, ANY, ANY),
    "div": (lambda a, b: a / b, np.divide, ANY, POS),
    "pow": (lambda a, b: a ** b, np.power, POS, SMALL),
    "maximum": (lambda a, b: minigrad.maximum(a, b), np.maximum, ANY, ANY),
    "minimum": (lambda a, b: minigrad.minimum(a, b), np.minimum, ANY, ANY),
    "atan-like": (lambda a, b: (a * b).tanh() + a.sigmoid(), lambda x, y: np.tanh(x * y) + 1 / (1 + np.exp(-x)),
                  ANY, ANY),
}

_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def close(got, want):
    """float32 within 1e-5 relative of the float64 reference rounded to float32 (tiny values: absolute)."""
    assert got.dtype == np.float32, got.dtype
    want = np.asarray(want, np.float64).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", list(UNARY))
@_SETTINGS
@given(data=st.data())
def test_unary_float32(name, data):
    op, ref, elements = UNARY[name]
    shape = data.draw(SHAPE if name not in ("softmax", "log_softmax") else
                      hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = data.draw(hnp.arrays(np.float32, shape, elements=elements))
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    got = op(minigrad.from_numpy(x.copy())).numpy()
    close(np.asarray(got), want)


@pytest.mark.parametrize("name", list(BINARY))
@_SETTINGS
@given(data=st.data())
def test_binary_float32(name, data):
    op, ref, e1, e2 = BINARY[name]
    s1, s2 = data.draw(PAIR).input_shapes
    a = data.draw(hnp.arrays(np.float32, s1, elements=e1))
    b = data.draw(hnp.arrays(np.float32, s2, elements=e2))
    with np.errstate(all="ignore"):
        want = ref(a.astype(np.float64), b.astype(np.float64))
    got = op(minigrad.from_numpy(a.copy()), minigrad.from_numpy(b.copy())).numpy()
    close(np.asarray(got), want)


@_SETTINGS
@given(x=hnp.arrays(np.float32, SHAPE, elements=ANY), scalar=st.sampled_from([2, 0.5, -3, True]))
def test_python_scalars_do_not_upcast_float32(x, scalar):
    t = minigrad.from_numpy(x.copy())
    for out in (t + scalar, scalar * t, t - scalar, t / (abs(scalar) + 1), scalar - t):
        assert out.dtype is minigrad.float32
