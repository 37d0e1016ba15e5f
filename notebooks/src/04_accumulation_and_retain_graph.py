# %% [markdown]
# # 4. Gradients accumulate, graphs are freed
#
# Two behaviours of `backward()` surprise almost everyone the first time, and both come from
# deliberate design decisions:
#
# 1. `backward()` **adds** into `.grad`; it never overwrites it.
# 2. After `backward()`, the graph's saved tensors are **freed**, so a second `backward()`
#    through the same graph fails, unless you asked for `retain_graph=True`.
#
# This lesson shows both, explains why they are the right defaults, and shows when
# `retain_graph=True` is the fix and when it only hides a bug.

# %%
import minigrad as torch

x = torch.tensor(2.0, requires_grad=True)
for i in range(3):
    y = x**2  # dy/dx = 2x = 4, every time
    y.backward()
    print(f"after backward #{i + 1}: x.grad =", x.grad)

# %% [markdown]
# The derivative is 4 each time, but `x.grad` reads 4, 8, 12: each call *added* its result.
# The `AccumulateGrad` node from lesson 2 is named for exactly this.
#
# ## Why add?
#
# Because the gradient of a sum is the sum of the gradients. If a parameter contributes to
# two losses, or you split a batch that does not fit in memory into pieces, calling
# `backward()` on each piece and letting the gradients add up gives exactly the gradient of
# the total:

# %%
a = torch.tensor([1.0, -2.0], requires_grad=True)
(a.sin().sum() + (a**3).sum()).backward()
together = a.grad.clone()

a.grad = None
a.sin().sum().backward()  # piece 1
(a**3).sum().backward()  # piece 2: adds to piece 1
print("one backward on the sum:", together)
print("two backwards, added:   ", a.grad)

# %% [markdown]
# ## Predict the sum
#
# The same rule works *inside* one graph: a tensor used several times gets the sum of the
# gradients of its uses, and `AccumulateGrad` then adds that sum into `.grad`. The player
# below asks you both before it shows them. `x.grad` already holds `[2, 4]` from a first
# `backward()`; then `y = 3x` is used three times in `y * y + y`, so the gradient arriving at
# `y` is $2y + 1$. Type your answers as values, like `[1, 2]`.

# %%
# NBVAL_IGNORE_OUTPUT
import viz

x = torch.tensor([1.0, 2.0], requires_grad=True)
(x * x).sum().backward()  # x.grad = 2x = [2, 4]
y = x * 3
loss = (y * y + y).sum()
player = viz.animate(loss, params={"x": x}, quiz=True, quiz_kinds=["sum", "accumulate"])
player

# %% reveal
print("\n".join(f"before step {q.step}: {q.prompt}" for q in player.quiz.questions))
print("x.grad after the animated backward:", x.grad)

# %% [markdown]
# ## Zeroing between steps
#
# The price: in a training loop, where every step wants a *fresh* gradient, you must clear
# `.grad` yourself before the next `backward()`. Two ways:
#
# - `x.grad = None`: drop the tensor; the next `backward()` creates a new one. This is what
#   `optimizer.zero_grad()` does by default in PyTorch 2 (`set_to_none=True`).
# - `x.grad.zero_()`: keep the tensor and fill it with zeros.
#
# The difference matters if you kept a reference to the old `.grad`, because accumulation
# happens **in place**:

# %%
x = torch.tensor(2.0, requires_grad=True)
(x**2).backward()
g = x.grad  # the same tensor object, not a copy
(x**2).backward()
print("x.grad:", x.grad, " g:", g, " same object:", g is x.grad)

x.grad.zero_()
print("after zero_():", x.grad, " g:", g)
x.grad = None
print("after = None: ", x.grad, " g:", g)

# %% [markdown]
# If you need a snapshot of a gradient, take `x.grad.clone()`.
#
# ## Backward through the graph a second time
#
# Now the other surprise. Call `backward()` twice on the same result:

# %%
w = torch.tensor([1.0, 2.0], requires_grad=True)
loss = (w * 3).sum()
loss.backward()
print("first backward: w.grad =", w.grad)
try:
    loss.backward()
except RuntimeError as err:
    print("RuntimeError:", err)

# %% [markdown]
# Lesson 2 showed that nodes keep **saved tensors**: `MulBackward0` keeps what it needs to
# compute its gradient. Those tensors can be big (every activation of a network), so
# `backward()` releases them as soon as each node has run. The graph structure is still there,
# but the values it needs are gone, and a second pass cannot run.
#
# The error appears only if a node on the path *saved* something. Addition's gradient is just
# "pass the gradient through", so `(b + 1).sum()` saves nothing and can be walked again:

# %%
b = torch.tensor([1.0, 2.0], requires_grad=True)
s = (b + 1).sum()
s.backward()
s.backward()  # no error: AddBackward0 and SumBackward0 saved nothing
print("b.grad after two passes:", b.grad)

# %% [markdown]
# ## When `retain_graph=True` is right
#
# `backward(retain_graph=True)` keeps the saved tensors, so the graph can be walked again.
# That is the right tool when you genuinely need **several backward passes through one forward
# pass**, for example separate gradients of two losses that share an expensive part:

# %%
w = torch.tensor([1.0, -1.0], requires_grad=True)
h = (w * torch.tensor([2.0, 3.0])).tanh()  # shared, expensive part
loss_a = h.sum()
loss_b = (h**2).sum()

loss_a.backward(retain_graph=True)  # keep h's graph for the second pass
grad_a = w.grad.clone()
w.grad = None
loss_b.backward()  # the last pass may free everything
print("d loss_a / dw:", grad_a)
print("d loss_b / dw:", w.grad)

