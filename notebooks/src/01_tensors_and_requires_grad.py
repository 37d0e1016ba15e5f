# %% [markdown]
# # 1. Tensors and `requires_grad`
#
# Automatic differentiation starts with one question that autograd asks about every tensor:
# *do I need to know how the final result changes when this tensor changes?* The flag that
# answers it is `requires_grad`. In this lesson you will see which tensors carry it, how it
# spreads through a computation, and why only some tensors end up with a `.grad`.
#
# We write `import minigrad as torch`: minigrad re-implements PyTorch's autograd API on top of
# NumPy, so every line here runs unchanged with `import torch` and prints the same thing
# (where PyTorch prints `torch.`, minigrad prints `minigrad.`).

# %%
import minigrad as torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
print(x)
print("requires_grad:", x.requires_grad)
print("is_leaf:      ", x.is_leaf)
print("grad:         ", x.grad)
print("grad_fn:      ", x.grad_fn)

# %% [markdown]
# `x` is a **leaf**: you made it yourself; no operation produced it, so it has no `grad_fn`.
# Its `.grad` is `None` because nothing has been differentiated yet. Setting
# `requires_grad=True` asks autograd to *record* every operation that uses `x`, so that it
# can later walk those records backwards and compute derivatives with respect to `x`.
#
# ## How `requires_grad` spreads
#
# The rule is short: **the result of an operation requires grad if any of its inputs does.**
# A weight vector `w` that we never want to differentiate stays plain:

# %%
w = torch.tensor([0.5, -1.0, 2.0])
y = x * w
z = y.sum()

for name, t in [("x", x), ("w", w), ("y", y), ("z", z)]:
    print(f"{name}: requires_grad={t.requires_grad!s:5}  is_leaf={t.is_leaf!s:5}  grad_fn={t.grad_fn}")

# %% [markdown]
# `y` and `z` were produced by operations on something that requires grad, so autograd
# recorded them: each has a `grad_fn`, the node that knows how to send a gradient back to
# the inputs of that operation (`MulBackward0` for `*`, `SumBackward0` for `.sum()`). Tensors
# with a `grad_fn` are **non-leaves**.
#
# The printed `0x...` is a memory address: it changes from run to run and means nothing more
# than "this particular node object".
#
# `viz` draws what was computed. With `view="values"` it shows the tensors as boxes (name,
# shape, dtype and data) and each operation between them, labelled with the `grad_fn` it
# recorded; `params` names the tensors. The cell after the picture prints the same graph as
# text, one row per box: the `to` column says which box each value flows into.

# %%
# NBVAL_IGNORE_OUTPUT
import viz

viz.draw(z, params={"x": x, "w": w, "y": y}, view="values")

# %%
print(viz.summary(z, params={"x": x, "w": w, "y": y}, view="values"))

# %% [markdown]
# `w` appears as a dashed box, `constant` (kind `none` in the text: no gradient will be sent
# there). It does not require grad, and neither does anything computed from `w` alone. Such a
# tensor is also a leaf: autograd did not record how it was made, so as far as the graph is
# concerned it is a starting point, just a constant.

# %%
c = w * 2
print(c, "is_leaf:", c.is_leaf, "requires_grad:", c.requires_grad)

# A leaf can be switched on later, in place (note the trailing underscore):
c.requires_grad_()
print(c, "is_leaf:", c.is_leaf, "requires_grad:", c.requires_grad)

# %% [markdown]
# So the full definition is: **a tensor is a leaf if it has no `grad_fn`**, either because you
# created it, or because it was computed from tensors that did not require grad.
#
# Only floating-point tensors can require grad (a derivative with respect to an integer makes
# no sense), and only leaves can have the flag changed by hand; for a computed tensor the flag
# is a fact about its history:

# %%
try:
    torch.tensor([1, 2, 3], requires_grad=True)
except RuntimeError as err:
    print("RuntimeError:", err)

try:
    y.requires_grad = False
except RuntimeError as err:
    print("RuntimeError:", err)

# %% [markdown]
# ## Where gradients land
#
# `z.backward()` computes $\partial z / \partial t$ for every leaf $t$ that requires grad and
# stores it in `t.grad`. Here $z = \sum_i x_i w_i$, so $\partial z / \partial x_i = w_i$:

# %%
z = (x * w).sum()  # z again, so that this cell can run again (backward frees the graph it ran through)
x.grad = None
z.backward()
print("x.grad:", x.grad)
print("w.grad:", w.grad)

# %% [markdown]
# `x.grad` equals `w`, as the calculus says. `w.grad` stays `None`: we never asked for it.
#
# What about `y`? It requires grad, and autograd certainly computed $\partial z / \partial y$
# on the way from `z` to `x` (it is `[1, 1, 1]`). But it did not keep it:

