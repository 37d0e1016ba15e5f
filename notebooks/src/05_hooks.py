# %% [markdown]
# # 5. Hooks and `retain_grad`
#
# The backward pass of lesson 3 runs out of sight: gradients are computed, passed on, and
# (except at leaves) thrown away. **Hooks** are functions you attach to a tensor or to a node
# so that autograd calls them *during* the backward pass, with the gradient in hand. A hook
# can look at a gradient (debugging, logging, visualising) or replace it (clipping, scaling,
# masking). This lesson covers tensor hooks, `retain_grad`, node hooks and prehooks, the
# order in which they fire, and how to remove them.

# %%
import minigrad as torch
import viz

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
handle = y.register_hook(lambda grad: print("hook on y sees", grad))

z = (y**2).sum()
z.backward()
print("x.grad:", x.grad)

# %% [markdown]
# ## Tensor hooks: `register_hook`
#
# `t.register_hook(fn)` asks autograd to call `fn(grad)` when the gradient of the loss with
# respect to `t` has been computed (here $\partial z / \partial y = 2y = [4, 8, 12]$). A hook
# that returns `None` only looks. The call returns a **handle**, and `handle.remove()` takes
# the hook off again. A hook on `y` lives as long as that graph does; a hook on a leaf stays
# for every backward pass that reaches the leaf, until you remove it:

# %%
handle.remove()

x_handle = x.register_hook(lambda grad: print("hook on x sees", grad))
(x * 3).sum().backward()  # the hook fires
x_handle.remove()
(x * 3).sum().backward()  # silence: the hook is gone
print("x.grad:", x.grad, " (8x from before, plus 3, plus 3)")

# %% [markdown]
# ## Hooks that change the gradient
#
# If the hook **returns a tensor**, that tensor replaces the gradient from then on: every
# node further back sees the new value. A common use is clipping the gradient of one
# intermediate result:

# %%
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
y.register_hook(lambda grad: grad.clamp(-5, 5))  # dz/dy = [4, 8, 12] becomes [4, 5, 5]
(y**2).sum().backward()
print("x.grad:", x.grad, " (unclipped it would be [8, 16, 24])")

# %% [markdown]
# ## `retain_grad`: keep a non-leaf's gradient
#
# Lesson 1 showed that `y.grad` stays `None` for non-leaves. `y.retain_grad()` is a built-in
# hook that stores the gradient in `y.grad`. It stores the value **after** all the tensor's
# hooks have run, whatever the order you registered them in:

# %%
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
y.retain_grad()
y.register_hook(lambda grad: grad * 10)  # registered after retain_grad, still seen by it
(y**2).sum().backward()
print("y.grad:", y.grad, " (= 10 * 2y)")
print("x.grad:", x.grad)

# %% [markdown]
# Hooks can only go on tensors that require grad (there would never be a gradient to hook):

# %%
try:
    torch.tensor([1.0, 2.0]).register_hook(lambda grad: grad)
except RuntimeError as err:
    print("RuntimeError:", err)

# %% [markdown]
# ## Node hooks and prehooks
#
# Nodes (`grad_fn` objects, `AccumulateGrad` included) take hooks too:
#
# - `node.register_prehook(fn)`: `fn(grad_outputs)` runs **before** the node computes, with a
#   tuple of the gradients arriving at the node; returning a tuple replaces them.
# - `node.register_hook(fn)`: `fn(grad_inputs, grad_outputs)` runs **after**, with what the
#   node computed for each input (`None` for inputs that need no gradient) and what it received.

# %%
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3


def halve(grad_outputs):
    print("prehook receives", grad_outputs)
    return (grad_outputs[0] * 0.5,)


def report(grad_inputs, grad_outputs):
    print("hook: grad_inputs =", grad_inputs, " grad_outputs =", grad_outputs)


y.grad_fn.register_prehook(halve)
y.grad_fn.register_hook(report)
y.sum().backward()
print("x.grad:", x.grad)

