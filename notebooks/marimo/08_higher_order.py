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
    # 8. Higher-order gradients with `create_graph`

    A gradient is itself computed by operations (multiplications, additions, a `cos` here and
    there), performed by the backward pass. Normally autograd does not record them: the
    gradient comes out as a plain tensor, the end of the story. With `create_graph=True` the
    backward pass *is recorded*, like any forward computation, so the gradient has a `grad_fn`
    and can be differentiated again. That gives second derivatives, Hessian-vector products
    (the workhorse of second-order optimisation and of some meta-learning and physics-informed
    losses), and gradient penalties.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/08_higher_order.ipynb` by
    > `notebooks/marimo_build.py`). marimo runs a cell again whenever a name it reads changes, and
    > each name belongs to one cell, so these things differ from the Jupyter lesson:
    >
    > - **Names defined in several cells are numbered** in the order the cells come: `player` → `player_1`; `x` → `x_1`; `y` → `y_1`, `y_2`, `y_3`, `y_4`.
    >   A name used in one cell only starts with `_` (private to that cell).
    > - **Where the lesson says to run a cell again,** press that cell's run button (▶): marimo
    >   does not re-run a cell on its own.
    > - **Printed values** appear in the cell's output: a cell that prints does it inside
    >   `with mo.redirect_stdout():`.
    > - **The exercises** have the same placeholders (`...`) and the same `check_...()` cells; the solutions
    >   are the Jupyter notebook `notebooks/solutions/08_higher_order.ipynb`.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import minigrad as torch
        import viz

        x = torch.tensor(2.0, requires_grad=True)
        y = x**3

        (dy,) = torch.autograd.grad(y, x)  # the usual way
        print("dy/dx =", dy, " requires_grad:", dy.requires_grad)
        try:
            torch.autograd.grad(dy, x)
        except RuntimeError as err:
            print("RuntimeError:", err)
    return torch, viz, x


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Without `create_graph`, $dy/dx = 3x^2 = 12$ is a constant as far as autograd knows: it has
    no `grad_fn`, so there is nothing to differentiate. Ask for the graph and it becomes an
    ordinary differentiable tensor:
    """)
    return


@app.cell
def _(mo, torch, x):
    with mo.redirect_stdout():
        y_1 = x ** 3
        dy_1, = torch.autograd.grad(y_1, x, create_graph=True)
        print('dy/dx    =', dy_1)
        d2y, = torch.autograd.grad(dy_1, x, create_graph=True)
        print('d2y/dx2  =', d2y, ' (6x)')
        d3y, = torch.autograd.grad(d2y, x)
        print('d3y/dx3  =', d3y, ' (6)')
    return (dy_1,)


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## The graph of the backward pass

    `dy` has a `grad_fn`, so it has a graph, and we can draw it. It is the backward pass of
    `x**3` written out as operations: `PowBackward0`'s rule, $\text{grad} \cdot (3 \cdot x^2)$,
    became a `PowBackward0` (for $x^2$), a `MulBackward1` (times the plain number 3) and a
    `MulBackward0` (times the incoming gradient). That gradient, the seed 1, is a constant that
    needs no gradient: the `None` input. PyTorch 2.13 draws exactly this graph.
    """)
    return


@app.cell
def _(dy_1, viz, x):
    viz.draw(dy_1, params={'x': x})
    return


@app.cell
def _(dy_1, mo, viz, x):
    with mo.redirect_stdout():
        print(viz.summary(dy_1, params={'x': x}))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Differentiating `dy` runs a backward pass through *that* graph. Here it is, animated
    (the next cell prints the graph as text, with the gradient that reached `x`, and the player's
    step for `PowBackward0`). Follow the numbers: `MulBackward0` (the seed times $3 \cdot x^2$) gets
    the seed 1 and sends 1 on; `MulBackward1` (3 times $x^2$) sends $1 \cdot 3 = 3$ on to
    `PowBackward0`. Its rule reads
    `grad * exponent * self^(exponent - 1)`, and the exponent *of this node* is 2, because it
    computes $x^2$ (not the 3 of $x^3$): $3 \cdot 2 \cdot 2^1 = 12$, which is $6x$ at $x = 2$.
    """)
    return


@app.cell
def _(torch, viz, x):
    x.grad = None  # the graph is built here, so that this cell can run again (its backward frees it)
    y_2 = x ** 3
    dy_2, = torch.autograd.grad(y_2, x, create_graph=True)
    player = viz.animate(dy_2, params={'x': x})
    player
    return dy_2, player


@app.cell
def _(dy_2, mo, player, viz, x):
    with mo.redirect_stdout():
        print(viz.summary(dy_2, params={'x': x}))
        print('x.grad =', x.grad, ' (d2y/dx2 = 6x = 12)')
        print()
        print(next((frame.text for frame in player.frames if frame.text.startswith('PowBackward0'))))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    (`viz.animate` calls `dy.backward()`, so the second derivative landed in `x.grad`.)

    `t.backward(create_graph=True)` exists too, but it stores a gradient that has a graph in
    `.grad`, which creates a reference cycle between a parameter and its gradient (PyTorch warns
    about the memory leak). Prefer `torch.autograd.grad(..., create_graph=True)`, as here.

    ## Hessian-vector products

    For $f: \mathbb{R}^n \to \mathbb{R}$ the second derivatives form the $n \times n$ Hessian
    $H_{ij} = \partial^2 f / \partial x_i \partial x_j$. For a model with a million
    parameters that matrix has $10^{12}$ entries, far too many to build. But what
    second-order methods need is usually $H v$ for a vector $v$, and that takes only **two**
    backward passes:

    1. $g = \nabla f(x)$ with `create_graph=True` (a differentiable gradient);
    2. the gradient of the scalar $g \cdot v$: since $\partial (g \cdot v) / \partial x_j
       = \sum_i v_i \, \partial g_i / \partial x_j = (H v)_j$ (the Hessian is symmetric).

    Take $f(x) = \tfrac12 x^\top A x + \sum_i e^{x_i}$, whose Hessian is $A + \mathrm{diag}(e^x)$
    for a symmetric $A$. `viz.session()` tells the two passes as a story: each `autograd.grad`
    call is a step with the gradient it returned. Neither touches `x.grad`: `grad` *returns*
    gradients, where `backward` adds them into `.grad`.
    """)
    return


@app.cell
def _(mo, torch, viz):
    with mo.redirect_stdout():
        A = torch.tensor([[2.0, 1.0, 0.0], [1.0, 3.0, -1.0], [0.0, -1.0, 1.0]])


        def f(x):
            return 0.5 * x @ A @ x + x.exp().sum()


        xv = torch.tensor([0.0, 1.0, -1.0], requires_grad=True)  # the point x (x itself stays the number 2)
        v = torch.tensor([1.0, 0.0, 2.0])

        with viz.session(params={"x": xv}) as story:
            fx = f(xv)
            (g,) = torch.autograd.grad(fx, xv, create_graph=True)  # pass 1
            gv = g @ v
            (hv,) = torch.autograd.grad(gv, xv)  # pass 2
        print("g  =", g)
        print("Hv =", hv)
        print(story.summary())
        print("x.grad =", xv.grad)
    return A, f, v, xv


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    Check it against the full Hessian (fine for 3 variables), which
    `torch.autograd.functional.hessian` builds with one backward pass per row, and against
    the library's own `hvp`:
    """)
    return


@app.cell
def _(A, f, mo, torch, v, xv):
    with mo.redirect_stdout():
        H = torch.autograd.functional.hessian(f, xv.detach())
        print(H)
        print("H @ v =", H @ v)
        print("expected H = A + diag(e^x):", torch.allclose(H, A + torch.eye(3) * xv.detach().exp()))
        print("functional.hvp:", torch.autograd.functional.hvp(f, xv.detach(), v)[1])
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Two layers: the graph and the graph of its backward pass

    Which first-order node wrote each node of `dy`'s graph? Run the forward pass and the first
    `grad` inside `viz.source_lines()`: every node then remembers the line that made it, and a
    node made *while backward ran* remembers the node whose rule made it (PyTorch keeps it in
    `node.metadata["parent_"]`, minigrad too). `viz.draw(..., layers=True)` draws those nodes as a
    second layer in another colour, each with a dashed link to its parent: here all of them come
    from `PowBackward0`'s rule, $\text{grad} \cdot 3x^2$. The second backward runs on that second
    layer: `viz.animate(..., layers=True)` colours it the same way while it steps through, and
    each of its steps names the first-order node that made it.
    """)
    return


@app.cell
def _(torch, viz):
    x_1 = torch.tensor(2.0, requires_grad=True)
    with viz.source_lines():
        y_3 = x_1 ** 3
        dy_3, = torch.autograd.grad(y_3, x_1, create_graph=True)
    return dy_3, x_1, y_3


@app.cell
def _(dy_3, viz, x_1, y_3):
    two_layers = viz.draw(dy_3, y_3, params={'x': x_1, 'dy': dy_3, 'y': y_3}, layers=True)
    two_layers
    return (two_layers,)


@app.cell
def _(mo, two_layers):
    with mo.redirect_stdout():
        print(two_layers.summary())  # the picture as text: each second-layer node says which node made it
    return


@app.cell
def _(torch, viz, x_1):
    x_1.grad = None  # the graph is built again here, so that this cell can run again (its backward frees it)
    with viz.source_lines():
        y_4 = x_1 ** 3
        dy_4, = torch.autograd.grad(y_4, x_1, create_graph=True)
    player_1 = viz.animate(dy_4, params={'x': x_1}, layers=True)
    player_1
    return (player_1,)


@app.cell
def _(mo, player_1, x_1):
    with mo.redirect_stdout():
        for frame in player_1.frames:
            print(frame.title, *(text for kind, text in frame.lines if kind == 'layer'), sep='\n    ')
        print('x.grad =', x_1.grad, ' (d2y/dx2 = 6x = 12)')
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Exercise 8: your own `hvp`

    Write `hvp(f, x, v)` that returns $H v$ with the two-pass recipe above (`f` maps a 1-D
    tensor to a scalar). Do not build the Hessian.
    """)
    return


@app.cell
def _(f, mo, torch):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        def hvp(f, x, v):
            x = x.detach().requires_grad_()
            return ...


        print(hvp(f, torch.tensor([0.0, 1.0, -1.0]), torch.tensor([1.0, 0.0, 2.0])))
    return (hvp,)


@app.cell
def _(hvp, mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_hvp

        check_hvp(hvp)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## What to remember

    - `create_graph=True` records the backward pass, so gradients get a `grad_fn` and can be
      differentiated again (second, third derivatives).
    - That recorded backward pass is an ordinary graph: `viz.draw` draws it, `viz.animate`
      replays its backward pass.
    - A Hessian-vector product costs two backward passes: `g = grad(f, x, create_graph=True)`,
      then `grad(g @ v, x)`.
    - Prefer `torch.autograd.grad` over `backward(create_graph=True)`.

    Next: [9. In-place operations and version counters](09_inplace_and_versions.py).
    """)
    return


if __name__ == "__main__":
    app.run()
