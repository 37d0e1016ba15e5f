import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo

    return (mo,)


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    # 14. An engine you can read: reverse mode in 120 lines

    Every lesson so far used autograd from the outside. This one opens it. minigrad's real engine
    spans thousands of lines, most of them for PyTorch's details (hooks, versions, freeing the
    graph, `create_graph`). Underneath is a small idea, and it fits in one file:
    [`minigrad/reference/engine.py`](../minigrad/reference/engine.py), 120 lines of Python over
    NumPy. We build it up piece by piece here, run it, draw it with `viz`, train a small network
    with it, and then read minigrad's real `GraphTask.run` beside it: what the real engine adds,
    and why.

    The reference engine imports nothing but NumPy. Its names are PyTorch's (`grad_fn`,
    `next_functions`, `MulBackward0`, `AccumulateGrad.variable`), so everything lessons 2 and 3
    taught about graphs applies to it, and `viz` draws it as it draws PyTorch's graphs.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/14_a_reference_engine.ipynb` by
    > `notebooks/marimo_build.py`). marimo runs a cell again whenever a name it reads changes, and
    > each name belongs to one cell, so these things differ from the Jupyter lesson:
    >
    > - **Names defined in several cells are numbered** in the order the cells come: `loss` → `loss_1`.
    >   A name used in one cell only starts with `_` (private to that cell).
    > - **Where the lesson says to run a cell again,** press that cell's run button (▶): marimo
    >   does not re-run a cell on its own.
    > - **Printed values** appear in the cell's output: a cell that prints does it inside
    >   `with mo.redirect_stdout():`.
    > - **The exercises** have the same placeholders (`...`) and the same `check_...()` cells; the solutions
    >   are the Jupyter notebook `notebooks/solutions/14_a_reference_engine.ipynb`.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import inspect

        import numpy as np

        import minigrad as torch
        import viz
        from minigrad.reference import engine
        from minigrad.reference.engine import Node, Tensor, record


        def show(obj):
            """Print the source of a piece of the reference engine."""
            print(inspect.getsource(obj).rstrip(), end="\n\n")

    return Node, Tensor, engine, inspect, np, record, show, torch, viz


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## 1. A tensor, and what an operation records

    A `Tensor` holds a NumPy array in `.data`. A tensor you make yourself is a *leaf*
    (`grad_fn` is `None`); `requires_grad=True` asks for its gradient. An operation computes its
    value with NumPy and hands it to `record`, with the node's name, the inputs, and one more thing:
    a function `backward(g)` that turns the gradient `g` of the output into one gradient per input.
    That function is the operation's *local derivative*. `record` makes the result, and a `Node`
    only when an input needs a gradient. For `y = x * w`: $\partial y/\partial x = w$ and
    $\partial y/\partial w = x$, so the gradients are `g * w` and `g * x` (`unbroadcast` sums a
    gradient back to an input's shape when broadcasting stretched that input). The node does not
    compute them now; it keeps the function for later, and its `next_functions` say where each
    gradient goes.

    The gradient of a leaf goes to its `AccumulateGrad` node (`gradient_node()` makes it the
    first time it is asked), and a tensor that needs no gradient gives `(None, 0)`, as in PyTorch.
    `viz` reads the same attributes (`name()`, `next_functions`, `variable`), so it draws this graph
    as it would draw minigrad's or PyTorch's.
    """)
    return


@app.cell
def _(Node, Tensor, mo, record, show):
    with mo.redirect_stdout():
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
    return add, loss, mul, w, x


@app.cell
def _(loss, viz, w, x):
    viz.draw(loss, params={"x": x, "w": w})
    return


@app.cell
def _(loss, mo, viz, w, x):
    with mo.redirect_stdout():
        print(viz.summary(loss, params={"x": x, "w": w}))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## 2. The chain rule, one node at a time

    Each node knows only its own local derivative. Call them by hand, from the loss down, and you
    have done backpropagation: the gradient of `loss` with respect to itself is 1, and each node
    turns the gradient of its output into the gradients of its inputs.
    """)
    return


