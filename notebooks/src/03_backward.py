# %% [markdown]
# # 3. `backward()`: gradients flowing through the graph
#
# Lesson 2 built the graph; this lesson runs it. `backward()` starts at a result, walks
# `next_functions` from node to node, and at each node applies one local rule of calculus:
# the chain rule. You will see it on a scalar, then learn what `backward()` really computes
# for a vector output (a vector-Jacobian product), and meet its two functional cousins,
# `torch.autograd.backward` and `torch.autograd.grad`.

# %%
import minigrad as torch
import viz

x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
out = (x**2).sum()
out.backward()
print("out =", out)
print("x.grad =", x.grad, " (d out / dx = 2x)")

# %% [markdown]
# ## What happened, node by node
#
# `backward()` on a scalar starts with the gradient of `out` with respect to itself, which is
# 1 (the *seed*). `SumBackward0` copies that 1 to every element (each $x_i^2$ contributes to
# the sum with weight 1); `PowBackward0` multiplies by its local derivative $2x_i$, using the
# `x` it saved; `AccumulateGrad` stores the result in `x.grad`. Every node only knows its own
# little derivative; the chain rule is the *product along the path*.
#
# `viz.animate` runs `backward()` for you and replays it one node at a time: press play, or
# step with the arrows. The animation is a widget, so the cell after it prints the graph as
# text instead, now with the gradient that reached `x` (`quiz_player.frames` holds every step as
# plain data, if you want to look at them in code).
#
# **Predict, then reveal.** Watching teaches less than predicting, so this player is a quiz
# (`quiz=True`): before a step it stops and asks you about it: which node runs next (click it
# in the picture, or pick its name), the gradient a node sends along an edge, or what `x.grad`
# becomes (type the values, like `[1, 2, 3, 4]`). Apply the chain rule yourself before you
# answer; the player checks your answer, reveals the step with the rule that gives it, and keeps
# a score. The quiz runs on new values of `x`, so the gradient printed above is not its answer.
# Your answers reach Python too: the cell under the player prints the graph with its gradients, the
# questions and your score (`quiz_player.answers` lists each answer with its verdict); run it after
# answering, since it reveals the answers.

# %%
# NBVAL_IGNORE_OUTPUT
x = torch.tensor([3.0, -1.0, 0.5, 2.0], requires_grad=True)
squares = x**2
out = squares.sum()
quiz_player = viz.animate(out, params={"x": x}, quiz=True)
quiz_player

# %% reveal
print(viz.summary(out, params={"x": x}))
print("\n".join(f"quiz, before step {q.step}: {q.prompt}" for q in quiz_player.quiz.questions))
print("score (right, answered):", quiz_player.score)

# %% [markdown]
# ## A vector output needs a `gradient`
#
# Now stop before the sum. `squares` has four elements, so "the derivative of `squares`
# with respect to `x`" is a 4×4 matrix, the Jacobian $J_{ij} = \partial y_i / \partial x_j$.
# `backward()` refuses to guess what you want from it:

# %%
try:
    squares.backward()
except RuntimeError as err:
    print("RuntimeError:", err)

# %% [markdown]
# Autograd never builds Jacobians. What it computes, in a single backward pass, is a
# **vector-Jacobian product**: you pass a vector $v$ with the shape of the output, and it
# returns $v^\top J$, that is $\sum_i v_i \, \partial y_i / \partial x_j$ for each $j$. In the
# scalar case the seed was simply $v = 1$.
#
# Think of $v$ as "how much each output matters". It is exactly the gradient of some later
# scalar $L$ with respect to `y` ($v_i = \partial L / \partial y_i$), and then $v^\top J$ is
# $\partial L / \partial x$ by the chain rule: this is how gradients move through every node
# of every network. PyTorch's tutorial shows it with the weights `[1, 0.1, 0.01, 0.001]`:

# %%
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
y = x**2
v = torch.tensor([1, 0.1, 0.01, 0.001])
y.backward(gradient=v)
print("v      =", v)
print("x.grad =", x.grad, " (= v * 2x)")

# %% [markdown]
# Here $J$ is diagonal ($\partial y_i / \partial x_j = 2x_i$ when $i = j$, else 0), so
# $v^\top J$ is just $v_i \cdot 2x_i$. `torch.autograd.functional.jacobian` builds the full
# matrix (with one backward pass per row), so we can check:

