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
    # 1. Tensors and `requires_grad`

    Automatic differentiation starts with one question that autograd asks about every tensor:
    *do I need to know how the final result changes when this tensor changes?* The flag that
    answers it is `requires_grad`. In this lesson you will see which tensors carry it, how it
    spreads through a computation, and why only some tensors end up with a `.grad`.

    We write `import minigrad as torch`: minigrad re-implements PyTorch's autograd API on top of
    NumPy, so every line here runs unchanged with `import torch` and prints the same thing
    (where PyTorch prints `torch.`, minigrad prints `minigrad.`).
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/01_tensors_and_requires_grad.ipynb` by
    > `notebooks/marimo_build.py`). marimo runs a cell again whenever a name it reads changes, and
    > each name belongs to one cell, so these things differ from the Jupyter lesson:
    >
    > - **Names defined in several cells are numbered** in the order the cells come: `x` → `x_1`; `y` → `y_1`; `z` → `z_1`, `z_2`.
    >   A name used in one cell only starts with `_` (private to that cell).
    > - **Where the lesson says to run a cell again,** press that cell's run button (▶): marimo
    >   does not re-run a cell on its own.
    > - **Printed values** appear in the cell's output: a cell that prints does it inside
    >   `with mo.redirect_stdout():`.
    > - **The exercises** have the same placeholders (`...`) and the same `check_...()` cells; the solutions
    >   are the Jupyter notebook `notebooks/solutions/01_tensors_and_requires_grad.ipynb`.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import minigrad as torch

        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        print(x)
        print("requires_grad:", x.requires_grad)
        print("is_leaf:      ", x.is_leaf)
        print("grad:         ", x.grad)
        print("grad_fn:      ", x.grad_fn)
    return torch, x


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `x` is a **leaf**: you made it yourself; no operation produced it, so it has no `grad_fn`.
    Its `.grad` is `None` because nothing has been differentiated yet. Setting
    `requires_grad=True` asks autograd to *record* every operation that uses `x`, so that it
    can later walk those records backwards and compute derivatives with respect to `x`.

    ## How `requires_grad` spreads

    The rule is short: **the result of an operation requires grad if any of its inputs does.**
    A weight vector `w` that we never want to differentiate stays plain:
    """)
    return


@app.cell
def _(mo, torch, x):
    with mo.redirect_stdout():
        w = torch.tensor([0.5, -1.0, 2.0])
        y = x * w
        z = y.sum()
        for _name, _t in [('x', x), ('w', w), ('y', y), ('z', z)]:
            print(f'{_name}: requires_grad={_t.requires_grad!s:5}  is_leaf={_t.is_leaf!s:5}  grad_fn={_t.grad_fn}')
    return w, y, z


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `y` and `z` were produced by operations on something that requires grad, so autograd
    recorded them: each has a `grad_fn`, the node that knows how to send a gradient back to
    the inputs of that operation (`MulBackward0` for `*`, `SumBackward0` for `.sum()`). Tensors
    with a `grad_fn` are **non-leaves**.

    The printed `0x...` is a memory address: it changes from run to run and means nothing more
    than "this particular node object".

    `viz` draws what was computed. With `view="values"` it shows the tensors as boxes (name,
    shape, dtype and data) and each operation between them, labelled with the `grad_fn` it
    recorded; `params` names the tensors. The cell after the picture prints the same graph as
    text, one row per box: the `to` column says which box each value flows into.
    """)
    return


@app.cell
def _(w, x, y, z):
    import viz

    viz.draw(z, params={"x": x, "w": w, "y": y}, view="values")
    return (viz,)


@app.cell
def _(mo, viz, w, x, y, z):
    with mo.redirect_stdout():
        print(viz.summary(z, params={"x": x, "w": w, "y": y}, view="values"))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `w` appears as a dashed box, `constant` (kind `none` in the text: no gradient will be sent
    there). It does not require grad, and neither does anything computed from `w` alone. Such a
    tensor is also a leaf: autograd did not record how it was made, so as far as the graph is
    concerned it is a starting point, just a constant.
    """)
    return


@app.cell
def _(mo, w):
    with mo.redirect_stdout():
        c = w * 2
        print(c, "is_leaf:", c.is_leaf, "requires_grad:", c.requires_grad)

        # A leaf can be switched on later, in place (note the trailing underscore):
        c.requires_grad_()
        print(c, "is_leaf:", c.is_leaf, "requires_grad:", c.requires_grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    So the full definition is: **a tensor is a leaf if it has no `grad_fn`**, either because you
    created it, or because it was computed from tensors that did not require grad.

    Only floating-point tensors can require grad (a derivative with respect to an integer makes
    no sense), and only leaves can have the flag changed by hand; for a computed tensor the flag
    is a fact about its history:
    """)
    return


@app.cell
def _(mo, torch, y):
    with mo.redirect_stdout():
        try:
            torch.tensor([1, 2, 3], requires_grad=True)
        except RuntimeError as err:
            print("RuntimeError:", err)

        try:
            y.requires_grad = False
        except RuntimeError as err:
            print("RuntimeError:", err)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Where gradients land

    `z.backward()` computes $\partial z / \partial t$ for every leaf $t$ that requires grad and
    stores it in `t.grad`. Here $z = \sum_i x_i w_i$, so $\partial z / \partial x_i = w_i$:
    """)
    return


@app.cell
def _(mo, w, x):
    with mo.redirect_stdout():
        z_1 = (x * w).sum()  # z again, so that this cell can run again (backward frees the graph it ran through)
        x.grad = None
        z_1.backward()
        print('x.grad:', x.grad)
        print('w.grad:', w.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `x.grad` equals `w`, as the calculus says. `w.grad` stays `None`: we never asked for it.

    What about `y`? It requires grad, and autograd certainly computed $\partial z / \partial y$
    on the way from `z` to `x` (it is `[1, 1, 1]`). But it did not keep it:
    """)
    return


@app.cell
def _(mo, y):
    with mo.redirect_stdout():
        print(y.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `None`, and a `UserWarning` (printed in red, on stderr) explaining why. Gradients of
    intermediate results are used and thrown away as soon as the backward pass moves past
    them. A real network has millions of intermediate values; keeping a gradient for each
    would double the memory for something almost nobody reads. Leaves are different: they are
    usually the *parameters* you want to update, so their gradients are kept.

    When you do want an intermediate gradient (to debug, or to look at saliency), ask for it
    **before** calling `backward()` with `retain_grad()` (lesson 5 shows the alternative, hooks):
    """)
    return


@app.cell
def _(mo, torch, w):
    with mo.redirect_stdout():
        x_1 = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y_1 = x_1 * w
        y_1.retain_grad()
        z_2 = y_1.sum()
        z_2.backward()
        print('y.grad:', y_1.grad, ' y.retains_grad:', y_1.retains_grad)
        print('x.grad:', x_1.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    A classic trap with the same root: calling `.double()` (or `.to(...)`) on a tensor that
    requires grad returns a *new, non-leaf* tensor; the gradient lands on the original.
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = a.double()
        (b * b).sum().backward()
        print("b.is_leaf:", b.is_leaf, " b.grad_fn:", b.grad_fn.name())
        print("a.grad:", a.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Create tensors with the dtype you want (`torch.tensor(..., dtype=torch.float64,
    requires_grad=True)`) and the leaf is the tensor you hold.

    ## Exercise 1: predict, then check

    Read the code in the next cell **without running it**, and decide for each tensor whether
    it is a leaf and whether its `.grad` will be a tensor (not `None`) after `e.backward()`.
    Write your answers as sets of names, then run the check.
    """)
    return


@app.cell
def _(torch):
    # Cell tags: nbval-ignore-output
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    q = torch.tensor([3.0, 4.0])
    _r = p * q
    _s = q * 2
    _e = (_r + _s).sum()
    leaves = ...
    # Which of "p", "q", "r", "s", "e" are leaves?
    # Which of them will have a .grad after e.backward()?
    gets_grad = ...
    return gets_grad, leaves, p, q


@app.cell
def _(gets_grad, leaves, mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_leaves

        check_leaves(leaves, gets_grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Now let autograd confirm it (`e.backward()` is safe to run here; the `warnings` filter only
    silences the non-leaf warning you met above):
    """)
    return


@app.cell
def _(mo, p, q):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        import warnings
        _r, _s = (p * q, q * 2)
        _e = (_r + _s).sum()  # the exercise's tensors again, so that this cell can run again
        p.grad = None
        _e.backward()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            for _name, _t in [('p', p), ('q', q), ('r', _r), ('s', _s), ('e', _e)]:
                print(f'{_name}: is_leaf={_t.is_leaf!s:5}  grad={_t.grad}')
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## What to remember

    - `requires_grad=True` marks a tensor whose derivative you want; every result computed from
      it inherits the flag and gets a `grad_fn`.
    - Leaves have no `grad_fn`: tensors you created, and tensors computed only from tensors that
      do not require grad.
    - `backward()` fills `.grad` on leaves that require grad. Intermediate gradients are thrown
      away unless you call `retain_grad()` first.

    Next: [2. The computation graph](02_computation_graph.py), where we open up `grad_fn`.
    """)
    return


if __name__ == "__main__":
    app.run()
