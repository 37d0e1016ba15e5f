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
    # 4. Gradients accumulate, graphs are freed

    Two behaviours of `backward()` surprise almost everyone the first time, and both come from
    deliberate design decisions:

    1. `backward()` **adds** into `.grad`; it never overwrites it.
    2. After `backward()`, the graph's saved tensors are **freed**, so a second `backward()`
       through the same graph fails, unless you asked for `retain_graph=True`.

    This lesson shows both, explains why they are the right defaults, and shows when
    `retain_graph=True` is the fix and when it only hides a bug.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/04_accumulation_and_retain_graph.ipynb` by
    > `notebooks/marimo_build.py`). marimo runs a cell again whenever a name it reads changes, and
    > each name belongs to one cell, so these things differ from the Jupyter lesson:
    >
    > - **Names defined in several cells are numbered** in the order the cells come: `x` → `x_1`, `x_2`, `x_3`, `x_4`, `x_5`.
    >   A name used in one cell only starts with `_` (private to that cell).
    > - **Where the lesson says to run a cell again,** press that cell's run button (▶): marimo
    >   does not re-run a cell on its own.
    > - **Printed values** appear in the cell's output: a cell that prints does it inside
    >   `with mo.redirect_stdout():`.
    > - **The exercises** have the same placeholders (`...`) and the same `check_...()` cells; the solutions
    >   are the Jupyter notebook `notebooks/solutions/04_accumulation_and_retain_graph.ipynb`.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import minigrad as torch
        x = torch.tensor(2.0, requires_grad=True)
        for i in range(3):
            _y = x ** 2
            _y.backward()  # dy/dx = 2x = 4, every time
            print(f'after backward #{i + 1}: x.grad =', x.grad)
    return (torch,)


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    The derivative is 4 each time, but `x.grad` reads 4, 8, 12: each call *added* its result.
    The `AccumulateGrad` node from lesson 2 is named for exactly this.

    ## Why add?

    Because the gradient of a sum is the sum of the gradients. If a parameter contributes to
    two losses, or you split a batch that does not fit in memory into pieces, calling
    `backward()` on each piece and letting the gradients add up gives exactly the gradient of
    the total:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        a = torch.tensor([1.0, -2.0], requires_grad=True)
        (a.sin().sum() + (a**3).sum()).backward()
        together = a.grad.clone()

        a.grad = None
        a.sin().sum().backward()  # piece 1
        (a**3).sum().backward()  # piece 2: adds to piece 1
        print("one backward on the sum:", together)
        print("two backwards, added:   ", a.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Predict the sum

    The same rule works *inside* one graph: a tensor used several times gets the sum of the
    gradients of its uses, and `AccumulateGrad` then adds that sum into `.grad`. The player
    below asks you both before it shows them. `x.grad` already holds `[2, 4]` from a first
    `backward()`; then `y = 3x` is used three times in `y * y + y`, so the gradient arriving at
    `y` is $2y + 1$. Type your answers as values, like `[1, 2]`.
    """)
    return


@app.cell
def _(torch):
    import viz
    x_1 = torch.tensor([1.0, 2.0], requires_grad=True)
    (x_1 * x_1).sum().backward()
    _y = x_1 * 3
    _loss = (_y * _y + _y).sum()
    player = viz.animate(_loss, params={'x': x_1}, quiz=True, quiz_kinds=['sum', 'accumulate'])
    player
    return player, viz, x_1


@app.cell
def _(mo, player, x_1):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        print('\n'.join((f'before step {q.step}: {q.prompt}' for q in player.quiz.questions)))
        print('x.grad after the animated backward:', x_1.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Zeroing between steps

    The price: in a training loop, where every step wants a *fresh* gradient, you must clear
    `.grad` yourself before the next `backward()`. Two ways:

    - `x.grad = None`: drop the tensor; the next `backward()` creates a new one. This is what
      `optimizer.zero_grad()` does by default in PyTorch 2 (`set_to_none=True`).
    - `x.grad.zero_()`: keep the tensor and fill it with zeros.

    The difference matters if you kept a reference to the old `.grad`, because accumulation
    happens **in place**:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        x_2 = torch.tensor(2.0, requires_grad=True)
        (x_2 ** 2).backward()
        g = x_2.grad  # the same tensor object, not a copy
        (x_2 ** 2).backward()
        print('x.grad:', x_2.grad, ' g:', g, ' same object:', g is x_2.grad)
        x_2.grad.zero_()
        print('after zero_():', x_2.grad, ' g:', g)
        x_2.grad = None
        print('after = None: ', x_2.grad, ' g:', g)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    If you need a snapshot of a gradient, take `x.grad.clone()`.

    ## Backward through the graph a second time

    Now the other surprise. Call `backward()` twice on the same result:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        _w = torch.tensor([1.0, 2.0], requires_grad=True)
        _loss = (_w * 3).sum()
        _loss.backward()
        print('first backward: w.grad =', _w.grad)
        try:
            _loss.backward()
        except RuntimeError as err:
            print('RuntimeError:', err)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Lesson 2 showed that nodes keep **saved tensors**: `MulBackward0` keeps what it needs to
    compute its gradient. Those tensors can be big (every activation of a network), so
    `backward()` releases them as soon as each node has run. The graph structure is still there,
    but the values it needs are gone, and a second pass cannot run.

    The error appears only if a node on the path *saved* something. Addition's gradient is just
    "pass the gradient through", so `(b + 1).sum()` saves nothing and can be walked again:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        b = torch.tensor([1.0, 2.0], requires_grad=True)
        s = (b + 1).sum()
        s.backward()
        s.backward()  # no error: AddBackward0 and SumBackward0 saved nothing
        print("b.grad after two passes:", b.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## When `retain_graph=True` is right

    `backward(retain_graph=True)` keeps the saved tensors, so the graph can be walked again.
    That is the right tool when you genuinely need **several backward passes through one forward
    pass**, for example separate gradients of two losses that share an expensive part:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        _w = torch.tensor([1.0, -1.0], requires_grad=True)
        h = (_w * torch.tensor([2.0, 3.0])).tanh()  # shared, expensive part
        loss_a = h.sum()
        loss_b = (h ** 2).sum()
        loss_a.backward(retain_graph=True)
        grad_a = _w.grad.clone()  # keep h's graph for the second pass
        _w.grad = None
        loss_b.backward()
        print('d loss_a / dw:', grad_a)  # the last pass may free everything
        print('d loss_b / dw:', _w.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    (If you only need the gradient of `loss_a + loss_b`, skip all that: add the losses and call
    `backward()` once.)

    ## When `retain_graph=True` hides a bug

    The error message suggests `retain_graph=True`, and it makes the error go away. But most of
    the time, in a training loop, the error means something else: **part of the forward pass
    was computed once, outside the loop**, and every iteration walks back through that old
    piece of graph. Here the prediction is computed before the loop:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        _w = torch.tensor(1.0, requires_grad=True)
        x_3, _target = (torch.tensor(2.0), torch.tensor(6.0))
        _pred = _w * x_3
        for _step in range(3):
            _loss = (_pred - _target) ** 2
            try:
                _loss.backward()
            except RuntimeError as err:
                print(f'step {_step}: RuntimeError: {str(err)[:70]}...')
                break
            with torch.no_grad():
                _w = _w - 0.05 * _w.grad
            _w.grad = None
            print(f'step {_step}: loss = {_loss.item():.4f}, w = {_w.item():.4f}')
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Add `retain_graph=True` and the loop runs, but look at the loss: `pred` still holds the
    prediction made with the *first* `w`, so every step sees the same loss and the same
    gradient, and `w` walks straight past the answer (3.0):
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        _w = torch.tensor(1.0, requires_grad=True)
        x_4, _target = (torch.tensor(2.0), torch.tensor(6.0))
        _pred = _w * x_4
        for _step in range(4):
            _loss = (_pred - _target) ** 2
            _loss.backward(retain_graph=True)
            with torch.no_grad():
                _w = _w - 0.05 * _w.grad
            _w.grad = None
            print(f'step {_step}: loss = {_loss.item():.4f}, w = {_w.item():.4f}')
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    The real fix is to **recompute the forward pass inside the loop**, so every step builds a
    fresh graph from the current `w`. Ask yourself, whenever this error appears: *which tensor
    from an earlier backward pass am I still using?* If you meant to use its value but not
    differentiate through it again (a hidden state carried between steps of a recurrent
    network, for example), cut it loose with `.detach()` (lesson 6). Reach for
    `retain_graph=True` only when you really mean to backpropagate through the same forward
    computation twice.

    ## Exercise 4: fix the loop

    Write `train(x, target, steps, lr)` that fits `w` so that `w * x` matches `target` (the
    check uses `x = 2` and `target = 6`; start at `w = 1`), with the loss `(w * x - target) ** 2`
    and the update `w -= lr * w.grad`, as in the loops above. It has two bugs to avoid: the stale forward pass,
    and gradients that pile up between steps. Return `w` after `steps` updates.
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        def train(x, target, steps=20, lr=0.05):
            w = torch.tensor(1.0, requires_grad=True)
            ...
            return w


        print(train(torch.tensor(2.0), torch.tensor(6.0)))
    return (train,)


@app.cell
def _(mo, train):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_train

        check_train(train)
    return


@app.cell
def _(torch, viz):
    _w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    x_5 = torch.tensor([3.0, 4.0])
    opt = torch.optim.SGD([_w], lr=0.1)
    with viz.session(params={'w': _w, 'x': x_5}) as story:
        _loss = (_w * x_5).sum()
        _loss.backward(retain_graph=True)
        _loss.backward()
        opt.step()
        opt.zero_grad()
        _loss.backward()
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
    ## What to remember

    - `backward()` adds into `.grad`, in place. Clear it between steps (`x.grad = None` or
      `optimizer.zero_grad()`), and `clone()` a gradient you want to keep.
    - `backward()` frees the saved tensors of the graph it walked. A second walk fails if any
      node on the path had saved something.
    - `retain_graph=True` is for several backward passes through **one** forward pass. In a
      training loop, "backward through the graph a second time" usually means a forward
      computation that should be inside the loop (or detached) is not.
    - `with viz.session() as story:` replays several calls as one story (the cells above):
      `story.player()` to step through it, `story.summary()` as text.

    Next: [5. Hooks and `retain_grad`](05_hooks.py), to watch and change gradients in flight.
    """)
    return


if __name__ == "__main__":
    app.run()
