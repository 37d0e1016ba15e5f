# %% [markdown]
# # 12. Debugging a custom `Function`
#
# Autograd trusts every `backward` you give it (lesson 7). When one is wrong, nothing
# raises: the gradients of every tensor *below* that node are quietly wrong, the loss still
# goes down a little, and the bug shows up days later as a model that trains badly. In a
# network with several custom Functions, which one is it?
#
# `gradcheck` answers "is *this* function right?" when you already suspect it. This lesson
# uses two viz tools that go through the whole graph instead: `viz.animate(loss, check=True)`
# and `viz.gradcheck_graph(loss)` re-run each custom Function on the very values it saw in the
# forward pass, in float64, and compare its `backward` with finite differences. The wrong node
# is marked, with which input's gradient is off and by how much.

# %%
import numpy as np

import minigrad as torch
import viz
from minigrad.autograd import Function, gradcheck

# %% [markdown]
# ## A network with two hand-written Functions
#
# Swish, $\mathrm{swish}(x) = x\,\sigma(\beta x)$, is a smooth cousin of ReLU with a learnable
# slope $\beta$. Here it is written as a `Function` (with a bug planted in its `backward`), next
# to a correct `Square`:

# %%
class Swish(Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x, beta)
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_output):
        x, beta = ctx.saved_tensors
        s = torch.sigmoid(beta * x)
        grad_x = grad_output * s  # the bug is here
        grad_beta = (grad_output * x * x * s * (1 - s)).sum()
        return grad_x, grad_beta


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_output


rng = np.random.default_rng(12)
x = torch.tensor(rng.standard_normal((4, 3)))
W = torch.tensor(rng.standard_normal((3, 2)), requires_grad=True)
beta = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
z = x @ W
a = Swish.apply(z, beta)
loss = Square.apply(a).mean()
print(loss)

# %% [markdown]
# ## Watching the backward pass with `check=True`
#
# The player runs `loss.backward()` as usual. At each custom node it also checks the node's
# local vector-Jacobian product, on the gradient the node received, against finite
# differences; a wrong node turns vermillion and its step says which input is off.

# %%
# NBVAL_IGNORE_OUTPUT
loss = Square.apply(Swish.apply(x @ W, beta)).mean()  # built here too, so this cell can run again
player = viz.animate(loss, params={"W": W, "beta": beta}, check=True)
player

# %%
for frame in player.frames:
    if frame.check is not None:
        print(f"step {frame.step}: {frame.check.text}")

# %% [markdown]
# `Square` is fine; `Swish` gives a wrong gradient for its input `x` (the `z` of the network)
# and a right one for `beta`. So `W.grad`, which autograd computed from `Swish`'s gradient for
# `z`, is wrong too, although `MmBackward0` itself did nothing wrong: the first wrong node in
# backward order is the one to fix.
#
# ## Without running backward: `viz.gradcheck_graph`
#
# `gradcheck_graph` does the same checks without touching the graph or any `.grad` (each
# Function is re-run on copies of its inputs, with a random gradient). Built-in operations
# are not checked: their derivatives are the library's own.

# %%
# NBVAL_IGNORE_OUTPUT
report = viz.gradcheck_graph(loss, params={"W": W, "beta": beta})
report

# %%
print(report)

# %% [markdown]
# Its max |Δ| is not the player's: the player multiplied by the gradient `SwishBackward` received
# in the real backward pass, `gradcheck_graph` by a random output gradient (it runs no backward),
# and the size of the error depends on what it is multiplied by. Each verdict says which one it
# used, in brackets; the verdict itself (which node, which input) is the same.
#
# The numbers behind the verdict: for the wrong input, what `backward` gave and what finite
# differences measured, element by element. Their difference is exactly the term the bug
# left out. Which one? Differentiate $x\,\sigma(\beta x)$ with the product rule.

# %%
(node,) = report.wrong
(bad,) = node.wrong_inputs
print("input:", bad.name, " max |difference|:", f"{bad.max_diff:.4f}")
print("backward gives:\n", bad.analytic.round(4))
print("finite differences:\n", bad.numeric.round(4))

# %% [markdown]
# ## Exercise 12: fix `Swish`
#
# Write `MySwish`, a correct version: the same `forward`, and a `backward` that returns the
# gradient for `x` (with both terms of the product rule; $\sigma' = \sigma(1 - \sigma)$) and the
# gradient for `beta` (one number: summed over every element). The check runs
# `viz.gradcheck_graph` on your function, then `gradcheck`.

# %% answer=12
class MySwish(Function):
    @staticmethod
    def forward(ctx, x, beta):
        # PLACEHOLDER: return ...
        # SOLUTION
        ctx.save_for_backward(x, beta)
        return x * torch.sigmoid(beta * x)
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # PLACEHOLDER: return ...
        # SOLUTION
        x, beta = ctx.saved_tensors
        s = torch.sigmoid(beta * x)
        grad_x = grad_output * (s + beta * x * s * (1 - s))
        grad_beta = (grad_output * x * x * s * (1 - s)).sum()
        return grad_x, grad_beta
        # END SOLUTION


# %% check=12 points=2
from minigrad_course import check_swish

check_swish(MySwish)

# %% [markdown]
# ## After the fix
#
# The same network with `MySwish`: every custom node passes, and `gradcheck` agrees on small
# float64 inputs.

# %%
# NBVAL_IGNORE_OUTPUT
try:
    loss_fixed = Square.apply(MySwish.apply(x @ W, beta)).mean()
except Exception as err:  # exercise 12 not done yet
    print(f"MySwish does not work yet ({type(err).__name__}): finish exercise 12, then run this cell again")
    loss_fixed = None
