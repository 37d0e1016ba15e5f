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
    # Start here: autograd, stepped through

    > **The marimo version of this lesson** (written from `notebooks/00_start_here.ipynb` by
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
    >   are the Jupyter notebook `notebooks/solutions/00_start_here.ipynb`.
    
    Welcome! This course takes apart PyTorch's automatic differentiation ("autograd") one idea
    at a time. It is written for someone who knows Python and a little calculus (what a
    derivative is, and the chain rule) and is reading, or about to read, PyTorch's autograd
    tutorials. Each lesson is a short notebook: read the text, run the cells in order, look at
    the pictures, and do the exercise at the end.

    Everything runs on **minigrad**, a small re-implementation of PyTorch's autograd API on top
    of NumPy: the notebooks start with `import minigrad as torch`, and the same code runs with
    `import torch` and prints the same results. The graphs are drawn by **viz**, which draws
    PyTorch's graphs just as well.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import minigrad as torch
        import viz

        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        loss = (x * 2).exp().sum()
        loss.backward()
        print("loss:  ", loss)
        print("x.grad:", x.grad)
        print("minigrad and viz are ready.")
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    If that cell printed a loss and a gradient, you are set up. (If not: from the repository
    root, `make lab` creates the environment and opens JupyterLab here.)

    ## The lessons

    1. [Tensors and `requires_grad`](01_tensors_and_requires_grad.py): leaves and
       non-leaves, `is_leaf`, `grad`, `grad_fn`, how `requires_grad` spreads, why a non-leaf's
       `.grad` is `None`. Exercise: predict the leaves.
    2. [The computation graph](02_computation_graph.py): `grad_fn`, `next_functions`,
       `AccumulateGrad`, `(None, 0)`, saved tensors, `viz.draw`, the graph growing as code runs
       (`viz.record`). Exercise: count the nodes.
    3. [`backward()`](03_backward.py): the chain rule node by node, vector-Jacobian products,
       `autograd.backward`, `autograd.grad`, the backward animation. Exercise: a Jacobian row by row.
    4. [Accumulation and `retain_graph`](04_accumulation_and_retain_graph.py): gradients add
       up, zeroing, "backward through the graph a second time", when `retain_graph=True` helps
       and when it hides a bug. Exercise: fix a training loop.
    5. [Hooks and `retain_grad`](05_hooks.py): tensor hooks, node hooks and prehooks, their
       order, removing them, hooks in the animation. Exercise: a clipping hook.
    6. [Turning autograd off](06_turning_autograd_off.py): `no_grad`, `set_grad_enabled`,
       `inference_mode`, `detach`, `.data`, the legacy `Variable` and `volatile`.
       Exercises: a quiz, and an evaluation helper that records nothing.
    7. [Custom `autograd.Function`](07_custom_function.py): `ctx`, `save_for_backward`,
       `needs_input_grad`, `mark_non_differentiable`, `mark_dirty`, `gradcheck`. Exercise: your own
       sigmoid.
    8. [Higher-order gradients](08_higher_order.py): `create_graph`, second derivatives, the
       graph of the backward pass, Hessian-vector products. Exercise: your own `hvp`.
    9. [In-place operations and versions](09_inplace_and_versions.py): `_version`, the two
       in-place errors, why they exist, how to fix the code. Exercise: repair softplus.
    10. [Training a network](10_training.py): `nn.Module`, a loss, an optimizer, a training
       loop on handwritten digits. Exercise: the training step.
    11. [Backprop by hand](11_backprop_by_hand.py): every gradient of a two-layer network with
       batch norm derived by hand and compared with autograd's (`viz.compare`). Exercise: the
       batch-norm backward.
    12. [Debugging a custom Function](12_debugging_a_custom_function.py): finding the node with
       a wrong `backward` (`viz.animate(..., check=True)`, `viz.gradcheck_graph`). Exercise: fix it.
    13. [Forward mode and function transforms](13_forward_mode_and_transforms.py): dual numbers
       by hand, `forward_ad`, `jvp` and `vjp`, what a Jacobian costs both ways (`jacfwd` for tall,
       `jacrev` for wide), a Hessian as `jacfwd(jacrev(f))`, per-sample gradients with
       `vmap(grad(loss))`. Exercises: dividing dual numbers, a Jacobian column by column, and
       per-sample gradient norms.
    14. [An engine you can read](14_a_reference_engine.py): the whole of reverse mode in 120
       lines (`minigrad/reference/engine.py`), built step by step, drawn and animated with `viz`,
       then minigrad's real engine read beside it. Exercises: a new operation, and a topological
       order.

    Lessons 1 to 4 build on each other; take them in order. After that, 5 to 9 can be read in
    any order, 10 uses everything, and 11 and 12 practise what 3 and 7 taught. Lesson 13 adds forward
    mode and `torch.func`; take it after lesson 8. Lesson 14 opens the engine itself; take it after
    lesson 5.

    ## How the exercises work

    Each lesson ends with an exercise (lessons 6 and 14 have two, lesson 13 three). In the lessons of this folder the
    exercise cells hold `...` placeholders, and every cell runs as it is. Replace a placeholder
    with your code and run the `check_...()` cell below it: it prints **✓** with a summary when
    you are right, or **✗** with a hint pointing at what to look at. The checks never crash, so
    experiment freely, and run them as often as you like.

    Stuck, or done and curious? The same lessons with every exercise solved are in
    [`solutions/`](../solutions/01_tensors_and_requires_grad.ipynb); each lesson links to its own.

    Each lesson was run before it was saved, so its pictures (`viz.draw`) and animations
    (`viz.animate`, a player with play and step buttons) show as soon as you open it; run the
    cells to play the animations. Each picture is followed by a cell that prints the same graph
    as text.
    """)
    return


if __name__ == "__main__":
    app.run()
