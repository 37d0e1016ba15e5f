# %% [markdown]
# # 6. Turning autograd off
#
# Recording a graph costs time and memory: every operation allocates a node and keeps saved
# tensors alive until `backward()`. Much of the time you do not want that: when you evaluate a
# model, when you update parameters, when you log a metric, when you convert a tensor to
# NumPy. PyTorch gives you several switches. They differ in *scope* (a block of code, or one
# tensor) and in *strictness*; this lesson goes through all of them, including the legacy
# names you will meet in old code.

# %%
import minigrad as torch

x = torch.tensor([1.0, 2.0], requires_grad=True)

with torch.no_grad():
    y = x * 2
print(y, "requires_grad:", y.requires_grad, " grad_fn:", y.grad_fn)
print("grad mode back on after the block:", torch.is_grad_enabled())

# %% [markdown]
# ## `no_grad`: a block that records nothing
#
# Inside `with torch.no_grad():` operations run normally, but no graph is recorded: results
# have `requires_grad=False`, even when their inputs require grad. The classic uses:
#
# - **evaluation**: a forward pass whose result you will not differentiate;
# - **parameter updates**: `w -= lr * w.grad` must not itself become part of the graph (and an
#   in-place change of a leaf that requires grad is an error outside `no_grad`, lesson 9).
#
# It also works as a decorator, and `enable_grad()` switches recording back on inside it:

# %%
@torch.no_grad()
def evaluate(t):
    return (t * 2).sum()


print("decorated:", evaluate(x).requires_grad)

with torch.no_grad():
    with torch.enable_grad():
        print("enable_grad inside no_grad:", (x * 2).requires_grad)

# %% [markdown]
# ## `set_grad_enabled`: on or off, decided at run time
#
# `torch.set_grad_enabled(mode)` takes a boolean, which makes it the natural switch for code
# shared by training and evaluation:

# %%
def run_epoch(train):
    with torch.set_grad_enabled(train):
        out = (x * 3).sum()
    return out.requires_grad


print("train=True: ", run_epoch(True))
print("train=False:", run_epoch(False))

# %% [markdown]
# ## `inference_mode`: no_grad, stricter and faster
#
# `torch.inference_mode()` is `no_grad` plus a promise: the tensors created inside will
# **never** be used in autograd later. In PyTorch that promise lets it skip even the
# bookkeeping that `no_grad` keeps (the version counters of lesson 9), which makes pure
# inference a little faster. Break the promise and you get an error:

# %%
with torch.inference_mode():
    i = x * 2
print(i, "requires_grad:", i.requires_grad, " is_inference:", i.is_inference())

try:
    (i * x).sum().backward()
except RuntimeError as err:
    print("RuntimeError:", err)

# %% [markdown]
# Use `inference_mode` for serving a model or computing predictions you will only look at;
# use `no_grad` when results may flow back into training (for example a target computed by
# another network).
#
# ## `detach()`: one tensor, cut from the graph
#
# The switches above act on a *block*. `t.detach()` acts on one tensor: it returns a new
# tensor with the same values (and the same memory) that is a leaf with no history. Gradient
# does not flow back through a detached tensor, which is how you say "treat this value as a
# constant":

# %%
z = x * 3
c = z.detach()
print(c, "requires_grad:", c.requires_grad, " is_leaf:", c.is_leaf)

(z * c).sum().backward()  # d/dx (3x * const) = 3 * const; the constant's own history is ignored
print("x.grad:", x.grad)

# The everyday use: handing values to NumPy or a plotting library.
try:
    z.numpy()
except RuntimeError as err:
    print("RuntimeError:", err)
print(z.detach().numpy())

# %% [markdown]
# ## `.data`: the old, dangerous way
#
# Before `detach()` existed, code reached into `t.data`. It also gives the values without
# history, but with one crucial difference: `.data` **does not share the version counter**
# (lesson 9), so autograd cannot notice when you change it in place. The same mistake, made
# both ways:

# %%
a = torch.tensor([1.0, 2.0], requires_grad=True)
correct = (a.sigmoid() * (1 - a.sigmoid())).detach()  # d sigmoid(a) / da

s = a.sigmoid()
s.data.add_(1)  # changes the saved output behind autograd's back
s.sum().backward()
print("with .data:  a.grad =", a.grad, " (silently wrong)")
print("correct:             ", correct)

