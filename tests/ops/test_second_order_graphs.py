"""The graph a create_graph backward builds is PyTorch's: node names and `next_functions` structure of the
gradients' graphs, node for node, with second- and third-order values and gradgradcheck in float64.

PyTorch's C++ formulas multiply, divide and add Python numbers with its Scalar overloads (MulBackward1,
DivBackward1, AddBackward1), take `sgn` in abs's formula, sum down to 0-d with a plain `sum()`
(SumBackward0) and call fused backward ops (ThresholdBackwardBackward0, ...); minigrad's formulas do the same.
Each case is a function of `(lib, x)`; the seed of the first backward requires grad in a second variant, so the
edges to the incoming gradient are compared too.
"""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg

CASES = {  # (TARGET is defined below; the lambdas read it when called)
    "pow2": lambda t, x: x ** 2,
    "pow3": lambda t, x: x ** 3,
    "pow.5": lambda t, x: x.abs() ** 0.5,
    "abs": lambda t, x: x.abs() * x,
    "log": lambda t, x: x.abs().log(),
    "sqrt": lambda t, x: x.abs().sqrt(),
    "rsqrt": lambda t, x: x.abs().rsqrt(),
    "tan": lambda t, x: (x * 0.3).tan(),
    "pow_scalar_base": lambda t, x: 2.5 ** x,
    "pow_zero_base": lambda t, x: 0.0 ** (x * x),
    "exp2": lambda t, x: x.exp2(),
    "log2": lambda t, x: x.abs().log2(),
    "log10": lambda t, x: x.abs().log10(),
    "log1p": lambda t, x: x.abs().log1p(),
    "atan": lambda t, x: x.atan(),
    "erf": lambda t, x: x.erf(),
    "mean": lambda t, x: x.mean() * x,
    "mean_dim": lambda t, x: x.reshape(3, 2).mean(1) * x[:3],
    "var": lambda t, x: x.var() * x,
    "std": lambda t, x: x.std() * x,
    # a 1-d self reduced over its dim: PyTorch's var_backward adds no unsqueeze (fuzzer seeds 201 and 203, issue 34)
    "var_dim_1d": lambda t, x: x.var(0) * x,
    # a full max / min shares its gradient by `grad / mask.sum()` (an int64 tensor): DivBackward0 with two edges
    # (fuzzer seeds 220 and 221, issue 34)
    "max_full": lambda t, x: x.max() * x,
    "min_full": lambda t, x: (x * x).min() * x,
    "std_dim_1d": lambda t, x: x.std(-1) * x,
    "var_dim_2d": lambda t, x: x.reshape(2, 3).var(1).sum() * x,
    "norm": lambda t, x: x.norm() * x,
    "norm1_dim": lambda t, x: x.reshape(2, 3).norm(p=1, dim=1).tan().sum() * x,
    "norm.5_dim": lambda t, x: x.reshape(2, 3).norm(p=0.5, dim=1).tan().sum() * x,
    "norm1.5_dim": lambda t, x: x.reshape(2, 3).norm(p=1.5, dim=1).tan().sum() * x,
    "norm3_dim": lambda t, x: x.reshape(2, 3).norm(p=3, dim=0).tan().sum() * x,
    "norm_inf_dim": lambda t, x: x.reshape(2, 3).norm(p=float("inf"), dim=1).tan().sum() * x,
    "prod": lambda t, x: x.prod() * x,
    "logsumexp": lambda t, x: x.logsumexp(0) * x,
    "cumsum": lambda t, x: x.cumsum(0) * x,
    "cumsum_size1": lambda t, x: x.reshape(6, 1).cumsum(1) * x.reshape(6, 1),
    "cumprod": lambda t, x: x.reshape(2, 3).cumprod(1) * x.reshape(2, 3),
    "cumprod_size1": lambda t, x: x.reshape(6, 1).cumprod(1) * x.reshape(6, 1),
    "sum_0d": lambda t, x: x.sum() * x,
    "relu": lambda t, x: x.relu() * x,
    "softmax": lambda t, x: x.reshape(2, 3).softmax(1) * x.reshape(2, 3),
    "softmax0": lambda t, x: x.softmax(0) * x,
    "log_softmax": lambda t, x: x.reshape(2, 3).log_softmax(1) * x.reshape(2, 3),
    "log_softmax_linear": lambda t, x: x.reshape(3, 2).log_softmax(0),
    "nll": lambda t, x: t.nn.functional.nll_loss(x.reshape(2, 3), t.tensor(np.array([1, 2]))),
    "nll_weight_none": lambda t, x: t.nn.functional.nll_loss(
        x.reshape(2, 3) * x.reshape(2, 3), t.tensor(np.array([1, 0])), weight=t.tensor(np.array([1.0, 2.0, 3.0])),
        reduction="none"),
    "nll_2d": lambda t, x: t.nn.functional.nll_loss(x.reshape(1, 3, 2) * x.reshape(1, 3, 2),
                                                      t.tensor(np.array([[1, 2]]))),
    "cross_entropy": lambda t, x: t.nn.functional.cross_entropy(x.reshape(2, 3), t.tensor(np.array([1, 2]))),
    "cross_entropy_sum": lambda t, x: t.nn.functional.cross_entropy(x.reshape(3, 2) * x.reshape(3, 2),
                                                                     t.tensor(np.array([1, 0, 1])), reduction="sum"),
    "gelu": lambda t, x: t.nn.functional.gelu(x) * x,
    "gelu_tanh": lambda t, x: t.nn.functional.gelu(x * x, approximate="tanh"),
    "mse": lambda t, x: t.nn.functional.mse_loss(x, t.tensor(TARGET)),
    "mse_target": lambda t, x: t.nn.functional.mse_loss(x[:3], x[3:] * 0.5),
    "mse_none": lambda t, x: t.nn.functional.mse_loss(x, x.flip(0), reduction="none"),
    "mse_sum": lambda t, x: t.nn.functional.mse_loss(x * x, t.tensor(TARGET), reduction="sum"),
    "bce": lambda t, x: t.nn.functional.binary_cross_entropy(x.sigmoid(), t.tensor((TARGET + 1) / 2)),
    "bce_weight_none": lambda t, x: t.nn.functional.binary_cross_entropy(
        (x * x).sigmoid(), t.tensor((TARGET + 1) / 2), weight=t.tensor(TARGET + 2), reduction="none"),
    "div": lambda t, x: x / (x.flip(0).abs() + 1.0),  # -grad * ((self / other) / other), as PyTorch groups it
    "reciprocal": lambda t, x: (x.abs() + 1.0).reciprocal(),
    "pow_tensor": lambda t, x: (x.abs() + 0.5) ** x.flip(0),
    # in place: PyTorch saves `self.clone()` (CloneBackward0) where the formulas read the old value
    "mul_": lambda t, x: (x * 1.0).mul_(x.flip(0)),
    "div_": lambda t, x: (x * 1.0).div_(x.flip(0).abs() + 1.0),
    "sin_": lambda t, x: (x * 1.0).sin_(),
    # squeeze's backward unsqueezes each squeezed dim (UnsqueezeBackward0 each), not one reshape
    "squeeze": lambda t, x: x.reshape(1, 6, 1).squeeze() * x,
    "squeeze_dim": lambda t, x: x.reshape(1, 6).squeeze(0) * x,
    "squeeze_dims": lambda t, x: x.reshape(1, 6, 1).squeeze((0, 2)) * x,
    # amax's backward: grad reshaped back (ViewBackward0) / count * mask, PyTorch's scale_grad_by_count
    "amax_dim": lambda t, x: x.reshape(2, 3).amax(1) * x[:2],
    "amin_all": lambda t, x: x.amin() * x,
    "mv": lambda t, x: t.mv(x.reshape(2, 3), x[:3]),  # grad.outer(vec) is reshape(n, 1) * vec (ViewBackward0)
    "maximum": lambda t, x: t.maximum(x, x.flip(0) * 0.5) * x,  # where(tie, grad / 2, grad).masked_fill_(loses, 0)
    "minimum_tie": lambda t, x: t.minimum(x, x.flip(0)) * x,
    # one shared formula for both inputs: the reciprocal of self² + other², masked where it is inf
    "atan2": lambda t, x: t.atan2(x, x.flip(0) * 0.5),
    "hypot": lambda t, x: t.hypot(x, x.flip(0) * 0.5),  # grad * self / result: the result is HypotBackward0's
    "logaddexp": lambda t, x: t.logaddexp(x, x.flip(0) * 0.5),  # grad / (1 + exp(...)): AddBackward1
    "masked_fill": lambda t, x: x.masked_fill(x > 1.0, 0.5) * x,  # grad.masked_fill(mask, 0)
    "index": lambda t, x: x[t.tensor(np.array([0, 0, 5]))] * x[:3],  # IndexPutImplBackward0: (zeros, grad)
    "remainder": lambda t, x: x % (x.flip(0).abs() + 2.0),  # its formula's floor division records DivBackward2
}

