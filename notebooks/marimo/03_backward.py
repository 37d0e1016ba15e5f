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
    # 3. `backward()`: gradients flowing through the graph

    Lesson 2 built the graph; this lesson runs it. `backward()` starts at a result, walks
    `next_functions` from node to node, and at each node applies one local rule of calculus:
    the chain rule. You will see it on a scalar, then learn what `backward()` really computes
    for a vector output (a vector-Jacobian product), and meet its two functional cousins,
    `torch.autograd.backward` and `torch.autograd.grad`.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/03_backward.ipynb` by
    > `notebooks/marimo_build.py`). marimo runs a cell again whenever a name it reads changes, and
    > each name belongs to one cell, so these things differ from the Jupyter lesson:
    >
    > - **Names defined in several cells are numbered** in the order the cells come: `out` → `out_1`; `x` → `x_1`, `x_2`, `x_3`, `x_4`, `x_5`; `y` → `y_1`.
    >   A name used in one cell only starts with `_` (private to that cell).
    > - **Where the lesson says to run a cell again,** press that cell's run button (▶): marimo
    >   does not re-run a cell on its own.
    > - **Printed values** appear in the cell's output: a cell that prints does it inside
    >   `with mo.redirect_stdout():`.
    > - **The exercises** have the same placeholders (`...`) and the same `check_...()` cells; the solutions
    >   are the Jupyter notebook `notebooks/solutions/03_backward.ipynb`.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import minigrad as torch
        import viz

        x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        out = (x**2).sum()
        out.backward()
        print("out =", out)
        print("x.grad =", x.grad, " (d out / dx = 2x)")
    return torch, viz


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## What happened, node by node

    `backward()` on a scalar starts with the gradient of `out` with respect to itself, which is
    1 (the *seed*). `SumBackward0` copies that 1 to every element (each $x_i^2$ contributes to
    the sum with weight 1); `PowBackward0` multiplies by its local derivative $2x_i$, using the
    `x` it saved; `AccumulateGrad` stores the result in `x.grad`. Every node only knows its own
    little derivative; the chain rule is the *product along the path*.

    `viz.animate` runs `backward()` for you and replays it one node at a time: press play, or
    step with the arrows. The animation is a widget, so the cell after it prints the graph as
    text instead, now with the gradient that reached `x` (`quiz_player.frames` holds every step as
    plain data, if you want to look at them in code).

    **Predict, then reveal.** Watching teaches less than predicting, so this player is a quiz
    (`quiz=True`): before a step it stops and asks you about it: which node runs next (click it
    in the picture, or pick its name), the gradient a node sends along an edge, or what `x.grad`
    becomes (type the values, like `[1, 2, 3, 4]`). Apply the chain rule yourself before you
    answer; the player checks your answer, reveals the step with the rule that gives it, and keeps
    a score. The quiz runs on new values of `x`, so the gradient printed above is not its answer.
    Your answers reach Python too: the cell under the player prints the graph with its gradients, the
    questions and your score (`quiz_player.answers` lists each answer with its verdict); run it after
    answering, since it reveals the answers.
    """)
    return


@app.cell
def _(torch, viz):
    x_1 = torch.tensor([3.0, -1.0, 0.5, 2.0], requires_grad=True)
    squares = x_1 ** 2
    out_1 = squares.sum()
    quiz_player = viz.animate(out_1, params={'x': x_1}, quiz=True)
    quiz_player
    return out_1, quiz_player, squares, x_1


@app.cell
def _(mo, out_1, quiz_player, viz, x_1):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        print(viz.summary(out_1, params={'x': x_1}))
        print('\n'.join((f'quiz, before step {q.step}: {q.prompt}' for q in quiz_player.quiz.questions)))
        print('score (right, answered):', quiz_player.score)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## A vector output needs a `gradient`

    Now stop before the sum. `squares` has four elements, so "the derivative of `squares`
    with respect to `x`" is a 4×4 matrix, the Jacobian $J_{ij} = \partial y_i / \partial x_j$.
    `backward()` refuses to guess what you want from it:
    """)
    return


@app.cell
def _(mo, squares):
    with mo.redirect_stdout():
        try:
            squares.backward()
        except RuntimeError as err:
            print("RuntimeError:", err)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Autograd never builds Jacobians. What it computes, in a single backward pass, is a
    **vector-Jacobian product**: you pass a vector $v$ with the shape of the output, and it
    returns $v^\top J$, that is $\sum_i v_i \, \partial y_i / \partial x_j$ for each $j$. In the
    scalar case the seed was simply $v = 1$.

    Think of $v$ as "how much each output matters". It is exactly the gradient of some later
    scalar $L$ with respect to `y` ($v_i = \partial L / \partial y_i$), and then $v^\top J$ is
    $\partial L / \partial x$ by the chain rule: this is how gradients move through every node
    of every network. PyTorch's tutorial shows it with the weights `[1, 0.1, 0.01, 0.001]`:
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        x_2 = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = x_2 ** 2
        v = torch.tensor([1, 0.1, 0.01, 0.001])
        y.backward(gradient=v)
        print('v      =', v)
        print('x.grad =', x_2.grad, ' (= v * 2x)')
    return v, x_2


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Here $J$ is diagonal ($\partial y_i / \partial x_j = 2x_i$ when $i = j$, else 0), so
    $v^\top J$ is just $v_i \cdot 2x_i$. `torch.autograd.functional.jacobian` builds the full
    matrix (with one backward pass per row), so we can check:
    """)
    return


@app.cell
def _(mo, torch, v, x_2):
    with mo.redirect_stdout():
        J = torch.autograd.functional.jacobian(lambda t: t ** 2, x_2)
        print(J)
        print('v @ J  =', v @ J)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    The same backward pass, animated: the seed is now `v` instead of 1.
    """)
    return


@app.cell
def _(torch, v, viz):
    x_3 = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y_1 = x_3 ** 2
    player = viz.animate(y_1, params={'x': x_3}, gradient=v)
    player
    return x_3, y_1


@app.cell
def _(mo, viz, x_3, y_1):
    with mo.redirect_stdout():
        print(viz.summary(y_1, params={'x': x_3}))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## `torch.autograd.backward`: several outputs at once

    `t.backward(gradient)` is shorthand for `torch.autograd.backward([t], [gradient])`. The
    function form takes several outputs (and one `grad_tensors` entry per output) and runs one
    combined backward pass, so the gradients of all of them add up in `.grad`:
    """)
    return


@app.cell
def _(mo, torch, v):
    with mo.redirect_stdout():
        x_4 = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        a = x_4.sum()  # d/dx = 1
        b = (x_4 ** 3).sum()  # d/dx = 3x^2
        torch.autograd.backward([a, b])  # scalars: the seeds default to 1
        print('x.grad =', x_4.grad, ' (= 1 + 3x^2)')
        x_4.grad = None
        torch.autograd.backward([x_4 * 2, x_4 ** 2], grad_tensors=[torch.ones(4), v])
        print('x.grad =', x_4.grad, ' (= 2 + v * 2x)')
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## `torch.autograd.grad`: gradients as return values

    `backward()` writes into `.grad` of leaves. `torch.autograd.grad(outputs, inputs)` instead
    **returns** the gradients with respect to exactly the `inputs` you name, and leaves every
    `.grad` untouched. The inputs do not have to be leaves, which makes it the tool for
    "gradient of the loss with respect to this intermediate tensor", and for lesson 8's
    higher-order derivatives.
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        x_5 = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        w = torch.tensor([0.5, -1.0], requires_grad=True)
        h = x_5 * 3
        z = (h[:2] * w).sum()
        gx, gw, gh = torch.autograd.grad(z, [x_5, w, h])
        print('dz/dx =', gx)
        print('dz/dw =', gw)
        print('dz/dh =', gh, ' (h is not a leaf: no problem)')
        print('x.grad, w.grad:', x_5.grad, w.grad, ' (untouched)')
    return (x_5,)


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Older tutorials (written for PyTorch 0.4) also pass `only_inputs=True`. That argument is
    deprecated and ignored: `grad` always computes gradients for the `inputs` you name and nothing
    else. Passing `only_inputs=False` makes PyTorch 2.13 warn "only_inputs argument is deprecated
    and is ignored now (defaults to True). To accumulate gradient for other parts of the graph,
    please use torch.autograd.backward." So drop the argument when you port such code.

    Asking for the gradient with respect to a tensor the output does not depend on is an
    error by default (it usually means a bug); `allow_unused=True` returns `None` for it:
    """)
    return


@app.cell
def _(mo, torch, x_5):
    with mo.redirect_stdout():
        unused = torch.tensor(1.0, requires_grad=True)
        try:
            torch.autograd.grad((x_5 * 2).sum(), [x_5, unused])
        except RuntimeError as err:
            print('RuntimeError:', err)
        print(torch.autograd.grad((x_5 * 2).sum(), [x_5, unused], allow_unused=True))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Exercise 3: a Jacobian, one row at a time

    Write `jacobian(f, x)` for a function `f` from a 1-D tensor to a 1-D tensor. It should
    return the matrix $J_{ij} = \partial f(x)_i / \partial x_j$ as a 2-D tensor. Use the idea of
    this lesson: the vector-Jacobian product with the one-hot vector $e_i$ (1 at position `i`,
    0 elsewhere) is row `i` of $J$. Build each row with `torch.autograd.grad(f(x), x,
    grad_outputs=...)` (recomputing `f(x)` for every row is fine) and `torch.stack` the rows.

    The first line of `jacobian` is given: `x.detach()` is a tensor with the same values and no
    history (lesson 6 explains it), and `requires_grad_()` switches it on as a leaf (lesson 1).
    So your rows are gradients with respect to a fresh leaf, whatever the caller's `x` was.
    """)
    return


@app.cell
def _(mo, torch):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        def jacobian(f, x):
            x = x.detach().requires_grad_()
            return ...


        print(jacobian(lambda t: t**2, torch.tensor([1.0, 2.0, 3.0])))
    return (jacobian,)


@app.cell
def _(jacobian, mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_jacobian

        check_jacobian(jacobian)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    A Jacobian costs one backward pass per output element. That is why training minimises a
    **scalar** loss: one backward pass then gives the gradient with respect to every parameter
    at once.

    ## What to remember

    - `backward()` on a scalar seeds the graph with 1 and applies the chain rule node by node;
      each node multiplies by its local derivative.
    - For a non-scalar output, `backward(gradient=v)` computes the vector-Jacobian product
      $v^\top J$; `v` has the output's shape.
    - `torch.autograd.backward` handles several outputs at once; `torch.autograd.grad` returns
      gradients for the inputs you name (leaves or not) without touching `.grad`.

    Next: [4. Accumulation and `retain_graph`](04_accumulation_and_retain_graph.py).
    """)
    return


if __name__ == "__main__":
    app.run()