# %%
J = torch.autograd.functional.jacobian(lambda t: t**2, x)
print(J)
print("v @ J  =", v @ J)

# %% [markdown]
# The same backward pass, animated: the seed is now `v` instead of 1.

# %%
# NBVAL_IGNORE_OUTPUT
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
y = x**2
player = viz.animate(y, params={"x": x}, gradient=v)
player

# %%
print(viz.summary(y, params={"x": x}))

# %% [markdown]
# ## `torch.autograd.backward`: several outputs at once
#
# `t.backward(gradient)` is shorthand for `torch.autograd.backward([t], [gradient])`. The
# function form takes several outputs (and one `grad_tensors` entry per output) and runs one
# combined backward pass, so the gradients of all of them add up in `.grad`:

# %%
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
a = x.sum()  # d/dx = 1
b = (x**3).sum()  # d/dx = 3x^2
torch.autograd.backward([a, b])  # scalars: the seeds default to 1
print("x.grad =", x.grad, " (= 1 + 3x^2)")

x.grad = None
torch.autograd.backward([x * 2, x**2], grad_tensors=[torch.ones(4), v])
print("x.grad =", x.grad, " (= 2 + v * 2x)")

# %% [markdown]
# ## `torch.autograd.grad`: gradients as return values
#
# `backward()` writes into `.grad` of leaves. `torch.autograd.grad(outputs, inputs)` instead
# **returns** the gradients with respect to exactly the `inputs` you name, and leaves every
# `.grad` untouched. The inputs do not have to be leaves, which makes it the tool for
# "gradient of the loss with respect to this intermediate tensor", and for lesson 8's
# higher-order derivatives.

# %%
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
w = torch.tensor([0.5, -1.0], requires_grad=True)
h = x * 3
z = (h[:2] * w).sum()

gx, gw, gh = torch.autograd.grad(z, [x, w, h])
print("dz/dx =", gx)
print("dz/dw =", gw)
print("dz/dh =", gh, " (h is not a leaf: no problem)")
print("x.grad, w.grad:", x.grad, w.grad, " (untouched)")

# %% [markdown]
# Older tutorials (written for PyTorch 0.4) also pass `only_inputs=True`. That argument is
# deprecated and ignored: `grad` always computes gradients for the `inputs` you name and nothing
# else. Passing `only_inputs=False` makes PyTorch 2.13 warn "only_inputs argument is deprecated
# and is ignored now (defaults to True). To accumulate gradient for other parts of the graph,
# please use torch.autograd.backward." So drop the argument when you port such code.
#
# Asking for the gradient with respect to a tensor the output does not depend on is an
# error by default (it usually means a bug); `allow_unused=True` returns `None` for it:

# %%
unused = torch.tensor(1.0, requires_grad=True)
try:
    torch.autograd.grad((x * 2).sum(), [x, unused])
except RuntimeError as err:
    print("RuntimeError:", err)
print(torch.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True))

# %% [markdown]
# ## Exercise 3: a Jacobian, one row at a time
#
# Write `jacobian(f, x)` for a function `f` from a 1-D tensor to a 1-D tensor. It should
# return the matrix $J_{ij} = \partial f(x)_i / \partial x_j$ as a 2-D tensor. Use the idea of
# this lesson: the vector-Jacobian product with the one-hot vector $e_i$ (1 at position `i`,
# 0 elsewhere) is row `i` of $J$. Build each row with `torch.autograd.grad(f(x), x,
# grad_outputs=...)` (recomputing `f(x)` for every row is fine) and `torch.stack` the rows.
#
# The first line of `jacobian` is given: `x.detach()` is a tensor with the same values and no
# history (lesson 6 explains it), and `requires_grad_()` switches it on as a leaf (lesson 1).
# So your rows are gradients with respect to a fresh leaf, whatever the caller's `x` was.

# %% answer=3
def jacobian(f, x):
    x = x.detach().requires_grad_()
    # PLACEHOLDER: return ...
    # SOLUTION
    m = f(x).numel()
    rows = []
    for i in range(m):
        onehot = torch.zeros(m, dtype=x.dtype)
        onehot[i] = 1.0
        (row,) = torch.autograd.grad(f(x), x, grad_outputs=onehot)
        rows.append(row)
    return torch.stack(rows)
    # END SOLUTION


print(jacobian(lambda t: t**2, torch.tensor([1.0, 2.0, 3.0])))

