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
    # 2. The computation graph

    In lesson 1 every computed tensor got a `grad_fn`. That object is not a label: it is a node
    in a graph that autograd builds *while your code runs*, one node per operation. `backward()`
    walks this graph from the output back to the leaves. In this lesson you will walk it by
    hand, through exactly the attributes `backward()` uses, and then draw it.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/02_computation_graph.ipynb` by
    > `notebooks/marimo_build.py`). marimo runs a cell again whenever a name it reads changes, and
    > each name belongs to one cell, so these things differ from the Jupyter lesson:
    >
    > - **Names defined in several cells are numbered** in the order the cells come: `out` → `out_1`; `z` → `z_1`.
    >   A name used in one cell only starts with `_` (private to that cell).
    > - **Where the lesson says to run a cell again,** press that cell's run button (▶): marimo
    >   does not re-run a cell on its own.
    > - **Printed values** appear in the cell's output: a cell that prints does it inside
    >   `with mo.redirect_stdout():`.
    > - **The exercises** have the same placeholders (`...`) and the same `check_...()` cells; the solutions
    >   are the Jupyter notebook `notebooks/solutions/02_computation_graph.ipynb`.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import minigrad as torch
        import viz
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.tensor([3.0, 4.0], requires_grad=True)
        c = torch.tensor([1.0, 1.0])
        _y = x * w  # a constant: requires_grad=False
        z = _y + c
        out = z.exp().sum()
        print(out)
    return c, out, viz, w, x, z


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## One hop at a time: `next_functions`

    `out.grad_fn` is the node of the *last* operation, `.sum()`. Each node lists where its
    gradient goes next in `next_functions`: one entry per input of the operation, in the order
    the inputs were given.
    """)
    return


@app.cell
def _(mo, out):
    with mo.redirect_stdout():
        node = out.grad_fn
        print(node.name(), node.next_functions)

        node = node.next_functions[0][0]  # ExpBackward0
        print(node.name(), node.next_functions)

        node = node.next_functions[0][0]  # AddBackward0
        print(node.name(), node.next_functions)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Each entry is a pair `(node, input_nr)`:

    - `node` is the `grad_fn` of that input, the next stop on the way back;
    - `input_nr` says which of that node's outputs the input was (always `0` here: most
      operations have a single output; `split` or `unbind` have several).

    Look at `AddBackward0`: its second input was `c`, which does not require grad, so that slot
    is **`(None, 0)`**: there is nowhere to send a gradient, and autograd will not compute one.
    A Python number does the same (`x * 2` gives a `(None, 0)` entry for the `2`).

    ## The end of the road: `AccumulateGrad`

    Follow the first slot of `AddBackward0` to `MulBackward0`, whose inputs were `x` and `w`:
    """)
    return


@app.cell
def _(mo, x, z):
    with mo.redirect_stdout():
        _mul = z.grad_fn.next_functions[0][0]
        print(_mul.name(), _mul.next_functions)
        acc_x = _mul.next_functions[0][0]
        print(acc_x.name())  # the AccumulateGrad node of x
        print('acc_x.variable is x:', acc_x.variable is x)
        print('acc_x.next_functions:', acc_x.next_functions)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Leaves that require grad have no `grad_fn`, yet the graph still needs a node for them: the
    `AccumulateGrad` node. Its `.variable` is the leaf tensor itself, and its job is the last
    step of every backward pass: **add** the incoming gradient into `variable.grad` (why "add"
    rather than "store" is lesson 4). It has no `next_functions`: the walk ends here.

    (PyTorch names this node `torch::autograd::AccumulateGrad` because it is written in C++;
    minigrad says `minigrad::autograd::AccumulateGrad`.)

    ## Walking the whole graph

    Those two attributes are enough to visit everything. A recursive walk prints the graph as
    a tree, indented by depth:
    """)
    return


@app.cell
def _(mo, out):
    with mo.redirect_stdout():
        def show(node, depth=0):
            if node is None:
                print('    ' * depth + 'None  (an input that needs no gradient)')
                return
            label = node.name()
            if hasattr(node, 'variable'):
                label = label + f'  -> leaf {node.variable.tolist()}'
            print('    ' * depth + label)
            for child, _input_nr in node.next_functions:
                show(child, depth + 1)
    show(out.grad_fn)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Drawing it

    `viz.draw` does the same walk and lays the graph out with Graphviz. The output is at the
    top and every arrow is one `next_functions` entry, so the arrows point the way gradients
    will flow: from the output down to the leaves. `params` gives the leaves their names.

    (Picture cells start with `# NBVAL_IGNORE_OUTPUT`: the course's tests compare every other
    output as text, and a picture cannot be. The next cell prints the picture's text twin,
    `viz.summary`, one row per node.)
    """)
    return


@app.cell
def _(out, viz, w, x):
    viz.draw(out, params={"x": x, "w": w})
    return


@app.cell
def _(mo, out, viz, w, x):
    with mo.redirect_stdout():
        print(viz.summary(out, params={"x": x, "w": w}))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    The `to` column is `next_functions` written as ids: `n5:0` means "node n5, its output 0"
    (the `input_nr` of the pair), and a bare `n4` is the `None` entry for `c`. The `:0` says which
    output of the *next* node a gradient is for, not which input of this node it leaves from: the
    entries are in input order, so `MulBackward0`'s `n6:0 n7:0` are its first input, `x`, then its
    second, `w`. The `shape` and `data` columns describe the tensor a node produced, as long as some
    variable still holds it: `ExpBackward0`'s output was a temporary that nothing holds any more,
    so both cells are blank (its values live on inside the node as a saved tensor, as you will
    see below).

    ## Watching the graph grow

    The graph is built while your code runs, one node per operation. `viz.record()` lets you
    watch that: run ordinary code inside the `with` block, then `rec.player()` replays it one
    node at a time (press play). Each step names the node that appeared, where its
    `next_functions` point, what it saved, and its `sequence_nr`: nodes are numbered in the order
    they were created, and `backward()` uses that number to run the newest ready node first. The
    two `AccumulateGrad` nodes exist already (the cells above asked for them), so the player draws
    them from the start. `source=True` also notes the line of your code that made each node
    ("cell [7], line 2", as Jupyter numbers the cell). The cell after the player prints the same
    steps as text.
    """)
    return


