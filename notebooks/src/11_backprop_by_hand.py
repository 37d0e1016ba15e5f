# %% [markdown]
# # 11. Backprop by hand
#
# `loss.backward()` is so convenient that it is easy to forget what it does. In "Building
# makemore part 4: becoming a backprop ninja", Andrej Karpathy has his students switch it off
# in their heads: they write out a two-layer network with batch normalization one small
# operation at a time, derive the gradient of the loss for *every* intermediate tensor by
# hand, and compare each with what autograd computed. This lesson is that exercise, on
# scikit-learn's digits instead of names.
#
# Why bother? Every bug in a gradient you will ever chase (a missing sum over the batch, a
# forgotten path through a mean, a transposed matrix) is one of the mistakes you make here,
# on a network small enough to find it. And `viz.compare` turns Karpathy's printed `cmp()`
# lines into a picture of the graph: each tensor you name is coloured by how close your
# gradient is to autograd's, and the first wrong one in backward order is pointed at.

# %%
import numpy as np
from sklearn.datasets import load_digits

import minigrad as torch
import viz

digits = load_digits()
rng = np.random.default_rng(42)
batch = rng.choice(len(digits.data), size=32, replace=False)
Xb = torch.tensor(digits.data[batch] / 16.0)  # 32 images of 64 pixels, float64
Yb = torch.tensor(digits.target[batch])  # their digits, 0-9
n, n_in, n_hidden, n_out = 32, 64, 24, 10

# Parameters, initialised small but not zero (zeros would hide wrong formulas that happen to give 0)
W1 = torch.tensor(rng.standard_normal((n_in, n_hidden)) * (5 / 3) / n_in**0.5, requires_grad=True)
b1 = torch.tensor(rng.standard_normal(n_hidden) * 0.1, requires_grad=True)
bngain = torch.tensor(1.0 + 0.1 * rng.standard_normal((1, n_hidden)), requires_grad=True)
bnbias = torch.tensor(0.1 * rng.standard_normal((1, n_hidden)), requires_grad=True)
W2 = torch.tensor(rng.standard_normal((n_hidden, n_out)) * 0.1, requires_grad=True)
b2 = torch.tensor(rng.standard_normal(n_out) * 0.1, requires_grad=True)
print(Xb.shape, Yb.shape, Xb.dtype)

# %% [markdown]
# ## The forward pass, one operation per line
#
# This is `cross_entropy(bn(x @ W1 + b1).tanh() @ W2 + b2, y)`, written out so that every
# intermediate tensor has a name. Batch normalization standardises each hidden unit over the
# batch (mean 0, variance 1, with the variance's $n - 1$ as PyTorch's `BatchNorm1d` uses for
# its running estimate), then scales and shifts it by `bngain` and `bnbias`. The cross-entropy
# is a softmax followed by the mean negative log-probability of the right class:
# `logprobs[range(n), Yb]` picks, in row `i`, the column `Yb[i]`: the log-probability of each
# image's right digit, as Karpathy writes it.

# %%
# layer 1 and batch norm
hprebn = Xb @ W1 + b1  # (32, 24) before batch norm
bnmeani = 1 / n * hprebn.sum(0, keepdim=True)  # (1, 24) the batch mean
bndiff = hprebn - bnmeani
bndiff2 = bndiff**2
bnvar = 1 / (n - 1) * bndiff2.sum(0, keepdim=True)  # (1, 24) Bessel's correction: n - 1
bnvar_inv = (bnvar + 1e-5) ** -0.5
bnraw = bndiff * bnvar_inv  # (32, 24) standardised
hpreact = bngain * bnraw + bnbias
# the non-linearity and layer 2
h = torch.tanh(hpreact)
logits = h @ W2 + b2  # (32, 10)
# cross-entropy, step by step
logit_maxes = logits.max(1, keepdim=True).values  # subtracted for numerical safety
norm_logits = logits - logit_maxes
counts = norm_logits.exp()
counts_sum = counts.sum(1, keepdim=True)
counts_sum_inv = counts_sum**-1
probs = counts * counts_sum_inv
logprobs = probs.log()
loss = -logprobs[range(n), Yb].mean()

