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
    # 6. Turning autograd off

    Recording a graph costs time and memory: every operation allocates a node and keeps saved
    tensors alive until `backward()`. Much of the time you do not want that: when you evaluate a
    model, when you update parameters, when you log a metric, when you convert a tensor to
    NumPy. PyTorch gives you several switches. They differ in *scope* (a block of code, or one
    tensor) and in *strictness*; this lesson goes through all of them, including the legacy
    names you will meet in old code.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/06_turning_autograd_off.ipynb` by
    > `notebooks/marimo_build.py`). marimo runs a cell again whenever a name it reads changes, and
    > each name belongs to one cell, so these things differ from the Jupyter lesson:
    >
    > - **Names defined in several cells are numbered** in the order the cells come (none in this lesson).
    >   A name used in one cell only starts with `_` (private to that cell).
    > - **Where the lesson says to run a cell again,** press that cell's run button (▶): marimo
    >   does not re-run a cell on its own.
    > - **Printed values** appear in the cell's output: a cell that prints does it inside
    >   `with mo.redirect_stdout():`.
    > - **The exercises** have the same placeholders (`...`) and the same `check_...()` cells; the solutions
    >   are the Jupyter notebook `notebooks/solutions/06_turning_autograd_off.ipynb`.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import minigrad as torch

        x = torch.tensor([1.0, 2.0], requires_grad=True)

        with torch.no_grad():
            y = x * 2
        print(y, "requires_grad:", y.requires_grad, " grad_fn:", y.grad_fn)
        print("grad mode back on after the block:", torch.is_grad_enabled())
    return torch, x


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## `no_grad`: a block that records nothing

    Inside `with torch.no_grad():` operations run normally, but no graph is recorded: results
    have `requires_grad=False`, even when their inputs require grad. The classic uses:

    - **evaluation**: a forward pass whose result you will not differentiate;
    - **parameter updates**: `w -= lr * w.grad` must not itself become part of the graph (and an
      in-place change of a leaf that requires grad is an error outside `no_grad`, lesson 9).

    It also works as a decorator, and `enable_grad()` switches recording back on inside it:
    """)
    return


@app.cell
def _(mo, torch, x):
    with mo.redirect_stdout():
        @torch.no_grad()
        def evaluate(t):
            return (t * 2).sum()


        print("decorated:", evaluate(x).requires_grad)

        with torch.no_grad():
            with torch.enable_grad():
                print("enable_grad inside no_grad:", (x * 2).requires_grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## `set_grad_enabled`: on or off, decided at run time

    `torch.set_grad_enabled(mode)` takes a boolean, which makes it the natural switch for code
    shared by training and evaluation:
    """)
    return


@app.cell
def _(mo, torch, x):
    with mo.redirect_stdout():
        def run_epoch(train):
            with torch.set_grad_enabled(train):
                out = (x * 3).sum()
            return out.requires_grad


        print("train=True: ", run_epoch(True))
        print("train=False:", run_epoch(False))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## `inference_mode`: no_grad, stricter and faster

    `torch.inference_mode()` is `no_grad` plus a promise: the tensors created inside will
    **never** be used in autograd later. In PyTorch that promise lets it skip even the
    bookkeeping that `no_grad` keeps (the version counters of lesson 9), which makes pure
    inference a little faster. Break the promise and you get an error:
    """)
    return


@app.cell
def _(mo, torch, x):
    with mo.redirect_stdout():
        with torch.inference_mode():
            i = x * 2
        print(i, "requires_grad:", i.requires_grad, " is_inference:", i.is_inference())

        try:
            (i * x).sum().backward()
        except RuntimeError as err:
            print("RuntimeError:", err)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Use `inference_mode` for serving a model or computing predictions you will only look at;
    use `no_grad` when results may flow back into training (for example a target computed by
    another network).

    ## `detach()`: one tensor, cut from the graph

    The switches above act on a *block*. `t.detach()` acts on one tensor: it returns a new
    tensor with the same values (and the same memory) that is a leaf with no history. Gradient
    does not flow back through a detached tensor, which is how you say "treat this value as a
    constant":
    """)
    return


@app.cell
def _(mo, x):
    with mo.redirect_stdout():
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
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## `.data`: the old, dangerous way

    Before `detach()` existed, code reached into `t.data`. It also gives the values without
    history, but with one crucial difference: `.data` **does not share the version counter**
    (lesson 9), so autograd cannot notice when you change it in place. The same mistake, made
    both ways:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
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
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `SigmoidBackward0` saved its output to compute $\sigma(1 - \sigma)$. Through `.data` the
    output became $\sigma + 1$ and the gradient came out wrong without a word. Through
    `detach()` the version counter moved and `backward()` refused. **Use `detach()`.** The only
    common legitimate `.data` in modern code is inside an optimizer that is already under
    `no_grad`, and even there `with torch.no_grad(): w -= ...` says the same thing more clearly.

    ## The legacy `Variable` and `volatile`

    Before PyTorch 0.4 (2018), tensors could not require grad. You wrapped them in a
    `Variable` to record operations, and `Variable(t, volatile=True)` meant "never record
    anything that touches this", the ancestor of `no_grad`. Since 0.4 every tensor is a
    Variable: `Variable(t)` survives only so old code runs, and returns a plain tensor.
    `volatile` does nothing at all, except warn:
    """)
    return


@app.cell
def _(mo, torch, x):
    with mo.redirect_stdout():
        from minigrad.autograd import Variable

        v = Variable(torch.ones(2), requires_grad=True)
        print(v, type(v).__name__, " isinstance(v, Variable):", isinstance(v, Variable))

        old = Variable(torch.ones(2), volatile=True)  # old code: "no graph for anything using old"
        r = old * x
        print("r.requires_grad:", r.requires_grad, " (a graph is recorded after all)")
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Old code with `volatile=True` therefore runs, prints a warning, and silently records graphs
    it used to skip, costing memory during evaluation. The translation table:

    | old code | today |
    |---|---|
    | `Variable(t)` | `t` |
    | `Variable(t, requires_grad=True)` | `t.requires_grad_()`, or `torch.tensor(..., requires_grad=True)` |
    | `Variable(t, volatile=True)` | run the code inside `with torch.no_grad():` (or `inference_mode()`) |
    | `v.data` to get the values | `v.detach()` |
    | `v.data[0]` / `loss.data[0]` to get a number | `v[0].item()` / `loss.item()` |

    ## Exercise 6a: does it require grad?

    For each snippet, predict whether `r.requires_grad` is `True` or `False` (here `x` requires
    grad). Fill in the dictionary with booleans.

    | key | snippet |
    |---|---|
    | `"a"` | `with torch.no_grad(): r = x * 2` |
    | `"b"` | `r = x.detach() * 2` |
    | `"c"` | `with torch.no_grad(): r = x` |
    | `"d"` | `with torch.set_grad_enabled(False): r = (x * 2).requires_grad_()` |
    | `"e"` | `with torch.inference_mode(): r = x + 1` |
    | `"f"` | `r = Variable(torch.ones(2), volatile=True) * x` |
    """)
    return


@app.cell
def _():
    # Cell tags: nbval-ignore-output
    answers = {"a": ..., "b": ..., "c": ..., "d": ..., "e": ..., "f": ...}
    return (answers,)


@app.cell
def _(answers, mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_grad_quiz

        check_grad_quiz(answers)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Exercise 6b: an evaluation helper

    During training you regularly measure how the model does on data it does not learn from.
    Nothing will ever call `backward()` on those numbers, so recording a graph for them only
    costs time and memory: every node keeps its saved tensors alive, which for a real network
    means every activation of the whole validation set.

    Write `evaluate(w, inputs, labels)` for a tiny linear classifier with weights `w` (which
    requires grad, because training updates it). It returns the pair `(loss, accuracy)`:

    - `scores = inputs @ w`, one score per row;
    - `loss = F.binary_cross_entropy_with_logits(scores, labels)`, the logistic loss (`F` is
      `torch.nn.functional`, PyTorch's module of functions behind the layers and losses);
    - `accuracy`: the fraction of rows where the prediction, 1 when the score is `> 0` and 0
      otherwise, equals the label.

    It must not record a graph at all (the check watches what the nodes save), and grad mode must
    be on again when it returns. `loss` and `accuracy` may be tensors or Python numbers.
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        F = torch.nn.functional

        def evaluate_1(w, inputs, labels):
            return ...
        w = torch.tensor([1.0, -1.0], requires_grad=True)
        inputs = torch.tensor([[2.0, 1.0], [0.0, 3.0], [1.0, 0.5], [1.0, 2.0]])
        labels = torch.tensor([1.0, 0.0, 0.0, 0.0])
        print(evaluate_1(w, inputs, labels))
    return (evaluate_1,)


@app.cell
def _(evaluate_1, mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_evaluate
        check_evaluate(evaluate_1)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## What to remember

    - `no_grad()` / `set_grad_enabled(False)`: a block that records nothing; use it for
      evaluation and parameter updates. `set_grad_enabled(mode)` when the choice is a variable.
    - `inference_mode()`: like `no_grad`, stricter (its tensors can never enter autograd later)
      and a little faster in PyTorch.
    - `detach()`: one tensor without history, sharing memory *and* the version counter.
      `.data` shares the memory but not the counter: avoid it.
    - `Variable` and `volatile` are history: `Variable(t)` is `t`, and `volatile=True` is
      `with torch.no_grad():`.

    Next: [7. Custom `autograd.Function`](07_custom_function.py).
    """)
    return


if __name__ == "__main__":
    app.run()