# %% [markdown]
# (If you only need the gradient of `loss_a + loss_b`, skip all that: add the losses and call
# `backward()` once.)
#
# ## When `retain_graph=True` hides a bug
#
# The error message suggests `retain_graph=True`, and it makes the error go away. But most of
# the time, in a training loop, the error means something else: **part of the forward pass
# was computed once, outside the loop**, and every iteration walks back through that old
# piece of graph. Here the prediction is computed before the loop:

# %%
w = torch.tensor(1.0, requires_grad=True)
x, target = torch.tensor(2.0), torch.tensor(6.0)
pred = w * x  # BUG: computed once, outside the loop

for step in range(3):
    loss = (pred - target) ** 2
    try:
        loss.backward()
    except RuntimeError as err:
        print(f"step {step}: RuntimeError: {str(err)[:70]}...")
        break
    with torch.no_grad():  # update w without recording it (lesson 6)
        w -= 0.05 * w.grad
    w.grad = None
    print(f"step {step}: loss = {loss.item():.4f}, w = {w.item():.4f}")

# %% [markdown]
# Add `retain_graph=True` and the loop runs, but look at the loss: `pred` still holds the
# prediction made with the *first* `w`, so every step sees the same loss and the same
# gradient, and `w` walks straight past the answer (3.0):

# %%
w = torch.tensor(1.0, requires_grad=True)
x, target = torch.tensor(2.0), torch.tensor(6.0)
pred = w * x  # still outside the loop
for step in range(4):
    loss = (pred - target) ** 2
    loss.backward(retain_graph=True)  # silences the error...
    with torch.no_grad():
        w -= 0.05 * w.grad
    w.grad = None
    print(f"step {step}: loss = {loss.item():.4f}, w = {w.item():.4f}")  # ...but nothing learns

# %% [markdown]
# The real fix is to **recompute the forward pass inside the loop**, so every step builds a
# fresh graph from the current `w`. Ask yourself, whenever this error appears: *which tensor
# from an earlier backward pass am I still using?* If you meant to use its value but not
# differentiate through it again (a hidden state carried between steps of a recurrent
# network, for example), cut it loose with `.detach()` (lesson 6). Reach for
# `retain_graph=True` only when you really mean to backpropagate through the same forward
# computation twice.
#
# ## Exercise 4: fix the loop
#
# Write `train(x, target, steps, lr)` that fits `w` so that `w * x` matches `target` (the
# check uses `x = 2` and `target = 6`; start at `w = 1`), with the loss `(w * x - target) ** 2`
# and the update `w -= lr * w.grad`, as in the loops above. It has two bugs to avoid: the stale forward pass,
# and gradients that pile up between steps. Return `w` after `steps` updates.

# %% answer=4
def train(x, target, steps=20, lr=0.05):
    w = torch.tensor(1.0, requires_grad=True)
    # PLACEHOLDER: ...
    # SOLUTION
    for _ in range(steps):
        loss = (w * x - target) ** 2  # a fresh forward pass every step
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None  # a fresh gradient every step
    # END SOLUTION
    return w


print(train(torch.tensor(2.0), torch.tensor(6.0)))

# %% check=4 points=2
from minigrad_course import check_train

check_train(train)

# %%
# NBVAL_IGNORE_OUTPUT
# The whole lesson as one story: viz.session() records every backward(), zero_grad() and
# optimiser step of the block as steps with values before -> after (the update rule with its
# numbers), and shows the failing last call as its last step (which node's saved value was
# freed, and by which step) instead of stopping the notebook. The next cell prints the steps.
import viz

w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
x = torch.tensor([3.0, 4.0])
opt = torch.optim.SGD([w], lr=0.1)
with viz.session(params={"w": w, "x": x}) as story:
    loss = (w * x).sum()
    loss.backward(retain_graph=True)  # keeps the saved values for one more pass
    loss.backward()  # adds into w.grad, then frees the saved values
    opt.step()
    opt.zero_grad()
    loss.backward()  # the same graph again: its saved x is gone
story.player()

# %%
print(story.summary())

# %% [markdown]
# ## What to remember
#
# - `backward()` adds into `.grad`, in place. Clear it between steps (`x.grad = None` or
#   `optimizer.zero_grad()`), and `clone()` a gradient you want to keep.
# - `backward()` frees the saved tensors of the graph it walked. A second walk fails if any
#   node on the path had saved something.
# - `retain_graph=True` is for several backward passes through **one** forward pass. In a
#   training loop, "backward through the graph a second time" usually means a forward
#   computation that should be inside the loop (or detached) is not.
# - `with viz.session() as story:` replays several calls as one story (the cells above):
#   `story.player()` to step through it, `story.summary()` as text.
#
# Next: [5. Hooks and `retain_grad`](05_hooks.ipynb), to watch and change gradients in flight.

# %% hidden=4
def test_other_data(train):
    """train on data the check never uses (x = -1.5, target = 3, and x = 0.5, target = -2): catches a
    loop that hard-codes the check's x = 2 or target = 6 (both printed in the exercise)."""
    import math

    import minigrad as torch

    for x, target, steps, lr in [(-1.5, 3.0, 10, 0.02), (0.5, -2.0, 4, 0.3)]:
        w_ref = 1.0
        for _ in range(steps):
            w_ref -= lr * 2 * (w_ref * x - target) * x
        w = train(torch.tensor(x), torch.tensor(target), steps, lr)
        got = float(w.detach()) if isinstance(w, torch.Tensor) else w
        assert isinstance(got, float) and math.isclose(got, w_ref, rel_tol=1e-4, abs_tol=1e-6), (
            f"train(x={x}, target={target}, steps={steps}, lr={lr}) returned w = {got!r}, expected {w_ref:.6g}\n  "
            "hint: use the arguments x and target in the loss, (w * x - target) ** 2, not the check's numbers")
