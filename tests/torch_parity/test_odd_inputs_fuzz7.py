"""Issue 34: findings of the differential fuzzer on fresh seeds 1700-1900 and 3000-3049, and of a float16 sweep of
the unary ops' gradients against PyTorch, one case each.

Each case runs under PyTorch 2.13 and minigrad by the parity harness (printed values, warnings, the exception's
type and first line); values are printed with `tolist()`, bit for bit where the sign of a zero, a NaN's place or a
float16's last digit is the point. Each failed on the code it was found on.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch_parity_harness as harness


def float16_activations_in_float32_rounded_once(torch, Variable):
    """PyTorch computes a float16 pointwise kernel in float32 and rounds once (its opmath type): rsqrt, sigmoid,
    silu, softplus and gelu in the forward, tanh's and softplus's fused backward, leaky_relu's slope as a float32;
    minigrad's NumPy formulas rounded each step to float16, up to 3 units in the last place (the fuzzer's float16
    sigmoid and binary_cross_entropy-after-sigmoid gradients, seeds 1700-1801). asin's and acos's gradients take
    rsqrt. sigmoid's backward is g * (1 - y) * y in this order, each step in the dtype, as PyTorch's kernel. Second
    order: silu's formula takes one sigmoid, softplus's is PyTorch's softplus_double_backward."""
    rng = np.random.default_rng(7)
    x16 = (rng.standard_normal(256) * 2.5).astype("float16")
    g16 = torch.tensor((rng.standard_normal(256) * 3).astype("float16"))
    unit = torch.tensor(rng.uniform(-0.95, 0.95, 256).astype("float16"), requires_grad=True)
    mid = torch.tensor(np.clip(x16, -2, 2), requires_grad=True)  # (gelu below -2: PyTorch's float32 erf's last bits)
    pos = torch.tensor((rng.random(256) * 4 + 0.05).astype("float16"), requires_grad=True)
    F = torch.nn.functional
    for name, fn, x in (("sigmoid", torch.sigmoid, None), ("tanh", torch.tanh, None), ("silu", F.silu, None),
                        ("softplus", F.softplus, None), ("leaky_relu", F.leaky_relu, None),
                        ("rsqrt", torch.rsqrt, pos), ("asin", torch.asin, unit), ("acos", torch.acos, unit)):
        x = torch.tensor(x16, requires_grad=True) if x is None else x
        y = fn(x)
        (g,) = torch.autograd.grad(y, x, g16, create_graph=True)
        print(name, y.tolist(), g.tolist())
    print(F.gelu(mid).tolist())
    for fn in (F.silu, F.softplus, torch.tanh, torch.sigmoid):  # second order (float16 steps, as PyTorch's formulas)
        x = torch.tensor(x16, requires_grad=True)
        (g,) = torch.autograd.grad(fn(x), x, g16, create_graph=True)
        print(torch.autograd.grad(g, x, g16)[0].tolist(), torch.autograd.grad(fn(x), x, g16)[0].tolist())



def cumulative_sums_in_the_accumulate_type(torch, Variable):
    """PyTorch's CPU cumsum adds float16 in float32 and float32 in float64 (its accumulate type), rounding each
    running sum once; NumPy's added in the dtype. cumprod's gradient is a reversed cumsum divided by the input, so
    its float16 gradients differed by several units in the last place (the fuzzer's float16 cumprod gradients,
    seeds 1700-1801), and float32 cumsums in the last digits."""
    rng = np.random.default_rng(11)
    for dtype in ("float16", "float32"):
        x = torch.tensor((rng.standard_normal((4, 40)) * 3).astype(dtype), requires_grad=True)
        print(dtype, x.cumsum(1).tolist(), x.cumsum(0, dtype=torch.float64).tolist())
        p = torch.tensor((rng.random((3, 12)) + 0.5).astype(dtype), requires_grad=True)
        (g,) = torch.autograd.grad(p.cumprod(1), p, torch.tensor(rng.standard_normal((3, 12)).astype(dtype)),
                                   create_graph=True)
        print(g.tolist(), torch.autograd.grad(g.sum(), p)[0].tolist())