# %%
print(y.grad)

# %% [markdown]
# `None`, and a `UserWarning` (printed in red, on stderr) explaining why. Gradients of
# intermediate results are used and thrown away as soon as the backward pass moves past
# them. A real network has millions of intermediate values; keeping a gradient for each
# would double the memory for something almost nobody reads. Leaves are different: they are
# usually the *parameters* you want to update, so their gradients are kept.
#
# When you do want an intermediate gradient (to debug, or to look at saliency), ask for it
# **before** calling `backward()` with `retain_grad()` (lesson 5 shows the alternative, hooks):

# %%
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * w
y.retain_grad()
z = y.sum()
z.backward()
print("y.grad:", y.grad, " y.retains_grad:", y.retains_grad)
print("x.grad:", x.grad)

# %% [markdown]
# A classic trap with the same root: calling `.double()` (or `.to(...)`) on a tensor that
# requires grad returns a *new, non-leaf* tensor; the gradient lands on the original.

# %%
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a.double()
(b * b).sum().backward()
print("b.is_leaf:", b.is_leaf, " b.grad_fn:", b.grad_fn.name())
print("a.grad:", a.grad)

# %% [markdown]
# Create tensors with the dtype you want (`torch.tensor(..., dtype=torch.float64,
# requires_grad=True)`) and the leaf is the tensor you hold.
#
# ## Exercise 1: predict, then check
#
# Read the code in the next cell **without running it**, and decide for each tensor whether
# it is a leaf and whether its `.grad` will be a tensor (not `None`) after `e.backward()`.
# Write your answers as sets of names, then run the check.

# %% answer=1
p = torch.tensor([1.0, 2.0], requires_grad=True)
q = torch.tensor([3.0, 4.0])
r = p * q
s = q * 2
e = (r + s).sum()

# Which of "p", "q", "r", "s", "e" are leaves?
# PLACEHOLDER: leaves = ...
# SOLUTION
leaves = {"p", "q", "s"}
# END SOLUTION
# Which of them will have a .grad after e.backward()?
# PLACEHOLDER: gets_grad = ...
# SOLUTION
gets_grad = {"p"}
# END SOLUTION

# %% check=1 points=1
from minigrad_course import check_leaves

check_leaves(leaves, gets_grad)

# %% [markdown]
# Now let autograd confirm it (`e.backward()` is safe to run here; the `warnings` filter only
# silences the non-leaf warning you met above):

# %% reveal
import warnings

r, s = p * q, q * 2  # the exercise's tensors again, so that this cell can run again
e = (r + s).sum()
p.grad = None
e.backward()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, t in [("p", p), ("q", q), ("r", r), ("s", s), ("e", e)]:
        print(f"{name}: is_leaf={t.is_leaf!s:5}  grad={t.grad}")

# %% [markdown]
# ## What to remember
#
# - `requires_grad=True` marks a tensor whose derivative you want; every result computed from
#   it inherits the flag and gets a `grad_fn`.
# - Leaves have no `grad_fn`: tensors you created, and tensors computed only from tensors that
#   do not require grad.
# - `backward()` fills `.grad` on leaves that require grad. Intermediate gradients are thrown
#   away unless you call `retain_grad()` first.
#
# Next: [2. The computation graph](02_computation_graph.ipynb), where we open up `grad_fn`.

# %% hidden=1
import ast


def _cell_assigning(env, names):
    """The source of the last cell the learner ran that assigns one of ``names`` (IPython keeps every
    cell it ran in ``In``), or None outside IPython."""
    for source in reversed(list(env.get("In") or [])):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        if any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in names for n in ast.walk(tree)):
            return tree
    return None


def test_predicted_not_computed(env):
    """The sets are typed in, as the exercise asks ("without running it"), not computed from the
    tensors (.is_leaf, .grad, a backward() in the answer cell): a computed answer passes the check but
    predicts nothing."""
    tree = _cell_assigning(env, {"leaves", "gets_grad"})
    if tree is None:
        return
    looked = sorted({f".{n.attr}" for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                     and n.attr in {"is_leaf", "grad", "grad_fn", "backward", "requires_grad", "retains_grad"}}
                    | {f"{n.id}()" for n in ast.walk(tree) if isinstance(n, ast.Name)
                       and n.id in {"globals", "locals", "vars", "eval", "exec"}})
    assert not looked, (f"the answer cell computes the answer from the tensors ({', '.join(looked)}) instead of "
                        "predicting it\n  hint: write the two sets of names yourself, from reading the code; "
                        "then let autograd confirm it in the cells below the check")