a.grad = None
s = a.sigmoid()
s.detach().add_(1)  # the same change through detach()...
try:
    s.sum().backward()
except RuntimeError as err:
    print("with detach(): RuntimeError:", err)  # ...is caught

# %% [markdown]
# `SigmoidBackward0` saved its output to compute $\sigma(1 - \sigma)$. Through `.data` the
# output became $\sigma + 1$ and the gradient came out wrong without a word. Through
# `detach()` the version counter moved and `backward()` refused. **Use `detach()`.** The only
# common legitimate `.data` in modern code is inside an optimizer that is already under
# `no_grad`, and even there `with torch.no_grad(): w -= ...` says the same thing more clearly.
#
# ## The legacy `Variable` and `volatile`
#
# Before PyTorch 0.4 (2018), tensors could not require grad. You wrapped them in a
# `Variable` to record operations, and `Variable(t, volatile=True)` meant "never record
# anything that touches this", the ancestor of `no_grad`. Since 0.4 every tensor is a
# Variable: `Variable(t)` survives only so old code runs, and returns a plain tensor.
# `volatile` does nothing at all, except warn:

# %%
from minigrad.autograd import Variable

v = Variable(torch.ones(2), requires_grad=True)
print(v, type(v).__name__, " isinstance(v, Variable):", isinstance(v, Variable))

old = Variable(torch.ones(2), volatile=True)  # old code: "no graph for anything using old"
r = old * x
print("r.requires_grad:", r.requires_grad, " (a graph is recorded after all)")

# %% [markdown]
# Old code with `volatile=True` therefore runs, prints a warning, and silently records graphs
# it used to skip, costing memory during evaluation. The translation table:
#
# | old code | today |
# |---|---|
# | `Variable(t)` | `t` |
# | `Variable(t, requires_grad=True)` | `t.requires_grad_()`, or `torch.tensor(..., requires_grad=True)` |
# | `Variable(t, volatile=True)` | run the code inside `with torch.no_grad():` (or `inference_mode()`) |
# | `v.data` to get the values | `v.detach()` |
# | `v.data[0]` / `loss.data[0]` to get a number | `v[0].item()` / `loss.item()` |
#
# ## Exercise 6a: does it require grad?
#
# For each snippet, predict whether `r.requires_grad` is `True` or `False` (here `x` requires
# grad). Fill in the dictionary with booleans.
#
# | key | snippet |
# |---|---|
# | `"a"` | `with torch.no_grad(): r = x * 2` |
# | `"b"` | `r = x.detach() * 2` |
# | `"c"` | `with torch.no_grad(): r = x` |
# | `"d"` | `with torch.set_grad_enabled(False): r = (x * 2).requires_grad_()` |
# | `"e"` | `with torch.inference_mode(): r = x + 1` |
# | `"f"` | `r = Variable(torch.ones(2), volatile=True) * x` |

# %% answer=6a
# PLACEHOLDER: answers = {"a": ..., "b": ..., "c": ..., "d": ..., "e": ..., "f": ...}
# SOLUTION
answers = {"a": False, "b": False, "c": True, "d": True, "e": False, "f": True}
# END SOLUTION

# %% check=6a points=1
from minigrad_course import check_grad_quiz

check_grad_quiz(answers)

# %% [markdown]
# ## Exercise 6b: an evaluation helper
#
# During training you regularly measure how the model does on data it does not learn from.
# Nothing will ever call `backward()` on those numbers, so recording a graph for them only
# costs time and memory: every node keeps its saved tensors alive, which for a real network
# means every activation of the whole validation set.
#
# Write `evaluate(w, inputs, labels)` for a tiny linear classifier with weights `w` (which
# requires grad, because training updates it). It returns the pair `(loss, accuracy)`:
#
# - `scores = inputs @ w`, one score per row;
# - `loss = F.binary_cross_entropy_with_logits(scores, labels)`, the logistic loss (`F` is
#   `torch.nn.functional`, PyTorch's module of functions behind the layers and losses);
# - `accuracy`: the fraction of rows where the prediction, 1 when the score is `> 0` and 0
#   otherwise, equals the label.
#
# It must not record a graph at all (the check watches what the nodes save), and grad mode must
# be on again when it returns. `loss` and `accuracy` may be tensors or Python numbers.

# %% answer=6b
F = torch.nn.functional