def second_order_nodes_of_fused_backward_ops(torch, Variable):
    """Under create_graph, PyTorch's formulas call fused backward ops, whose nodes a double backward walks: elu's
    elu_backward records EluBackwardBackward0 (its slope for self only where self < 0, as a float mask: 0 at 0,
    inf and nan where the composed formula gave 1 or nan), _safe_softmax's _softmax_backward_data records
    SoftmaxBackwardDataBackward0 (seed 1900 program 946: MulBackward0); kl_div(reduction='batchmean') of a 0-d
    input is a sum (SumBackward0, seed 1900 program 1786: MeanBackward0)."""
    x = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), -1.5, 2.0, -800.0], dtype=torch.float64,
                     requires_grad=True)
    gz = torch.tensor([1.0, -2.0, 3.0, 0.5, 1.0, float("inf"), -0.0, 2.0], dtype=torch.float64, requires_grad=True)
    for alpha in (1.0, 0.7):
        (g,) = torch.autograd.grad(torch.nn.functional.elu(x, alpha), x, gz, create_graph=True)
        print(g.tolist(), g.grad_fn.name(), g.grad_fn.next_functions[0][0].name())
        print([t.tolist() for t in torch.autograd.grad(g, (x, gz), torch.linspace(-1, 2, 8, dtype=torch.float64))])
    h = torch.tensor(np.array([0.25, -1.5, 0.75, -3.0], dtype="float16"), requires_grad=True)
    (g,) = torch.autograd.grad(torch.nn.functional.elu(h, 0.3), h, torch.ones(4, dtype=torch.float16) * 1.3)
    print(g.tolist())
    s = torch.tensor([[0.5, -1.0, 2.0], [-float("inf"), -float("inf"), -float("inf")]], dtype=torch.float64,
                     requires_grad=True)
    gs = torch.tensor([[1.0, 2.0, -1.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
    (g,) = torch.autograd.grad(torch._safe_softmax(s, -1), s, gs, create_graph=True)
    print(g.tolist(), g.grad_fn.name(), torch.autograd.grad(g.sum(), s)[0].tolist())
    z = torch.tensor(-0.7, dtype=torch.float64, requires_grad=True)
    loss = torch.nn.functional.kl_div(z, torch.tensor(0.3, dtype=torch.float64), reduction="batchmean")
    print(loss.item(), loss.grad_fn.name(), torch.autograd.grad(loss, z)[0].item())


def clamp_maximum_and_minimum_between_opposite_zeros(torch, Variable):
    """Which zero a tie of +0. and -0. gives (docs/differences.md, "maximum, minimum and clamp by a tensor"): with
    Python-number bounds PyTorch keeps the input's zero at every length; with tensor operands its scalar loop keeps
    the first operand's, which is all a tensor shorter than one SIMD vector meets on any CPU (seed 1900's
    clamp(max=tensor(-0.)) of zeros took the vector path: not compared here). Gradients at the tie too."""
    def signs(t):
        return "".join("-" if v < 0 or (v == 0 and str(v).startswith("-")) else "+" for v in t.tolist())
    for dtype in (torch.float16, torch.float32, torch.float64):
        for n in (3, 40):
            z, nz = torch.zeros(n, dtype=dtype), torch.full((n,), -0.0, dtype=dtype)
            print(signs(z.clamp(max=-0.0)), signs(nz.clamp(min=0.0)), signs(z.clamp(-0.0, -0.0)),
                  signs(nz.clamp_min(0.0)), signs(z.clamp_max(-0.0)), signs(torch.clamp(nz, min=0.0, max=-0.0)))
        z, nz = torch.zeros(3, dtype=dtype), torch.full((3,), -0.0, dtype=dtype)
        print(signs(torch.maximum(z, nz)), signs(torch.maximum(nz, z)), signs(torch.minimum(z, nz)),
              signs(torch.minimum(nz, z)), signs(z.clamp(max=nz)), signs(nz.clamp(min=z)), signs(z.clamp(nz, nz)))
    x = torch.tensor([0.0, -0.0, 0.0, -0.0], requires_grad=True)
    b = torch.tensor([-0.0, 0.0, 0.0, -0.0], requires_grad=True)
    for f in (lambda: torch.maximum(x, b), lambda: torch.minimum(x, b), lambda: x.clamp(min=b), lambda: x.clamp(max=b),
              lambda: x.clamp(-0.0, 0.0)):
        print([g.tolist() for g in torch.autograd.grad(f(), (x, b), torch.tensor([1.0, -2.0, 3.0, -0.0]),
                                                       allow_unused=True, materialize_grads=True)])


def no_numpy_error_or_warning_from_losses_and_scattered_sums(torch, Variable):
    """l1_loss, mse_loss and smooth_l1_loss of shapes that do not broadcast raise PyTorch's RuntimeError after its
    size warning (seed 3001 program 587: NumPy's ValueError); a scatter_add or an indexing backward that adds inf
    and -inf into one element gives nan silently (seed 3001 program 958: NumPy's RuntimeWarning reached the
    learner)."""
    a, b = torch.tensor(np.arange(8.0)), torch.tensor(np.ones((2, 16)))
    for loss in (torch.nn.functional.l1_loss, torch.nn.functional.mse_loss, torch.nn.functional.smooth_l1_loss):
        try:
            loss(a, b)
        except RuntimeError as e:
            print(loss.__name__, e)
    x = torch.tensor([[0.0], [float("inf")], [-float("inf")]], dtype=torch.float64, requires_grad=True)
    print(x.scatter_add(0, torch.tensor([[1], [0], [0]]), x).tolist())
    gy = torch.tensor([[float("inf")], [-float("inf")], [1.0], [float("inf")], [-float("inf")]], dtype=torch.float64)
    print(torch.autograd.grad(x[torch.tensor([0, 0, 1, 2, 2])], x, gy)[0].tolist())
    print(torch.autograd.grad(x.index_select(0, torch.tensor([1, 1])), x, gy[:2])[0].tolist())


def unfold_refuses_inputs_without_a_window(torch, Variable):
    """F.unfold raises PyTorch's RuntimeError when a spatial size leaves no sliding block (seed 3002 program 506:
    minigrad returned an empty result) or a non-batch dimension is empty."""
    for shape, kernel, kwargs in (((0, 3, 1, 2), (2, 3), {}), ((1, 1, 1, 2), (2, 3), {"padding": 1, "dilation": 2}),
                                  ((1, 1, 1, 5), (1, 6), {}), ((1, 0, 4, 4), (2, 2), {}),
                                  ((1, 1, 4, 4), (2, 2), {"stride": (2, 3)}), ((0, 2, 3, 3), 2, {})):
        try:
            print(torch.nn.functional.unfold(torch.zeros(shape), kernel, **kwargs).shape)
        except RuntimeError as e:
            print(e)


def trace_adds_the_diagonal_in_order_in_the_accumulate_type(torch, Variable):
    """trace adds the diagonal one element at a time from +0, float32 in float64 and float16 in float32, as
    PyTorch's CPU kernel (NumPy's pairwise float32 sum differed in the last digits), and inf + -inf is nan with no
    NumPy warning (seed 3003 program 121)."""
    rng = np.random.default_rng(5)
    for dtype in ("float64", "float32", "float16", "int32"):
        a = rng.standard_normal((40, 40)) * 10 ** rng.uniform(-2, 4, (40, 40))
        print(dtype, torch.tensor(a.astype(dtype)).trace().item())
    for rows in ([[float("inf"), 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, -float("inf")]], [[-0.0, 1.0], [2.0, -0.0]],
                 [[-0.0, 5.0], [1.0, -0.0]]):
        print(torch.tensor(rows).trace().tolist())


def sgn_derivative_is_an_efficient_zero(torch, Variable):
    """sgn's derivative (abs's second order, l1_loss's) is PyTorch's efficient zero tensor: an absent term in a
    sum (x - x's -0. survives: seed 3000 program 767, l1_loss(x, x)), a real -0. when negated, and zero times
    anything, so exp(x) = inf behind it gives 0, not NaN (a wrong number before; exp at 0 and +-800 only, as
    NumPy's float32 exp(1) is a unit in the last place off PyTorch's). sign's derivative is plain zeros:
    0 * inf is NaN there in PyTorch too."""
    F = torch.nn.functional
    for dtype in ("float64", "float32"):
        for values in ([0.0], [-0.0, 2.0, -3.0]):
            x = torch.tensor(np.array([values], dtype=dtype), requires_grad=True)
            (g,) = torch.autograd.grad(F.l1_loss(x, x).sum() * 2, [x], create_graph=True)
            g[0].sum().backward()
            print("l1_loss(x, x)", g.tolist(), x.grad.tolist())
            x = torch.tensor(np.array(values, dtype=dtype), requires_grad=True)
            (g,) = torch.autograd.grad((x - x.detach()).abs().mean(), [x], create_graph=True)
            g.sum().backward()  # x.grad is PyTorch's zero tensor itself, with no tolist; its negation is real
            print("|x - y| at x == y", g.tolist(), x.grad.neg().tolist())
        x = torch.tensor(np.array([800.0, 0.0, -800.0, -0.0], dtype=dtype), requires_grad=True)
        e = x.exp()
        (g,) = torch.autograd.grad(e.abs().sum(), [e], create_graph=True)
        g.sum().backward()
        print("abs second order behind exp = inf", g.tolist(), x.grad.neg().tolist())
        x = torch.tensor(np.array([800.0, 0.0, -800.0], dtype=dtype), requires_grad=True)
        (g,) = torch.autograd.grad(F.l1_loss(x.exp(), torch.zeros(3, dtype=x.dtype)), [x], create_graph=True)
        g.sum().backward()
        print("l1_loss second order of exp", g.tolist(), x.grad.tolist())
        x = torch.tensor(np.array([800.0, 0.0, -0.0], dtype=dtype), requires_grad=True)
        x.exp().sign().sum().backward()
        print("sign's plain zeros behind exp = inf", x.grad.tolist())


CASES = [
    sgn_derivative_is_an_efficient_zero,
    trace_adds_the_diagonal_in_order_in_the_accumulate_type,
    unfold_refuses_inputs_without_a_window,
    no_numpy_error_or_warning_from_losses_and_scattered_sums,
    clamp_maximum_and_minimum_between_opposite_zeros,
    second_order_nodes_of_fused_backward_ops,
    cumulative_sums_in_the_accumulate_type,
    float16_activations_in_float32_rounded_once,
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=fn.__name__) for fn in CASES])
def test_fresh_seed_finding_behaves_as_pytorch(fn, torch, minigrad):
    problems = harness.differences(fn, torch, minigrad)
    if problems:
        pytest.fail(problems, pytrace=False)