fixed_report = viz.gradcheck_graph(loss_fixed, params={"W": W, "beta": beta}) if loss_fixed is not None else None
fixed_report

# %%
print(fixed_report if loss_fixed is not None else "(MySwish does not work yet: nothing to check)")
if loss_fixed is not None:
    x64 = torch.tensor([-1.0, 0.25, 2.0], dtype=torch.float64, requires_grad=True)
    print("gradcheck:", gradcheck(MySwish.apply, (x64, beta)))

# %% [markdown]
# ## What to remember
#
# - A wrong `backward` raises nothing: every gradient below it is silently wrong.
# - `viz.animate(loss, check=True)` and `viz.gradcheck_graph(loss)` check each custom
#   `Function` on the values it saw, against float64 finite differences, and name the input
#   whose gradient is off, by how much (and by what factor, when it is a multiple).
# - The first wrong node in backward order is the one to fix; nodes after it only inherit it.
# - Then confirm the fix with `gradcheck` on small float64 inputs, as in lesson 7.
#
# This is the end of the course. [Start here](00_start_here.ipynb) has the list of lessons,
# if you want to revisit one.

# %% hidden=12
def test_large_float32_matrix(MySwish):
    """A 2x4 float32 input with values up to +-100 and beta = 2 (the check's x is a float64 vector within
    +-3): the output and x's gradient keep x's dtype and shape, stay finite, and match swish's; beta's
    gradient too. Catches sigmoid written as exp(bx) / (1 + exp(bx)), which passes the check but gives
    inf / inf = nan once exp overflows (bx > 88 in float32), and results built in float64 or flattened."""
    import warnings

    import numpy as np

    import minigrad as torch

    values = np.array([[-100.0, -50.0, -1.0, -0.25], [0.5, 2.0, 50.0, 100.0]], dtype=np.float32)
    seed = np.array([[1.0, -2.0, 0.5, 3.0], [1.5, -1.0, 2.0, 0.5]], dtype=np.float32)
    b = 2.0
    x = torch.tensor(values, requires_grad=True)
    beta = torch.tensor(b, dtype=torch.float32, requires_grad=True)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        y = MySwish.apply(x, beta)
        assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and tuple(y.shape) == (2, 4), (
            f"for a float32 2x4 input MySwish returned "
            f"{(y.dtype, tuple(y.shape)) if isinstance(y, torch.Tensor) else type(y).__name__}\n  hint: compute "
            "with tensor operations on x (x * torch.sigmoid(beta * x)), which keep its dtype and shape")
        (y * torch.tensor(seed)).sum().backward()
    v = values.astype(np.float64)
    small = np.exp(-np.abs(b * v))  # never overflows
    s = np.where(v >= 0, 1 / (1 + small), small / (1 + small))
    ds = small / (1 + small) ** 2  # s * (1 - s), without cancellation
    got = y.detach().numpy()
    assert np.all(np.isfinite(got)) and np.allclose(got, v * s, rtol=1e-4, atol=1e-5), (
        f"MySwish.apply(x, 2) for x = {values.tolist()} gives {got.tolist()}\n  hint: exp(beta * x) overflows "
        "for large x: torch.sigmoid(beta * x) (or 1 / (1 + torch.exp(-beta * x))) stays finite")
    want_x = seed * (s + b * v * ds)
    grad = None if x.grad is None else x.grad.numpy()
    assert grad is not None and x.grad.dtype == torch.float32 and grad.shape == (2, 4), (
        f"x's gradient is {None if x.grad is None else (x.grad.dtype, tuple(x.grad.shape))}, expected float32 "
        "of shape (2, 4)\n  hint: backward returns grad_output * (s + beta * x * s * (1 - s)), shaped like x")
    assert np.all(np.isfinite(grad)) and np.allclose(grad, want_x, rtol=1e-4, atol=1e-5), (
        f"for x = {values.tolist()} and beta = 2 x's gradient is {grad.tolist()}, expected "
        f"{np.round(want_x, 4).tolist()}\n  hint: exp(beta * x) overflows for large x: use torch.sigmoid(beta * x)")
    want_beta = float((seed * v * v * ds).sum())
    assert beta.grad is not None and np.isfinite(beta.grad.item()) and np.isclose(
        beta.grad.item(), want_beta, rtol=1e-4, atol=1e-5), (
        f"beta's gradient is {None if beta.grad is None else beta.grad.item()}, expected {want_beta:.6g}\n  "
        "hint: (grad_output * x * x * s * (1 - s)).sum(), with s = torch.sigmoid(beta * x)")


def test_by_hand_not_by_autograd(MySwish):
    """MySwish's backward computes the gradients itself: backward() runs one backward pass, not a second one
    inside MySwish's backward. Catches a backward that re-runs the forward under enable_grad() and asks
    autograd (torch.autograd.grad) for the gradients, which passes the check but skips the exercise."""
    import numpy as np

    import minigrad as torch
    from minigrad.autograd import engine

    x = torch.tensor(np.array([-1.5, 0.5, 2.0]), requires_grad=True)
    beta = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    y = MySwish.apply(x, beta)
    passes = []
    run_backward = engine.run_backward

    def counting(*a, **kw):
        passes.append(1)
        return run_backward(*a, **kw)

    engine.run_backward = counting
    try:
        y.sum().backward()
    finally:
        engine.run_backward = run_backward
    assert len(passes) == 1, (
        f"y.sum().backward() ran {len(passes)} backward passes: MySwish's backward ran autograd\n  hint: the "
        "exercise is to write the derivatives: grad_output * (s + beta * x * s * (1 - s)) for x, and "
        "(grad_output * x * x * s * (1 - s)).sum() for beta")
