# %% [markdown]
# # 8. Higher-order gradients with `create_graph`
#
# A gradient is itself computed by operations (multiplications, additions, a `cos` here and
# there), performed by the backward pass. Normally autograd does not record them: the
# gradient comes out as a plain tensor, the end of the story. With `create_graph=True` the
# backward pass *is recorded*, like any forward computation, so the gradient has a `grad_fn`
# and can be differentiated again. That gives second derivatives, Hessian-vector products
# (the workhorse of second-order optimisation and of some meta-learning and physics-informed
# losses), and gradient penalties.

# %%
import minigrad as torch
import viz

x = torch.tensor(2.0, requires_grad=True)
y = x**3

(dy,) = torch.autograd.grad(y, x)  # the usual way
print("dy/dx =", dy, " requires_grad:", dy.requires_grad)
try:
    torch.autograd.grad(dy, x)
except RuntimeError as err:
    print("RuntimeError:", err)

# %% [markdown]
# Without `create_graph`, $dy/dx = 3x^2 = 12$ is a constant as far as autograd knows: it has
# no `grad_fn`, so there is nothing to differentiate. Ask for the graph and it becomes an
# ordinary differentiable tensor:

# %%
y = x**3
(dy,) = torch.autograd.grad(y, x, create_graph=True)
print("dy/dx    =", dy)
(d2y,) = torch.autograd.grad(dy, x, create_graph=True)
print("d2y/dx2  =", d2y, " (6x)")
(d3y,) = torch.autograd.grad(d2y, x)
print("d3y/dx3  =", d3y, " (6)")

# %% [markdown]
# ## The graph of the backward pass
#
# `dy` has a `grad_fn`, so it has a graph, and we can draw it. It is the backward pass of
# `x**3` written out as operations: `PowBackward0`'s rule, $\text{grad} \cdot (3 \cdot x^2)$,
# became a `PowBackward0` (for $x^2$), a `MulBackward1` (times the plain number 3) and a
# `MulBackward0` (times the incoming gradient). That gradient, the seed 1, is a constant that
# needs no gradient: the `None` input. PyTorch 2.13 draws exactly this graph.

# %%
# NBVAL_IGNORE_OUTPUT
viz.draw(dy, params={"x": x})

# %%
print(viz.summary(dy, params={"x": x}))

# %% [markdown]
# Differentiating `dy` runs a backward pass through *that* graph. Here it is, animated
# (the next cell prints the graph as text, with the gradient that reached `x`, and the player's
# step for `PowBackward0`). Follow the numbers: `MulBackward0` (the seed times $3 \cdot x^2$) gets
# the seed 1 and sends 1 on; `MulBackward1` (3 times $x^2$) sends $1 \cdot 3 = 3$ on to
# `PowBackward0`. Its rule reads
# `grad * exponent * self^(exponent - 1)`, and the exponent *of this node* is 2, because it
# computes $x^2$ (not the 3 of $x^3$): $3 \cdot 2 \cdot 2^1 = 12$, which is $6x$ at $x = 2$.

# %%
# NBVAL_IGNORE_OUTPUT
x.grad = None  # the graph is built here, so that this cell can run again (its backward frees it)
y = x**3
(dy,) = torch.autograd.grad(y, x, create_graph=True)
player = viz.animate(dy, params={"x": x})
player

# %%
print(viz.summary(dy, params={"x": x}))
print("x.grad =", x.grad, " (d2y/dx2 = 6x = 12)")
print()
print(next(frame.text for frame in player.frames if frame.text.startswith("PowBackward0")))

