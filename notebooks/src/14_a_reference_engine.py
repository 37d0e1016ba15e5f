# %% [markdown]
# # 14. An engine you can read: reverse mode in 120 lines
#
# Every lesson so far used autograd from the outside. This one opens it. minigrad's real engine
# spans thousands of lines, most of them for PyTorch's details (hooks, versions, freeing the
# graph, `create_graph`). Underneath is a small idea, and it fits in one file:
# [`minigrad/reference/engine.py`](../minigrad/reference/engine.py), 120 lines of Python over
# NumPy. We build it up piece by piece here, run it, draw it with `viz`, train a small network
# with it, and then read minigrad's real `GraphTask.run` beside it: what the real engine adds,
# and why.
#
# The reference engine imports nothing but NumPy. Its names are PyTorch's (`grad_fn`,
# `next_functions`, `MulBackward0`, `AccumulateGrad.variable`), so everything lessons 2 and 3
# taught about graphs applies to it, and `viz` draws it as it draws PyTorch's graphs.

# %%
import inspect

import numpy as np

import minigrad as torch
import viz
from minigrad.reference import engine
from minigrad.reference.engine import Node, Tensor, record


def show(obj):
    """Print the source of a piece of the reference engine."""
    print(inspect.getsource(obj).rstrip(), end="\n\n")


# %% [markdown]
# ## 1. A tensor, and what an operation records
#
# A `Tensor` holds a NumPy array in `.data`. A tensor you make yourself is a *leaf*
# (`grad_fn` is `None`); `requires_grad=True` asks for its gradient. An operation computes its
# value with NumPy and hands it to `record`, with the node's name, the inputs, and one more thing:
# a function `backward(g)` that turns the gradient `g` of the output into one gradient per input.
# That function is the operation's *local derivative*. `record` makes the result, and a `Node`
# only when an input needs a gradient. For `y = x * w`: $\partial y/\partial x = w$ and
# $\partial y/\partial w = x$, so the gradients are `g * w` and `g * x` (`unbroadcast` sums a
# gradient back to an input's shape when broadcasting stretched that input). The node does not
# compute them now; it keeps the function for later, and its `next_functions` say where each
# gradient goes.
#
# The gradient of a leaf goes to its `AccumulateGrad` node (`gradient_node()` makes it the
# first time it is asked), and a tensor that needs no gradient gives `(None, 0)`, as in PyTorch.
# `viz` reads the same attributes (`name()`, `next_functions`, `variable`), so it draws this graph
# as it would draw minigrad's or PyTorch's.

# %%
show(Tensor.__init__)
show(record)
show(Tensor.__mul__)
show(Node)

x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
w = Tensor([0.5, -1.0, 2.0], requires_grad=True)
c = Tensor([1.0, 1.0, 1.0])
y = x * w + c
loss = y.tanh().sum()
print(loss)
print(loss.grad_fn.name(), loss.grad_fn.next_functions)
add = loss.grad_fn.next_functions[0][0].next_functions[0][0]
print(add.name(), add.next_functions)
mul = add.next_functions[0][0]
print(mul.name(), [(n.name(), n.variable is x or n.variable is w) for n, _ in mul.next_functions])

# %%
# NBVAL_IGNORE_OUTPUT
viz.draw(loss, params={"x": x, "w": w})

# %%
print(viz.summary(loss, params={"x": x, "w": w}))

# %% [markdown]
# ## 2. The chain rule, one node at a time
#
# Each node knows only its own local derivative. Call them by hand, from the loss down, and you
# have done backpropagation: the gradient of `loss` with respect to itself is 1, and each node
# turns the gradient of its output into the gradients of its inputs.

# %%
g_sum = np.ones(())                                  # d loss / d loss
(g_tanh,) = loss.grad_fn.backward(g_sum)             # SumBackward0: spread it to every element
tanh = loss.grad_fn.next_functions[0][0]
(g_add,) = tanh.backward(g_tanh)                     # TanhBackward0: times 1 - tanh²
g_mul, g_c = add.backward(g_add)                     # AddBackward0: the same gradient to both inputs
g_x, g_w = mul.backward(g_mul)                       # MulBackward0: times the other factor
print("d loss / d x =", g_x)
print("d loss / d w =", g_w)
print("by hand:      ", (1 - np.tanh(x.data * w.data + 1) ** 2) * w.data)

