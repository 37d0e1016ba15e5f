# %% [markdown]
# # 9. In-place operations and version counters
#
# An in-place operation changes a tensor's memory instead of making a new tensor: methods
# ending in an underscore (`add_`, `mul_`, `zero_`, `clamp_`), augmented assignment
# (`t += 1`), and item assignment (`t[0] = 5`). They save memory, and they are how
# parameters get updated. They also clash with something autograd relies on: **the tensors a
# node saved for the backward pass must still hold the values they had in the forward pass.**
# This lesson shows how autograd notices when they do not, the two errors you will meet, and
# how to fix the code that triggers them.

# %%
import minigrad as torch
import viz

a = torch.tensor([1.0, 2.0, 3.0])
print("fresh:      _version =", a._version)
a.add_(1)
print("a.add_(1):  _version =", a._version)
a[0] = 5
print("a[0] = 5:   _version =", a._version)
a += 1
print("a += 1:     _version =", a._version)
b = a * 1
print("b = a * 1:  b._version =", b._version, " (a new tensor starts at 0)")

# %% [markdown]
# ## The version counter
#
# Every tensor carries `_version`, a counter that every in-place operation increments. It
# belongs to the *memory*, not to the Python object: a view (`a[1:]`) and a `detach()`ed
# tensor share it with their base, because writing through them changes the same numbers.

# %%
v = a[1:]  # a view: same memory
v.mul_(2)
print("after v.mul_(2): a._version =", a._version, " v._version =", v._version, " a =", a)

d = a.detach()  # same memory, same counter
d.zero_()
print("after d.zero_(): a._version =", a._version, " a =", a)

# %% [markdown]
# When a node saves a tensor for backward, it also notes the tensor's version at that moment.
# When the backward pass reaches the node, it compares: if the version moved, the saved values
# are not the ones the forward pass used, and the gradient would be wrong.
#
# ## Error 1: a saved tensor was modified
#
# `z = p * q` saves both factors ($\partial z / \partial q = p$). Change `p` afterwards and the
# backward pass refuses:

# %%
x = torch.tensor([1.0, 2.0], requires_grad=True)
q = torch.tensor([3.0, 4.0], requires_grad=True)
p = x * 2
z = p * q  # MulBackward0 saves p (at version 0) and q
p.add_(1)  # p is now at version 1
try:
    z.sum().backward()
except RuntimeError as err:
    print("RuntimeError:", err)

# %% [markdown]
# Read the message from the left: the tensor is a `[minigrad.FloatTensor [2]]` (that is `p`),
# "output 0 of Add" (after `p.add_(1)`, `p`'s latest history is that in-place add), "at
# version 1; expected version 0". The check applies **only to tensors a node saved**.
# Addition saves nothing (its gradient does not depend on the values), so the same change
# after `p + q` is harmless:

# %%
p = x * 2
z = p + q  # AddBackward0 saves nothing
p.add_(1)
z.sum().backward()
print("x.grad:", x.grad)

# %% [markdown]
# ## Why the check exists
#
# Without it, you would get a wrong gradient and no warning. `.data` (lesson 6) bypasses the
# version counter, so it shows what the check protects you from:

# %%
x.grad, q.grad = None, None
p = x * 2
z = p * q
p.data.add_(1)  # the same change, hidden from the version counter
z.sum().backward()
print("q.grad:", q.grad, " but dz/dq = p as it was in the forward pass =", (x * 2).detach())

# %% [markdown]
# `q.grad` used the modified `p`: off by one everywhere, silently. That is the bug the error
# message saves you from, so treat it as a friend, not an obstacle.
#
# ## Error 2: in-place on a leaf that requires grad
#
# A leaf that requires grad is something you want the derivative *with respect to*. Changing
# it in place while recording would make it the output of an operation, so it would no longer
# be the starting point of the graph. Autograd forbids it, for the leaf and for its views:

# %%
w = torch.tensor([1.0, 2.0], requires_grad=True)
try:
    w.add_(1)
except RuntimeError as err:
    print("RuntimeError:", err)
try:
    w[0] = 5.0
except RuntimeError as err:
    print("RuntimeError:", err)

with torch.no_grad():  # the fix for parameter updates: do not record them
    w.add_(1)
print(w, "_version:", w._version)

# %% [markdown]
# That is why every optimizer step runs under `no_grad`: the update is in place, on leaves
# that require grad, and must not be part of the graph.
#
# ## In-place on a non-leaf: allowed, and recorded
#
# Writing into a computed tensor is fine when nothing saved it. `c[0] = 10.0` records a
# `CopySlices` node: the gradient flows to the part of `c` that was not overwritten, and the
# overwritten element gets none:

# %%
x.grad = None
c = x.clone()
c[0] = 10.0
print(c, c.grad_fn.name())
c.sum().backward()
print("x.grad:", x.grad, " (x[0] was overwritten, so it has no influence)")

# %%
# NBVAL_IGNORE_OUTPUT
viz.draw(c, params={"x": x})

# %%
print(viz.summary(c, params={"x": x}))

# %% [markdown]
# ## The story of a version error
#
# The error comes long after the line that caused it. `viz.session(source=True)` keeps both
# ends together: the in-place op that bumped the version counter (with the line that did it)
# and the backward that failed on it, with the saved value's version then and now. Step through
# it in the player (the next cell prints the same steps as text).

# %%
# NBVAL_IGNORE_OUTPUT
x = torch.tensor([1.0, 2.0], requires_grad=True)
with viz.session(params={"x": x}, source=True) as story:
    y = x.exp()  # ExpBackward0 saves its result, y itself
    y.mul_(2)  # in place: y's version goes from 0 to 1
    y.sum().backward()
story.player()

# %%
print(story.summary())

# %% [markdown]
# ## Fixing code that triggers the error
#
# When you meet "modified by an inplace operation":
#
# 1. **Find the tensor.** The message gives its shape and the operation that last wrote it.
#    If that is not enough, `torch.autograd.set_detect_anomaly(True)` reports which forward
#    operation's saved value was broken.
# 2. **Make the operation out of place**: `y = y + 1` instead of `y += 1`,
#    `torch.relu(h)` instead of `h.relu_()`. Memory is cheap compared to a wrong gradient.
# 3. Or **`clone()` before** modifying, if you need both the old and the new values.
# 4. Or **move the in-place operation before** the operation that saves the tensor.
#
# ## Exercise 9: repair softplus
#
# `softplus(x) = log(1 + e^x)`, and its derivative is the sigmoid $1 / (1 + e^{-x})$. The
# implementation below fails in `backward()`. Write `softplus_fixed(x)` that computes the same
# values and lets gradients flow (do not modify `x` either).

# %%
def softplus_buggy(x):
    y = x.exp()
    y += 1
    return y.log()


x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
try:
    softplus_buggy(x).sum().backward()
except RuntimeError as err:
    print("RuntimeError:", str(err).split(":")[0], "...")

# %% answer=9
def softplus_fixed(x):
    # PLACEHOLDER: return ...
    # SOLUTION
    y = x.exp()
    return (y + 1).log()  # out of place: ExpBackward0's saved result stays intact
    # END SOLUTION


# %% check=9 points=1
from minigrad_course import check_softplus

check_softplus(softplus_fixed)

# %% [markdown]
# ## What to remember
#
# - Every in-place operation bumps `_version`, which is shared by views and `detach()`ed
#   tensors (but not by `.data`).
# - Nodes remember the versions of the tensors they saved; a mismatch at backward time is the
#   "modified by an inplace operation" error. Only saved tensors are checked.
# - In-place on a leaf that requires grad is an error; parameter updates go under `no_grad`.
# - Fix by going out of place, cloning, or reordering. Never silence it with `.data`.
#
# Next: [10. Training a network](10_training.ipynb).

# %% hidden=9
def test_other_input(softplus_fixed):
    """A 2-D float32 input with values the check never uses: right values and gradient (sigmoid), dtype
    and shape kept, x untouched. Catches an answer that returns the check's printed values (and a
    gradient fitted to them) rather than computing softplus."""
    import numpy as np

    import minigrad as torch

    values = np.array([[-1.5, 0.25], [2.0, -3.0]], dtype=np.float32)
    x = torch.tensor(values, requires_grad=True)
    y = softplus_fixed(x)
    assert isinstance(y, torch.Tensor) and tuple(y.shape) == (2, 2) and y.dtype == torch.float32, (
        f"for a float32 2x2 x softplus_fixed returned {y!r}\n  hint: tensor operations on x keep its shape and dtype")
    want = np.log1p(np.exp(values.astype(np.float64)))
    assert np.allclose(y.detach().numpy(), want, rtol=1e-5), (
        f"softplus_fixed gives {y.detach().numpy().tolist()}, expected {want.tolist()}\n  hint: log(1 + e^x), "
        "computed from x")
    y.sum().backward()
    sig = 1 / (1 + np.exp(-values.astype(np.float64)))
    assert x.grad is not None and np.allclose(x.grad.numpy(), sig, rtol=1e-5), (
        f"the gradient is {None if x.grad is None else x.grad.numpy().tolist()}, expected sigmoid(x) = "
        f"{sig.tolist()}\n  hint: build the result from x with out-of-place operations")
    assert np.array_equal(x.detach().numpy(), values), "softplus_fixed changed x\n  hint: leave x alone"
