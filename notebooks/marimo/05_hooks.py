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
    # 5. Hooks and `retain_grad`

    The backward pass of lesson 3 runs out of sight: gradients are computed, passed on, and
    (except at leaves) thrown away. **Hooks** are functions you attach to a tensor or to a node
    so that autograd calls them *during* the backward pass, with the gradient in hand. A hook
    can look at a gradient (debugging, logging, visualising) or replace it (clipping, scaling,
    masking). This lesson covers tensor hooks, `retain_grad`, node hooks and prehooks, the
    order in which they fire, and how to remove them.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/05_hooks.ipynb` by
    > `notebooks/marimo_build.py`). marimo runs a cell again whenever a name it reads changes, and
    > each name belongs to one cell, so these things differ from the Jupyter lesson:
    >
    > - **Names defined in several cells are numbered** in the order the cells come: `loss` → `loss_1`; `player` → `player_1`; `w` → `w_1`; `x` → `x_1`, `x_2`, `x_3`, `x_4`, `x_5`, `x_6`.
    >   A name used in one cell only starts with `_` (private to that cell).
    > - **Where the lesson says to run a cell again,** press that cell's run button (▶): marimo
    >   does not re-run a cell on its own.
    > - **Printed values** appear in the cell's output: a cell that prints does it inside
    >   `with mo.redirect_stdout():`.
    > - **The exercises** have the same placeholders (`...`) and the same `check_...()` cells; the solutions
    >   are the Jupyter notebook `notebooks/solutions/05_hooks.ipynb`.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import minigrad as torch
        import viz
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        _y = x * 2
        handle = _y.register_hook(lambda grad: print('hook on y sees', grad))
        z = (_y ** 2).sum()
        z.backward()
        print('x.grad:', x.grad)
    return handle, torch, viz, x


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Tensor hooks: `register_hook`

    `t.register_hook(fn)` asks autograd to call `fn(grad)` when the gradient of the loss with
    respect to `t` has been computed (here $\partial z / \partial y = 2y = [4, 8, 12]$). A hook
    that returns `None` only looks. The call returns a **handle**, and `handle.remove()` takes
    the hook off again. A hook on `y` lives as long as that graph does; a hook on a leaf stays
    for every backward pass that reaches the leaf, until you remove it:
    """)
    return


@app.cell
def _(handle, mo, x):
    with mo.redirect_stdout():
        handle.remove()

        x_handle = x.register_hook(lambda grad: print("hook on x sees", grad))
        (x * 3).sum().backward()  # the hook fires
        x_handle.remove()
        (x * 3).sum().backward()  # silence: the hook is gone
        print("x.grad:", x.grad, " (8x from before, plus 3, plus 3)")
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Hooks that change the gradient

    If the hook **returns a tensor**, that tensor replaces the gradient from then on: every
    node further back sees the new value. A common use is clipping the gradient of one
    intermediate result:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        x_1 = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        _y = x_1 * 2
        _y.register_hook(lambda grad: grad.clamp(-5, 5))
        (_y ** 2).sum().backward()
        print('x.grad:', x_1.grad, ' (unclipped it would be [8, 16, 24])')
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## `retain_grad`: keep a non-leaf's gradient

    Lesson 1 showed that `y.grad` stays `None` for non-leaves. `y.retain_grad()` is a built-in
    hook that stores the gradient in `y.grad`. It stores the value **after** all the tensor's
    hooks have run, whatever the order you registered them in:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        x_2 = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        _y = x_2 * 2
        _y.retain_grad()
        _y.register_hook(lambda grad: grad * 10)
        (_y ** 2).sum().backward()
        print('y.grad:', _y.grad, ' (= 10 * 2y)')
        print('x.grad:', x_2.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Hooks can only go on tensors that require grad (there would never be a gradient to hook):
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        try:
            torch.tensor([1.0, 2.0]).register_hook(lambda grad: grad)
        except RuntimeError as err:
            print("RuntimeError:", err)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Node hooks and prehooks

    Nodes (`grad_fn` objects, `AccumulateGrad` included) take hooks too:

    - `node.register_prehook(fn)`: `fn(grad_outputs)` runs **before** the node computes, with a
      tuple of the gradients arriving at the node; returning a tuple replaces them.
    - `node.register_hook(fn)`: `fn(grad_inputs, grad_outputs)` runs **after**, with what the
      node computed for each input (`None` for inputs that need no gradient) and what it received.
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        x_3 = torch.tensor([1.0, 2.0], requires_grad=True)
        _y = x_3 * 3

        def halve(grad_outputs):
            print('prehook receives', grad_outputs)
            return (grad_outputs[0] * 0.5,)

        def report(grad_inputs, grad_outputs):
            print('hook: grad_inputs =', grad_inputs, ' grad_outputs =', grad_outputs)
        _y.grad_fn.register_prehook(halve)
        _y.grad_fn.register_hook(report)
        _y.sum().backward()
        print('x.grad:', x_3.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `grad_inputs` has a `None` for the constant 3, exactly like the `(None, 0)` entry in
    `next_functions`. (A node hook's return value replaces `grad_inputs` too, but changing a
    gradient on the tensor, or in a prehook, says more clearly what you mean.)

    ## The order of everything

    With every kind of hook registered on `y = x * 2`, one backward pass calls them in this
    order (the same as PyTorch 2.13):
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        x_4 = torch.tensor([1.0, 2.0], requires_grad=True)
        _y = x_4 * 2
        acc = _y.grad_fn.next_functions[0][0]
        log = []
        _y.register_hook(lambda g: log.append('tensor hook on y'))
        _y.grad_fn.register_prehook(lambda go: log.append('MulBackward0 prehook'))
        _y.grad_fn.register_hook(lambda gi, go: log.append('MulBackward0 hook'))
        x_4.register_hook(lambda g: log.append('tensor hook on x (the leaf)'))
        acc.register_prehook(lambda go: log.append('AccumulateGrad prehook'))
        x_4.register_post_accumulate_grad_hook(lambda t: log.append('post-accumulate hook on x'))
        acc.register_hook(lambda gi, go: log.append('AccumulateGrad hook'))
        _y.sum().backward()
        print('\n'.join((f'{i}. {entry}' for i, entry in enumerate(log, 1))))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    The gradient of `y` is finished before `MulBackward0` starts, so `y`'s tensor hooks run
    first, then the node's prehook, the node, its hook; then the same pattern one node further
    back. `register_post_accumulate_grad_hook` (on leaves only) runs once `x.grad` has been
    updated; optimizers that step each parameter as soon as its gradient is ready use it.

    ## Hooks in the animation

    `viz.animate` runs the real backward pass, so your hooks fire in it and the player marks
    the steps where they did (and shows when a hook replaced a gradient). Here a clipping hook
    sits on `h`, and also notes what it did in a list, so we can print it afterwards:
    """)
    return


@app.cell
def _():
    fired = []


    def clip(grad):
        fired.append(f"hook on h: {grad.tolist()} -> {grad.clamp(-2, 2).tolist()}")
        return grad.clamp(-2, 2)

    return clip, fired


@app.cell
def _(clip, torch, viz):
    x_5 = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 1.0, -2.0], requires_grad=True)
    _h = x_5 * w
    _h.register_hook(clip)
    loss = (_h ** 2).sum()
    player = viz.animate(loss, params={'x': x_5, 'w': w})
    player
    return loss, w, x_5


@app.cell
def _(fired, loss, mo, viz, w, x_5):
    with mo.redirect_stdout():
        print('\n'.join(fired))
        print(viz.summary(loss, params={'x': x_5, 'w': w}))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Predict the order

    Now predict before you watch. The quiz player asks which node runs next and what a node
    sends; the clipping hook is on `h` again, so the gradient `MulBackward0` works with is the
    *clipped* one. The values are new (the player above already showed its gradients): work out
    `PowBackward0`'s output ($2h$), clip it to $[-2, 2]$, then multiply by `w` for `x`'s gradient.
    The cell under the player reveals the answers: run it after answering.
    """)
    return


@app.cell
def _(torch, viz):
    x_6 = torch.tensor([1.0, 0.5, -1.5], requires_grad=True)
    w_1 = torch.tensor([2.0, -3.0, 1.0], requires_grad=True)
    _h = x_6 * w_1
    _h.register_hook(lambda grad: grad.clamp(-2, 2))
    loss_1 = (_h ** 2).sum()
    player_1 = viz.animate(loss_1, params={'x': x_6, 'w': w_1}, quiz=True, quiz_kinds=['grad', 'next'])
    player_1
    return player_1, x_6


@app.cell
def _(mo, player_1, x_6):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        print('\n'.join((f'before step {q.step}: {q.prompt}' for q in player_1.quiz.questions)))
        print('x.grad =', x_6.grad)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Exercise 5: a clipping hook

    Write `clip_hook(grad)`, a tensor hook that limits every element of the gradient to the
    range $[-1, 1]$. The check registers it on an intermediate tensor, runs `backward()`, and
    compares the leaf's gradient with the expected clipped one.
    """)
    return


@app.function
# Cell tags: nbval-ignore-output
def clip_hook(grad):
    return ...


@app.cell
def _(mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_clip_hook

        check_clip_hook(clip_hook)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## What to remember

    - `tensor.register_hook(fn)`: `fn(grad)` during backward; return `None` to look, a tensor
      to replace the gradient. `retain_grad()` keeps the (hooked) gradient in `.grad`.
    - `node.register_prehook(fn(grad_outputs))` runs before a node, `node.register_hook(fn(grad_inputs,
      grad_outputs))` after it.
    - Every `register_*` returns a handle; `handle.remove()` undoes it.

    Next: [6. Turning autograd off](06_turning_autograd_off.py).
    """)
    return


if __name__ == "__main__":
    app.run()