# %% [markdown]
# `grad_inputs` has a `None` for the constant 3, exactly like the `(None, 0)` entry in
# `next_functions`. (A node hook's return value replaces `grad_inputs` too, but changing a
# gradient on the tensor, or in a prehook, says more clearly what you mean.)
#
# ## The order of everything
#
# With every kind of hook registered on `y = x * 2`, one backward pass calls them in this
# order (the same as PyTorch 2.13):

# %%
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
acc = y.grad_fn.next_functions[0][0]  # x's AccumulateGrad node
log = []
y.register_hook(lambda g: log.append("tensor hook on y"))
y.grad_fn.register_prehook(lambda go: log.append("MulBackward0 prehook"))
y.grad_fn.register_hook(lambda gi, go: log.append("MulBackward0 hook"))
x.register_hook(lambda g: log.append("tensor hook on x (the leaf)"))
acc.register_prehook(lambda go: log.append("AccumulateGrad prehook"))
x.register_post_accumulate_grad_hook(lambda t: log.append("post-accumulate hook on x"))
acc.register_hook(lambda gi, go: log.append("AccumulateGrad hook"))
y.sum().backward()
print("\n".join(f"{i}. {entry}" for i, entry in enumerate(log, 1)))

# %% [markdown]
# The gradient of `y` is finished before `MulBackward0` starts, so `y`'s tensor hooks run
# first, then the node's prehook, the node, its hook; then the same pattern one node further
# back. `register_post_accumulate_grad_hook` (on leaves only) runs once `x.grad` has been
# updated; optimizers that step each parameter as soon as its gradient is ready use it.
#
# ## Hooks in the animation
#
# `viz.animate` runs the real backward pass, so your hooks fire in it and the player marks
# the steps where they did (and shows when a hook replaced a gradient). Here a clipping hook
# sits on `h`, and also notes what it did in a list, so we can print it afterwards:

# %%
fired = []


def clip(grad):
    fired.append(f"hook on h: {grad.tolist()} -> {grad.clamp(-2, 2).tolist()}")
    return grad.clamp(-2, 2)

# %%
# NBVAL_IGNORE_OUTPUT
x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 1.0, -2.0], requires_grad=True)
h = x * w
h.register_hook(clip)
loss = (h**2).sum()
player = viz.animate(loss, params={"x": x, "w": w})
player

# %%
print("\n".join(fired))
print(viz.summary(loss, params={"x": x, "w": w}))

# %% [markdown]
# ## Predict the order
#
# Now predict before you watch. The quiz player asks which node runs next and what a node
# sends; the clipping hook is on `h` again, so the gradient `MulBackward0` works with is the
# *clipped* one. The values are new (the player above already showed its gradients): work out
# `PowBackward0`'s output ($2h$), clip it to $[-2, 2]$, then multiply by `w` for `x`'s gradient.
# The cell under the player reveals the answers: run it after answering.

# %%
# NBVAL_IGNORE_OUTPUT
x = torch.tensor([1.0, 0.5, -1.5], requires_grad=True)
w = torch.tensor([2.0, -3.0, 1.0], requires_grad=True)
h = x * w
h.register_hook(lambda grad: grad.clamp(-2, 2))
loss = (h**2).sum()
player = viz.animate(loss, params={"x": x, "w": w}, quiz=True, quiz_kinds=["grad", "next"])
player

# %% reveal
print("\n".join(f"before step {q.step}: {q.prompt}" for q in player.quiz.questions))
print("x.grad =", x.grad)

# %% [markdown]
# ## Exercise 5: a clipping hook
#
# Write `clip_hook(grad)`, a tensor hook that limits every element of the gradient to the
# range $[-1, 1]$. The check registers it on an intermediate tensor, runs `backward()`, and
# compares the leaf's gradient with the expected clipped one.

# %% answer=5
def clip_hook(grad):
    # PLACEHOLDER: return ...
    # SOLUTION
    return grad.clamp(-1.0, 1.0)
    # END SOLUTION


