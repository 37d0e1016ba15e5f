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
    # 9. In-place operations and version counters

    An in-place operation changes a tensor's memory instead of making a new tensor: methods
    ending in an underscore (`add_`, `mul_`, `zero_`, `clamp_`), augmented assignment
    (`t += 1`), and item assignment (`t[0] = 5`). They save memory, and they are how
    parameters get updated. They also clash with something autograd relies on: **the tensors a
    node saved for the backward pass must still hold the values they had in the forward pass.**
    This lesson shows how autograd notices when they do not, the two errors you will meet, and
    how to fix the code that triggers them.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/09_inplace_and_versions.ipynb` by
    > `notebooks/marimo_build.py`). marimo runs a cell again whenever a name it reads changes, and
    > each name belongs to one cell, so these things differ from the Jupyter lesson:
    >
    > - **Names defined in several cells are numbered** in the order the cells come: `x` → `x_1`, `x_2`.
    >   A name used in one cell only starts with `_` (private to that cell).
    > - **Where the lesson says to run a cell again,** press that cell's run button (▶): marimo
    >   does not re-run a cell on its own.
    > - **Printed values** appear in the cell's output: a cell that prints does it inside
    >   `with mo.redirect_stdout():`.
    > - **The exercises** have the same placeholders (`...`) and the same `check_...()` cells; the solutions
    >   are the Jupyter notebook `notebooks/solutions/09_inplace_and_versions.ipynb`.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import minigrad as torch
        import viz
        a = torch.tensor([1.0, 2.0, 3.0])
        print('fresh:      _version =', a._version)
        a.add_(1)
        print('a.add_(1):  _version =', a._version)
        a[0] = 5
        print('a[0] = 5:   _version =', a._version)
        a = a + 1
        print('a += 1:     _version =', a._version)
        b = a * 1
        print('b = a * 1:  b._version =', b._version, ' (a new tensor starts at 0)')
    return a, torch, viz


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## The version counter

    Every tensor carries `_version`, a counter that every in-place operation increments. It
    belongs to the *memory*, not to the Python object: a view (`a[1:]`) and a `detach()`ed
    tensor share it with their base, because writing through them changes the same numbers.
    """)
    return


@app.cell
def _(a, mo):
    with mo.redirect_stdout():
        v = a[1:]  # a view: same memory
        v.mul_(2)
        print("after v.mul_(2): a._version =", a._version, " v._version =", v._version, " a =", a)

        d = a.detach()  # same memory, same counter
        d.zero_()
        print("after d.zero_(): a._version =", a._version, " a =", a)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    When a node saves a tensor for backward, it also notes the tensor's version at that moment.
    When the backward pass reaches the node, it compares: if the version moved, the saved values
    are not the ones the forward pass used, and the gradient would be wrong.

    ## Error 1: a saved tensor was modified

    `z = p * q` saves both factors ($\partial z / \partial q = p$). Change `p` afterwards and the
    backward pass refuses:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        q = torch.tensor([3.0, 4.0], requires_grad=True)
        _p = x * 2
        _z = _p * q  # MulBackward0 saves p (at version 0) and q
        _p.add_(1)  # p is now at version 1
        try:
            _z.sum().backward()
        except RuntimeError as err:
            print('RuntimeError:', err)
    return q, x


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Read the message from the left: the tensor is a `[minigrad.FloatTensor [2]]` (that is `p`),
    "output 0 of Add" (after `p.add_(1)`, `p`'s latest history is that in-place add), "at
    version 1; expected version 0". The check applies **only to tensors a node saved**.
    Addition saves nothing (its gradient does not depend on the values), so the same change
    after `p + q` is harmless:
    """)
    return


@app.cell
def _(mo, q, x):
    with mo.redirect_stdout():
        _p = x * 2
        _z = _p + q  # AddBackward0 saves nothing
        _p.add_(1)
        _z.sum().backward()
        print('x.grad:', x.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Why the check exists

    Without it, you would get a wrong gradient and no warning. `.data` (lesson 6) bypasses the
    version counter, so it shows what the check protects you from:
    """)
    return


@app.cell
def _(mo, q, x):
    with mo.redirect_stdout():
        x.grad, q.grad = (None, None)
        _p = x * 2
        _z = _p * q
        _p.data.add_(1)  # the same change, hidden from the version counter
        _z.sum().backward()
        print('q.grad:', q.grad, ' but dz/dq = p as it was in the forward pass =', (x * 2).detach())
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `q.grad` used the modified `p`: off by one everywhere, silently. That is the bug the error
    message saves you from, so treat it as a friend, not an obstacle.

    ## Error 2: in-place on a leaf that requires grad

    A leaf that requires grad is something you want the derivative *with respect to*. Changing
    it in place while recording would make it the output of an operation, so it would no longer
    be the starting point of the graph. Autograd forbids it, for the leaf and for its views:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
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
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    That is why every optimizer step runs under `no_grad`: the update is in place, on leaves
    that require grad, and must not be part of the graph.

    ## In-place on a non-leaf: allowed, and recorded

    Writing into a computed tensor is fine when nothing saved it. `c[0] = 10.0` records a
    `CopySlices` node: the gradient flows to the part of `c` that was not overwritten, and the
    overwritten element gets none:
    """)
    return


@app.cell
def _(mo, x):
    with mo.redirect_stdout():
        x.grad = None
        c = x.clone()
        c[0] = 10.0
        print(c, c.grad_fn.name())
        c.sum().backward()
        print("x.grad:", x.grad, " (x[0] was overwritten, so it has no influence)")
    return (c,)


@app.cell
def _(c, viz, x):
    viz.draw(c, params={"x": x})
    return


@app.cell
def _(c, mo, viz, x):
    with mo.redirect_stdout():
        print(viz.summary(c, params={"x": x}))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## The story of a version error

    The error comes long after the line that caused it. `viz.session(source=True)` keeps both
    ends together: the in-place op that bumped the version counter (with the line that did it)
    and the backward that failed on it, with the saved value's version then and now. Step through
    it in the player (the next cell prints the same steps as text).
    """)
    return


@app.cell
def _(torch, viz):
    x_1 = torch.tensor([1.0, 2.0], requires_grad=True)
    with viz.session(params={'x': x_1}, source=True) as story:
        y = x_1.exp()  # ExpBackward0 saves its result, y itself
        y.mul_(2)  # in place: y's version goes from 0 to 1
        y.sum().backward()
    story.player()
    return (story,)


@app.cell
def _(mo, story):
    with mo.redirect_stdout():
        print(story.summary())
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Fixing code that triggers the error

    When you meet "modified by an inplace operation":

    1. **Find the tensor.** The message gives its shape and the operation that last wrote it.
       If that is not enough, `torch.autograd.set_detect_anomaly(True)` reports which forward
       operation's saved value was broken.
    2. **Make the operation out of place**: `y = y + 1` instead of `y += 1`,
       `torch.relu(h)` instead of `h.relu_()`. Memory is cheap compared to a wrong gradient.
    3. Or **`clone()` before** modifying, if you need both the old and the new values.
    4. Or **move the in-place operation before** the operation that saves the tensor.

    ## Exercise 9: repair softplus

    `softplus(x) = log(1 + e^x)`, and its derivative is the sigmoid $1 / (1 + e^{-x})$. The
    implementation below fails in `backward()`. Write `softplus_fixed(x)` that computes the same
    values and lets gradients flow (do not modify `x` either).
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        def softplus_buggy(x):
            y = x.exp()
            y = y + 1
            return y.log()
        x_2 = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        try:
            softplus_buggy(x_2).sum().backward()
        except RuntimeError as err:
            print('RuntimeError:', str(err).split(':')[0], '...')
    return


@app.function
# Cell tags: nbval-ignore-output
def softplus_fixed(x):
    return ...


@app.cell
def _(mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_softplus

        check_softplus(softplus_fixed)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## What to remember

    - Every in-place operation bumps `_version`, which is shared by views and `detach()`ed
      tensors (but not by `.data`).
    - Nodes remember the versions of the tensors they saved; a mismatch at backward time is the
      "modified by an inplace operation" error. Only saved tensors are checked.
    - In-place on a leaf that requires grad is an error; parameter updates go under `no_grad`.
    - Fix by going out of place, cloning, or reordering. Never silence it with `.data`.

    Next: [10. Training a network](10_training.py).
    """)
    return


if __name__ == "__main__":
    app.run()
