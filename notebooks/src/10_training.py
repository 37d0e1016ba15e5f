# %% [markdown]
# # 10. Training a network
#
# Everything so far comes together here. A neural network is a function with many leaf
# tensors (its *parameters*); a loss turns its output into one number; `backward()` fills
# every parameter's `.grad`; an optimizer nudges the parameters against their gradients; and
# a loop repeats that until the network is good at its task. Our task: recognise handwritten
# digits from 8×8 images, using scikit-learn's bundled `digits` data set (it ships with
# scikit-learn, so no download is needed).

# %%
import numpy as np
from sklearn.datasets import load_digits

import minigrad as torch
import viz
from minigrad import nn
from minigrad.utils.data import DataLoader, TensorDataset

digits = load_digits()
X = (digits.data / 16.0).astype(np.float32)  # 1797 images, 64 pixels each, scaled to [0, 1]
y = digits.target.astype(np.int64)  # the digit, 0-9

order = np.random.default_rng(0).permutation(len(X))  # a seeded shuffle, then an 80/20 split
train_idx, test_idx = order[:1437], order[1437:]
X_train, y_train = torch.tensor(X[train_idx]), torch.tensor(y[train_idx])
X_test, y_test = torch.tensor(X[test_idx]), torch.tensor(y[test_idx])
print("train:", X_train.shape, y_train.shape, " test:", X_test.shape, y_test.shape)
print("first labels:", y_train[:10])

# %% [markdown]
# ## A model: `nn.Module`
#
# `nn.Module` is a container that keeps track of parameters for you. Assign layers as
# attributes in `__init__` and describe the computation in `forward`; calling `model(x)` runs
# `forward`. Each `nn.Linear(in, out)` holds a weight matrix and a bias vector, created as
# leaf tensors with `requires_grad=True`, so every forward pass records a graph back to them.

# %%
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(64, 32)
        self.out = nn.Linear(32, 10)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


torch.manual_seed(0)  # the initial weights are random: seed them for a reproducible run
model = MLP()
print(model)
for name, p in model.named_parameters():
    print(f"{name:14s} shape={tuple(p.shape)}  is_leaf={p.is_leaf}  requires_grad={p.requires_grad}")

# %% [markdown]
# ## A loss
#
# The network outputs 10 numbers per image (*logits*), one score per digit.
# `nn.CrossEntropyLoss` turns scores into probabilities with a softmax and measures how
# much probability the correct digit got ($-\log p_\text{correct}$, averaged over the batch).
# Before training every digit is about equally likely, so the loss is near $\log 10 \approx 2.3$:

# %%
loss_fn = nn.CrossEntropyLoss()
logits = model(X_train[:8])
loss = loss_fn(logits, y_train[:8])
print("logits:", logits.shape, " loss:", loss)

# %% [markdown]
# The graph behind that loss is the one `backward()` will walk. `params=` gives the leaves
# their parameter names, and dashed boxes show which module (`hidden`, `out`) made each node:

# %%
# NBVAL_IGNORE_OUTPUT
viz.draw(loss, params=dict(model.named_parameters()))

# %%
print(viz.summary(loss, params=dict(model.named_parameters())))

# %% [markdown]
# Each `Linear` is an `AddmmBackward0` (a matrix product plus the bias) fed by a
# `TBackward0` (the weight is used transposed); `NllLossBackward0` and `LogSoftmaxBackward0`
# are the two halves of cross-entropy. The input batch does not require grad, so it appears
# as `None`.
#
# ## One step, animated
#
# A training step is always the same four lines: **zero** the old gradients, run the
# **forward** pass and the loss, **backward**, and let the optimizer **step**. Here is the
# backward pass of one step, node by node (`viz.animate` calls `loss.backward()` itself and
# replays it; press play). The cell after it prints the graph as text, now with a gradient
# for every parameter.

# %%
# NBVAL_IGNORE_OUTPUT
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
optimizer.zero_grad()
loss = loss_fn(model(X_train[:8]), y_train[:8])
player = viz.animate(loss, params=dict(model.named_parameters()))
player

# %%
print(viz.summary(loss, params=dict(model.named_parameters())))
print(next(frame.text for frame in player.frames if frame.text.startswith("AccumulateGrad (out.bias)")))
print("out.bias.grad.norm() =", model.out.bias.grad.norm())

# %% [markdown]
# Every parameter now has a `.grad` of its own shape. Gradients too big to print are written
# in the player as their shape and `‖g‖`, the gradient's *norm*: the square root of the sum of
# the squares of its elements, one number for how big the gradient is (`grad.norm()` computes
# it, as the last line shows).
#
# The optimizer's `step()` uses the gradients to update the parameters in place, under
# `no_grad` (lesson 6). Plain SGD does `p -= lr * p.grad`. With `momentum=0.9`, as here, SGD
# keeps a *velocity* for each parameter, `v = 0.9 * v + p.grad`, and steps `p -= lr * v`. On the
# first step the velocity is just the gradient, so the two agree; from the second step on the
# velocity also carries 0.9 times the previous steps, which speeds training up along directions
# the gradients keep pointing to:

# %%
before, grad_1 = model.out.bias.detach().clone(), model.out.bias.grad.clone()
optimizer.step()
print("out.bias.grad:      ", grad_1)
print("out.bias before:    ", before)
print("out.bias after step:", model.out.bias.detach())
print("step 1 is bias - lr * grad:", torch.allclose(model.out.bias, before - 0.1 * grad_1))

