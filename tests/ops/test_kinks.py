"""PyTorch's choices where a derivative is not defined (kinks, ties, zeros), differentially against torch.

The property tests keep away from these points; here the inputs sit exactly on them. Every case goes
through `parity.check` (values, gradients, graph); the ones marked second-order also compare the
derivatives of the gradient (create_graph=True).
"""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import K

import minigrad


def case(id_, fn, *specs, second_order=False):
    return pytest.param(fn, specs, second_order, id=id_)


def G(values):
    """Exactly these float64 values, requiring grad."""
    return K(np.asarray(values, dtype=np.float64), grad=True)


KINKS = [
    # relu'(0) = 0, abs'(0) = 0, sign'(x) = 0
    case("relu-at-0", lambda t, a: a.relu(), G([-1.0, 0.0, 2.0])),
    case("relu_-at-0", lambda t, a: (a * 1).relu_(), G([-1.0, 0.0, 2.0])),
    case("abs-at-0", lambda t, a: a.abs(), G([-1.0, 0.0, 2.0]), second_order=True),
    case("sign-at-0", lambda t, a: a.sign(), G([-1.0, 0.0, 2.0])),
    # clamp: the gradient passes where min <= x <= max (so clamp(min=0)'(0) = 1)
    case("clamp-min-at-bound", lambda t, a: a.clamp(min=0), G([-1.0, 0.0, 2.0])),
    case("clamp-max-at-bound", lambda t, a: a.clamp(max=0), G([-1.0, 0.0, 2.0])),
    case("clamp-both-at-bounds", lambda t, a: a.clamp(-1, 1), G([-2.0, -1.0, 0.0, 1.0, 2.0])),
    case("clamp-min-gt-max", lambda t, a: a.clamp(1, -1), G([-2.0, 0.0, 2.0])),
    case("clamp_min-at-bound", lambda t, a: a.clamp_min(0.5), G([0.0, 0.5, 1.0])),
    case("clamp_max-at-bound", lambda t, a: t.clamp_max(a, 0.5), G([0.0, 0.5, 1.0])),
    case("clamp-tensor-at-bounds", lambda t, a, lo, hi: a.clamp(lo, hi),
         G([-1.0, 0.0, 1.0, 2.0]), G([-1.0, 0.5, 1.0, 3.0]), G([0.0, 0.5, 1.0, 2.5])),
    case("clamp_-at-bound", lambda t, a: (a * 1).clamp_(min=0), G([-1.0, 0.0, 2.0])),
    # square roots and powers at 0
    case("sqrt-at-0", lambda t, a: a.sqrt(), G([0.0, 1.0, 4.0])),
    case("rsqrt-at-0", lambda t, a: a.rsqrt(), G([0.0, 1.0])),
    case("pow-half-at-0", lambda t, a: a ** 0.5, G([0.0, 1.0])),
    case("pow-0-at-0", lambda t, a: a ** 0, G([0.0, 1.0]), second_order=True),
    case("pow-2-at-0", lambda t, a: a ** 2, G([0.0, 1.0]), second_order=True),
    case("pow-neg-at-0", lambda t, a: a ** -1, G([0.0, 2.0])),
    case("pow-tensor-base-0", lambda t, a, b: a ** b, G([0.0, 0.0, 0.0, 2.0]), G([0.0, 1.0, 2.5, 0.5])),
    case("pow-tensor-exponent-0", lambda t, a, b: a ** b, G([0.5, 2.0]), G([0.0, 0.0]), second_order=True),
    case("rpow-base-0", lambda t, a: 0 ** a, G([0.0, 1.0, 2.0])),
    case("rpow-base-1", lambda t, a: 1 ** a, G([0.0, 1.0, 2.0])),
    case("reciprocal-at-0", lambda t, a: a.reciprocal(), G([0.0, 2.0])),
    case("log-at-0", lambda t, a: a.log(), G([0.0, 2.0])),
    case("div-by-0", lambda t, a, b: a / b, G([1.0, 0.0, -1.0]), G([0.0, 0.0, 0.0])),
    # norms at 0: the gradient is 0, not NaN
    case("norm-at-0", lambda t, a: a.norm(), G([0.0, 0.0, 0.0])),
    case("norm-dim-zero-row", lambda t, a: a.norm(dim=1), G([[0.0, 0.0], [3.0, 4.0]])),
    case("norm-p1-at-0", lambda t, a: a.norm(p=1), G([0.0, -1.0, 2.0])),
    case("norm-p3-at-0", lambda t, a: a.norm(p=3), G([0.0, 0.0])),
    case("norm-inf-ties", lambda t, a: a.norm(p=float("inf")), G([2.0, -2.0, 1.0])),
    case("std-constant", lambda t, a: a.std(), G([1.5, 1.5, 1.5])),
    case("std-dim-constant-row", lambda t, a: a.std(dim=1), G([[1.0, 1.0], [1.0, 3.0]])),
    case("var-single", lambda t, a: a.var(unbiased=False), G([2.0])),
    # ties: a full max()/min()/amax splits the gradient evenly; max(dim) gives it to the first index
    case("max-ties", lambda t, a: a.max(), G([1.0, 3.0, 3.0, 2.0, 3.0])),
    case("min-ties", lambda t, a: a.min(), G([[0.5, 1.0], [0.5, 0.5]])),
    case("amax-ties", lambda t, a: a.amax(), G([3.0, 1.0, 3.0])),
    case("amax-dim-ties", lambda t, a: a.amax(dim=1), G([[3.0, 1.0, 3.0], [2.0, 2.0, 2.0]])),
    case("amin-dim-ties", lambda t, a: a.amin(dim=0, keepdim=True), G([[1.0, 2.0], [1.0, 0.0]])),
    case("max-dim-ties-first", lambda t, a: a.max(dim=1), G([[3.0, 1.0, 3.0], [2.0, 2.0, 2.0]])),
    case("min-dim-ties-first", lambda t, a: a.min(dim=0), G([[1.0, 2.0], [1.0, 0.0]])),
    case("argmax-ties-first", lambda t, a: (a.argmax(), a.argmax(1), a.argmin(0)),
         G([[3.0, 1.0, 3.0], [3.0, 3.0, 0.0]])),
    case("maximum-ties", lambda t, a, b: t.maximum(a, b), G([1.0, 2.0, 3.0]), G([1.0, 0.0, 3.0])),
    case("minimum-ties", lambda t, a, b: t.minimum(a, b), G([1.0, 2.0, 3.0]), G([1.0, 0.0, 3.0])),
    case("max-binary-ties", lambda t, a, b: t.max(a, b), G([2.0, 2.0]), G([2.0, 1.0])),
    case("norm-inf-dim-ties", lambda t, a: a.norm(p=float("inf"), dim=0), G([[2.0, 1.0], [-2.0, 0.5]])),
    # prod with zeros: one zero gets the product of the others; two zeros give all zeros
    case("prod-one-zero", lambda t, a: a.prod(), G([2.0, 0.0, 3.0]), second_order=True),
    case("prod-two-zeros", lambda t, a: a.prod(), G([2.0, 0.0, 3.0, 0.0]), second_order=True),
    case("prod-dim-zeros", lambda t, a: a.prod(1), G([[2.0, 0.0, 3.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3.0]]),
         second_order=True),
    case("prod-dim-keepdim-zeros", lambda t, a: a.prod(0, keepdim=True), G([[2.0, 0.0], [0.0, 0.0], [1.0, 5.0]]),
         second_order=True),
    case("prod-all-zero", lambda t, a: a.prod(), G([0.0, 0.0]), second_order=True),
    # piecewise constant ops: zero gradient even on the steps
    case("floor-on-steps", lambda t, a: (a.floor(), a.ceil(), a.round(), a.trunc()), G([1.0, -2.0, 0.5, 2.5])),
    case("remainder-on-jumps", lambda t, a: a % 1.0, G([1.0, -2.0, 0.5])),
    case("relu-then-where-at-0", lambda t, a: t.where(a > 0, a, a * 0.1), G([0.0, -1.0, 1.0])),
    case("reshape-strided", lambda t, a: (a.t().reshape(4, 3), a[:, ::2].reshape(6), a.t().reshape(12)),
         G(np.arange(12.0).reshape(3, 4))),
]