X = np.array([0.7, -1.3, 2.1, 0.4, -0.6, 1.7])
TARGET = np.linspace(-1.0, 1.0, 6)


def graph(root) -> list:
    """The graph from `root`: per node in walk order, its name and its edges as (node index, input_nr)."""
    ids: dict = {}
    order: list = []
    out: list = []

    def visit(n):
        if n is None:
            return None
        if id(n) not in ids:
            ids[id(n)] = len(order)
            order.append(n)
        return ids[id(n)]

    if root is None:
        return []
    visit(root)
    i = 0
    while i < len(order):
        n = order[i]
        out.append((n.name().split("::")[-1], [(visit(m), nr) for m, nr in n.next_functions]))
        i += 1
    return out


def run(lib, f, seed_requires: bool):
    x = lib.tensor(X.copy(), dtype=lib.float64, requires_grad=True)
    y = f(lib, x)
    seed = lib.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)), dtype=lib.float64,
                      requires_grad=seed_requires)
    (g,) = lib.autograd.grad(y, x, seed, create_graph=True)
    extra = lib.autograd.grad(g.sum(), seed, retain_graph=True)[0].detach().numpy() if seed_requires else None
    (h,) = lib.autograd.grad((g * g).sum(), x, create_graph=True)
    k = lib.autograd.grad((h * h).sum(), x, allow_unused=True)[0] if h.requires_grad else None
    return ((graph(g.grad_fn), g.requires_grad, h.requires_grad), g.detach().numpy(), h.detach().numpy(),
            None if k is None else k.numpy(), extra)