names = dict(W1=W1, b1=b1, bngain=bngain, bnbias=bnbias, W2=W2, b2=b2, hprebn=hprebn, bnmeani=bnmeani,
             bndiff=bndiff, bndiff2=bndiff2, bnvar=bnvar, bnvar_inv=bnvar_inv, bnraw=bnraw, hpreact=hpreact,
             h=h, logits=logits, logit_maxes=logit_maxes, norm_logits=norm_logits, counts=counts,
             counts_sum=counts_sum, counts_sum_inv=counts_sum_inv, probs=probs, logprobs=logprobs)
print("loss:", round(loss.item(), 6))

# %% [markdown]
# ## Step 1: from the loss back to the logits
#
# Work backwards. `loss` is minus the mean of `n` picked entries of `logprobs`, so each picked
# entry gets $-1/n$ and every other entry 0. Then each line's local derivative times the
# gradient that arrived (the chain rule), with two rules that decide most shapes:
#
# - a tensor **broadcast** in the forward pass (`counts_sum_inv` is `(32, 1)`, used against
#   `(32, 10)`) gets its gradient **summed** over the broadcast dimension;
# - a tensor **used twice** (`counts` feeds both `probs` and `counts_sum`) gets the **sum** of
#   the gradients from both uses: here the second one is added with `+=`.
#
# The gradients are plain arithmetic on values, so they are computed under `no_grad()`.

# %%
with torch.no_grad():
    dlogprobs = torch.zeros_like(logprobs)
    dlogprobs[range(n), Yb] = -1.0 / n
    dprobs = (1.0 / probs) * dlogprobs
    dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)  # broadcast in the forward: summed
    dcounts = counts_sum_inv * dprobs
    dcounts_sum = -(counts_sum**-2) * dcounts_sum_inv
    dcounts += torch.ones_like(counts) * dcounts_sum  # counts' second use: += adds its gradient
    dnorm_logits = counts * dcounts  # d/dx e^x = e^x
    dlogits = dnorm_logits.clone()
    dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
    dlogits += torch.nn.functional.one_hot(logits.max(1).indices, num_classes=n_out) * dlogit_maxes

mine = dict(logprobs=dlogprobs, probs=dprobs, counts_sum_inv=dcounts_sum_inv, counts_sum=dcounts_sum,
            counts=dcounts, norm_logits=dnorm_logits, logit_maxes=dlogit_maxes, logits=dlogits)
print("dlogit_maxes (it should be ~0: the max only shifts the softmax):", dlogit_maxes.abs().max().item() < 1e-12)

# %% [markdown]
# `viz.compare` runs autograd for every tensor named in `mine` (without touching any `.grad`
# or `requires_grad` of yours, and keeping the graph) and colours each one: green **exact**
# (equal), yellow **close** (within rounding), vermillion **wrong**, with the largest
# difference. Unnamed nodes stay white.

# %%
# NBVAL_IGNORE_OUTPUT
cmp = viz.compare(loss, mine=mine, params=names)
cmp

# %%
print(cmp)

# %% [markdown]
# ## Step 2: layer 2 and tanh
#
# `logits = h @ W2 + b2` is a matrix product: the gradient of `h` is `dlogits @ W2.T` and of
# `W2` is `h.T @ dlogits` (check the shapes: each gradient has its tensor's shape, and there
# is only one way to multiply the pieces to get it). `b2` was broadcast over the batch:
# summed. And $\tanh'(x) = 1 - \tanh(x)^2$, written with the output `h` we already have.

# %%
with torch.no_grad():
    dh = dlogits @ W2.T
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dhpreact = (1.0 - h**2) * dh
mine.update(h=dh, W2=dW2, b2=db2, hpreact=dhpreact)
print(viz.compare(loss, mine=mine, params=names, draw=False))