# %% [markdown]
# That is all the calculus there is. What remains is bookkeeping: in which order to call the
# nodes, and what to do when one tensor is used twice.
#
# ## 3. Waiting for every gradient, and the loop
#
# When a tensor feeds several operations, its node receives one gradient from each, and the
# gradient it must pass on is their **sum**. So it may run only after *all* of them have arrived.
# Before it starts, the engine counts how many edges lead into each node (`count_dependencies`).
# A node is *ready* when its count reaches zero; the loop in `backward` takes a ready node, runs
# its local derivative on the summed gradient, and hands each result along its edge, adding it to
# what that node already received. The `AccumulateGrad` nodes at the end add what reaches them
# into the leaves' `.grad` (lesson 4: `backward()` *adds*). The first gradient a leaf gets is
# copied: `a + b` sends one and the same array to both `a` and `b`, and two leaves sharing one
# array would change together. (minigrad's engine skips that copy when it knows that nothing else
# holds the array: a formula made it in this backward and sent it to that leaf alone.)

# %%
show(engine.count_dependencies)
show(Tensor.backward)
show(engine.AccumulateGrad)

h = x.tanh()
z = (h * h + h).sum()                                 # h is used three times
for node, count in engine.count_dependencies(z.grad_fn).items():
    print(f"{node.name():16s} waits for {count} gradient(s)")
x.grad = None
z.backward()
print("reference:", x.grad)
xt = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
ht = xt.tanh()
(ht * ht + ht).sum().backward()
print("minigrad: ", xt.grad.numpy())
z.backward()                                          # the graph is still there: a second backward adds
print("after a second backward:", x.grad)

# %% [markdown]
# The same gradients as minigrad's (and PyTorch's). `viz.animate` watches the reference engine
# through its node hooks and replays its backward pass step by step: watch `TanhBackward0` wait
# until both gradients from `MulBackward0` and the one from `AddBackward0` have arrived.

# %%
# NBVAL_IGNORE_OUTPUT
x.grad = None
player = viz.animate(z, params={"x": x})
player

# %%
for frame in player.frames:
    print(frame.title)

# %% [markdown]
# ## 4. Enough for a neural network
#
# Matrix products, a bias that broadcasts, `tanh` or `relu`, a mean squared error: the handful of
# operations the file has is enough to train a small network. Here a 1-16-1 network learns
# $\sin(3x)$ on 64 points, with nothing but the reference engine and plain gradient descent.

# %%
rng = np.random.default_rng(14)
inputs = Tensor(np.linspace(-1, 1, 64).reshape(64, 1))
targets = Tensor(np.sin(3 * inputs.data))
W1 = Tensor(rng.standard_normal((1, 16)), requires_grad=True)
b1 = Tensor(np.zeros(16), requires_grad=True)
W2 = Tensor(rng.standard_normal((16, 1)) * 0.3, requires_grad=True)
b2 = Tensor(np.zeros(1), requires_grad=True)
params = [W1, b1, W2, b2]


def forward(x):
    return (x @ W1 + b1).tanh() @ W2 + b2


for step in range(601):
    loss = ((forward(inputs) - targets) ** 2).mean()
    for p in params:
        p.grad = None
    loss.backward()
    for p in params:
        p.data -= 0.2 * p.grad
    if step % 200 == 0:
        print(f"step {step:3d}   loss {loss.data:.4f}")

# The same step with minigrad: the same graph, the same names, the same gradients.
tensors = {name: torch.tensor(p.data, requires_grad=True) for name, p in zip(["W1", "b1", "W2", "b2"], params)}
xt, yt = torch.tensor(inputs.data), torch.tensor(targets.data)
loss_mg = ((torch.tanh(xt @ tensors["W1"] + tensors["b1"]) @ tensors["W2"] + tensors["b2"] - yt) ** 2).mean()
loss_mg.backward()
loss = ((forward(inputs) - targets) ** 2).mean()
for p in params:
    p.grad = None
