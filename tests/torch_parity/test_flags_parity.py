"""`requires_grad`, `is_leaf`, `retains_grad` and `grad_fn` of results, against PyTorch 2.13, where the fuzzer
(tests/fuzz) found them different: what `autograd.grad(..., materialize_grads=True)` fills in, gradients that
go through remainder's formula under create_graph, `retain_grad()` followed by `detach_()`, and views whose
memory was written before their base came to require grad; and the signs of zeros in products and sums.

Each case is a function of the library returning plain facts; the two lists must be equal.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad as mg


def flags(t) -> tuple:
    """What a learner reads off a tensor: requires_grad, is_leaf, retains_grad, the node's name."""
    node = t.grad_fn
    name = None if node is None else node.name().replace("torch::", "minigrad::")
    return t.requires_grad, t.is_leaf, t.retains_grad, name


def values(t) -> list:
    return np.asarray(t.detach().numpy()).tolist()


def compare(torch, case) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # backward(create_graph=True)'s reference-cycle warning (once per process)
        want = case(torch)
        got = case(mg)
    assert got == want


# -- autograd.grad(..., materialize_grads=True): PyTorch's zeros_like(input, requires_grad=create_graph) -------------


@pytest.mark.parametrize("create_graph", [False, True])
def test_materialized_zeros_require_grad_under_create_graph(torch, create_graph):
    def case(t):
        x = t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True)
        unused = t.tensor([[3.0]], dtype=t.float32, requires_grad=True)
        gx, gu = t.autograd.grad((x * x).sum(), [x, unused], create_graph=create_graph, materialize_grads=True)
        return flags(gx), flags(gu), values(gu), str(gu.dtype).split(".")[-1]

    compare(torch, case)


# -- remainder: its formula divides with rounding_mode="floor", which is recorded (DivBackward2) -----------------


def test_remainder_gradient_requires_grad_under_create_graph(torch):
    def case(t):
        a = t.tensor([[3.0, -5.0]], dtype=t.float64)
        b = t.tensor([[2.0, 3.0]], dtype=t.float64, requires_grad=True)
        (a % b).sum().backward(create_graph=True)
        (gb,) = t.autograd.grad((a % b).sum(), [b], create_graph=True)
        return flags(b.grad), values(b.grad), flags(gb), values(gb)

    compare(torch, case)


def test_remainder_by_itself_under_create_graph(torch):
    # the fuzzer's program: x % x, where PyTorch's gradient requires grad and is no leaf
    def case(t):
        x = t.tensor([[0.5, 2.0]], dtype=t.float32, requires_grad=True)
        (g,) = t.autograd.grad(x.remainder(x).sum(), [x], create_graph=True)
        return flags(g), values(g)

    compare(torch, case)


# -- retain_grad() then detach_(): PyTorch keeps the retains_grad flag --------------------------------------------


