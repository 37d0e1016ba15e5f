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
    # 12. Debugging a custom `Function`

    Autograd trusts every `backward` you give it (lesson 7). When one is wrong, nothing
    raises: the gradients of every tensor *below* that node are quietly wrong, the loss still
    goes down a little, and the bug shows up days later as a model that trains badly. In a
    network with several custom Functions, which one is it?

    `gradcheck` answers "is *this* function right?" when you already suspect it. This lesson
    uses two viz tools that go through the whole graph instead: `viz.animate(loss, check=True)`
    and `viz.gradcheck_graph(loss)` re-run each custom Function on the very values it saw in the
    forward pass, in float64, and compare its `backward` with finite differences. The wrong node
    is marked, with which input's gradient is off and by how much.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/12_debugging_a_custom_function.ipynb` by
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
    >   are the Jupyter notebook `notebooks/solutions/12_debugging_a_custom_function.ipynb`.
    """)
    return


@app.cell
def _():
    import numpy as np

    import minigrad as torch
    import viz
    from minigrad.autograd import Function, gradcheck

    return Function, gradcheck, np, torch, viz


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## A network with two hand-written Functions

    Swish, $\mathrm{swish}(x) = x\,\sigma(\beta x)$, is a smooth cousin of ReLU with a learnable
    slope $\beta$. Here it is written as a `Function` (with a bug planted in its `backward`), next
    to a correct `Square`:
    """)
    return


@app.cell
def _(Function, mo, np, torch):
    with mo.redirect_stdout():
        class Swish(Function):
            @staticmethod
            def forward(ctx, x, beta):
                ctx.save_for_backward(x, beta)
                return x * torch.sigmoid(beta * x)

            @staticmethod
            def backward(ctx, grad_output):
                x, beta = ctx.saved_tensors
                s = torch.sigmoid(beta * x)
                grad_x = grad_output * s  # the bug is here
                grad_beta = (grad_output * x * x * s * (1 - s)).sum()
                return grad_x, grad_beta


        class Square(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad_output):
                (x,) = ctx.saved_tensors
                return 2 * x * grad_output


        rng = np.random.default_rng(12)
        x = torch.tensor(rng.standard_normal((4, 3)))
        W = torch.tensor(rng.standard_normal((3, 2)), requires_grad=True)
        beta = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
        z = x @ W
        a = Swish.apply(z, beta)
        loss = Square.apply(a).mean()
        print(loss)
    return Square, Swish, W, beta, x


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Watching the backward pass with `check=True`

    The player runs `loss.backward()` as usual. At each custom node it also checks the node's
    local vector-Jacobian product, on the gradient the node received, against finite
    differences; a wrong node turns vermillion and its step says which input is off.
    """)
    return


@app.cell
def _(Square, Swish, W, beta, viz, x):
    loss_1 = Square.apply(Swish.apply(x @ W, beta)).mean()  # built here too, so this cell can run again
    player = viz.animate(loss_1, params={'W': W, 'beta': beta}, check=True)
    player
    return loss_1, player


@app.cell
def _(mo, player):
    with mo.redirect_stdout():
        for frame in player.frames:
            if frame.check is not None:
                print(f"step {frame.step}: {frame.check.text}")
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `Square` is fine; `Swish` gives a wrong gradient for its input `x` (the `z` of the network)
    and a right one for `beta`. So `W.grad`, which autograd computed from `Swish`'s gradient for
    `z`, is wrong too, although `MmBackward0` itself did nothing wrong: the first wrong node in
    backward order is the one to fix.

    ## Without running backward: `viz.gradcheck_graph`

    `gradcheck_graph` does the same checks without touching the graph or any `.grad` (each
    Function is re-run on copies of its inputs, with a random gradient). Built-in operations
    are not checked: their derivatives are the library's own.
    """)
    return


@app.cell
def _(W, beta, loss_1, viz):
    report = viz.gradcheck_graph(loss_1, params={'W': W, 'beta': beta})
    report
    return (report,)


@app.cell
def _(mo, report):
    with mo.redirect_stdout():
        print(report)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Its max |Δ| is not the player's: the player multiplied by the gradient `SwishBackward` received
    in the real backward pass, `gradcheck_graph` by a random output gradient (it runs no backward),
    and the size of the error depends on what it is multiplied by. Each verdict says which one it
    used, in brackets; the verdict itself (which node, which input) is the same.

    The numbers behind the verdict: for the wrong input, what `backward` gave and what finite
    differences measured, element by element. Their difference is exactly the term the bug
    left out. Which one? Differentiate $x\,\sigma(\beta x)$ with the product rule.
    """)
    return


@app.cell
def _(mo, report):
    with mo.redirect_stdout():
        (node,) = report.wrong
        (bad,) = node.wrong_inputs
        print("input:", bad.name, " max |difference|:", f"{bad.max_diff:.4f}")
        print("backward gives:\n", bad.analytic.round(4))
        print("finite differences:\n", bad.numeric.round(4))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Exercise 12: fix `Swish`

    Write `MySwish`, a correct version: the same `forward`, and a `backward` that returns the
    gradient for `x` (with both terms of the product rule; $\sigma' = \sigma(1 - \sigma)$) and the
    gradient for `beta` (one number: summed over every element). The check runs
    `viz.gradcheck_graph` on your function, then `gradcheck`.
    """)
    return


@app.cell
def _(Function):
    # Cell tags: nbval-ignore-output
    class MySwish(Function):
        @staticmethod
        def forward(ctx, x, beta):
            return ...

        @staticmethod
        def backward(ctx, grad_output):
            return ...

    return (MySwish,)


@app.cell
def _(MySwish, mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_swish

        check_swish(MySwish)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## After the fix

    The same network with `MySwish`: every custom node passes, and `gradcheck` agrees on small
    float64 inputs.
    """)
    return


@app.cell
def _(MySwish, Square, W, beta, mo, viz, x):
    with mo.redirect_stdout():
        try:
            loss_fixed = Square.apply(MySwish.apply(x @ W, beta)).mean()
        except Exception as err:  # exercise 12 not done yet
            print(f"MySwish does not work yet ({type(err).__name__}): finish exercise 12, then run this cell again")
            loss_fixed = None
        fixed_report = viz.gradcheck_graph(loss_fixed, params={"W": W, "beta": beta}) if loss_fixed is not None else None
    fixed_report
    return fixed_report, loss_fixed


@app.cell
def _(MySwish, beta, fixed_report, gradcheck, loss_fixed, mo, torch):
    with mo.redirect_stdout():
        print(fixed_report if loss_fixed is not None else "(MySwish does not work yet: nothing to check)")
        if loss_fixed is not None:
            x64 = torch.tensor([-1.0, 0.25, 2.0], dtype=torch.float64, requires_grad=True)
            print("gradcheck:", gradcheck(MySwish.apply, (x64, beta)))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## What to remember

    - A wrong `backward` raises nothing: every gradient below it is silently wrong.
    - `viz.animate(loss, check=True)` and `viz.gradcheck_graph(loss)` check each custom
      `Function` on the values it saw, against float64 finite differences, and name the input
      whose gradient is off, by how much (and by what factor, when it is a multiple).
    - The first wrong node in backward order is the one to fix; nodes after it only inherit it.
    - Then confirm the fix with `gradcheck` on small float64 inputs, as in lesson 7.

    This is the end of the course. [Start here](00_start_here.py) has the list of lessons,
    if you want to revisit one.
    """)
    return


if __name__ == "__main__":
    app.run()
