"""Issue 34: what the differential fuzzer found on fresh seeds (400, 401, 540-542) and `make sweep-extremes` left,
one case each.

Each case runs under PyTorch 2.13 and minigrad by the parity harness (printed values, warnings, the exception's
type and first line); values are printed with `tolist()` where the sign of a zero or the last digit is the point.
Each failed on the main it was found on.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch_parity_harness as harness


def clamp_gradient_of_one_bound_only(torch, Variable):
    """autograd.grad asks for one input: PyTorch skips the formulas of the others (the engine's exec_info), so
    clamp's bound formula, which refuses bounds that broadcast larger than self, is not run when not asked for
    (minigrad ran every formula and raised)."""
    x = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    lo = torch.full((2, 3), -0.5, requires_grad=True)
    hi = torch.tensor([0.5, 0.5, 0.5], requires_grad=True)
    y = torch.clamp(x, lo, hi)
    print(torch.autograd.grad(y.sum(), [lo], retain_graph=True))
    print(torch.autograd.grad(y.sum(), [x], retain_graph=True))
    y.sum().backward(inputs=[x])
    print(x.grad)
    try:
        torch.autograd.grad(y.sum(), [hi])
    except RuntimeError as e:
        print("raised:", str(e).split("\n")[0])
    x3 = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = torch.addcdiv(x, x3, x3 * 2, value=0.5)  # a formula not asked for is skipped, but the saved tensors are
    with torch.no_grad():  # still unpacked first, as PyTorch's node does (seed 541 program 731)
        x3.add_(1.0)
    try:
        torch.autograd.grad(y.sum(), [x])
    except RuntimeError as e:
        print("raised:", str(e).split(":")[0])


@pytest.mark.parametrize(("values", "dtype"), [
    ([-0.46], "float64"), ([1e308], "float64"), ([1e30], "float32"), ([1e30, -1e30, 0.3e30], "float32"),
    ([3e38, -3e38, 0.3e30], "float32"), ([0.1, 0.2, 0.3, 0.7, 1.0], "float32"), ([np.inf], "float64"),
    ([-np.inf], "float32"), ([1.0, np.nan], "float64"), ([0.0], "float16")])
def test_histc_bins_as_pytorchs_kernel(torch, minigrad, values, dtype):
    """histc: one value widens the range to the next representable numbers when 1 cannot move it (PyTorch's
    bins_edges_correction), the bin is one division in the data's dtype, and edges whose step overflows count
    nothing (minigrad used NumPy's histogram: -0.46 went to another bin, 1e308 raised)."""
    def case(lib, Variable):
        x = lib.tensor(np.array(values, dtype=dtype))
        for bins, lo, hi in ((4, 0, 0), (7, 0, 0), (5, -1e30, 1e30), (3, -1e39, 1e39)):
            try:
                print(lib.histc(x, bins, lo, hi).tolist())
            except RuntimeError as e:
                print("raised:", e)

    problems = harness.differences(case, torch, minigrad)
    assert problems is None, problems


def autograd_grad_through_an_in_place_write_on_a_view(torch, Variable):
    """The in-place op's node behind CopySlices has the view's old edge first, which the backward never reaches:
    whether its first gradient is wanted is CopySlices' first edge's (a check of the op's own edge gave zeros)."""
    x = torch.tensor([[0.0], [0.5], [0.25], [0.0]], requires_grad=True)
    v = torch.nn.functional.embedding(torch.tensor([[1, 2, 0], [1, 1, 0]]), x)
    v.transpose(0, -1).acos_()
    print(torch.autograd.grad(v.sum(), [x, v]))
    y = torch.tensor([[[[0.5]]]], requires_grad=True)
    u = torch.nn.functional.interpolate(y, scale_factor=2)
    u[None].remainder_(0.7)
    print(torch.autograd.grad(u.mean(), [y]))


def xlogy_gradient_at_zero_is_log_other(torch, Variable):
    """xlogy's self gradient is PyTorch 2.13's `xlogy(grad, other).masked_fill((self == 0) & (other <= 0), 0)`:
    log(other) at self = 0 too (minigrad gave 0 there: `grad * xlogy(self != 0, other)`)."""
    xs = [0.0, -0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0, float("nan")]
    os = [0.0, 0.0, 0.0, -1.0, float("nan"), float("inf"), -1.0, 1e-300, 0.0]
    for dt in (torch.float64, torch.float32):
        x = torch.tensor(xs, requires_grad=True, dtype=dt)
        o = torch.tensor(os, requires_grad=True, dtype=torch.float64)
        g = torch.autograd.grad(torch.xlogy(x, o).sum(), [x, o], create_graph=True)
        print(g[0].tolist(), g[0].grad_fn.name(), g[1].tolist())
        print(torch.autograd.grad(g[0].sum(), [x, o], allow_unused=True))
        for s in (0.0, -1.0, 2.0):
            print(s, torch.autograd.grad(torch.xlogy(x, s).sum(), [x], create_graph=True)[0].tolist())


def addcmul_and_addcdiv_in_pytorchs_order(torch, Variable):
    """self + value * t1 * t2 (or / t2) left to right, as PyTorch's kernel, and its formulas' brackets
    (grad * (tensor2 * value)): the order decides an overflow, an underflow and a zero's sign (minigrad multiplied
    t1 * t2 first: inf where PyTorch is finite, 0.5 where PyTorch gives 5e-324)."""
    base = torch.tensor([5e-324, 1.0, -0.0], requires_grad=True)
    tiny = torch.tensor([5e-324, 2.0, 0.0], requires_grad=True)
    y = torch.addcdiv(base, tiny, tiny + 1e-300, value=0.5)
    print(y.tolist(), [g.tolist() for g in torch.autograd.grad(y.sum(), [base, tiny])])
    big = torch.tensor(np.array([3e38, 2.0, -1e-45], dtype="float32"), requires_grad=True)
    t2 = torch.tensor(np.array([1.2, 1e38, 1e-45], dtype="float32"), requires_grad=True)
    for fn in (torch.addcmul, torch.addcdiv):
        y = fn(torch.zeros(3), big, t2, value=0.5)
        print(y.tolist(), [g.tolist() for g in torch.autograd.grad(y.sum(), [big, t2])])


def cdist_gradients_at_nan_and_zero_differences(torch, Variable):
    """cdist's backward as PyTorch's _cdist_backward: p = 1 is grad * sign(d) with NaN where d is NaN (minigrad
    gave 0), and x2's gradient is computed from x2 - x1, summed from +0 (minigrad negated x1's: -0. for +0.)."""
    x1 = torch.tensor([[[np.nan, 1.0], [0.0, 0.0], [-0.0, 2.0]]], requires_grad=True)
    x2 = torch.tensor([[[0.0, 1.0], [-0.0, 0.0]]], requires_grad=True)
    for p in (1.0, 2.0, 3.0):
        d = torch.cdist(x1, x2, p)
        print([g.tolist() for g in torch.autograd.grad(d.sum(), [x1, x2])])
        print([g.tolist() for g in torch.autograd.grad((d * -1.0).sum(), [x1, x2])])


def smooth_l1_loss_second_order_at_nan(torch, Variable):
    """PyTorch's double backward of smooth_l1_loss passes grad * (|d| < beta) / beta: nothing where d is NaN
    (minigrad differentiated d / beta there: 2 where PyTorch gives 0)."""
    x = torch.tensor([np.nan, 0.1, 3.0, -0.2], requires_grad=True)
    for reduction, beta in (("sum", 0.5), ("mean", 1.0), ("none", 2.0)):
        loss = torch.nn.functional.smooth_l1_loss(x, torch.zeros(4), reduction=reduction, beta=beta)
        (g,) = torch.autograd.grad(loss.sum(), x, create_graph=True)
        print(g.tolist(), torch.autograd.grad(g.sum(), x)[0].tolist())


def layer_norm_zero_signs_without_bias(torch, Variable):
    """Without a bias PyTorch's kernel adds 0 in a fused multiply-add: an exact zero product is +0., an underflowing
    one keeps its sign (minigrad kept -0. from a -0. weight, and made +0. of an underflow once it added 0)."""
    x = torch.tensor([[0.5, -1.0, 2.0, 0.25], [1.0, 1.0, 1.0, 1.0]], requires_grad=True)
    for w in ([-0.0, 0.0, 5e-324, -5e-324], [1.0, -0.0, -5e-324, 2.0]):
        y = torch.nn.functional.layer_norm(x, (4,), weight=torch.tensor(w))
        print(y.tolist(), torch.nn.functional.layer_norm(-x, (4,), weight=torch.tensor(w)).tolist())
    print(torch.nn.functional.layer_norm(x, (4,)).tolist())


def batch_norm_of_float16_in_float32(torch, Variable):
    """float16 batch_norm computes x·alpha + beta in float32 (its opmath type) and rounds once, as PyTorch's kernel
    (seed 541 program 846, a regression of this round's kernel-order change caught by the fuzzer)."""
    stats = (torch.tensor(np.array([0.89, 0.84, -0.13], dtype="float16")),
             torch.tensor(np.array([0.83, 0.55, 0.55], dtype="float16")))
    affine = (torch.tensor(np.array([-0.15, 0.69, 1.41], dtype="float16")),
              torch.tensor(np.array([-1.06, 1.22, 1.38], dtype="float16")))
    for training in (True, False):
        print(torch.nn.functional.batch_norm(torch.ones(2, 3, dtype=torch.float16), *stats, *affine, training=training))


CASES = [
    batch_norm_of_float16_in_float32,
    layer_norm_zero_signs_without_bias,
    cdist_gradients_at_nan_and_zero_differences,
    smooth_l1_loss_second_order_at_nan,
    addcmul_and_addcdiv_in_pytorchs_order,
    clamp_gradient_of_one_bound_only,
    autograd_grad_through_an_in_place_write_on_a_view,
    xlogy_gradient_at_zero_is_log_other,
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=fn.__name__) for fn in CASES])
def test_fresh_seed_finding_behaves_as_pytorch(fn, torch, minigrad):
    problems = harness.differences(fn, torch, minigrad)
    if problems:
        pytest.fail(problems, pytrace=False)