@app.cell
def _(c, viz, w, x):
    with viz.record(params={'x': x, 'w': w}, source=True) as rec:
        _y = x * w
        z_1 = _y + c
        out_1 = z_1.exp().sum()
    rec.player()
    return out_1, rec, z_1


@app.cell
def _(mo, rec):
    with mo.redirect_stdout():
        for frame in rec.frames:
            print(frame.text, end="\n\n")
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## What the nodes remember

    To compute $\partial(x \cdot w)/\partial x = w$ later, `MulBackward0` must keep `w` (and
    `x`, for the other slot). These **saved tensors** are visible as `_saved_<name>`
    attributes, and `show_saved=True` adds them to the picture (pink rows):
    """)
    return


@app.cell
def _(out_1, viz, w, x):
    viz.draw(out_1, params={'x': x, 'w': w}, show_saved=True)
    return


@app.cell
def _(mo, out_1, viz, w, x, z_1):
    with mo.redirect_stdout():
        _mul = z_1.grad_fn.next_functions[0][0]
        print('MulBackward0 saved self: ', _mul._saved_self)
        print('MulBackward0 saved other:', _mul._saved_other)
        print('ExpBackward0 saved result:', out_1.grad_fn.next_functions[0][0]._saved_result)
        print(viz.summary(out_1, params={'x': x, 'w': w}, show_saved=True))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `exp` saves its *result*, because $\frac{d}{dz}e^z = e^z$: the output is exactly what the
    backward pass needs. Saved tensors are what makes a graph cost memory, and freeing them
    after `backward()` is the reason for lesson 4's "backward through the graph a second time"
    error.

    ## Shared nodes

    The graph is not always a tree. Using a tensor twice makes two edges into the same node:
    """)
    return


@app.cell
def _(mo, x):
    with mo.redirect_stdout():
        s = (x * x + x).sum()
        add = s.grad_fn.next_functions[0][0]
        _mul = add.next_functions[0][0]
        print(add.name(), add.next_functions)
        print(_mul.name(), _mul.next_functions)
        print('one AccumulateGrad for x:', _mul.next_functions[0][0] is _mul.next_functions[1][0] is add.next_functions[1][0])
    return (s,)


@app.cell
def _(s, viz, x):
    viz.draw(s, params={"x": x})
    return


@app.cell
def _(mo, s, viz, x):
    with mo.redirect_stdout():
        print(viz.summary(s, params={"x": x}))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    All three edges end at the same `AccumulateGrad`: three gradients arrive and are summed,
    which is the multivariable chain rule ($\frac{d}{dx}(x^2 + x) = x + x + 1$). Two of them
    leave `MulBackward0`, one per input of `x * x`: the first for its left operand (`self`, entry
    0 of `next_functions`), the second for its right one (`other`, entry 1). In the picture the
    edges say so: `self` and `other` (the names `MulBackward0` gives its inputs). Note that the
    `show` function above would print that node three times: it walks paths, not nodes.

    ## Exercise 2: count the nodes

    Write `count_nodes(root)` that returns how many **distinct** nodes are reachable from the
    node `root` (including `root` itself, not counting `None` entries). For `s.grad_fn` above
    the answer is 4 (`SumBackward0`, `AddBackward0`, `MulBackward0`, one `AccumulateGrad`).
    Hint: keep a set of the nodes you have seen and a list of nodes still to visit.
    """)
    return


@app.cell
def _(mo, s):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        def count_nodes(root):
            return ...


        print(count_nodes(s.grad_fn))
    return (count_nodes,)


@app.cell
def _(count_nodes, mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_count_nodes

        check_count_nodes(count_nodes)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## What to remember

    - Each operation on tensors that require grad adds a node; `t.grad_fn` is the node that
      produced `t`.
    - `node.next_functions` holds one `(node, input_nr)` pair per input; `(None, 0)` marks an
      input that needs no gradient.
    - Leaves that require grad end the graph in `AccumulateGrad` nodes, whose `.variable` is the
      leaf and whose job is to add into `.grad`.
    - Nodes keep saved tensors for the backward pass; `viz.draw` / `viz.summary` show all of it.

    Next: [3. `backward()`](03_backward.py), where gradients start to flow through this graph.
    """)
    return


if __name__ == "__main__":
    app.run()