# %% [markdown]
# ## Exercise 11: the batch-norm layer in one function
#
# Karpathy's hardest step: from `dhpreact` back through `hpreact = bngain * bnraw + bnbias`
# and the normalization to `hprebn`. Write `batchnorm_backward(dhpreact, bnraw, bnvar_inv,
# bngain)` that returns `(dhprebn, dbngain, dbnbias)`:
#
# - `dbngain` and `dbnbias` are easy: `bngain` and `bnbias` were broadcast over the batch
#   (mind their shape, `(1, 24)`);
# - `hprebn` reaches the loss **three** ways: directly through `bndiff`, through the mean
#   `bnmeani`, and through the variance `bnvar`. Derive each (step by step through `bnraw`,
#   `bnvar_inv`, `bnvar`, `bndiff2`, `bndiff`, `bnmeani`, comparing as you go) and add them.
#   Karpathy's fused result is one line: with $g$ = `dhpreact` and $\hat x$ = `bnraw`,
#   $\;\frac{\gamma\,\sigma^{-1}}{n}\left(n\,g - \sum_i g - \frac{n}{n-1}\,\hat x \sum_i g\,\hat x\right)$.
#
# The check builds a batch-norm layer of its own and compares your three gradients with
# autograd's through `viz.compare`.

# %% answer=11
def batchnorm_backward(dhpreact, bnraw, bnvar_inv, bngain):
    # PLACEHOLDER: return ...
    # SOLUTION
    n = dhpreact.shape[0]
    dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
    dbnbias = dhpreact.sum(0, keepdim=True)
    dhprebn = bngain * bnvar_inv / n * (
        n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw * (dhpreact * bnraw).sum(0)
    )
    return dhprebn, dbngain, dbnbias
    # END SOLUTION


# %% check=11 points=3
from minigrad_course import check_batchnorm_backward

check_batchnorm_backward(batchnorm_backward)

# %% [markdown]
# ## Every gradient, compared
#
# With the batch norm done, layer 1 is one more matrix product. Here is the whole network,
# every parameter and intermediate compared at once: the picture you would want on the first
# day you write a backward pass by hand. (Until exercise 11 works, it compares the gradients
# you have so far; run it again once the check says ✓.)

# %%
# NBVAL_IGNORE_OUTPUT
try:
    with torch.no_grad():
        dhprebn, dbngain, dbnbias = batchnorm_backward(dhpreact, bnraw, bnvar_inv, bngain)
        dW1 = Xb.T @ dhprebn
        db1 = dhprebn.sum(0)
    mine.update(hprebn=dhprebn, bngain=dbngain, bnbias=dbnbias, W1=dW1, b1=db1)
except Exception as err:  # exercise 11 not done yet: compare what there is
    print(f"batchnorm_backward does not work yet ({type(err).__name__}): layer 1 and the batch norm are left out")
everything = viz.compare(loss, mine=mine, params=names)
everything

# %%
print(everything)

# %% [markdown]
# ## A wrong gradient, found
#
# A classic slip: forgetting that `b2` was broadcast over the batch and taking one row
# (`dlogits[0]`) instead of the sum. Everything *before* it in backward order is still right,
# so the table's last line names the one to fix; in a longer chain, the gradients after the
# first wrong one are usually wrong too, only because they inherit it.

# %%
slip = dict(mine, b2=dlogits[0])
print(viz.compare(loss, mine=slip, params=names, draw=False))

# %% [markdown]
# ## What to remember
#
# - Backpropagation is the chain rule applied line by line, from the loss back: each tensor's
#   gradient is its line's local derivative times the gradient that arrived.
# - A gradient has its tensor's shape. A tensor broadcast in the forward pass gets its
#   gradient summed over the broadcast dimensions; a tensor used several times gets the sum of
#   the gradients of its uses.
# - A matrix product's gradients are products with the other factor transposed
#   (`dlogits @ W2.T`, `h.T @ dlogits`): let the shapes tell you the order.
# - `viz.compare(loss, mine={...}, params={...})` compares your gradients with autograd's,
#   exact / close / wrong, and points at the first wrong one in backward order.
#
# Next: [12. Debugging a custom Function](12_debugging_a_custom_function.ipynb).