# %% check=5 points=1
from minigrad_course import check_clip_hook

check_clip_hook(clip_hook)

# %% [markdown]
# ## What to remember
#
# - `tensor.register_hook(fn)`: `fn(grad)` during backward; return `None` to look, a tensor
#   to replace the gradient. `retain_grad()` keeps the (hooked) gradient in `.grad`.
# - `node.register_prehook(fn(grad_outputs))` runs before a node, `node.register_hook(fn(grad_inputs,
#   grad_outputs))` after it.
# - Every `register_*` returns a handle; `handle.remove()` undoes it.
#
# Next: [6. Turning autograd off](06_turning_autograd_off.ipynb).

# %% hidden=5
def test_matrix_gradient_in_a_real_backward(clip_hook):
    """On a float32 weight matrix, in a real backward pass: the leaf's .grad is clipped elementwise,
    float32 and 2-D, and the gradient the hook received is left as it was (a hook that mutates in place
    would change it under an observer hook registered first)."""
    import numpy as np

    import minigrad as torch

    W = torch.tensor(np.array([[0.5, -2.0], [1.5, 0.1]], dtype=np.float32), requires_grad=True)
    seen = []
    W.register_hook(lambda g: seen.append((g, g.detach().numpy().copy())))
    W.register_hook(clip_hook)
    X = torch.tensor(np.array([[3.0, -1.0], [0.2, 4.0]], dtype=np.float32))
    G = np.array([[1.0, -0.1], [0.05, 1.0]], dtype=np.float32)
    ((X @ W) * torch.tensor(G)).sum().backward()
    raw = X.numpy().T @ G  # [[3.01, -0.1], [-0.8, 4.1]]: two elements outside [-1, 1]
    assert W.grad is not None and W.grad.dtype == torch.float32 and tuple(W.grad.shape) == (2, 2), (
        f"with the hook on a float32 2x2 weight, W.grad is {W.grad!r}\n  hint: return grad.clamp(-1, 1): same "
        "shape, same dtype")
    assert np.allclose(W.grad.numpy(), np.clip(raw, -1, 1)), (
        f"W.grad is {W.grad.numpy().tolist()}, expected {np.clip(raw, -1, 1).tolist()}\n  hint: clamp every element")
    g, before = seen[0]
    assert np.array_equal(g.detach().numpy(), before), (
        "clip_hook changed the gradient it received, in place, during backward()\n  hint: return a new tensor "
        "(grad.clamp(-1, 1)); never modify the argument")


def test_double_backward(clip_hook):
    """With create_graph=True the clipped gradient stays differentiable (d/dx of the clip is 1 inside
    [-1, 1], 0 outside): catches a NumPy round trip (torch.tensor(np.clip(grad.numpy(), -1, 1))), which
    passes the check but cuts the graph of the gradient."""
    import numpy as np

    import minigrad as torch

    x = torch.tensor([0.004, -0.006, 0.002, 0.3], dtype=torch.float64, requires_grad=True)
    y = x * 5
    y.register_hook(clip_hook)
    (g,) = torch.autograd.grad((y**3).sum(), x, create_graph=True)  # 5 * clip(3 y^2): the last one clipped
    assert g.requires_grad, ("with create_graph=True the gradient through clip_hook no longer requires grad\n  "
                             "hint: build the result with tensor operations (grad.clamp(-1, 1)), not through NumPy")
    (gg,) = torch.autograd.grad(g.sum(), x)  # this pass goes through y's hook too: 30 y, inside [-1, 1] here
    yv = 5 * x.detach().numpy()
    want = 5 * np.clip(np.where(3 * yv**2 < 1, 30 * yv, 0.0), -1, 1)  # [3, -4.5, 1.5, 0]
    assert np.allclose(gg.numpy(), want), (f"the second derivative through clip_hook is {gg.numpy().tolist()}, "
                                           f"expected {want.tolist()}\n  hint: return grad.clamp(-1, 1)")