@app.cell
def _(add, loss, mo, mul, np, w, x):
    with mo.redirect_stdout():
        g_sum = np.ones(())                                  # d loss / d loss
        (g_tanh,) = loss.grad_fn.backward(g_sum)             # SumBackward0: spread it to every element
        tanh = loss.grad_fn.next_functions[0][0]
        (g_add,) = tanh.backward(g_tanh)                     # TanhBackward0: times 1 - tanh²
        g_mul, g_c = add.backward(g_add)                     # AddBackward0: the same gradient to both inputs
        g_x, g_w = mul.backward(g_mul)                       # MulBackward0: times the other factor
        print("d loss / d x =", g_x)
        print("d loss / d w =", g_w)
        print("by hand:      ", (1 - np.tanh(x.data * w.data + 1) ** 2) * w.data)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    That is all the calculus there is. What remains is bookkeeping: in which order to call the
    nodes, and what to do when one tensor is used twice.

    ## 3. Waiting for every gradient, and the loop

    When a tensor feeds several operations, its node receives one gradient from each, and the
    gradient it must pass on is their **sum**. So it may run only after *all* of them have arrived.
    Before it starts, the engine counts how many edges lead into each node (`count_dependencies`).
    A node is *ready* when its count reaches zero; the loop in `backward` takes a ready node, runs
    its local derivative on the summed gradient, and hands each result along its edge, adding it to
    what that node already received. The `AccumulateGrad` nodes at the end add what reaches them
    into the leaves' `.grad` (lesson 4: `backward()` *adds*). The first gradient a leaf gets is
    copied: `a + b` sends one and the same array to both `a` and `b`, and two leaves sharing one
    array would change together. (minigrad's engine skips that copy when it knows that nothing else
    holds the array: a formula made it in this backward and sent it to that leaf alone.)
    """)
    return


@app.cell
def _(Tensor, engine, mo, show, torch, x):
    with mo.redirect_stdout():
        show(engine.count_dependencies)
        show(Tensor.backward)
        show(engine.AccumulateGrad)
        h = x.tanh()
        z = (h * h + h).sum()
        for node, count in engine.count_dependencies(z.grad_fn).items():  # h is used three times
            print(f'{node.name():16s} waits for {count} gradient(s)')
        x.grad = None
        z.backward()
        print('reference:', x.grad)
        _xt = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
        ht = _xt.tanh()
        (ht * ht + ht).sum().backward()
        print('minigrad: ', _xt.grad.numpy())
        z.backward()
        print('after a second backward:', x.grad)  # the graph is still there: a second backward adds
    return (z,)


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    The same gradients as minigrad's (and PyTorch's). `viz.animate` watches the reference engine
    through its node hooks and replays its backward pass step by step: watch `TanhBackward0` wait
    until both gradients from `MulBackward0` and the one from `AddBackward0` have arrived.
    """)
    return


@app.cell
def _(viz, x, z):
    x.grad = None
    player = viz.animate(z, params={"x": x})
    player
    return (player,)