# %% [markdown]
# (`viz.animate` calls `dy.backward()`, so the second derivative landed in `x.grad`.)
#
# `t.backward(create_graph=True)` exists too, but it stores a gradient that has a graph in
# `.grad`, which creates a reference cycle between a parameter and its gradient (PyTorch warns
# about the memory leak). Prefer `torch.autograd.grad(..., create_graph=True)`, as here.
#
# ## Hessian-vector products
#
# For $f: \mathbb{R}^n \to \mathbb{R}$ the second derivatives form the $n \times n$ Hessian
# $H_{ij} = \partial^2 f / \partial x_i \partial x_j$. For a model with a million
# parameters that matrix has $10^{12}$ entries, far too many to build. But what
# second-order methods need is usually $H v$ for a vector $v$, and that takes only **two**
# backward passes:
#
# 1. $g = \nabla f(x)$ with `create_graph=True` (a differentiable gradient);
# 2. the gradient of the scalar $g \cdot v$: since $\partial (g \cdot v) / \partial x_j
#    = \sum_i v_i \, \partial g_i / \partial x_j = (H v)_j$ (the Hessian is symmetric).
#
# Take $f(x) = \tfrac12 x^\top A x + \sum_i e^{x_i}$, whose Hessian is $A + \mathrm{diag}(e^x)$
# for a symmetric $A$. `viz.session()` tells the two passes as a story: each `autograd.grad`
# call is a step with the gradient it returned. Neither touches `x.grad`: `grad` *returns*
# gradients, where `backward` adds them into `.grad`.

# %%
A = torch.tensor([[2.0, 1.0, 0.0], [1.0, 3.0, -1.0], [0.0, -1.0, 1.0]])


def f(x):
    return 0.5 * x @ A @ x + x.exp().sum()


xv = torch.tensor([0.0, 1.0, -1.0], requires_grad=True)  # the point x (x itself stays the number 2)
v = torch.tensor([1.0, 0.0, 2.0])

with viz.session(params={"x": xv}) as story:
    fx = f(xv)
    (g,) = torch.autograd.grad(fx, xv, create_graph=True)  # pass 1
    gv = g @ v
    (hv,) = torch.autograd.grad(gv, xv)  # pass 2
print("g  =", g)
print("Hv =", hv)
print(story.summary())
print("x.grad =", xv.grad)

# %% [markdown]
# Check it against the full Hessian (fine for 3 variables), which
# `torch.autograd.functional.hessian` builds with one backward pass per row, and against
# the library's own `hvp`:

# %%
H = torch.autograd.functional.hessian(f, xv.detach())
print(H)
print("H @ v =", H @ v)
print("expected H = A + diag(e^x):", torch.allclose(H, A + torch.eye(3) * xv.detach().exp()))
print("functional.hvp:", torch.autograd.functional.hvp(f, xv.detach(), v)[1])

# %% [markdown]
# ## Two layers: the graph and the graph of its backward pass
#
# Which first-order node wrote each node of `dy`'s graph? Run the forward pass and the first
# `grad` inside `viz.source_lines()`: every node then remembers the line that made it, and a
# node made *while backward ran* remembers the node whose rule made it (PyTorch keeps it in
# `node.metadata["parent_"]`, minigrad too). `viz.draw(..., layers=True)` draws those nodes as a
# second layer in another colour, each with a dashed link to its parent: here all of them come
# from `PowBackward0`'s rule, $\text{grad} \cdot 3x^2$. The second backward runs on that second
# layer: `viz.animate(..., layers=True)` colours it the same way while it steps through, and
# each of its steps names the first-order node that made it.

# %%
x = torch.tensor(2.0, requires_grad=True)
with viz.source_lines():
    y = x**3
    (dy,) = torch.autograd.grad(y, x, create_graph=True)

# %%
# NBVAL_IGNORE_OUTPUT
two_layers = viz.draw(dy, y, params={"x": x, "dy": dy, "y": y}, layers=True)
two_layers

# %%
print(two_layers.summary())  # the picture as text: each second-layer node says which node made it

# %%
# NBVAL_IGNORE_OUTPUT
x.grad = None  # the graph is built again here, so that this cell can run again (its backward frees it)
with viz.source_lines():
    y = x**3
    (dy,) = torch.autograd.grad(y, x, create_graph=True)
player = viz.animate(dy, params={"x": x}, layers=True)
player

# %%
for frame in player.frames:
    print(frame.title, *(text for kind, text in frame.lines if kind == "layer"), sep="\n    ")
print("x.grad =", x.grad, " (d2y/dx2 = 6x = 12)")

