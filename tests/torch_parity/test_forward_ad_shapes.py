"""Forward AD on Hypothesis-drawn shapes: 0-d tensors, empty ones, size-1 dims and broadcast pairs, through
elementwise ops, broadcasting binary ops, reductions along a drawn dim, matmul's rank and batch paths, and views.
Each case runs in minigrad and in PyTorch 2.13 under `dual_level` on the same primals and tangents (built with
NumPy); the outputs' primals and tangents must agree in shape, dtype and value (float64, rtol 1e-9). The registry
sweep (tests/ops/test_forward_ad_sweep.py) covers every op on fixed shapes; this file covers the shapes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad

SHAPE = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)
PAIR = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3)
CASES = settings(max_examples=25, deadline=None)  # fixed, so the file stays within a few seconds in CI


def _array(data, shape, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return data.draw(hnp.arrays(np.float64, shape, elements=st.floats(low, high, allow_subnormal=False)))


def _jvp(lib, fn, primals: list, dual: list, tangents: list) -> tuple:
    """(primal, tangent) of fn's output as arrays, the inputs flagged in `dual` carrying their tangents."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        xs = [fw.make_dual(lib.tensor(p), lib.tensor(t)) if d else lib.tensor(p)
              for p, d, t in zip(primals, dual, tangents)]
        primal, tangent = fw.unpack_dual(fn(lib, *xs))
        return primal.detach().numpy().copy(), None if tangent is None else tangent.detach().numpy().copy()


def _same(torch, fn, primals: list, dual: list | None = None, seed: int = 0) -> None:
    dual = [True] * len(primals) if dual is None else dual
    rng = np.random.default_rng(seed)
    tangents = [rng.uniform(-1, 1, np.shape(p)) for p in primals]
    ours = _jvp(minigrad, fn, primals, dual, tangents)
    theirs = _jvp(torch, fn, primals, dual, tangents)
    for mine, want in zip(ours, theirs):
        assert (mine is None) == (want is None)
        if want is not None:
            assert mine.shape == want.shape and mine.dtype == want.dtype
            np.testing.assert_allclose(mine, want, rtol=1e-9, atol=1e-12)


UNARY = {
    "exp": (lambda lib, x: x.exp(), (-2, 2)), "sin": (lambda lib, x: x.sin(), (-2, 2)),
    "tanh": (lambda lib, x: x.tanh(), (-2, 2)), "sigmoid": (lambda lib, x: x.sigmoid(), (-2, 2)),
    "sqrt": (lambda lib, x: x.sqrt(), (0.5, 2)), "log": (lambda lib, x: x.log(), (0.5, 2)),
    "square": (lambda lib, x: x * x, (-2, 2)), "pow": (lambda lib, x: x ** 3, (-2, 2)),
}


@CASES
@given(data=st.data(), name=st.sampled_from(sorted(UNARY)))
def test_elementwise_any_shape(torch, data, name):
    fn, (low, high) = UNARY[name]
    _same(torch, fn, [_array(data, data.draw(SHAPE), low, high)])


BINARY = {
    "add": lambda lib, a, b: a + b, "sub": lambda lib, a, b: a - b, "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b, "atan2": lambda lib, a, b: lib.atan2(a, b),
    "pow": lambda lib, a, b: a ** b, "xlogy": lambda lib, a, b: lib.xlogy(a, b),
    "chain": lambda lib, a, b: (a * b).sin() + a.exp() / b,
}


@CASES
@given(data=st.data(), name=st.sampled_from(sorted(BINARY)), which=st.sampled_from([(True, True), (True, False),
                                                                                    (False, True)]))
def test_binary_broadcasting(torch, data, name, which):
    """Broadcast pairs (either side 0-d, empty or size 1), one or both operands dual; positive right operands
    (div, pow, xlogy, atan2's quadrant never at the origin)."""
    s1, s2 = data.draw(PAIR).input_shapes
    _same(torch, BINARY[name], [_array(data, s1, 0.5, 2), _array(data, s2, 0.5, 2)], list(which))


REDUCTIONS = {
    "sum": lambda lib, x, d, k: x.sum(d, keepdim=k), "mean": lambda lib, x, d, k: x.mean(d, keepdim=k),
    "prod": lambda lib, x, d, k: x.prod(d, keepdim=k), "logsumexp": lambda lib, x, d, k: x.logsumexp(d, keepdim=k),
    "softmax": lambda lib, x, d, k: x.softmax(d), "log_softmax": lambda lib, x, d, k: x.log_softmax(d),
    "cumsum": lambda lib, x, d, k: x.cumsum(d), "cumprod": lambda lib, x, d, k: x.cumprod(d),
    "amax": lambda lib, x, d, k: x.amax(d, keepdim=k),
}


@CASES
@given(data=st.data(), name=st.sampled_from(sorted(REDUCTIONS)), keepdim=st.booleans())
def test_reductions_along_a_drawn_dim(torch, data, name, keepdim):
    """Along any dim (negative too) of 0-d to 3-d inputs; non-empty where the reduction of nothing raises or is
    -inf (amax, logsumexp), distinct values for amax (no ties to split)."""
    nonempty = name in ("amax", "logsumexp")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1 if nonempty else 0, max_side=3))
    n = max(len(shape), 1)
    dim = data.draw(st.integers(-n, n - 1))
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.integers(-200, 200).map(lambda i: i / 100),
                             unique=name == "amax"))
    _same(torch, lambda lib, t: REDUCTIONS[name](lib, t, dim, keepdim), [x])


def _matmul_shapes(data) -> tuple:
    """Operand shapes for every path of matmul: vectors, matrices, and batches that broadcast (sides 0..3)."""
    n, k, m = (data.draw(st.integers(0, 3)) for _ in range(3))
    batch = data.draw(PAIR).input_shapes
    left = data.draw(st.sampled_from([(k,), (n, k), batch[0] + (n, k)]))
    right = data.draw(st.sampled_from([(k,), (k, m), batch[1] + (k, m)]))
    return left, right


@CASES
@given(data=st.data(), which=st.sampled_from([(True, True), (True, False), (False, True)]))
def test_matmul_every_rank(torch, data, which):
    left, right = _matmul_shapes(data)
    _same(torch, lambda lib, a, b: a @ b, [_array(data, left), _array(data, right)], list(which))


VIEWS = {
    "reshape": lambda lib, x: x.reshape(-1), "t": lambda lib, x: x.transpose(0, -1) if x.dim() else x * 1,
    "unsqueeze": lambda lib, x: x.unsqueeze(0), "flip": lambda lib, x: x.flip(-1) if x.dim() else x * 1,
    "slice": lambda lib, x: x[..., ::2] if x.dim() else x * 1, "expand": lambda lib, x: x.expand((2,) + tuple(x.shape)),
    "cat": lambda lib, x: lib.cat([x.reshape(-1), x.reshape(-1).exp()]),
}


@CASES
@given(data=st.data(), name=st.sampled_from(sorted(VIEWS)))
def test_views_any_shape(torch, data, name):
    """A view's tangent is the same view of the tangent (then an op on it, so a wrong layout shows)."""
    _same(torch, lambda lib, x: VIEWS[name](lib, x).sin(), [_array(data, data.draw(SHAPE))])


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (1,), (2, 1, 3)])
def test_a_program_on_edge_shapes(torch, shape):
    """A small program (views, broadcasting, a reduction) on 0-d, empty and size-1 shapes."""
    x = np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)
    _same(torch, lambda lib, t: ((t * t.exp()).reshape(-1).unsqueeze(0) + 1.5).log().sum(-1), [x])
