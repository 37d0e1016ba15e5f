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
    # 7. Writing your own `autograd.Function`

    Every operation you have used so far came with its derivative built in: `MulBackward0`
    knows how to differentiate `*`. Sometimes you want to supply the derivative yourself:

    - the operation is not built from differentiable pieces (a call into NumPy or C code);
    - the automatic derivative is numerically poor, and you know a stable formula;
    - you want a *different* gradient on purpose (a "straight-through" estimator for rounding,
      gradient clipping or reversal).

    A subclass of `torch.autograd.Function` is a new graph node: you write `forward` (compute
    the result) and `backward` (turn the gradient of the output into gradients of the inputs),
    both as static methods, and call it through `.apply`.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    > **The marimo version of this lesson** (written from `notebooks/07_custom_function.ipynb` by
    > `notebooks/marimo_build.py`). marimo runs a cell again whenever a name it reads changes, and
    > each name belongs to one cell, so these things differ from the Jupyter lesson:
    >
    > - **Names defined in several cells are numbered** in the order the cells come: `out` → `out_1`.
    >   A name used in one cell only starts with `_` (private to that cell).
    > - **Where the lesson says to run a cell again,** press that cell's run button (▶): marimo
    >   does not re-run a cell on its own.
    > - **Printed values** appear in the cell's output: a cell that prints does it inside
    >   `with mo.redirect_stdout():`.
    > - **The exercises** have the same placeholders (`...`) and the same `check_...()` cells; the solutions
    >   are the Jupyter notebook `notebooks/solutions/07_custom_function.ipynb`.
    """)
    return


@app.cell
def _(mo):
    with mo.redirect_stdout():
        import minigrad as torch
        import viz
        from minigrad.autograd import Function, gradcheck

        class MulConstant(Function):

            @staticmethod
            def forward(ctx, tensor, constant):
                ctx.constant = constant  # ctx is a context object: stash whatever backward will need
                return tensor * constant

            @staticmethod
            def backward(ctx, grad_output):
                return (grad_output * ctx.constant, None)
        _x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)  # one gradient per input of forward; None for inputs that are not tensors
        y = MulConstant.apply(_x, 5.0)
        print(y)
        print(y.grad_fn.name(), y.grad_fn.next_functions)
        y.sum().backward()
        print('x.grad:', _x.grad)
    return Function, gradcheck, torch, viz


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    This is the `MulConstant` example from PyTorch's "Extending autograd" documentation. Notice:

    - `apply` ran `forward` **with grad mode off** (operations inside `forward` are not
      recorded), and then put a single node, `MulConstantBackward`, in the graph.
    - `backward` receives the gradient of the loss with respect to the output and returns one
      value per argument of `forward`, in order. The constant is a plain float, so its gradient
      is `None`.
    - `ctx` carries information from `forward` to `backward`. A plain number can simply be
      stored as an attribute.

    ## Saving tensors: `ctx.save_for_backward`

    Tensors should *not* be stored as `ctx.something`. Pass them to `ctx.save_for_backward` and
    read them back from `ctx.saved_tensors`. That way autograd knows about them: it frees them
    after `backward()` (lesson 4), checks that nobody modified them in place (lesson 9), and
    avoids reference cycles that would keep memory alive. Here is `exp`, saving its result:
    """)
    return