# %% [markdown]
# ## Exercise 8: your own `hvp`
#
# Write `hvp(f, x, v)` that returns $H v$ with the two-pass recipe above (`f` maps a 1-D
# tensor to a scalar). Do not build the Hessian.

# %% answer=8
def hvp(f, x, v):
    x = x.detach().requires_grad_()
    # PLACEHOLDER: return ...
    # SOLUTION
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (hv,) = torch.autograd.grad(g @ v, x)
    return hv
    # END SOLUTION


print(hvp(f, torch.tensor([0.0, 1.0, -1.0]), torch.tensor([1.0, 0.0, 2.0])))

# %% check=8 points=2
from minigrad_course import check_hvp

check_hvp(hvp)

# %% [markdown]
# ## What to remember
#
# - `create_graph=True` records the backward pass, so gradients get a `grad_fn` and can be
#   differentiated again (second, third derivatives).
# - That recorded backward pass is an ordinary graph: `viz.draw` draws it, `viz.animate`
#   replays its backward pass.
# - A Hessian-vector product costs two backward passes: `g = grad(f, x, create_graph=True)`,
#   then `grad(g @ v, x)`.
# - Prefer `torch.autograd.grad` over `backward(create_graph=True)`.
#
# Next: [9. In-place operations and version counters](09_inplace_and_versions.ipynb).

# %% hidden=8
def test_other_function_float32(hvp):
    """H v for a function and a 5-element float32 x the check never uses: catches an answer fitted to
    the check's three functions (values copied from what it printed) and one that only works in float64."""
    import numpy as np

    import minigrad as torch

    x = np.array([0.5, -1.0, 2.0, 0.25, -0.75], dtype=np.float32)
    v = np.array([1.0, 0.5, -1.0, 2.0, 0.0], dtype=np.float32)
    # f(t) = sum(t^3) + t0 t1 t4: H = diag(6 t) plus the t0 t1 t4 cross terms
    H = np.diag(6 * x.astype(np.float64))
    for (i, j), k in {(0, 1): 4, (0, 4): 1, (1, 4): 0}.items():
        H[i, j] = H[j, i] = x[k]
    want = H @ v

    def f(t):
        return (t**3).sum() + t[0] * t[1] * t[4]

    got = hvp(f, torch.tensor(x), torch.tensor(v))
    assert isinstance(got, torch.Tensor) and tuple(got.shape) == (5,), (
        f"for f(t) = sum(t^3) + t0 t1 t4 hvp returned {got!r}\n  hint: return the tensor Hv, shaped like x")
    assert np.allclose(got.detach().numpy(), want, rtol=1e-5, atol=1e-5), (
        f"for f(t) = sum(t^3) + t0 t1 t4 hvp gives {got.detach().numpy().tolist()}, expected {want.tolist()}\n  "
        "hint: g = grad(f(x), x, create_graph=True), then grad(g @ v, x)")
    assert got.dtype == torch.float32, f"for float32 x, v hvp returned {got.dtype}\n  hint: keep x's dtype"


def test_two_passes_not_the_library(hvp):
    """hvp runs the two passes itself: with torch.autograd.functional switched off it still works.
    Catches `return torch.autograd.functional.hvp(f, x, v)[1]`, which passes the check but skips the
    exercise."""
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
        got = hvp(lambda t: (t * t).sum() * t[0], torch.tensor([1.0, 2.0], dtype=torch.float64),
                  torch.tensor([1.0, -1.0], dtype=torch.float64))
    except RuntimeError as err:
        raise AssertionError("hvp calls torch.autograd.functional instead of running the two passes\n  hint: "
                             "g = torch.autograd.grad(f(x), x, create_graph=True), then grad(g @ v, x)") from err
    finally:
        for name, func in saved.items():
            setattr(functional, name, func)
    # f = t0 (t0^2 + t1^2): H = [[6 t0, 2 t1], [2 t1, 2 t0]] at (1, 2) = [[6, 4], [4, 2]]
    assert np.allclose(np.asarray(got.detach().numpy(), dtype=np.float64), [6 - 4, 4 - 2]), (
        f"hvp gives {got.detach().numpy().tolist()}, expected [2.0, 2.0]\n  hint: grad(g @ v, x) after the first pass")