@pytest.mark.parametrize("seed_requires", [False, True], ids=["seed", "seed_requires_grad"])
@pytest.mark.parametrize("name", list(CASES))
def test_second_order_graph_matches_pytorch(torch, name, seed_requires):
    got = run(mg, CASES[name], seed_requires)
    want = run(torch, CASES[name], seed_requires)
    assert got[0] == want[0]
    for a, b in zip(got[1:], want[1:]):
        if b is None:
            assert a is None or not np.any(a)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


# 0 ** e at e > 0: PyTorch's own second derivative is nan (result * log 0 = 0 * -inf behind its where); the parity
# test above checks minigrad gives the same
NO_GRADGRADCHECK = {"pow_zero_base"}


@pytest.mark.parametrize("name", [n for n in CASES if n not in NO_GRADGRADCHECK])
def test_second_order_gradgradcheck(name):
    x = mg.tensor(X.copy(), dtype=mg.float64, requires_grad=True)
    assert mg.autograd.gradgradcheck(lambda t: CASES[name](mg, t), (x,))


def test_abs_through_sgn_at_nan_inf_and_zero_matches_pytorch(torch):
    """abs's formula multiplies by sgn(self); sgn's own derivative is 0 for real numbers, NaN and inf included
    (found by the fuzzer: l1_loss with a NaN target, second order)."""
    def run_(lib):
        x = lib.tensor(np.array([np.nan, 0.0, -np.inf, 2.0, -1.0]), dtype=lib.float64, requires_grad=True)
        seed = lib.tensor(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x.abs(), x, seed, create_graph=True)
        gx, gs = lib.autograd.grad((g * g).sum(), [x, seed])
        return graph(g.grad_fn), *(t.detach().numpy(force=True) for t in (g, gx, gs))  # (torch: gx is a ZeroTensor)

    got, want = run_(mg), run_(torch)
    assert got[0] == want[0]
    for a, b in zip(got[1:], want[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed_requires", [False, True], ids=["seed", "seed_requires_grad"])
def test_in_place_write_through_a_view_under_create_graph(torch, seed_requires):
    """CopySlices' backward, recorded as PyTorch records it: the base's gradient is a copy of the incoming one
    (CopyBackwards), a view of it is overwritten (CopySlices) by the op's gradient of a clone of that view
    (CloneBackward0). PyTorch's view there is AsStridedBackward0, minigrad's keeps its own name (README,
    "Views written in place")."""
    def f(t, x):
        v = x * 1.0
        v[1:].mul_(x[:5].flip(0))
        return v

    got = run(mg, f, seed_requires)
    want = run(torch, f, seed_requires)
    torch_graph = [("SliceBackward0" if name == "AsStridedBackward0" else name, edges) for name, edges in want[0][0]]
    assert got[0] == (torch_graph, *want[0][1:])
    for a, b in zip(got[1:], want[1:]):
        if b is None:
            assert a is None or not np.any(a)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


# -- products with zeros: PyTorch's safe formulas, recorded node for node -------------------------------------------
# prod_backward with a zero is prod_safe_zeros_backward: exclusive cumulative products from the front and the back
# (cat, cumprod, flip), over input.view(-1) when no dim is given (found by the fuzzer: minigrad had its own grid of
# products). cumprod_backward with a zero is, under create_graph, an O(n²) loop of slice, prod, cumprod, cat and a
# CopySlices per position.
ZEROS = {
    "one": [2.0, 0.0, 3.0],
    "all": [0.0, 0.0, 0.0],
    "first": [0.0, 2.0, -3.0, 1.5],
    "last": [2.0, -3.0, 1.5, 0.0],
    "two": [2.0, 0.0, 3.0, 0.0, 5.0],
    "alone": [0.0],
    "rows": [[2.0, 0.0, 1.0], [3.0, 4.0, 0.0]],
    "rows_mixed": [[0.0, 2.0, 0.0, 3.0], [1.0, 0.0, 2.0, 2.0], [1.0, 2.0, 3.0, 4.0]],
    "column": [[0.0], [2.0]],
}
PRODUCTS = {
    "prod": lambda x: x.prod(),
    "prod_dim": lambda x: x.prod(-1),
    "prod_dim0_keepdim": lambda x: x.prod(0, keepdim=True),
    "prod_dim_keepdim": lambda x: x.prod(-1, keepdim=True),
    "cumprod": lambda x: x.cumprod(-1),
    "cumprod0": lambda x: x.cumprod(0),
    "prod_of_transpose": lambda x: x.t().prod(),  # a non-contiguous input: PyTorch's contiguous() (CloneBackward0)
    "prod_dim_of_transpose": lambda x: x.t().prod(0),
    "cumprod_of_transpose": lambda x: x.t().cumprod(-1),
}


def run_zeros(lib, values, f, dtype: str, seed_requires: bool):
    """First, second and third order of `f` at `values`: the first gradient's graph (and the second's, whose view
    node PyTorch names AsStridedBackward0 after an in-place write, see test_in_place_write_through_a_view above),
    and every value, plus the plain first-order backward (the formulas on arrays)."""
    x = lib.tensor(np.array(values, dtype=dtype), requires_grad=True)
    y = f(x)
    seed_values = np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)).astype(dtype)
    (plain,) = lib.autograd.grad(f(x), x, lib.tensor(seed_values))
    seed = lib.tensor(seed_values, requires_grad=seed_requires)
    (g,) = lib.autograd.grad(y, x, seed, create_graph=True)
    h = lib.autograd.grad((g * g).sum(), x, create_graph=True, allow_unused=True)[0] if g.requires_grad else None
    k = lib.autograd.grad((h * h).sum(), x, allow_unused=True)[0] if h is not None and h.requires_grad else None
    h_graph = [("SelectBackward0" if name == "AsStridedBackward0" else name, edges)
               for name, edges in graph(None if h is None else h.grad_fn)]
    values = [t if t is None else t.detach().numpy() for t in (y, plain, g, h, k)]
    return graph(g.grad_fn), h_graph, values