# %% hidden=11
def test_other_batches_float32(batchnorm_backward):
    """Batches of 3 and 50 rows (the check's has 8) in float32: the three gradients match autograd's and keep
    the inputs' dtype and shapes. Catches the check's batch size written in (n = 8) instead of
    dhpreact.shape[0], and gradients built in float64 (through NumPy) or flattened."""
    import numpy as np

    import minigrad as torch

    for n, width, seed in ((3, 4, 1), (50, 2, 2)):
        rng = np.random.default_rng(seed)
        hprebn = torch.tensor(rng.standard_normal((n, width)) * 1.5 - 0.3, requires_grad=True)
        bngain = torch.tensor(1.0 + 0.2 * rng.standard_normal((1, width)), requires_grad=True)
        bnbias = torch.tensor(0.1 * rng.standard_normal((1, width)), requires_grad=True)
        bndiff = hprebn - hprebn.sum(0, keepdim=True) / n
        bnvar_inv = ((bndiff**2).sum(0, keepdim=True) / (n - 1) + 1e-5) ** -0.5
        bnraw = bndiff * bnvar_inv
        dhpreact = rng.standard_normal((n, width))
        want = torch.autograd.grad(bngain * bnraw + bnbias, (hprebn, bngain, bnbias), torch.tensor(dhpreact))
        args = [torch.tensor(np.asarray(a, dtype=np.float32)) for a in
                (dhpreact, bnraw.detach().numpy(), bnvar_inv.detach().numpy(), bngain.detach().numpy())]
        with torch.no_grad():
            got = batchnorm_backward(*args)
        assert isinstance(got, (tuple, list)) and len(got) == 3, (
            f"for a float32 batch of {n} rows batchnorm_backward returned {type(got).__name__}\n  hint: return "
            "dhprebn, dbngain, dbnbias")
        for name, g, w in zip(("dhprebn", "dbngain", "dbnbias"), got, want):
            assert isinstance(g, torch.Tensor) and tuple(g.shape) == tuple(w.shape) and g.dtype == torch.float32, (
                f"for a float32 batch of {n} rows, {name} is "
                f"{(g.dtype, tuple(g.shape)) if isinstance(g, torch.Tensor) else type(g).__name__}, expected "
                f"float32 of shape {tuple(w.shape)}\n  hint: compute with tensor operations on the arguments, which "
                "keep their dtype; a gradient has its tensor's shape")
            diff = float(np.abs(g.numpy() - w.numpy()).max())
            assert np.allclose(g.numpy(), w.numpy(), rtol=1e-3, atol=1e-4), (
                f"for a batch of {n} rows (the check's has 8) {name} is off by up to {diff:.3g}\n  hint: n is the "
                "batch size of the arguments, n = dhpreact.shape[0], not a number written in")


def test_by_hand_not_by_autograd(batchnorm_backward):
    """batchnorm_backward computes the gradients itself: no backward pass (backward() or autograd.grad) runs
    while it does. Catches an answer that rebuilds the forward pass from bnraw and bnvar_inv and lets autograd
    differentiate it, which passes the check but skips the exercise."""
    import numpy as np

    import minigrad as torch
    from minigrad.autograd import engine

    rng = np.random.default_rng(5)
    hprebn = rng.standard_normal((6, 3))
    bndiff = hprebn - hprebn.mean(0, keepdims=True)
    bnvar_inv = ((bndiff**2).sum(0, keepdims=True) / 5 + 1e-5) ** -0.5
    args = [torch.tensor(a) for a in (rng.standard_normal((6, 3)), bndiff * bnvar_inv, bnvar_inv,
                                      1.0 + 0.1 * rng.standard_normal((1, 3)))]
    passes = []
    run_backward = engine.run_backward

    def counting(*a, **kw):
        passes.append(1)
        return run_backward(*a, **kw)

    engine.run_backward = counting
    try:
        with torch.no_grad():
            batchnorm_backward(*args)
    finally:
        engine.run_backward = run_backward
    assert not passes, (
        f"batchnorm_backward ran {len(passes)} backward pass(es) of autograd to get its gradients\n  hint: the "
        "exercise is to derive them by hand (the chain rule through bnraw, bnvar_inv, bnvar, bndiff, bnmeani); "
        "autograd only checks them, through viz.compare")