def test_retains_grad_survives_detach_(torch):
    def case(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        v = x * 2
        v.retain_grad()
        v.detach_()
        facts = [flags(v), v.grad]
        v.requires_grad_()
        (v * 3).sum().backward()
        return facts + [flags(v), values(v.grad)]

    compare(torch, case)


# -- a view of a leaf, written in place, then the leaf comes to require grad -------------------------------------
# PyTorch rebuilds a view's grad_fn once its version differs from the one it was made at (AsStridedBackward0;
# minigrad gives the view's own node, README "Views written in place"), so the view is no leaf and its gradient
# reaches the base. A view made after the write, or never written, stays a leaf that requires grad.

VIEWS = {
    "permute": lambda x: x.permute(1, 0),
    "view": lambda x: x.view(-1),
    "expand": lambda x: x.expand(3, 2),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "T": lambda x: x.T,
    "slice": lambda x: x[:, 1:],
}


def _view_node(name):
    """AsStridedBackward0 (PyTorch) or the view's own node (minigrad): both read as "a view node"."""
    return name if name is None else "view node"


@pytest.mark.parametrize("how", ["view written", "base written", "written before the view", "not written"])
@pytest.mark.parametrize("make", list(VIEWS))
def test_view_written_before_its_base_requires_grad(torch, make, how):
    def case(t):
        x = t.tensor([[0.5, 1.0]], dtype=t.float64)
        if how == "written before the view":
            x.mul_(2)
        v = VIEWS[make](x)
        if how == "view written":
            v.zero_() if make == "expand" else v.exp_()
        elif how == "base written":
            x.mul_(2)
        x.requires_grad_()
        rg, leaf, retains, node = flags(v)
        facts = [(rg, leaf, retains, _view_node(node)), v._version]
        (v * 3).sum().backward()
        return facts + [None if x.grad is None else values(x.grad)]

    compare(torch, case)


def test_following_view_written_under_no_grad_gets_a_node(torch):
    # the view followed its base's requires_grad_(); a write under no_grad changes its version
    def case(t):
        x = t.tensor([[0.5, 1.0]], dtype=t.float64)
        v = x.view(-1)
        x.requires_grad_()
        before = flags(v)
        with t.no_grad():
            x.mul_(2)
        rg, leaf, retains, node = flags(v)
        (v * 3).sum().backward()
        return before, (rg, leaf, retains, _view_node(node)), values(x.grad)

    compare(torch, case)


def test_view_made_to_require_grad_itself_then_written_under_no_grad(torch):
    # PyTorch's tutorial pattern: w = linspace(...).view(...).requires_grad_(); with no_grad: w -= lr * w.grad
    def case(t):
        w = t.linspace(-1.0, 1.0, 6, dtype=t.float64).view(2, 3).requires_grad_()
        (w * w).sum().backward()
        with t.no_grad():
            w -= 0.1 * w.grad
        return flags(w), values(w)

    compare(torch, case)


# -- signed zeros (the fuzzer compares the sign of every zero) ---------------------------------------------------


def signs(t) -> list:
    return np.signbit(np.asarray(t.detach().numpy())).tolist()


@pytest.mark.parametrize("m, k, n", [(3, 1, 3), (2, 1, 2), (1, 1, 3), (3, 1, 1), (1, 1, 1), (3, 2, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matrix_product_keeps_the_sign_of_a_single_zero_term(torch, m, k, n, dtype):
    # PyTorch's gemm with one term per element keeps 0 * -1 = -0; its dot/gemv paths and longer sums give +0
    def case(t):
        a = t.tensor(np.zeros((m, k), dtype=dtype))
        b = t.tensor(np.where(np.arange(k * n).reshape(k, n) % 2, -1.0, 1.0).astype(dtype))
        return signs(a @ b), signs(t.mm(a, b)), signs(t.mm(a, b.abs()))

    compare(torch, case)


@pytest.mark.parametrize("values, dim", [([[0.0], [-0.0], [0.0]], 1), ([[-0.0, -0.0, 1.0]], 1), ([[-0.0, 0.0]], 0),
                                         ([-0.0], 0), ([[-0.0, -0.0], [0.0, -0.0]], 1)])
def test_cumsum_starts_from_plus_zero(torch, values, dim):
    def case(t):
        x = t.tensor(np.array(values), requires_grad=True)
        y = x.cumsum(dim)
        y.backward(t.tensor(np.full(np.shape(values), -0.0)))
        return signs(y), signs(x.grad), signs(t.tensor(-0.0).cumsum(0))

    compare(torch, case)


# -- float32 results that PyTorch computes without overflowing ---------------------------------------------------


@pytest.mark.parametrize("fn", [
    pytest.param(lambda x: x.std(), id="std"),
    pytest.param(lambda x: x.std(dim=1), id="std-dim"),
    pytest.param(lambda x: x.var(), id="var-overflows-in-float32-as-pytorch"),
    pytest.param(lambda x: x.norm(dim=0), id="norm-of-one-element"),
    pytest.param(lambda x: x.norm(p=3, dim=0), id="norm-p3-of-one-element"),
    pytest.param(lambda x: x.norm(dim=1), id="norm-of-three-overflows"),
    pytest.param(lambda x: x[:, 1:2].norm(), id="norm-of-a-single-element"),
])
def test_float32_statistics_of_large_values(torch, fn):
    # PyTorch accumulates var/std of float32 in double, and a norm of one element is |x|
    compare(torch, lambda t: values(fn(t.tensor(np.array([[0.0, 1e30, -2e30]], dtype="float32")))))


@pytest.mark.parametrize("values", [[[0.0, -0.0]], [[-0.0, 0.0]], [[-1.0, -0.0, 0.0]], [[-1.0, 0.0, -0.0]],
                                    [[0.0, 0.0, -0.0], [-0.0, 0.0, 1.0]]])
def test_amax_amin_of_signed_zeros_is_the_first_zero(torch, values):
    # PyTorch's reduction keeps the first of equal elements (for small slices; its vectorised loop over long
    # slices may pick another)
    def case(t):
        x = t.tensor(np.array(values))
        return [signs(f(x)) for f in (lambda x: x.amax(), lambda x: x.amin(), lambda x: x.amax(1),
                                      lambda x: x.amin(-1, keepdim=True), lambda x: x.amax((0, 1)),
                                      lambda x: x.t().amax(0))]

    compare(torch, case)


@pytest.mark.parametrize("fn", [
    pytest.param(lambda t, x: t.pow(x, t.tensor(0.5, dtype=t.float64)), id="0-d-tensor-exponent-is-pow-not-sqrt"),
    pytest.param(lambda t, x: x ** t.tensor([0.5], dtype=t.float64), id="one-element-exponent"),
    pytest.param(lambda t, x: x[:1] ** t.tensor(0.5, dtype=t.float64), id="one-element-base"),
    pytest.param(lambda t, x: x.pow(0.5), id="number-exponent-is-sqrt"),
    pytest.param(lambda t, x: x.pow(-0.5), id="number-exponent-minus-half-is-rsqrt"),
    pytest.param(lambda t, x: x.pow(t.tensor(-0.5, dtype=t.float64)), id="0-d-tensor-exponent-minus-half"),
])
def test_pow_of_signed_zeros(torch, fn):
    compare(torch, lambda t: (signs(r := fn(t, t.tensor([-0.0, 0.0, 4.0], dtype=t.float64))), values(r)))


def test_linear_weight_gradient_keeps_the_sign_of_a_single_term(torch):
    # the weight's gradient of a 1-D input is an (in, 1) @ (1, out) product: PyTorch's gemm keeps 0 * -1 = -0
    def case(t):
        x = t.tensor([0.0, 0.0, 0.0], dtype=t.float64, requires_grad=True)
        w = t.tensor(np.zeros((2, 3)), requires_grad=True)
        t.nn.functional.linear(x, w, t.tensor([1.0, 2.0], dtype=t.float64)).backward(
            t.tensor([-1.0, 1.0], dtype=t.float64))
        return signs(w.grad), values(w.grad)

    compare(torch, case)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_gradient_is_plus_zero_off_the_target(torch, reduction):
    # PyTorch's nll_loss_backward writes the target places only; a negative incoming gradient times 0 is -0
    def case(t):
        x = t.tensor([[0.0, 0.0, 0.0], [0.0, -1e30, 0.0]], requires_grad=True)
        loss = t.nn.functional.cross_entropy(x, t.tensor([2, 0]), reduction=reduction)
        loss.backward(t.tensor(-1.5) if reduction != "none" else t.tensor([-1.5, -0.5]))
        return signs(x.grad), np.round(values(x.grad), 5).tolist()  # (float32: the last bits may differ)

    compare(torch, case)


# -- dtypes the fuzzer found different ------------------------------------------------------------------------------
def _dtype(t) -> str:
    return str(t.dtype).split(".")[-1]


def test_mse_loss_promotes_as_pytorch(torch):
    """An int 0-d input against a float32 target is float32 (PyTorch's promotion), not NumPy's float64."""
    def case(lib):
        x = lib.tensor(np.array([[[0.5]]], dtype="float32"), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the broadcast warning, the same in both
            loss = lib.nn.functional.mse_loss(lib.tensor(np.array(2, dtype="int64")), x)
        loss.backward()
        return [_dtype(loss), loss.item(), _dtype(x.grad), values(x.grad)]
    compare(torch, case)


def test_in_place_op_into_a_narrower_dtype_has_gradients_of_that_dtype(torch):
    """`v /= x` with v float32 and x float64 keeps v float32; the gradient its new node receives is float32 too."""
    def case(lib):
        with lib.no_grad():
            v = lib.relu(lib.tensor(np.array([[[1.0]]], dtype="float32")))
        x = lib.tensor(np.array([[[2.0]]], dtype="float64"), requires_grad=True)
        v /= x
        loss = v.sum()
        loss.backward(retain_graph=True, inputs=[v])
        out = [_dtype(v), _dtype(v.grad), values(v.grad)]
        loss.backward(inputs=[x])
        return out + [_dtype(x.grad), values(x.grad)]
    compare(torch, case)