@app.cell
def _(mo, player):
    with mo.redirect_stdout():
        for frame in player.frames:
            print(frame.title)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## 4. Enough for a neural network

    Matrix products, a bias that broadcasts, `tanh` or `relu`, a mean squared error: the handful of
    operations the file has is enough to train a small network. Here a 1-16-1 network learns
    $\sin(3x)$ on 64 points, with nothing but the reference engine and plain gradient descent.
    """)
    return


@app.cell
def _(Tensor, mo, np, torch, viz):
    with mo.redirect_stdout():
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
            loss_1 = ((forward(inputs) - targets) ** 2).mean()
            for p in params:
                p.grad = None
            loss_1.backward()
            for p in params:
                p.data = p.data - 0.2 * p.grad
            if step % 200 == 0:
                print(f'step {step:3d}   loss {loss_1.data:.4f}')
        tensors = {name: torch.tensor(p.data, requires_grad=True) for name, p in zip(['W1', 'b1', 'W2', 'b2'], params)}
        _xt, yt = (torch.tensor(inputs.data), torch.tensor(targets.data))
        loss_mg = ((torch.tanh(_xt @ tensors['W1'] + tensors['b1']) @ tensors['W2'] + tensors['b2'] - yt) ** 2).mean()
        loss_mg.backward()
        loss_1 = ((forward(inputs) - targets) ** 2).mean()
        for p in params:
            p.grad = None
        loss_1.backward()
        for (name, t), p in zip(tensors.items(), params):
            print(f'{name}: same gradient: {np.allclose(t.grad.numpy(), p.grad, rtol=1e-09, atol=1e-12)}')

        def node_names(t):
            """The names of a graph's nodes, in viz's walk order (the third column of viz.summary)."""
            return [row.split()[2] for row in str(viz.summary(t)).splitlines()[2:]]
        print('same nodes:', node_names(loss_1) == node_names(loss_mg), node_names(loss_1))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Exercise 14a: a new operation

    Add `sigmoid` to the reference engine: $\sigma(x) = 1/(1 + e^{-x})$, whose derivative is
    $\sigma(x)\,(1 - \sigma(x))$. Write it as the file writes its operations: compute the value
    with NumPy on `x.data`, and return `record(...)` with PyTorch's node name `"SigmoidBackward0"`,
    the inputs `(x,)` and the local derivative as a function of `g`, returning a tuple of one
    gradient. (`Tensor.tanh` above is a good model.)
    """)
    return


@app.cell
def _(record):
    # Cell tags: nbval-ignore-output
    def sigmoid(x):
        out = ...
        return record("SigmoidBackward0", out, (x,), lambda g: ...)

    return (sigmoid,)


@app.cell
def _(mo, sigmoid):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_sigmoid_op

        check_sigmoid_op(sigmoid)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Exercise 14b: the other way to find an order

    The reference engine finds its order by counting dependencies (Kahn's algorithm). micrograd
    and many textbooks sort the graph instead: a depth-first walk that adds a node to a list after
    all of its children, then reverses the list. Write `topological_order(root)`: a list of every
    node reachable from `root` (AccumulateGrad nodes included, `None` skipped), each node exactly
    once and **before** every node its `next_functions` lead to, so that running the nodes in that
    order is a valid backward pass. Graphs can be deep (a recurrent network over a long sequence):
    walk with a stack of your own rather than recursion.
    """)
    return


@app.function
# Cell tags: nbval-ignore-output
def topological_order(root):
    return ...


@app.cell
def _(mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_topological_order

        check_topological_order(topological_order)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## 5. The real engine: `GraphTask.run` beside the reference

    minigrad's engine is [`minigrad/autograd/engine.py`](../minigrad/autograd/engine.py); open it
    beside this notebook. Its `GraphTask` does what `Tensor.backward` does above, in the same
    steps: `count_dependencies` counts the edges into each node, `run` takes ready nodes and hands
    each gradient on (`buffer[slot] = g if buffer[slot] is None else buffer[slot] + g`, then
    `left = deps[nxt] - 1`), and a node whose count reaches zero becomes ready (`heappush`).
    What it adds, and why each is there:

    - **Hooks**: `call_watched(node, grads)` runs tensor hooks, `retain_grad`, prehooks and hooks
      that may *replace* gradients, and anomaly mode's NaN checks (lessons 5 and 12: clipping,
      inspecting, debugging). The reference's hooks only watch: that is how `viz.animate` follows it.
    - **Versions**: `node._apply(grads, create_graph)` first checks that the tensors the node saved
      were not changed in place since (their *version*, lesson 9): a saved tensor modified in place
      would give a silently wrong gradient. The reference's closures read whatever the arrays hold now.
    - **`retain_graph` and release**: `if not keep_graph: node._release()` frees what a node saved as
      soon as it has run. A network's saved activations are most of its memory. The reference keeps
      everything, which is why a second `backward()` works there without `retain_graph=True` (lesson 4).
    - **`create_graph`**: grad mode is on while backward runs when `create_graph` is
      (`GRAD.mode, 1 if create_graph else 0`): then the gradients are Tensors and the backward
      pass is itself recorded (lesson 8: second derivatives). The reference's gradients are plain
      arrays.
    - **Checking what a node returns**: `fit(node, i, g, shape, dtype, create_graph)` checks each
      gradient against the shape and dtype its input expects, sums back a broadcast one and casts
      float32/float64, so a wrong custom `backward` gets an error rather than a corrupted `.grad`. The
      reference keeps one dtype (float64) and has each operation sum back for itself (`unbroadcast`).
    - **`autograd.grad` and `backward(inputs=...)`**: `needed` and `capture` run only what leads to
      the inputs asked for and take their gradients without touching `.grad` (lesson 3).
    - **Several outputs**: `buffers[node]` holds one gradient per output slot, for nodes such as
      `split`'s; the reference's operations have one output each.
    - **The order**: `heappush(ready, (-nxt._sequence_number, nxt))`, a priority queue rather than
      first in, first out: section 6.

    And one thing the real engine does *not* do that the reference does: compute every input's
    gradient. A minigrad node runs only the formulas of the inputs that need a gradient; the
    reference's `x @ W` computes the gradient for `x` even when `x` is data.

    ## 6. Two engines, two orders

    Both engines run every node after all the nodes that send it a gradient, so both compute the
    same gradients (up to rounding: sums may be added in another order). But they pick different
    nodes when several are ready. The cell below prints the lines of `GraphTask.run` named above,
    then logs the order of each engine on the same graph, through node hooks.
    """)
    return