# %% check=3 points=2
from minigrad_course import check_jacobian

check_jacobian(jacobian)

# %% [markdown]
# A Jacobian costs one backward pass per output element. That is why training minimises a
# **scalar** loss: one backward pass then gives the gradient with respect to every parameter
# at once.
#
# ## What to remember
#
# - `backward()` on a scalar seeds the graph with 1 and applies the chain rule node by node;
#   each node multiplies by its local derivative.
# - For a non-scalar output, `backward(gradient=v)` computes the vector-Jacobian product
#   $v^\top J$; `v` has the output's shape.
# - `torch.autograd.backward` handles several outputs at once; `torch.autograd.grad` returns
#   gradients for the inputs you name (leaves or not) without touching `.grad`.
#
# Next: [4. Accumulation and `retain_graph`](04_accumulation_and_retain_graph.ipynb).

# %% hidden=3
def test_float32_and_other_shapes(jacobian):
    """float32 input, one output, five outputs, of functions the check does not use: the result is a
    float32 matrix of the right shape and values (catches answers fitted to the check's three functions
    or to float64 only)."""
    import numpy as np

    import minigrad as torch

    x3 = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    x2 = np.array([0.3, 1.2], dtype=np.float32)
    cases = [
        ("f(t) = (t * t).sum(), as a 1-element vector", lambda t: (t * t).sum().reshape(1), x3,
         (2 * x3).reshape(1, 3)),
        ("f(t) = [t0 t1, t0^2, e^t1, t0 - t1, sin t1]",
         lambda t: torch.stack([t[0] * t[1], t[0] ** 2, t[1].exp(), t[0] - t[1], t[1].sin()]), x2,
         np.array([[x2[1], x2[0]], [2 * x2[0], 0], [0, np.exp(x2[1])], [1, -1], [0, np.cos(x2[1])]])),
    ]
    for label, f, x, want in cases:
        got = jacobian(f, torch.tensor(x))
        assert isinstance(got, torch.Tensor), f"for {label} jacobian returned {type(got).__name__}\n  hint: " \
                                              "return torch.stack(rows)"
        assert tuple(got.shape) == want.shape, (f"for {label} the result has shape {tuple(got.shape)}, expected "
                                                f"{want.shape}\n  hint: one row per output, one column per input")
        assert got.dtype == torch.float32, (f"for a float32 x the Jacobian is {got.dtype}, expected float32\n  hint: "
                                            "make the one-hot vectors with dtype=x.dtype")
        assert np.allclose(got.detach().numpy(), want, rtol=1e-5, atol=1e-6), (
            f"for {label} jacobian gives {got.detach().numpy().tolist()}, expected {want.tolist()}\n  hint: row i "
            "is torch.autograd.grad(f(x), x, grad_outputs=e_i)[0]")


def test_rows_from_vjps_not_the_library(jacobian):
    """jacobian builds the rows itself: with torch.autograd.functional switched off it still works.
    Catches `return torch.autograd.functional.jacobian(f, x)`, which passes the check but skips the
    exercise (the vector-Jacobian products)."""
    import numpy as np

    import minigrad as torch
    import minigrad.autograd.functional as functional

    def refuse(*args, **kwargs):
        raise RuntimeError("torch.autograd.functional is switched off in this test")

    saved = {name: getattr(functional, name) for name in ("jacobian", "hessian", "vjp", "jvp", "hvp", "vhp")
             if hasattr(functional, name)}
    for name in saved:
        setattr(functional, name, refuse)
    try:
        x = torch.tensor([1.0, -2.0], dtype=torch.float64)
        got = jacobian(lambda t: t * t.sum(), x)
    except RuntimeError as err:
        raise AssertionError("jacobian calls torch.autograd.functional instead of building the rows\n  hint: one "
                             "torch.autograd.grad(f(x), x, grad_outputs=e_i) per row, then torch.stack") from err
    finally:
        for name, func in saved.items():
            setattr(functional, name, func)
    want = np.array([[0.0, 1.0], [-2.0, -3.0]])  # f_i = t_i * (t0 + t1): J = diag(t0 + t1) + t 1^T
    assert np.allclose(np.asarray(got.detach().numpy(), dtype=np.float64), want), (
        f"jacobian gives {got.detach().numpy().tolist()}, expected {want.tolist()}\n  hint: row i is the gradient "
        "of output i")