@pytest.mark.parametrize("seed_requires", [False, True], ids=["seed", "seed_requires_grad"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("values", list(ZEROS.values()), ids=list(ZEROS))
@pytest.mark.parametrize("op", list(PRODUCTS))
def test_products_with_zeros_match_pytorch_to_third_order(torch, op, values, dtype, seed_requires):
    got = run_zeros(mg, values, PRODUCTS[op], dtype, seed_requires)
    want = run_zeros(torch, values, PRODUCTS[op], dtype, seed_requires)
    assert got[:2] == want[:2]
    rtol, atol = (1e-9, 1e-12) if dtype == "float64" else (1e-5, 1e-6)
    for a, b in zip(got[2], want[2]):
        if b is None:
            assert a is None or not np.any(a)
        else:
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("values", [v for v in ZEROS.values() if len(v) > 1], ids=[k for k, v in ZEROS.items()
                                                                                    if len(v) > 1])
@pytest.mark.parametrize("op", list(PRODUCTS))
def test_products_with_zeros_gradgradcheck(op, values):
    """gradcheck perturbs the zeros, so it checks the formulas beside them as much as at them; the exact values at
    the zeros are compared with PyTorch's above."""
    x = mg.tensor(np.array(values), dtype=mg.float64, requires_grad=True)
    assert mg.autograd.gradcheck(PRODUCTS[op], (x,))
    assert mg.autograd.gradgradcheck(PRODUCTS[op], (x,))