@pytest.mark.parametrize(("fn", "specs", "second_order"), KINKS)
def test_kink_matches_pytorch(parity, fn, specs, second_order):
    parity.check(fn, *specs)
    if second_order:
        parity.check(fn, *specs, second_order=True)


def test_prod_with_a_zero_has_second_derivatives():
    """d2/dxdy of x*y*z at x = 0 is z (not an error): the gradient of prod is differentiable through zeros."""
    x = minigrad.tensor([0.0, 2.0, 3.0], dtype=minigrad.float64, requires_grad=True)
    (g,) = minigrad.autograd.grad(x.prod(), x, create_graph=True)
    assert g.tolist() == [6.0, 0.0, 0.0]
    (h,) = minigrad.autograd.grad(g[0], x)
    assert h.tolist() == [0.0, 3.0, 2.0]


@pytest.mark.parametrize("op", ["norm", "std"])
def test_second_derivative_at_zero_is_nan_like_pytorch(torch, op):
    """norm'(0) = 0 by convention, but the function has no second derivative there: PyTorch's
    double backward gives nan, and so must minigrad's (not a made-up finite number)."""
    def second(lib):
        x = lib.tensor(np.zeros((2, 3)), requires_grad=True)
        y = x.norm() if op == "norm" else x.std()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum() + g.sum(), x)
        return g.detach().numpy(), h.numpy()

    (g_t, h_t), (g_m, h_m) = second(torch), second(minigrad)
    np.testing.assert_array_equal(g_m, g_t)
    np.testing.assert_array_equal(np.isnan(h_m), np.isnan(h_t))
