"""Port of micrograd's comparison with PyTorch: the README example and test/test_engine.py's torch half.

Source: github.com/karpathy/micrograd, README.md ("Example usage") and test/test_engine.py
(commit c911406e5ace8742e5841a7e0df113ecb5d54685). micrograd's tests build each expression twice, with
micrograd's scalar `Value` and with `torch.Tensor([...]).double()`, and compare data and grads. Here the
torch half runs verbatim on the library under test; micrograd's half is replaced by the values it
produces: the ones its README prints (g = 24.7041, dg/da = 138.8338, dg/db = 645.5773) and, for the sanity
check, the function written as plain Python floats (value exact, derivative by central differences).
Change: `x.data.item()` / `x.grad.item()` are compared with micrograd's tolerance (1e-6) or better.
"""

from __future__ import annotations

import math


def relu(v: float) -> float:
    return max(v, 0.0)


def sanity(x: float) -> float:
    z = 2 * x + 2 + x
    q = relu(z) + z * x
    h = relu(z * z)
    return h + q + q * x


def test_sanity_check(lib):
    torch = lib
    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xpt, ypt = x, y

    eps = 1e-6
    assert ypt.data.item() == sanity(-4.0) == -20.0
    assert abs(xpt.grad.item() - (sanity(-4.0 + eps) - sanity(-4.0 - eps)) / (2 * eps)) < 1e-6
    assert xpt.grad.item() == 46.0
    assert y.grad_fn.name() == "AddBackward0" and str(x.dtype).endswith("float64")


def test_more_ops(lib):
    torch = lib
    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    apt, bpt, gpt = a, b, g

    # micrograd's README: print(f'{g.data:.4f}') -> 24.7041, a.grad -> 138.8338, b.grad -> 645.5773
    assert f'{gpt.data.item():.4f}' == '24.7041'
    assert f'{apt.grad.item():.4f}' == '138.8338'
    assert f'{bpt.grad.item():.4f}' == '645.5773'
    assert math.isclose(gpt.item(), 24.70408163265306, rel_tol=1e-12)
