# %% [markdown]
# # 7. Writing your own `autograd.Function`
#
# Every operation you have used so far came with its derivative built in: `MulBackward0`
# knows how to differentiate `*`. Sometimes you want to supply the derivative yourself:
#
# - the operation is not built from differentiable pieces (a call into NumPy or C code);
# - the automatic derivative is numerically poor, and you know a stable formula;
# - you want a *different* gradient on purpose (a "straight-through" estimator for rounding,
#   gradient clipping or reversal).
#
# A subclass of `torch.autograd.Function` is a new graph node: you write `forward` (compute
# the result) and `backward` (turn the gradient of the output into gradients of the inputs),
# both as static methods, and call it through `.apply`.

# %%
import minigrad as torch
import viz
from minigrad.autograd import Function, gradcheck


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        # ctx is a context object: stash whatever backward will need
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        # one gradient per input of forward; None for inputs that are not tensors
        return grad_output * ctx.constant, None


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = MulConstant.apply(x, 5.0)
print(y)
print(y.grad_fn.name(), y.grad_fn.next_functions)
y.sum().backward()
print("x.grad:", x.grad)

# %% [markdown]
# This is the `MulConstant` example from PyTorch's "Extending autograd" documentation. Notice:
#
# - `apply` ran `forward` **with grad mode off** (operations inside `forward` are not
#   recorded), and then put a single node, `MulConstantBackward`, in the graph.
# - `backward` receives the gradient of the loss with respect to the output and returns one
#   value per argument of `forward`, in order. The constant is a plain float, so its gradient
#   is `None`.
# - `ctx` carries information from `forward` to `backward`. A plain number can simply be
#   stored as an attribute.
#
# ## Saving tensors: `ctx.save_for_backward`
#
# Tensors should *not* be stored as `ctx.something`. Pass them to `ctx.save_for_backward` and
# read them back from `ctx.saved_tensors`. That way autograd knows about them: it frees them
# after `backward()` (lesson 4), checks that nobody modified them in place (lesson 9), and
# avoids reference cycles that would keep memory alive. Here is `exp`, saving its result:

# %%
class MyExp(Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result  # d/dx e^x = e^x


x = torch.tensor([0.0, 1.0], requires_grad=True)
MyExp.apply(x).sum().backward()
print("x.grad:", x.grad)

# %% [markdown]
# ## Skipping work: `ctx.needs_input_grad`
#
# `backward` must return a gradient for every input, but not every input needs one: a data
# batch usually does not require grad, only the weights do. `ctx.needs_input_grad` is a tuple
# of booleans, one per argument of `forward`; return `None` where it is `False` and skip the
# computation. PyTorch's documentation shows it on a linear layer. This version uses the
# documentation's newer style, where `forward` does not take `ctx` and a separate
# `setup_context` saves what `backward` needs:

# %%
class LinearFunction(Function):
    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        LinearFunction.last_needs_input_grad = ctx.needs_input_grad  # kept only to print it below
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


torch.manual_seed(0)
inputs = torch.randn(4, 3, dtype=torch.float64)  # data: no grad needed
weight = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
bias = torch.randn(2, dtype=torch.float64, requires_grad=True)

out = LinearFunction.apply(inputs, weight, bias)
out.sum().backward()
print("needs_input_grad:", LinearFunction.last_needs_input_grad)
print("bias.grad:", bias.grad)

# %% [markdown]
# `(False, True, True)`: the gradient with respect to the data was never computed.
#
# The custom node sits in the graph like any other, named after your class:

# %%
# NBVAL_IGNORE_OUTPUT
viz.draw(out, params={"weight": weight, "bias": bias})

# %%
print(viz.summary(out, params={"weight": weight, "bias": bias}))

# %% [markdown]
# ## Outputs that are not differentiable: `ctx.mark_non_differentiable`
#
# Sometimes `forward` returns a second result that is not a function you can differentiate:
# indices, a mask, a count. `ctx.mark_non_differentiable(t)` tells autograd so. That output
# then does not require grad (nothing can flow back through it), while the others do. `backward`
# still receives one gradient per output; for the marked one it is all zeros. Here a clamp
# returns the mask of the elements it let through:

# %%
class ClampWithMask(Function):
    @staticmethod
    def forward(ctx, x):
        mask = ((x >= -1) & (x <= 1)).to(x.dtype)  # 1 where x passes through unchanged
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(mask)
        return x.clamp(-1, 1), mask

    @staticmethod
    def backward(ctx, grad_out, grad_mask):
        print("backward receives grad_mask =", grad_mask)
        (mask,) = ctx.saved_tensors
        return grad_out * mask


x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
out, mask = ClampWithMask.apply(x)
print(out, mask)
print("out.requires_grad:", out.requires_grad, " mask.requires_grad:", mask.requires_grad)
(out * 2 + mask).sum().backward()
print("x.grad:", x.grad)
try:
    mask.sum().backward()
except RuntimeError as err:
    print("RuntimeError:", err)

# %% [markdown]
# ## Changing an input in place: `ctx.mark_dirty`
#
# A `forward` may also write into its input instead of making a new tensor, to save memory.
# Then it must return that very tensor and call `ctx.mark_dirty(t)`. Autograd treats the call
# like a built-in in-place operation (lesson 9): the tensor you hold gets the custom node as its
# new `grad_fn`, its version counter moves (`add_` moved it once, and `apply` once more), and a
# leaf that requires grad is refused, exactly as `w.add_(1)` would be:

# %%
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

# %% [markdown]
# ## Is my `backward` right? `gradcheck`
#
# Autograd trusts your `backward` completely. `torch.autograd.gradcheck` checks it against
# finite differences: it nudges each input element by a tiny `eps`, measures how the outputs
# move, and compares that numerical Jacobian with the one your `backward` produces. Use
# **float64** inputs: in float32 the rounding error of the nudges swamps the comparison.

# %%
inputs.requires_grad_()
print(gradcheck(LinearFunction.apply, (inputs, weight, bias), eps=1e-6, atol=1e-4))
print(gradcheck(MyExp.apply, (torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True),)))