def evaluate(w, inputs, labels):
    # PLACEHOLDER: return ...
    # SOLUTION
    with torch.no_grad():
        scores = inputs @ w
        loss = F.binary_cross_entropy_with_logits(scores, labels)
        accuracy = ((scores > 0).float() == labels).float().mean()
    return loss, accuracy
    # END SOLUTION


w = torch.tensor([1.0, -1.0], requires_grad=True)
inputs = torch.tensor([[2.0, 1.0], [0.0, 3.0], [1.0, 0.5], [1.0, 2.0]])
labels = torch.tensor([1.0, 0.0, 0.0, 0.0])
print(evaluate(w, inputs, labels))

# %% check=6b points=2
from minigrad_course import check_evaluate

check_evaluate(evaluate)

# %% [markdown]
# ## What to remember
#
# - `no_grad()` / `set_grad_enabled(False)`: a block that records nothing; use it for
#   evaluation and parameter updates. `set_grad_enabled(mode)` when the choice is a variable.
# - `inference_mode()`: like `no_grad`, stricter (its tensors can never enter autograd later)
#   and a little faster in PyTorch.
# - `detach()`: one tensor without history, sharing memory *and* the version counter.
#   `.data` shares the memory but not the counter: avoid it.
# - `Variable` and `volatile` are history: `Variable(t)` is `t`, and `volatile=True` is
#   `with torch.no_grad():`.
#
# Next: [7. Custom `autograd.Function`](07_custom_function.ipynb).

# %% hidden=6a
import ast


def _cell_assigning_answers(env):
    """The source of the last cell the learner ran that assigns ``answers`` (IPython's ``In``), or None."""
    for source in reversed(list(env.get("In") or [])):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        if any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == "answers" for n in ast.walk(tree)):
            return tree
    return None


def test_predicted_not_computed(env):
    """The six answers are typed in, not computed by running the snippets (.requires_grad, no_grad(),
    Variable in the answer cell): a computed quiz passes the check but predicts nothing."""
    tree = _cell_assigning_answers(env)
    if tree is None:
        return
    ran = sorted({f".{n.attr}" for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in {
        "requires_grad", "requires_grad_", "detach", "no_grad", "inference_mode", "set_grad_enabled",
        "enable_grad"}} | {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
                           and n.id in {"Variable", "globals", "eval", "exec"}})
    assert not ran, (f"the answer cell runs the snippets ({', '.join(ran)}) instead of predicting them\n  hint: "
                     "fill the dict with True and False from reading each snippet; the lesson above has the rules")


# %% hidden=6b
def test_leaves_w_alone(evaluate):
    """evaluate leaves the caller's w as it was: still a leaf that requires grad, same version, no .grad.
    Catches w.requires_grad_(False) or w.detach_() to "turn autograd off", which the check's fresh w
    cannot see but which stops the model from training afterwards."""
    import warnings

    import minigrad as torch

    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    inputs = torch.tensor([[1.0, 0.0, 1.0], [0.5, 2.0, -1.0], [-1.0, 1.0, 0.0]])
    labels = torch.tensor([1.0, 0.0, 0.0])
    version = w._version
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluate(w, inputs, labels)
    assert w.requires_grad and w.is_leaf and w.grad is None and w._version == version, (
        "evaluate() changed the caller's w (it no longer requires grad, or was modified in place), so training "
        "it afterwards no longer works\n  hint: switch recording off with `with torch.no_grad():` around the "
        "computation, not by changing w")


def test_keeps_the_callers_mode(evaluate):
    """Called inside the caller's no_grad() block, evaluate leaves grad mode off: catches a
    set_grad_enabled(False) ... set_grad_enabled(True) pair, which passes the check (it only calls
    evaluate with grad mode on) but switches recording back on inside the caller's block."""
    import warnings

    import minigrad as torch

    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    inputs = torch.tensor([[1.0, 0.0, 1.0], [0.5, 2.0, -1.0]])
    labels = torch.tensor([1.0, 0.0])
    try:
        with torch.no_grad():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                evaluate(w, inputs, labels)
            mode = torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)
    assert not mode, ("evaluate() switched grad mode on inside the caller's `with torch.no_grad():` block\n  hint: "
                      "`with torch.no_grad():` restores whatever mode was on before; set_grad_enabled(True) at "
                      "the end forces it on")