loss.backward()
for (name, t), p in zip(tensors.items(), params):
    print(f"{name}: same gradient: {np.allclose(t.grad.numpy(), p.grad, rtol=1e-9, atol=1e-12)}")


def node_names(t):
    """The names of a graph's nodes, in viz's walk order (the third column of viz.summary)."""
    return [row.split()[2] for row in str(viz.summary(t)).splitlines()[2:]]


print("same nodes:", node_names(loss) == node_names(loss_mg), node_names(loss))

# %% [markdown]
# ## Exercise 14a: a new operation
#
# Add `sigmoid` to the reference engine: $\sigma(x) = 1/(1 + e^{-x})$, whose derivative is
# $\sigma(x)\,(1 - \sigma(x))$. Write it as the file writes its operations: compute the value
# with NumPy on `x.data`, and return `record(...)` with PyTorch's node name `"SigmoidBackward0"`,
# the inputs `(x,)` and the local derivative as a function of `g`, returning a tuple of one
# gradient. (`Tensor.tanh` above is a good model.)

# %% answer=14a
def sigmoid(x):
    # PLACEHOLDER: out = ...
    # PLACEHOLDER: return record("SigmoidBackward0", out, (x,), lambda g: ...)
    # SOLUTION
    out = 1 / (1 + np.exp(-x.data))
    return record("SigmoidBackward0", out, (x,), lambda g: (g * out * (1 - out),))
    # END SOLUTION


# %% check=14a points=1
from minigrad_course import check_sigmoid_op

check_sigmoid_op(sigmoid)

# %% [markdown]
# ## Exercise 14b: the other way to find an order
#
# The reference engine finds its order by counting dependencies (Kahn's algorithm). micrograd
# and many textbooks sort the graph instead: a depth-first walk that adds a node to a list after
# all of its children, then reverses the list. Write `topological_order(root)`: a list of every
# node reachable from `root` (AccumulateGrad nodes included, `None` skipped), each node exactly
# once and **before** every node its `next_functions` lead to, so that running the nodes in that
# order is a valid backward pass. Graphs can be deep (a recurrent network over a long sequence):
# walk with a stack of your own rather than recursion.

# %% answer=14b
def topological_order(root):
    # PLACEHOLDER: return ...
    # SOLUTION
    order, seen = [], {root}
    stack = [(root, iter(root.next_functions))]
    while stack:
        node, children = stack[-1]
        for child, _ in children:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append((child, iter(child.next_functions)))
                break
        else:  # every child is placed: the node comes after them in `order`
            stack.pop()
            order.append(node)
    return order[::-1]
    # END SOLUTION


# %% check=14b points=2
from minigrad_course import check_topological_order

check_topological_order(topological_order)