@app.cell
def _(Tensor, engine, inspect, mo, torch):
    with mo.redirect_stdout():
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
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    The reference runs nodes in the order they became ready: `a*b` and `c*d` became ready
    together (when `+` ran), `a*b` first because it is `+`'s first input; the leaves come last.

    `GraphTask` (like PyTorch's engine) runs the ready node that was **made last** in the forward
    pass (the highest *sequence number*): `c*d` was computed after `a*b`, so it runs first. Roughly,
    backward replays the forward pass in reverse, so the nodes of the last layer, whose saved
    activations were made last, run and are freed first. And every `AccumulateGrad` gets the highest
    priority of all: a leaf's `.grad` is written the moment its gradient is complete, not at the
    end. That is what lets PyTorch's distributed training send the gradients of the last layer to
    the other machines while the earlier layers are still running backward, and a
    post-accumulate-grad hook (an optimizer step per parameter) free each gradient early.

    Any order in which every node comes after its consumers is correct; the reference's and
    `topological_order`'s are as good as `GraphTask`'s for the gradients. The choice matters for
    memory, for when hooks fire (lesson 5's hooks fire in `GraphTask`'s order), and for speed.

    ## What to remember

    - Reverse mode is: record, for each operation, where its inputs' gradients go and its local
      derivative; then run the nodes from the output down, each once all its gradients have
      arrived, summing gradients where a tensor was used more than once, and adding what reaches a
      leaf into its `.grad`.
    - An order is valid when every node runs after all the nodes that send it a gradient:
      dependency counting (Kahn) and a reversed depth-first post-order both find one, without
      recursion.
    - The real engine adds what users of PyTorch rely on: hooks that change gradients, version
      checks on saved tensors, freeing the graph (`retain_graph`), a recorded backward
      (`create_graph`), shape and dtype checks, `autograd.grad`. Its order (last made, leaves
      first) is chosen for memory and for early `.grad`s.

    [Start here](00_start_here.py) lists every lesson.
    """)
    return


if __name__ == "__main__":
    app.run()