@app.cell
def _(Function, mo, torch):
    with mo.redirect_stdout():
        class MyExp(Function):

            @staticmethod
            def forward(ctx, x):
                result = x.exp()
                ctx.save_for_backward(result)
                return result

            @staticmethod
            def backward(ctx, grad_output):
                result, = ctx.saved_tensors  # d/dx e^x = e^x
                return grad_output * result
        _x = torch.tensor([0.0, 1.0], requires_grad=True)
        MyExp.apply(_x).sum().backward()
        print('x.grad:', _x.grad)
    return (MyExp,)


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Skipping work: `ctx.needs_input_grad`

    `backward` must return a gradient for every input, but not every input needs one: a data
    batch usually does not require grad, only the weights do. `ctx.needs_input_grad` is a tuple
    of booleans, one per argument of `forward`; return `None` where it is `False` and skip the
    computation. PyTorch's documentation shows it on a linear layer. This version uses the
    documentation's newer style, where `forward` does not take `ctx` and a separate
    `setup_context` saves what `backward` needs:
    """)
    return


@app.cell
def _(Function, mo, torch):
    with mo.redirect_stdout():
        class LinearFunction(Function):

            @staticmethod
            def forward(input, weight, bias):
                output = input.mm(weight.t())
                if bias is not None:
                    output = output + bias.unsqueeze(0).expand_as(output)
                return output

            @staticmethod
            def setup_context(ctx, inputs, output):
                input, weight, bias = inputs
                ctx.save_for_backward(input, weight, bias)

            @staticmethod
            def backward(ctx, grad_output):
                input, weight, bias = ctx.saved_tensors  # kept only to print it below
                LinearFunction.last_needs_input_grad = ctx.needs_input_grad
                grad_input = grad_weight = grad_bias = None
                if ctx.needs_input_grad[0]:
                    grad_input = grad_output.mm(weight)
                if ctx.needs_input_grad[1]:
                    grad_weight = grad_output.t().mm(input)
                if bias is not None and ctx.needs_input_grad[2]:
                    grad_bias = grad_output.sum(0)
                return (grad_input, grad_weight, grad_bias)
        torch.manual_seed(0)
        inputs = torch.randn(4, 3, dtype=torch.float64)
        weight = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)  # data: no grad needed
        bias = torch.randn(2, dtype=torch.float64, requires_grad=True)
        out = LinearFunction.apply(inputs, weight, bias)
        out.sum().backward()
        print('needs_input_grad:', LinearFunction.last_needs_input_grad)
        print('bias.grad:', bias.grad)
    return LinearFunction, bias, inputs, out, weight


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    `(False, True, True)`: the gradient with respect to the data was never computed.

    The custom node sits in the graph like any other, named after your class:
    """)
    return


@app.cell
def _(bias, out, viz, weight):
    viz.draw(out, params={"weight": weight, "bias": bias})
    return


@app.cell
def _(bias, mo, out, viz, weight):
    with mo.redirect_stdout():
        print(viz.summary(out, params={"weight": weight, "bias": bias}))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Outputs that are not differentiable: `ctx.mark_non_differentiable`

    Sometimes `forward` returns a second result that is not a function you can differentiate:
    indices, a mask, a count. `ctx.mark_non_differentiable(t)` tells autograd so. That output
    then does not require grad (nothing can flow back through it), while the others do. `backward`
    still receives one gradient per output; for the marked one it is all zeros. Here a clamp
    returns the mask of the elements it let through:
    """)
    return


@app.cell
def _(Function, mo, torch):
    with mo.redirect_stdout():
        class ClampWithMask(Function):

            @staticmethod
            def forward(ctx, x):
                mask = ((x >= -1) & (x <= 1)).to(x.dtype)
                ctx.mark_non_differentiable(mask)
                ctx.save_for_backward(mask)
                return (x.clamp(-1, 1), mask)

            @staticmethod
            def backward(ctx, grad_out, grad_mask):
                print('backward receives grad_mask =', grad_mask)
                mask, = ctx.saved_tensors
                return grad_out * mask
        _x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
        out_1, mask = ClampWithMask.apply(_x)
        print(out_1, mask)
        print('out.requires_grad:', out_1.requires_grad, ' mask.requires_grad:', mask.requires_grad)
        (out_1 * 2 + mask).sum().backward()
        print('x.grad:', _x.grad)
        try:
            mask.sum().backward()
        except RuntimeError as err:
            print('RuntimeError:', err)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Changing an input in place: `ctx.mark_dirty`

    A `forward` may also write into its input instead of making a new tensor, to save memory.
    Then it must return that very tensor and call `ctx.mark_dirty(t)`. Autograd treats the call
    like a built-in in-place operation (lesson 9): the tensor you hold gets the custom node as its
    new `grad_fn`, its version counter moves (`add_` moved it once, and `apply` once more), and a
    leaf that requires grad is refused, exactly as `w.add_(1)` would be:
    """)
    return