# %% [markdown]
# ## 5. The real engine: `GraphTask.run` beside the reference
#
# minigrad's engine is [`minigrad/autograd/engine.py`](../minigrad/autograd/engine.py); open it
# beside this notebook. Its `GraphTask` does what `Tensor.backward` does above, in the same
# steps: `count_dependencies` counts the edges into each node, `run` takes ready nodes and hands
# each gradient on (`buffer[slot] = g if buffer[slot] is None else buffer[slot] + g`, then
# `left = deps[nxt] - 1`), and a node whose count reaches zero becomes ready (`heappush`).
# What it adds, and why each is there:
#
# - **Hooks**: `call_watched(node, grads)` runs tensor hooks, `retain_grad`, prehooks and hooks
#   that may *replace* gradients, and anomaly mode's NaN checks (lessons 5 and 12: clipping,
#   inspecting, debugging). The reference's hooks only watch: that is how `viz.animate` follows it.
# - **Versions**: `node._apply(grads, create_graph)` first checks that the tensors the node saved
#   were not changed in place since (their *version*, lesson 9): a saved tensor modified in place
#   would give a silently wrong gradient. The reference's closures read whatever the arrays hold now.
# - **`retain_graph` and release**: `if not keep_graph: node._release()` frees what a node saved as
#   soon as it has run. A network's saved activations are most of its memory. The reference keeps
#   everything, which is why a second `backward()` works there without `retain_graph=True` (lesson 4).
# - **`create_graph`**: grad mode is on while backward runs when `create_graph` is
#   (`GRAD.mode, 1 if create_graph else 0`): then the gradients are Tensors and the backward
#   pass is itself recorded (lesson 8: second derivatives). The reference's gradients are plain
#   arrays.
# - **Checking what a node returns**: `fit(node, i, g, shape, dtype, create_graph)` checks each
#   gradient against the shape and dtype its input expects, sums back a broadcast one and casts
#   float32/float64, so a wrong custom `backward` gets an error rather than a corrupted `.grad`. The
#   reference keeps one dtype (float64) and has each operation sum back for itself (`unbroadcast`).
# - **`autograd.grad` and `backward(inputs=...)`**: `needed` and `capture` run only what leads to
#   the inputs asked for and take their gradients without touching `.grad` (lesson 3).
# - **Several outputs**: `buffers[node]` holds one gradient per output slot, for nodes such as
#   `split`'s; the reference's operations have one output each.
# - **The order**: `heappush(ready, (-nxt._sequence_number, nxt))`, a priority queue rather than
#   first in, first out: section 6.
#
# And one thing the real engine does *not* do that the reference does: compute every input's
# gradient. A minigrad node runs only the formulas of the inputs that need a gradient; the
# reference's `x @ W` computes the gradient for `x` even when `x` is data.
#
# ## 6. Two engines, two orders
#
# Both engines run every node after all the nodes that send it a gradient, so both compute the
# same gradients (up to rounding: sums may be added in another order). But they pick different
# nodes when several are ready. The cell below prints the lines of `GraphTask.run` named above,
# then logs the order of each engine on the same graph, through node hooks.

# %%
from minigrad.autograd.engine import GraphTask

for line in inspect.getsource(GraphTask.run).splitlines():
    if any(key in line for key in ("heappush(ready", "self.call_watched(", "node._apply(", "node._release()",
                                   "1 if create_graph", "fit(node", "self.capture(", "buffer[slot] =")):
        print(line.strip())
print()


def run_order(lib):
    """The order in which the nodes of (a*b + c*d).sum() run, in the reference engine or in minigrad."""
    make = (lambda v: Tensor([v], requires_grad=True)) if lib is engine else \
        (lambda v: torch.tensor([v], dtype=torch.float64, requires_grad=True))
    a, b, c, d = (make(v) for v in (1.0, 2.0, 3.0, 4.0))
    ab, cd = a * b, c * d
    total = ab + cd
    out = total.sum()
    labels = {out.grad_fn: "sum", total.grad_fn: "+", ab.grad_fn: "a*b", cd.grad_fn: "c*d"}
    for product, names in ((ab, "ab"), (cd, "cd")):
        for (node, _), name in zip(product.grad_fn.next_functions, names):
            labels[node] = f"{name}.grad"  # the leaf's AccumulateGrad
    ran = []
    for node, label in labels.items():
        node.register_hook(lambda grad_inputs, grad_outputs, label=label: ran.append(label))
    out.backward()
    return ran


print("reference (first in, first out):", " → ".join(run_order(engine)))
print("minigrad  (GraphTask):          ", " → ".join(run_order(torch)))