optimizer.zero_grad()  # a second step, on the same batch
loss_fn(model(X_train[:8]), y_train[:8]).backward()
before, grad_2 = model.out.bias.detach().clone(), model.out.bias.grad.clone()
optimizer.step()
print("step 2 is bias - lr * grad:", torch.allclose(model.out.bias, before - 0.1 * grad_2))
print("step 2 is bias - lr * (grad + 0.9 * previous velocity):",
      torch.allclose(model.out.bias, before - 0.1 * (grad_2 + 0.9 * grad_1)))

# %% [markdown]
# ## Exercise 10: the training step
#
# Write `train_step(model, loss_fn, optimizer, xb, yb)`: one complete step on the batch
# `(xb, yb)`, returning the loss as a Python number. The check runs it twice in a row on a
# fresh model and compares the parameters with a correct run, so the order matters
# (lesson 4 explains what goes wrong without zeroing).

# %% answer=10
def train_step(model, loss_fn, optimizer, xb, yb):
    # PLACEHOLDER: return ...
    # SOLUTION
    optimizer.zero_grad()
    loss = loss_fn(model(xb), yb)
    loss.backward()
    optimizer.step()
    return loss.item()
    # END SOLUTION


# %% check=10 points=2
from minigrad_course import check_train_step

check_train_step(train_step)

# %% [markdown]
# ## The training loop
#
# A `DataLoader` serves the training set in shuffled mini-batches (seeded, so the run is
# reproducible); one pass over all batches is an *epoch*. Inside, the four lines of a step,
# once per batch. The progress bar (`tqdm`) redraws one line while the loop runs; its timings
# change from run to run, so nbval ignores that cell, and the next cell prints the results.

# %%
# NBVAL_IGNORE_OUTPUT
import sys

from tqdm import tqdm

torch.manual_seed(0)
model = MLP()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = DataLoader(TensorDataset(X_train, y_train), batch_size=32, shuffle=True,
                    generator=torch.Generator().manual_seed(0))

epoch_losses = []
for _ in tqdm(range(10), desc="epochs", file=sys.stdout):
    model.train()
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(xb)
    epoch_losses.append(total / len(X_train))

# %%
model.eval()
with torch.no_grad():  # evaluation: no graph needed
    predicted = model(X_test).argmax(dim=1)
accuracy = (predicted == y_test).float().mean().item()

print("mean training loss per epoch:", ", ".join(f"{v:.3f}" for v in epoch_losses))
print(f"test accuracy: {accuracy:.1%} ({int((predicted == y_test).sum())} of {len(y_test)})")
print("accuracy >= 95%:", accuracy >= 0.95)

# %% [markdown]
# About 98% of the digits the network never saw are recognised, after 450 steps (10 epochs of
# 45 batches) that take a second or less on NumPy. The same code with `import torch` trains the
# same way (the random initial weights differ, so the numbers will too).
#
# ## What to remember
#
# - An `nn.Module` registers its layers' parameters; `model.parameters()` hands them to the
#   optimizer.
# - A step is `zero_grad()`, forward + loss, `backward()`, `step()`: the first four lessons in
#   four lines.
# - Evaluate under `no_grad()` (and `model.eval()`, which matters for layers like dropout).
#
# Next: [11. Backprop by hand](11_backprop_by_hand.ipynb), where you compute these gradients
# yourself.

# %% hidden=10
def test_other_loss_and_optimizer(train_step):
    """Three steps with a mean-squared-error loss and SGD with momentum (the check uses cross-entropy and
    plain SGD): the parameters and returned losses match a correct run. Catches a step that ignores its
    loss_fn or optimizer arguments (F.cross_entropy or a hand-written update in their place)."""
    import numpy as np

    import minigrad as torch

    def setup():
        rng = np.random.default_rng(1)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.tensor(rng.normal(size=tuple(p.shape)).astype(np.float32)))
        xb = torch.tensor(rng.normal(size=(5, 3)).astype(np.float32))
        yb = torch.tensor(rng.normal(size=(5, 2)).astype(np.float32))
        return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), xb, yb

    model, opt, xb, yb = setup()
    losses = [train_step(model, torch.nn.MSELoss(), opt, xb, yb) for _ in range(3)]
    ref_model, ref_opt, _, _ = setup()
    want = []
    for _ in range(3):
        ref_opt.zero_grad()
        loss = torch.nn.MSELoss()(ref_model(xb), yb)
        loss.backward()
        ref_opt.step()
        want.append(loss.item())
    assert all(isinstance(v, (float, int)) for v in losses) and np.allclose(losses, want, rtol=1e-5), (
        f"with MSELoss and SGD(momentum=0.9) train_step returned the losses {losses}, expected {want}\n  hint: use "
        "the loss_fn and optimizer you are given: loss = loss_fn(model(xb), yb), optimizer.step()")
    for p, q in zip(model.parameters(), ref_model.parameters()):
        assert np.allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6), (
            "with MSELoss and SGD(momentum=0.9) the parameters differ from a correct run after 3 steps\n  hint: "
            "optimizer.zero_grad(); loss = loss_fn(model(xb), yb); loss.backward(); optimizer.step()")