# %% [markdown]
# And a `backward` with a bug (a stray factor of 2) is caught. By default `gradcheck` raises a
# `GradcheckError` that shows both Jacobians; `raise_exception=False` makes it return `False`
# instead:

# %%
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

# %% [markdown]
# The numerical Jacobian is $\mathrm{diag}(e^{0.5}, e^{-1})$; the analytical one is twice
# that. A gradient check is cheap insurance: write one for every custom `Function`.
#
# ## Exercise 7: your own sigmoid
#
# Implement $\sigma(x) = 1 / (1 + e^{-x})$ as a `Function`. Its derivative can be written
# with the output alone, $\sigma'(x) = \sigma(x)\,(1 - \sigma(x))$, so save the **result**
# with `ctx.save_for_backward` and use it in `backward`. (The check compares your values with
# NumPy's and runs `gradcheck` on your function.)

# %% answer=7
class MySigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        # PLACEHOLDER: return ...
        # SOLUTION
        result = 1 / (1 + torch.exp(-x))
        ctx.save_for_backward(result)
        return result
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        # PLACEHOLDER: return ...
        # SOLUTION
        (result,) = ctx.saved_tensors
        return grad_output * result * (1 - result)
        # END SOLUTION


# %% check=7 points=2
from minigrad_course import check_sigmoid

check_sigmoid(MySigmoid)

# %% [markdown]
# ## What to remember
#
# - A `Function` subclass has static `forward(ctx, ...)` and `backward(ctx, grad_output)`;
#   call it with `.apply(...)`. It becomes one node, `<ClassName>Backward`.
# - `backward` returns one gradient per `forward` argument (`None` for non-tensors and for
#   inputs where `ctx.needs_input_grad` is `False`).
# - Save tensors with `ctx.save_for_backward`, read them with `ctx.saved_tensors`; plain
#   values can be `ctx` attributes.
# - `ctx.mark_non_differentiable(t)` for outputs such as masks or indices; `ctx.mark_dirty(t)`
#   when `forward` modified an input in place (and returns it).
# - Verify every hand-written `backward` with `gradcheck` on small float64 inputs.
#
# Next: [8. Higher-order gradients](08_higher_order.ipynb).

# %% hidden=7
def test_large_inputs(MySigmoid):
    """Inputs of +-800 and +-50 (the check's go up to 4): forward stays within [0, 1] and backward finite.
    Catches exp(x) / (1 + exp(x)), which passes the check but gives inf / inf = nan for large x."""
    import warnings

    import numpy as np

    import minigrad as torch

    values = np.array([-800.0, -50.0, 0.0, 50.0, 800.0])
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        y = MySigmoid.apply(x)
        y.sum().backward()
    small = np.exp(-np.abs(values))  # never overflows
    want = np.where(values >= 0, 1 / (1 + small), small / (1 + small))
    got = y.detach().numpy()
    assert np.all(np.isfinite(got)) and np.allclose(got, want, rtol=1e-9, atol=1e-15), (
        f"MySigmoid.apply([-800, -50, 0, 50, 800]) gives {got.tolist()}\n  hint: exp(x) overflows for large x: "
        "1 / (1 + torch.exp(-x)) stays finite")
    assert x.grad is not None and np.all(np.isfinite(x.grad.numpy())), (
        f"the gradient at [-800, -50, 0, 50, 800] is {None if x.grad is None else x.grad.numpy().tolist()}\n  "
        "hint: compute backward from the saved result: grad_output * result * (1 - result)")


def test_float32_matrix(MySigmoid):
    """A 2-D float32 input: the output and the gradient keep its shape and dtype (catches a forward
    that builds its result in float64 or flattens it, which the check's float64 vector cannot see)."""
    import numpy as np

    import minigrad as torch

    values = np.array([[0.5, -1.0], [2.0, 0.0]], dtype=np.float32)
    x = torch.tensor(values, requires_grad=True)
    y = MySigmoid.apply(x)
    assert y.dtype == torch.float32 and tuple(y.shape) == (2, 2), (
        f"for a float32 2x2 input, forward returned {y.dtype} of shape {tuple(y.shape)}\n  hint: compute with "
        "tensor operations on x (1 / (1 + torch.exp(-x))), which keep its dtype and shape")
    (y * torch.tensor(np.array([[1.0, 2.0], [-1.0, 0.5]], dtype=np.float32))).sum().backward()
    s = 1 / (1 + np.exp(-values))
    want = np.array([[1.0, 2.0], [-1.0, 0.5]]) * s * (1 - s)
    assert x.grad is not None and x.grad.dtype == torch.float32 and np.allclose(x.grad.numpy(), want, rtol=1e-5), (
        f"the float32 gradient is {None if x.grad is None else x.grad.numpy().tolist()}, expected {want.tolist()}\n"
        "  hint: backward returns grad_output * result * (1 - result)")
