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
    # 13. Forward mode and function transforms

    Every gradient so far came from **reverse mode**: run the function forward, record a graph, then
    walk it backward from the output. One backward pass gives the derivative of *one* output with
    respect to *every* input. That is exactly right for training, where the output is one loss and
    the inputs are millions of weights.

    There is a second way, **forward mode**: carry each input's rate of change (its *tangent*)
    along with its value, through every operation, in the same pass that computes the value. No
    graph, no backward pass. One forward pass gives the derivative of *every* output with respect to
    *one* input direction.

    This lesson builds forward mode by hand with dual numbers, finds it in minigrad (PyTorch's
    `torch.autograd.forward_ad`), and then uses the function transforms of `minigrad.func`
    (PyTorch's `torch.func`, JAX's model of autodiff): `jvp` and `vjp`, `jacfwd` and `jacrev`,
    `hessian`, `grad` and `vmap`. It assumes lessons 1 to 4 and 8 (reverse mode, `autograd.grad`,
    `create_graph`).

    ## 1. Dual numbers: a value and its tangent, travelling together

    A *dual number* is a pair $a + b\,\varepsilon$ with one rule, $\varepsilon^2 = 0$. Multiply two
    of them and the $\varepsilon^2$ term vanishes:

    $$(a + a'\varepsilon)(b + b'\varepsilon) = ab + (a'b + ab')\,\varepsilon$$

    The $\varepsilon$ part is the product rule. So if every operation is taught what it does to the
    $\varepsilon$ part, the *tangent*, then evaluating $f$ at $x + 1\cdot\varepsilon$ gives
    $f(x) + f'(x)\,\varepsilon$: the value and the derivative in one pass. Each operation needs its
    own rule (for $\sin$: the tangent is multiplied by $\cos$ of the value), just as each node of a
    backward graph needs its local derivative. Here is a whole forward-mode autodiff, for `+`, `*`
    and `sin`:
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/13_forward_mode_and_transforms.ipynb` by
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
    >   are the Jupyter notebook `notebooks/solutions/13_forward_mode_and_transforms.ipynb`.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import numpy as np

        import minigrad as torch
        import minigrad.autograd.forward_ad as fwAD
        import viz
        from minigrad.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap


        class Dual:
            """A value and its tangent: a + b·ε with ε² = 0."""

            def __init__(self, value, tangent=0.0):
                self.value, self.tangent = value, tangent

            def __add__(self, other):
                other = other if isinstance(other, Dual) else Dual(other)  # a plain number has tangent 0
                return Dual(self.value + other.value, self.tangent + other.tangent)

            def __mul__(self, other):
                other = other if isinstance(other, Dual) else Dual(other)
                return Dual(self.value * other.value, self.tangent * other.value + self.value * other.tangent)

            __radd__, __rmul__ = __add__, __mul__

            def sin(self):
                return Dual(np.sin(self.value), np.cos(self.value) * self.tangent)

            def __repr__(self):
                return f"Dual(value={self.value:.4f}, tangent={self.tangent:.4f})"


        def f(x):
            return x * x.sin() + 3 * x


        print(f(Dual(2.0, 1.0)))
        print("by hand:  f'(2) =", f"{np.sin(2.0) + 2 * np.cos(2.0) + 3:.4f}")
    return (
        Dual,
        f,
        fwAD,
        grad,
        hessian,
        jacfwd,
        jacrev,
        jvp,
        torch,
        viz,
        vjp,
        vmap,
    )


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `f` never knew it was being differentiated: it only called `*`, `+` and `.sin()`, and the
    `Dual` class did the rest. The seed tangent `1.0` says "move `x` at speed 1"; the tangent that
    comes out is how fast `f(x)` moves then, $f'(2)$.

    ## Exercise 13a: dividing dual numbers

    Teach dual numbers to divide. Write `divide(a, b)` for two `Dual`s, returning the `Dual` of
    $a / b$: its value is `a.value / b.value`, and its tangent comes from the quotient rule,
    $(a/b)' = (a' b - a b') / b^2$. Return a new `Dual` (leave `a` and `b` as they are). Then
    `x / x.sin()` can be differentiated as `f` was.
    """)
    return


@app.cell
def _(Dual):
    # Cell tags: nbval-ignore-output
    def divide(a, b):
        return Dual(..., ...)

    return (divide,)


@app.cell
def _(Dual, divide, mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_dual_divide

        check_dual_divide(divide, Dual)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## 2. Forward mode on tensors: `forward_ad`

    minigrad (like PyTorch) has the same thing for tensors in `minigrad.autograd.forward_ad`:
    inside a `dual_level()`, `make_dual(value, tangent)` makes a *dual tensor*, every operation
    carries its tangent along (each op has a forward rule beside its backward formula), and
    `unpack_dual` takes the value and the tangent apart again.

    The player below runs `f` at `x = 2` in forward mode, with the tangent 1 on `x`, one operation
    per step. It draws the graph reverse mode would record for the same `f`, so its arrows point the
    way reverse mode walks, from the output down to `x`; forward mode goes through the same
    operations the other way, with the forward pass: the tangent of `x` enters at the bottom and
    rises with the values, each operation turning the tangents of its inputs into the tangent of its
    output (the panel shows each forward rule with this step's numbers), and nothing is kept. The
    cell after the player runs the same `f`, unchanged, in forward mode: first on a number, then on
    a vector whose tangent is 1 in one place and 0 elsewhere (the output's tangent is then the
    derivative of every output with respect to that one input); and it asks reverse mode for the
    same derivative.
    """)
    return


@app.cell
def _(f, torch, viz):
    viz.animate(f, torch.tensor(2.0), tangents=(torch.tensor(1.0),))
    return


@app.cell
def _(f, fwAD, mo, torch):
    with mo.redirect_stdout():
        with fwAD.dual_level():
            y_dual = f(fwAD.make_dual(torch.tensor(2.0), torch.tensor(1.0)))
            value, tangent = fwAD.unpack_dual(y_dual)
            print("value:  ", value)
            print("tangent:", tangent)
            print("graph recorded:", y_dual.grad_fn)
            vector = f(fwAD.make_dual(torch.tensor([0.5, 1.0, 2.0]), torch.tensor([0.0, 1.0, 0.0])))
            print("vector tangent:", fwAD.unpack_dual(vector).tangent)

        x_leaf = torch.tensor(2.0, requires_grad=True)
        print("reverse mode:  ", torch.autograd.grad(f(x_leaf), x_leaf)[0])
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    The same numbers, and **no graph**: `grad_fn` is `None`. Reverse mode must keep a graph (and
    every tensor it saved) until the backward pass; forward mode is done when the forward pass is.

    ## 3. `jvp` and `vjp`: a column or a row of the Jacobian

    For a function $f: \mathbb{R}^n \to \mathbb{R}^m$, all its first derivatives form the
    $m \times n$ **Jacobian** $J$: one row per output, one column per input. The two modes compute
    two different products with it, without ever building it:

    $$
    \underbrace{J\,v}_{\texttt{jvp}:\ \text{forward}}
    = \begin{bmatrix} \partial_1 f_1 & {\color{red} \partial_2 f_1} & \partial_3 f_1 \\
                      \partial_1 f_2 & {\color{red} \partial_2 f_2} & \partial_3 f_2 \end{bmatrix}
      \begin{bmatrix} 0 \\ {\color{red} 1} \\ 0 \end{bmatrix}
    = \begin{bmatrix} {\color{red} \partial_2 f_1} \\ {\color{red} \partial_2 f_2} \end{bmatrix}
    \quad \text{a column}
    $$

    $$
    \underbrace{u^\top J}_{\texttt{vjp}:\ \text{reverse}}
    = \begin{bmatrix} {\color{blue} 1} & 0 \end{bmatrix}
      \begin{bmatrix} {\color{blue} \partial_1 f_1} & {\color{blue} \partial_2 f_1} & {\color{blue} \partial_3 f_1} \\
                      \partial_1 f_2 & \partial_2 f_2 & \partial_3 f_2 \end{bmatrix}
    = \begin{bmatrix} {\color{blue} \partial_1 f_1} & {\color{blue} \partial_2 f_1} & {\color{blue} \partial_3 f_1}
      \end{bmatrix}
    \quad \text{a row}
    $$

    - **`jvp(f, (x,), (v,))`**, the *Jacobian-vector product*: push a tangent $v$ (a direction in the
      input space, shaped like `x`) forward; get $f(x)$ and $J v$, shaped like the output. With
      $v$ one-hot, $Jv$ is a **column** of $J$. One forward pass.
    - **`vjp(f, x)`**, the *vector-Jacobian product*: run `f` and record its graph; the function it
      returns takes a *cotangent* $u$ (shaped like the output) and gives $u^\top J$, shaped like
      `x`. With $u$ one-hot, that is a **row** of $J$. One backward pass per $u$. `backward()` on a
      scalar loss is the vjp with $u = 1$: the one row of a $1 \times n$ Jacobian, the gradient.

    Here is a function from $\mathbb{R}^3$ to $\mathbb{R}^2$, its whole Jacobian (from `jacrev`,
    section 4), a column from `jvp` and a row from `vjp`. `v` and `u` need not be one-hot: $Jv$ is
    the directional derivative along $v$ (how the outputs move when `x` moves along $v$), and
    $u^\top J$ the gradient of the weighted sum $u \cdot g(x)$; the last two lines compute
    $u^\top J v$ both ways.
    """)
    return


@app.cell
def _(jacrev, jvp, mo, torch, vjp):
    with mo.redirect_stdout():
        def g(x):
            return torch.stack([x[0] * x[1], x[1].sin() + x[2] ** 2])


        x3 = torch.tensor([1.0, 2.0, 3.0])
        print("J =", jacrev(g)(x3))
        _, column = jvp(g, (x3,), (torch.tensor([0.0, 1.0, 0.0]),))
        print("J v   (v = [0, 1, 0]):", column, "  the column of x[1]")
        _, vjp_fn = vjp(g, x3)
        (row,) = vjp_fn(torch.tensor([1.0, 0.0]))
        print("uᵀ J  (u = [1, 0]):   ", row, "  the row of g[0]")

        v3, u2 = torch.tensor([0.5, -1.0, 2.0]), torch.tensor([3.0, -2.0])
        print("u · (J v) =", (u2 * jvp(g, (x3,), (v3,))[1]).sum())
        print("(uᵀ J) · v =", (vjp_fn(u2)[0] * v3).sum())
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## 4. What a Jacobian costs, both ways

    To get the whole $m \times n$ Jacobian, take one-hot vectors:

    - forward mode: $n$ jvps, one per **input** (each one a column): $n$ forward passes;
    - reverse mode: one forward pass to record the graph, then $m$ vjps, one per **output** (each
      one a row): $m$ backward passes.

    So the shape of the function decides. A **tall** function (few inputs, many outputs: a curve
    through space, a small network's many outputs at one input) is cheap in forward mode. A **wide**
    function (many inputs, few outputs: a loss of a million weights) is cheap in reverse mode, which
    is why training uses it. Below, both written out, with a count of the passes.

    `jacfwd` and `jacrev` are these two loops, made fast: they hand all the one-hot vectors over
    at once, as a batch (with `vmap`, section 6), so `f` is called once and the Python overhead is
    paid once. The arithmetic is still $n$ (or $m$) passes' worth, and the rule of thumb stays:
    **`jacfwd` for tall, `jacrev` for wide.** The last lines check that they agree with the loops.

    First, watch both ways build one Jacobian, side by side, on one clock: the player below takes a
    tall function ($\mathbb{R}^2 \to \mathbb{R}^6$) and counts, on each side, the passes and the
    operations evaluated (values and derivative rules) as they run; the columns fill on the left,
    the rows on the right. Then try a wide one, for instance
    `viz.forward_vs_reverse(lambda x: (x.sin() * x).sum(), torch.linspace(-1.0, 1.0, 6))`.
    """)
    return


@app.cell
def _(torch, viz):
    B = torch.linspace(-1.0, 1.0, 12).reshape(6, 2)
    viz.forward_vs_reverse(lambda x: (B @ x).tanh(), torch.tensor([0.3, -0.7]))
    return


@app.cell
def _(jacfwd, jacrev, jvp, mo, torch, vjp):
    with mo.redirect_stdout():
        def jacobian_by_columns(f, x, passes):
            """Forward mode: one jvp per input, each gives a column."""
            columns = []
            for j in range(x.numel()):
                e = torch.zeros_like(x)
                e[j] = 1.0
                columns.append(jvp(f, (x,), (e,))[1])
                passes["forward"] += 1
            return torch.stack(columns, dim=1)


        def jacobian_by_rows(f, x, passes):
            """Reverse mode: one recorded forward pass, then one vjp per output, each gives a row."""
            out, vjp_fn = vjp(f, x)
            passes["forward"] += 1
            rows = []
            for i in range(out.numel()):
                e = torch.zeros_like(out)
                e[i] = 1.0
                rows.append(vjp_fn(e)[0])
                passes["backward"] += 1
            return torch.stack(rows)


        A = torch.linspace(-1.0, 1.0, 60).reshape(30, 2)


        def tall(x):  # R^2 -> R^30
            return (A @ x).tanh()


        def wide(x):  # R^30 -> R^2
            return (A.T @ x.sin()) ** 2


        print(f"{'':20s} {'forward mode':>18s} {'reverse mode':>26s}")
        for name, fn, point in (("tall, R^2 -> R^30", tall, torch.tensor([0.3, -0.7])),
                                ("wide, R^30 -> R^2", wide, torch.linspace(-1.0, 1.0, 30))):
            fwd, rev = {"forward": 0, "backward": 0}, {"forward": 0, "backward": 0}
            J_fwd, J_rev = jacobian_by_columns(fn, point, fwd), jacobian_by_rows(fn, point, rev)
            print(f"{name:20s} {fwd['forward']:3d} forward passes   {rev['forward']} forward + {rev['backward']:2d} "
                  f"backward passes   J {tuple(J_fwd.shape)}, same: {torch.allclose(J_fwd, J_rev)}")
            print(f"{'':20s} jacfwd gives the same: {torch.allclose(jacfwd(fn)(point), J_fwd)}, "
                  f"jacrev too: {torch.allclose(jacrev(fn)(point), J_rev)}")
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Exercise 13b: a Jacobian, column by column

    Write `jacobian_forward(f, x)`, the Jacobian of `f` at a 1-D tensor `x`, as an `(m, n)` tensor,
    with forward mode: one call to `jvp` per input, each with a one-hot tangent, each giving a
    column (so `f` runs exactly $n$ times). Don't use `jacfwd` or `jacrev` here: the point is to
    see the $n$ passes. (`jacobian_by_columns` above is close; you need no `passes` counter.)
    """)
    return


@app.function
# Cell tags: nbval-ignore-output
def jacobian_forward(f, x):
    return ...


@app.cell
def _(mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_jacobian_forward

        check_jacobian_forward(jacobian_forward)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## 5. A Hessian: forward over reverse

    The Hessian of a scalar function $f: \mathbb{R}^n \to \mathbb{R}$ is the Jacobian of its
    gradient. Transforms compose, so that is one line: `jacrev(f)` is a function that returns the
    gradient (one backward pass: $f$ is as wide as can be), and `jacfwd` of that function gives its
    $n \times n$ Jacobian in $n$ forward passes. **Forward over reverse**, `jacfwd(jacrev(f))`, is
    what `hessian(f)` is. The gradient function is square ($n$ in, $n$ out), so either mode would
    take $n$ passes; forward mode wins because it records nothing: reverse over reverse
    (`jacrev(jacrev(f))`, or lesson 8's `create_graph=True`) must record the backward pass as a graph
    and keep it for $n$ more backward passes.

    Here with the Rosenbrock function, checked against `torch.autograd.functional.hessian` (the
    older API, built on lesson 8's double backward). Often a whole Hessian is too big, and what an
    optimiser needs is a Hessian-vector product: lesson 8 computed one with two backward passes;
    forward over reverse takes one `jvp` of the gradient function, the tangent $v$ pushed through
    the gradient. No $n \times n$ matrix is made.
    """)
    return


@app.cell
def _(grad, hessian, jacfwd, jacrev, jvp, mo, torch):
    with mo.redirect_stdout():
        def rosenbrock(x):
            return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


        x4 = torch.tensor([0.5, -0.25, 1.5, 0.75])
        H = jacfwd(jacrev(rosenbrock))(x4)
        print(H)
        print("same as autograd.functional.hessian:", torch.allclose(H, torch.autograd.functional.hessian(rosenbrock, x4)))
        print("same as hessian(rosenbrock):        ", torch.allclose(H, hessian(rosenbrock)(x4)))

        v4 = torch.tensor([1.0, 0.0, -1.0, 2.0])
        print("jvp of grad:", jvp(grad(rosenbrock), (x4,), (v4,))[1])
        print("H @ v:      ", H @ v4)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## 6. Per-sample gradients: `vmap(grad(loss))`

    `backward()` on a batch's mean loss gives the *average* gradient of the batch: the per-sample
    gradients are summed inside the backward pass and never seen. Some methods need each sample's
    own gradient: differentially private training clips each one, and per-sample gradient norms
    show which samples are hard or mislabelled. The obvious way is a loop, one backward pass per
    sample (`grad(loss, argnums=(0, 1))` gives the gradients with respect to `w` and `b`).

    `vmap` does the loop for us, and not as a loop. `vmap(fn, in_dims=(None, None, 0, 0))` makes a
    function that takes a *batch*: `None` means "the same `w` and `b` for every sample", `0` means
    "dimension 0 of `xs` and `ys` runs over the samples". Inside, `fn` runs **once**, on the whole
    batch: each operation is applied to all 8 samples at the same time (as NumPy broadcasting does),
    while `fn`'s code is written for one sample, and `x.shape` inside is one sample's shape.
    `vmap(grad(loss))` is the per-sample gradient. Their mean is the gradient of the mean loss,
    which `backward()` computes.
    """)
    return


@app.cell
def _(grad, mo, torch, vmap):
    with mo.redirect_stdout():
        def loss(w, b, x, y):
            """The squared error of ONE sample: x has shape (3,), y is a number."""
            return (x @ w + b - y) ** 2


        def counted_loss(w, b, x, y):
            """loss, noting the shape of each x it is called with."""
            seen.append(tuple(x.shape))
            return loss(w, b, x, y)


        w, b = torch.tensor([0.5, -1.0, 0.25]), torch.tensor(0.1)
        xs, ys = torch.linspace(-1.0, 1.0, 24).reshape(8, 3), torch.linspace(0.0, 2.0, 8)

        seen = []
        loop = [grad(counted_loss, argnums=(0, 1))(w, b, xs[i], ys[i]) for i in range(8)]
        print(f"the loop: loss ran {len(seen)} times")
        print("the gradients for b:", torch.stack([gb for _, gb in loop]))

        seen = []
        per_w, per_b = vmap(grad(counted_loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))(w, b, xs, ys)
        print(f"vmap:     loss ran {len(seen)} time, on x of shape {seen[0]};  shapes {tuple(per_w.shape)}, "
              f"{tuple(per_b.shape)}")
        print("same as the loop:", torch.allclose(per_w, torch.stack([gw for gw, _ in loop])))

        w_leaf = w.clone().requires_grad_()
        ((xs @ w_leaf + b - ys) ** 2).mean().backward()
        print("backward on the mean:  ", w_leaf.grad)
        print("mean of the per-sample:", per_w.mean(dim=0))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    A model written as an `nn.Module` works too: `functional_call(model, params, (x,))` runs the
    module with the parameters you pass (a dict), so that `grad` can differentiate with respect to
    them:

    ```python
    from minigrad.func import functional_call

    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    params = {name: p.detach() for name, p in model.named_parameters()}

    def model_loss(params, x, y):  # one sample, x of shape (3,)
        return (functional_call(model, params, (x.unsqueeze(0),)).squeeze() - y) ** 2

    per_sample = vmap(grad(model_loss), in_dims=(None, 0, 0))(params, xs, ys)  # {name: (8, *shape)}
    ```

    ## Exercise 13c: per-sample gradient norms

    Write `per_sample_grad_norms(loss_fn, params, xs, ys)`: for each sample `i`, the norm of the
    gradient of `loss_fn(params, xs[i], ys[i])` with respect to *all* parameters together, as if
    they were one long vector: the square root of the sum of $g^2$ over every element of every
    parameter's gradient. Return a tensor of shape `(batch,)`. `params` is a dict and `loss_fn` has
    `model_loss`'s signature. Use `vmap(grad(loss_fn), ...)`, so that `loss_fn` runs once for the
    whole batch. (This is the first step of differentially private SGD, which clips each sample's
    gradient to a maximum norm.)
    """)
    return


@app.function
# Cell tags: nbval-ignore-output
def per_sample_grad_norms(loss_fn, params, xs, ys):
    return ...


@app.cell
def _(mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_grad_norms

        check_grad_norms(per_sample_grad_norms)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## What to remember

    - **Forward mode** carries a tangent beside each value through the forward pass (dual numbers:
      $\varepsilon^2 = 0$); it records no graph. One pass gives $Jv$, a column of the Jacobian:
      `fwAD.make_dual`/`unpack_dual`, or `jvp`.
    - **Reverse mode** records a graph and walks it backward; one backward pass gives $u^\top J$, a
      row: `vjp`, `autograd.grad`, `backward()`.
    - A whole $m \times n$ Jacobian costs $n$ forward passes or $m$ backward passes:
      **`jacfwd` for tall functions, `jacrev` for wide ones** (a loss is as wide as it gets).
    - Transforms compose: `hessian(f)` is `jacfwd(jacrev(f))`, a Hessian-vector product is
      `jvp(grad(f), (x,), (v,))`, and per-sample gradients are `vmap(grad(loss))`, which runs the
      loss once on the whole batch.

    [Start here](00_start_here.py) lists every lesson.
    """)
    return


if __name__ == "__main__":
    app.run()