@app.cell
def _(Function, mo, torch):
    with mo.redirect_stdout():
        class AddOneInplace(Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output  # d(x + 1)/dx = 1


        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = a * 2
        print("b before:", b, " _version:", b._version)
        c = AddOneInplace.apply(b)
        print("c is b:", c is b, " b after:", b, " _version:", b._version)
        c.sum().backward()
        print("a.grad:", a.grad)
        try:
            AddOneInplace.apply(a)
        except RuntimeError as err:
            print("RuntimeError:", err)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Is my `backward` right? `gradcheck`

    Autograd trusts your `backward` completely. `torch.autograd.gradcheck` checks it against
    finite differences: it nudges each input element by a tiny `eps`, measures how the outputs
    move, and compares that numerical Jacobian with the one your `backward` produces. Use
    **float64** inputs: in float32 the rounding error of the nudges swamps the comparison.
    """)
    return


@app.cell
def _(LinearFunction, MyExp, bias, gradcheck, inputs, mo, torch, weight):
    with mo.redirect_stdout():
        inputs.requires_grad_()
        print(gradcheck(LinearFunction.apply, (inputs, weight, bias), eps=1e-6, atol=1e-4))
        print(gradcheck(MyExp.apply, (torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True),)))
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    And a `backward` with a bug (a stray factor of 2) is caught. By default `gradcheck` raises a
    `GradcheckError` that shows both Jacobians; `raise_exception=False` makes it return `False`
    instead:
    """)
    return


@app.cell
def _(Function, gradcheck, mo, torch):
    with mo.redirect_stdout():
        class BadExp(Function):
            @staticmethod
            def forward(ctx, x):
                result = x.exp()
                ctx.save_for_backward(result)
                return result

            @staticmethod
            def backward(ctx, grad_output):
                (result,) = ctx.saved_tensors
                return 2 * grad_output * result  # wrong!


        x64 = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
        print(gradcheck(BadExp.apply, (x64,), raise_exception=False))
        try:
            gradcheck(BadExp.apply, (x64,))
        except Exception as err:
            print(type(err).__name__ + ":", err)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    The numerical Jacobian is $\mathrm{diag}(e^{0.5}, e^{-1})$; the analytical one is twice
    that. A gradient check is cheap insurance: write one for every custom `Function`.

    ## Exercise 7: your own sigmoid

    Implement $\sigma(x) = 1 / (1 + e^{-x})$ as a `Function`. Its derivative can be written
    with the output alone, $\sigma'(x) = \sigma(x)\,(1 - \sigma(x))$, so save the **result**
    with `ctx.save_for_backward` and use it in `backward`. (The check compares your values with
    NumPy's and runs `gradcheck` on your function.)
    """)
    return


@app.cell
def _(Function):
    # Cell tags: nbval-ignore-output
    class MySigmoid(Function):
        @staticmethod
        def forward(ctx, x):
            return ...

        @staticmethod
        def backward(ctx, grad_output):
            return ...

    return (MySigmoid,)


@app.cell
def _(MySigmoid, mo):
    with mo.redirect_stdout():
        # Cell tags: nbval-ignore-output
        from minigrad_course import check_sigmoid

        check_sigmoid(MySigmoid)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## What to remember

    - A `Function` subclass has static `forward(ctx, ...)` and `backward(ctx, grad_output)`;
      call it with `.apply(...)`. It becomes one node, `<ClassName>Backward`.
    - `backward` returns one gradient per `forward` argument (`None` for non-tensors and for
      inputs where `ctx.needs_input_grad` is `False`).
    - Save tensors with `ctx.save_for_backward`, read them with `ctx.saved_tensors`; plain
      values can be `ctx` attributes.
    - `ctx.mark_non_differentiable(t)` for outputs such as masks or indices; `ctx.mark_dirty(t)`
      when `forward` modified an input in place (and returns it).
    - Verify every hand-written `backward` with `gradcheck` on small float64 inputs.

    Next: [8. Higher-order gradients](08_higher_order.py).
    """)
    return


if __name__ == "__main__":
    app.run()