# %% [markdown]
# The reference runs nodes in the order they became ready: `a*b` and `c*d` became ready
# together (when `+` ran), `a*b` first because it is `+`'s first input; the leaves come last.
#
# `GraphTask` (like PyTorch's engine) runs the ready node that was **made last** in the forward
# pass (the highest *sequence number*): `c*d` was computed after `a*b`, so it runs first. Roughly,
# backward replays the forward pass in reverse, so the nodes of the last layer, whose saved
# activations were made last, run and are freed first. And every `AccumulateGrad` gets the highest
# priority of all: a leaf's `.grad` is written the moment its gradient is complete, not at the
# end. That is what lets PyTorch's distributed training send the gradients of the last layer to
# the other machines while the earlier layers are still running backward, and a
# post-accumulate-grad hook (an optimizer step per parameter) free each gradient early.
#
# Any order in which every node comes after its consumers is correct; the reference's and
# `topological_order`'s are as good as `GraphTask`'s for the gradients. The choice matters for
# memory, for when hooks fire (lesson 5's hooks fire in `GraphTask`'s order), and for speed.
#
# ## What to remember
#
# - Reverse mode is: record, for each operation, where its inputs' gradients go and its local
#   derivative; then run the nodes from the output down, each once all its gradients have
#   arrived, summing gradients where a tensor was used more than once, and adding what reaches a
#   leaf into its `.grad`.
# - An order is valid when every node runs after all the nodes that send it a gradient:
#   dependency counting (Kahn) and a reversed depth-first post-order both find one, without
#   recursion.
# - The real engine adds what users of PyTorch rely on: hooks that change gradients, version
#   checks on saved tensors, freeing the graph (`retain_graph`), a recorded backward
#   (`create_graph`), shape and dtype checks, `autograd.grad`. Its order (last made, leaves
#   first) is chosen for memory and for early `.grad`s.
#
# [Start here](00_start_here.ipynb) lists every lesson.

# %% hidden=14a
def test_large_inputs_stay_finite(sigmoid):
    """sigmoid of inputs up to +-700 (the check's are within +-4): the value and the gradient stay finite and
    right. Catches sigmoid written as exp(x) / (1 + exp(x)), which passes the check but gives inf / inf = nan
    once exp overflows (x > 709)."""
    import warnings

    import numpy as np

    from minigrad.reference.engine import Tensor

    values = np.array([-700.0, -30.0, 0.0, 30.0, 710.0, 750.0])
    x = Tensor(values, requires_grad=True)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        y = sigmoid(x)
        y.sum().backward()
    small = np.exp(-np.abs(values))  # never overflows
    want = np.where(values >= 0, 1 / (1 + small), small / (1 + small))
    assert np.all(np.isfinite(y.data)) and np.allclose(y.data, want, rtol=1e-9, atol=1e-12), (
        f"sigmoid({values.tolist()}) gives {y.data.tolist()}\n  hint: exp(x) overflows for large x: "
        "1 / (1 + np.exp(-x.data)) stays finite (np.exp(-x) may be inf, and 1 / inf is 0)")
    assert x.grad is not None and np.all(np.isfinite(x.grad)), (
        f"the gradient for x = {values.tolist()} is {None if x.grad is None else x.grad.tolist()}\n  hint: "
        "compute it from the output: g * out * (1 - out)")


def test_a_constant_input_records_no_node(sigmoid):
    """sigmoid of a tensor that needs no gradient records nothing (no grad_fn), as every operation of the file
    does. Catches a result built with Node(...) by hand, which the check (whose inputs all need gradients)
    cannot tell apart."""
    import numpy as np

    from minigrad.reference.engine import Tensor

    y = sigmoid(Tensor(np.array([0.5, -1.0])))
    assert y.grad_fn is None and not y.requires_grad, (
        "sigmoid(Tensor([0.5, -1.0])), an input that needs no gradient, made a node\n  hint: return "
        "record(\"SigmoidBackward0\", out, (x,), backward): record adds a node only when an input needs it")


# %% hidden=14b
def test_a_chain_of_5000_nodes(topological_order):
    """A chain of 5,000 multiplications (the check's longest has 20): the order holds every node, root first.
    Catches a recursive walk, which passes the check but exceeds Python's recursion limit (1,000) here, as a
    long sequence through a recurrent network would."""
    from minigrad.reference.engine import Tensor

    x = Tensor([0.5], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    root = y.sum().grad_fn
    try:
        order = list(topological_order(root))
    except RecursionError:
        raise AssertionError("topological_order raised RecursionError on a chain of 5,000 nodes\n  hint: keep a "
                             "stack of (node, its remaining children) yourself instead of calling yourself") from None
    assert len(order) == 5002 and order[0] is root and order[-1] is x.gradient_node(), (
        f"for a chain of 5,000 multiplications the order has {len(order)} nodes (5,002 expected: the sum, "
        "5,000 MulBackward0 and the AccumulateGrad), root first\n  hint: every reachable node, once")
