"""PyTorch autograd tutorials, run under PyTorch 2.13 and under minigrad: both must print the same.

Every snippet is a function ``snippet(torch, Variable)``; the harness calls it once with ``torch`` and once
with ``minigrad`` bound to the parameter ``torch`` (so tutorial code reads verbatim) and compares stdout,
warnings, the escaped exception and the grad mode afterwards (see harness.py for the normalisation).

Rules for snippets:
- inputs are literal values, ``arange``/``linspace`` or simple arithmetic, never random draws (where the
  tutorial uses ``torch.randn``, a comment says so), so both libraries see the same numbers;
- printed float32 values are chosen so that rounding to 4 decimals is unambiguous; values that depend on
  long float32 sums are printed rounded further (said in a comment);
- an error is raised *out of* the snippet (one per snippet, at its end), never caught and printed, so the
  harness can apply the message rule (minigrad may append a final ``hint:`` line).

Sources: the old 60-minute blitz "Autograd: automatic differentiation" (blitz_*), its Variable-era version
(legacy_*), "Autograd mechanics" (mechanics_*), "Learning PyTorch with examples" (lpwe_*), "A gentle
introduction to torch.autograd" (gentle_*), "Extending PyTorch" (extending_*), and the behaviours of the
API contract / PyTorch reference sheet (the rest).
"""

from __future__ import annotations

import math
import threading

import pytest
import torch_parity_harness as harness
from torch_parity_harness import snippet

# (3, 4) inputs for the node-name catalogues: no zeros, no ties, no values on a rounding or clamp edge
A34 = [[0.3, -1.2, 2.5, -0.7], [1.1, 0.4, -2.2, 0.9], [-0.6, 1.7, 0.2, -1.4]]
B34 = [[1.3, 0.8, -0.4, 2.1], [-1.5, 0.6, 1.9, -0.3], [0.7, -2.4, 1.2, 0.5]]

# ==================================================================================================
# The old 60-minute blitz: "Autograd: automatic differentiation"


@snippet
def blitz_ones_add_sum_backward(torch, Variable):
    a = torch.ones(3, 4, requires_grad=True)
    b = torch.zeros(3, 4)
    c = a + b
    d = c.sum()
    d.backward()
    print(a)
    print(c)
    print(d)
    print(a.grad)


@snippet
def blitz_requires_grad_and_first_ops(torch, Variable):
    x = torch.ones(2, 2, requires_grad=True)
    print(x)
    y = x + 2
    print(y)
    print(y.grad_fn)
    z = y * y * 3
    out = z.mean()
    print(z, out)


@snippet
def blitz_requires_grad_in_place_flag(torch, Variable):
    a = torch.tensor([[0.5, -1.0], [2.0, 3.0]])  # tutorial: torch.randn(2, 2)
    a = (a * 3) / (a - 1)
    print(a.requires_grad)
    a.requires_grad_(True)
    print(a.requires_grad)
    b = (a * a).sum()
    print(b.grad_fn)


@snippet
def blitz_out_backward_gives_4_5(torch, Variable):
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    out.backward()
    print(x.grad)


@snippet
def blitz_vector_jacobian_product(torch, Variable):
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)  # tutorial: torch.randn(3, requires_grad=True)
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    print(y)
    v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
    y.backward(v)
    print(x.grad)


@snippet
def blitz_stop_tracking_with_no_grad(torch, Variable):
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)  # tutorial: torch.randn(3, requires_grad=True)
    print(x.requires_grad)
    print((x**2).requires_grad)
    with torch.no_grad():
        print((x**2).requires_grad)


@snippet
def blitz_detach_same_content(torch, Variable):
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    print(x.requires_grad)
    y = x.detach()
    print(y.requires_grad)
    print(x.eq(y).all())


# ==================================================================================================
# Legacy Variable API (PyTorch 0.3 tutorials, still accepted by PyTorch 2.x)


@snippet
def legacy_variable_blitz(torch, Variable):
    x = Variable(torch.ones(2, 2), requires_grad=True)
    print(x)
    y = x + 2
    print(y)
    print(y.grad_fn)
    z = y * y * 3
    out = z.mean()
    print(z, out)
    out.backward()
    print(x.grad)
    print(type(x), isinstance(x, torch.Tensor), isinstance(x, Variable))


@snippet
def legacy_variable_wraps_tensor(torch, Variable):
    t = torch.ones(2)
    v = Variable(t)
    print(v, v.requires_grad, v.is_leaf, v.grad_fn)
    print(v is t)
    v[0] = 5.0  # shares storage with t
    print(t)
    print(isinstance(torch.ones(1), Variable))
    print(Variable(t, requires_grad=True))


@snippet
def legacy_variable_volatile_warns(torch, Variable):
    v = Variable(torch.ones(2), volatile=True)
    print(v)
    print(v.requires_grad)


@snippet
def legacy_volatile_read_and_set_warn(torch, Variable):
    x = torch.ones(2, requires_grad=True)
    print(x.volatile)
    x.volatile = True
    print(x.requires_grad)


@snippet
def legacy_floattensor_gradient_x2(torch, Variable):
    x = Variable(torch.ones(4), requires_grad=True)
    z = x * 2
    z.backward(torch.FloatTensor([1, 0.1, 0.01, 0.001]))
    print(x.grad)


@snippet
def legacy_two_layer_net_variables(torch, Variable):
    # "PyTorch: Variables and autograd" (0.3): sizes shrunk and randn replaced by linspace.
    dtype = torch.FloatTensor
    N, D_in, H, D_out = 4, 3, 5, 2
    x = Variable(torch.linspace(-1, 1, N * D_in).view(N, D_in).type(dtype), requires_grad=False)
    y = Variable(torch.linspace(0, 1, N * D_out).view(N, D_out).type(dtype), requires_grad=False)
    w1 = Variable(torch.linspace(-0.55, 0.65, D_in * H).view(D_in, H).type(dtype), requires_grad=True)
    w2 = Variable(torch.linspace(0.35, -0.25, H * D_out).view(H, D_out).type(dtype), requires_grad=True)
    learning_rate = 1e-2
    for t in range(5):
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        print(t, round(loss.item(), 4))  # tutorial: loss.data[0]; rounded to stay float32-robust
        loss.backward()
        w1.data -= learning_rate * w1.grad.data
        w2.data -= learning_rate * w2.grad.data
        w1.grad.data.zero_()
        w2.grad.data.zero_()
    print(w1)
    print(w2)


@snippet
def legacy_function_non_static_error(torch, Variable):
    class Legacy(torch.autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, grad_output):
            return grad_output * 2

    x = torch.ones(2, requires_grad=True)
    Legacy()(x)


# ==================================================================================================
# Autograd mechanics


@snippet
def mechanics_saved_tensors_identity(torch, Variable):
    # docs: torch.randn(5, requires_grad=True)
    x = torch.tensor([0.5, 1.0, 1.5, 2.0, 2.5], requires_grad=True)
    y = x.pow(2)
    print(x.equal(y.grad_fn._saved_self))
    print(x is y.grad_fn._saved_self)
    y = x.exp()
    print(y.equal(y.grad_fn._saved_result))
    print(y is y.grad_fn._saved_result)


@snippet
def mechanics_saved_values_exposed(torch, Variable):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    print(x.exp().grad_fn._saved_result)
    print(x.pow(2).grad_fn._saved_exponent)
    w = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
    m = x * w
    print(m.grad_fn._saved_self, m.grad_fn._saved_other)


@snippet
def mechanics_saved_tensor_freed_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.pow(2)
    y.sum().backward()
    print(x.grad)
    y.grad_fn._saved_self


@snippet
def mechanics_grad_modes(torch, Variable):
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = x * 2
    print(y.requires_grad, y.grad_fn, y.is_leaf)
    with torch.inference_mode():
        z = x * 2
    print(z.requires_grad, z.grad_fn)
    with torch.set_grad_enabled(False):
        w = x * 2
    print(w.requires_grad)
    with torch.no_grad():
        with torch.enable_grad():
            u = x * 2
    print(u.requires_grad, u.grad_fn)
    print(torch.is_grad_enabled())


@snippet
def mechanics_inplace_version_bump_saved_tensor_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    print(y._version)
    y.add_(1)
    print(y._version)
    print(y)
    y.sum().backward()


@snippet
def mechanics_inplace_unsaved_is_fine(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    z = x * 1
    s = z + w  # AddBackward0 saves nothing
    z.add_(2)
    print(z._version, z.grad_fn)
    s.sum().backward()
    print(x.grad, w.grad)


@snippet
def mechanics_inplace_saved_by_mul_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    z = x + 1
    p = z * w  # MulBackward0 saves z
    z.add_(2)
    print(z._version)
    p.sum().backward()


@snippet
def mechanics_grad_mode_is_thread_local(torch, Variable):
    x = torch.ones(2, requires_grad=True)
    seen = []
    with torch.no_grad():
        th = threading.Thread(target=lambda: seen.append((x * 2).requires_grad))
        th.start()
        th.join()
        seen.append((x * 2).requires_grad)
    print(seen)


# ==================================================================================================
# Learning PyTorch with examples


@snippet
def lpwe_polyfit_sin_tensors(torch, Variable):
    # "Tensors" step: manual gradients. Fixed initial weights instead of torch.randn(()); 50 steps, not 2000.
    # The loss is a float32 sum of 2000 terms: printed with 4 significant digits (tutorial: raw loss)
    # so float32 summation-order differences cannot show.
    dtype = torch.float
    device = torch.device("cpu")
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.tensor(0.1, device=device, dtype=dtype)
    b = torch.tensor(0.7, device=device, dtype=dtype)
    c = torch.tensor(-0.2, device=device, dtype=dtype)
    d = torch.tensor(-0.05, device=device, dtype=dtype)
    learning_rate = 1e-6
    for t in range(50):
        y_pred = a + b * x + c * x**2 + d * x**3
        loss = (y_pred - y).pow(2).sum().item()
        if t % 10 == 9:
            print(t, f"{loss:.4g}")
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x**2).sum()
        grad_d = (grad_y_pred * x**3).sum()
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d
    print(f"Result: y = {a.item():.3f} + {b.item():.3f} x + {c.item():.3f} x^2 + {d.item():.3f} x^3")


@snippet
def lpwe_polyfit_sin_autograd(torch, Variable):
    # "Autograd" step. Fixed initial weights instead of torch.randn((), requires_grad=True); 50 steps.
    # Losses printed with 4 significant digits (tutorial: loss.item()), weights with 3 decimals:
    # robust to float32 summation-order differences.
    dtype = torch.float
    device = torch.device("cpu")
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.tensor(0.1, device=device, dtype=dtype, requires_grad=True)
    b = torch.tensor(0.7, device=device, dtype=dtype, requires_grad=True)
    c = torch.tensor(-0.2, device=device, dtype=dtype, requires_grad=True)
    d = torch.tensor(-0.05, device=device, dtype=dtype, requires_grad=True)
    learning_rate = 1e-6
    for t in range(50):
        y_pred = a + b * x + c * x**2 + d * x**3
        loss = (y_pred - y).pow(2).sum()
        if t % 10 == 9:
            print(t, f"{loss.item():.4g}")
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    print(loss.grad_fn, a.is_leaf, a.requires_grad)
    print(f"Result: y = {a.item():.3f} + {b.item():.3f} x + {c.item():.3f} x^2 + {d.item():.3f} x^3")


@snippet
def lpwe_polyfit_legendre_custom_function(torch, Variable):
    # "Defining new autograd functions" step, with the tutorial's own fixed initial weights; 50 steps.
    # Losses printed with 4 significant digits (tutorial: loss.item()), weights with 3 decimals.
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input**3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input**2 - 1)

    dtype = torch.float
    device = torch.device("cpu")
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
    learning_rate = 5e-6
    for t in range(50):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t % 10 == 9:
            print(t, f"{loss.item():.4g}")
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    print(type(P3(c + d * x).grad_fn).__name__)
    # a and c stay within float32 noise of 0 (sin and P3 are odd): their sign is not printed
    print(abs(a.item()) < 1e-3, abs(c.item()) < 1e-3)
    print(f"Result: y = a + {b.item():.3f} * P3(c + {d.item():.3f} x)")


@snippet
def lpwe_myrelu_two_layer_net(torch, Variable):
    # "PyTorch: Defining new autograd functions" (two-layer net version), small sizes, linspace inputs.
    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    N, D_in, H, D_out = 4, 3, 5, 2
    x = torch.linspace(-1, 1, N * D_in).view(N, D_in)
    y = torch.linspace(0, 1, N * D_out).view(N, D_out)
    w1 = torch.linspace(-0.55, 0.65, D_in * H).view(D_in, H).requires_grad_()
    w2 = torch.linspace(0.35, -0.25, H * D_out).view(H, D_out).requires_grad_()
    learning_rate = 1e-2
    for t in range(5):
        relu = MyReLU.apply
        y_pred = relu(x.mm(w1)).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        print(t, round(loss.item(), 4))  # rounded to stay float32-robust
        loss.backward()
        with torch.no_grad():
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    print(y_pred.grad_fn.next_functions[0][0])
    print(w1)


# ==================================================================================================
# A gentle introduction to torch.autograd


@snippet
def gentle_Q_external_grad(torch, Variable):
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([6.0, 4.0], requires_grad=True)
    Q = 3 * a**3 - b**2
    external_grad = torch.tensor([1.0, 1.0])
    Q.backward(gradient=external_grad)
    print(9 * a**2 == a.grad)
    print(-2 * b == b.grad)
    print(Q)
    print(a.grad, b.grad)


@snippet
def gentle_dag_exclusion(torch, Variable):
    x = torch.full((5, 5), 0.25)  # tutorial: torch.rand(5, 5)
    y = torch.full((5, 5), 0.75)
    z = torch.full((5, 5), 0.5, requires_grad=True)
    a = x + y
    print(f"Does `a` require gradients?: {a.requires_grad}")
    b = x + z
    print(f"Does `b` require gradients?: {b.requires_grad}")


# ==================================================================================================
# Extending PyTorch: custom autograd Functions


@snippet
def extending_mulconstant(torch, Variable):
    class MulConstant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = MulConstant.apply(x, 5.5)
    print(y)
    print(y.grad_fn)
    print(type(y.grad_fn).__name__, y.grad_fn.name(), y.is_leaf)
    y.sum().backward()
    print(x.grad)


@snippet
def extending_exp_save_result(torch, Variable):
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = Exp.apply(x)
    print(y)
    print(y.grad_fn.next_functions)
    y.backward(torch.ones(3))
    print(x.grad)


@snippet
def extending_linear_function_needs_input_grad(torch, Variable):
    class LinearFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            print("needs_input_grad:", ctx.needs_input_grad)
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    linear = LinearFunction.apply
    inp = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    weight = torch.tensor([[0.5, -1.0, 0.25], [2.0, 0.0, -0.5]], requires_grad=True)
    bias = torch.tensor([0.5, -0.5], requires_grad=True)
    out = linear(inp, weight, bias)
    print(out)
    out.sum().backward()
    print(weight.grad, bias.grad, inp.grad)
    x = inp.clone().requires_grad_()
    linear(x, weight).sum().backward()
    print(x.grad)


@snippet
def extending_linear_function_gradcheck(torch, Variable):
    gradcheck = torch.autograd.gradcheck  # attribute access: the module under test, not the real torch

    class LinearFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    # docs: torch.randn(20, 20) and torch.randn(30, 20), double precision
    inp = (torch.arange(20 * 20, dtype=torch.double).view(20, 20) / 97).sin().requires_grad_()
    weight = (torch.arange(30 * 20, dtype=torch.double).view(30, 20) / 53).cos().requires_grad_()
    test = gradcheck(LinearFunction.apply, (inp, weight), eps=1e-6, atol=1e-4)
    print(test)


@snippet
def extending_set_materialize_grads(torch, Variable):
    once_differentiable = torch.autograd.function.once_differentiable

    class SimpleFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x.clone(), x.clone()

        @staticmethod
        @once_differentiable
        def backward(ctx, g1, g2):
            print("g1:", g1, "g2:", g2)
            (x,) = ctx.saved_tensors
            grad_input = torch.zeros_like(x)
            if g1 is not None:
                grad_input += g1
            if g2 is not None:
                grad_input += g2
            return grad_input

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    out1, out2 = SimpleFunc.apply(a)
    out1.sum().backward()
    print(a.grad)


@snippet
def extending_unused_output_gets_zeros(torch, Variable):
    class TwoOut(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            print("grad enabled inside forward:", torch.is_grad_enabled())
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            print("g1:", g1, "g2:", g2)
            return g1 * 2 + g2 * 3

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    out1, out2 = TwoOut.apply(a)
    print(out1, out2, out1.grad_fn is out2.grad_fn)
    out1.sum().backward()
    print(a.grad)


@snippet
def extending_mark_dirty_docs_example(torch, Variable):
    once_differentiable = torch.autograd.function.once_differentiable

    class Inplace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x_npy = x.numpy()  # x_npy shares storage with x
            x_npy += 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            return grad_output

    a = torch.tensor(1.0, requires_grad=True, dtype=torch.double).clone()
    b = a * a
    Inplace.apply(a)  # This would lead to wrong gradients!
    print(a, a._version)
    b.backward()  # but the engine would not know unless we mark_dirty


@snippet
def extending_function_returning_input(torch, Variable):
    class Identity(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = Identity.apply(x)
    print(y is x, y, y.is_leaf)
    y.sum().backward()
    print(x.grad)


@snippet
def extending_wrong_number_of_grads_error(torch, Variable):
    class WrongCount(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    WrongCount.apply(x, y).sum().backward()


@snippet
def extending_wrong_grad_shape_error(torch, Variable):
    class WrongShape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return torch.ones(5)

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    WrongShape.apply(x).sum().backward()


# ==================================================================================================
# Leaves, flags and graph structure


@snippet
def leaf_flags_small_graph(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    b = torch.tensor([3.0, 3.0])
    y = x * w
    z = y + b
    loss = z.sum()
    for name, t in [("x", x), ("w", w), ("b", b), ("y", y), ("z", z), ("loss", loss)]:
        print(name, t.is_leaf, t.requires_grad, t.grad_fn)
    loss.backward()
    print(x.grad, w.grad, b.grad)


@snippet
def next_functions_walk(torch, Variable):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    z = (y + 1).sum()
    print(z.grad_fn)
    print(z.grad_fn.next_functions)
    print(z.grad_fn.next_functions[0][0].next_functions)
    print(z.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
    acc = z.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
    print(acc, acc.next_functions)


@snippet
def next_functions_two_inputs(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    c = torch.tensor([5.0, 6.0])
    out = (x * w + c).exp()
    print(out.grad_fn.next_functions)
    add = out.grad_fn.next_functions[0][0]
    print(add.next_functions)
    mul = add.next_functions[0][0]
    print([(type(fn).__name__, nr) for fn, nr in mul.next_functions])
    print([fn.variable is t for (fn, _), t in zip(mul.next_functions, (x, w))])


@snippet
def node_type_and_name_walk(torch, Variable):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = torch.tensor([0.5, -0.5], requires_grad=True)
    h = torch.tanh(x @ w)
    s = (x.t()[0] / 2).exp().sum()
    m = x.sum(dim=0)[1]
    out = (h**2).mean() + m - s

    def walk(fn, nr, depth):
        if fn is None:
            print("  " * depth + f"None ({nr})")
            return
        print("  " * depth + f"{type(fn).__name__} | {fn.name()} ({nr})")
        for nxt, nxt_nr in fn.next_functions:
            walk(nxt, nxt_nr, depth + 1)

    walk(out.grad_fn, 0, 0)


@snippet
def node_names_elementwise(torch, Variable):
    a = torch.tensor(A34, requires_grad=True)
    b = torch.tensor(B34, requires_grad=True)
    p = a.abs() + 0.5  # positive
    cases = {
        "a + b": a + b,
        "a + 2": a + 2,
        "2 + a": 2 + a,
        "a - b": a - b,
        "a - 2": a - 2,
        "2 - a": 2 - a,
        "a * b": a * b,
        "a * 2": a * 2,
        "a / b": a / b,
        "a / 2": a / 2,
        "2 / a": 2 / a,
        "-a": -a,
        "a ** 2": a**2,
        "p ** b": p**b,
        "2 ** a": 2**a,
        "exp": a.exp(),
        "log": p.log(),
        "log1p": p.log1p(),
        "sin": a.sin(),
        "cos": a.cos(),
        "tan": a.tan(),
        "tanh": a.tanh(),
        "sigmoid": a.sigmoid(),
        "relu": a.relu(),
        "abs": a.abs(),
        "sqrt": p.sqrt(),
        "rsqrt": p.rsqrt(),
        "square": a.square(),
        "reciprocal": a.reciprocal(),
        "sign": a.sign(),
        "floor": a.floor(),
        "ceil": a.ceil(),
        "round": a.round(),
        "neg": a.neg(),
        "pow(0.5)": p.pow(0.5),
        "clamp(-0.5, 0.5)": a.clamp(-0.5, 0.5),
        "clamp(min=0)": a.clamp(min=0),
        "maximum": torch.maximum(a, b),
        "minimum": torch.minimum(a, b),
        "where": torch.where(a > 0, a, b),
        "masked_fill": a.masked_fill(a > 0, 0.0),
    }
    for expr, t in cases.items():
        print(f"{expr}: {type(t.grad_fn).__name__} {t.grad_fn.name()}")


@snippet
def node_names_reductions_and_matmul(torch, Variable):
    a = torch.tensor(A34, requires_grad=True)
    m = torch.arange(20.0).view(4, 5).requires_grad_()
    v = torch.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
    w = torch.tensor([0.5, 0.25, -1.0, 2.0], requires_grad=True)
    x3 = torch.arange(24.0).view(2, 3, 4).requires_grad_()
    y3 = torch.arange(40.0).view(2, 4, 5).requires_grad_()
    cases = {
        "sum()": a.sum(),
        "sum(dim=0)": a.sum(dim=0),
        "sum(1, keepdim=True)": a.sum(1, keepdim=True),
        "mean()": a.mean(),
        "mean(dim=1)": a.mean(dim=1),
        "prod()": a.prod(),
        "max()": a.max(),
        "max(dim=1).values": a.max(dim=1).values,
        "min()": a.min(),
        "min(1)[0]": a.min(1)[0],
        "amax(1)": a.amax(1),
        "amin(0)": a.amin(0),
        "var()": a.var(),
        "std()": a.std(),
        "norm()": a.norm(),
        "logsumexp(1)": a.logsumexp(1),
        "softmax(1)": a.softmax(dim=1),
        "log_softmax(1)": a.log_softmax(dim=1),
        "cumsum(1)": a.cumsum(1),
        "a @ m": a @ m,
        "mm": torch.mm(a, m),
        "matmul(a, v)": torch.matmul(a, v),
        "mv": torch.mv(a, v),
        "v @ w": v @ w,
        "dot": torch.dot(v, w),
        "outer": torch.outer(v, w),
        "x3 @ m": x3 @ m,
        "bmm": torch.bmm(x3, y3),
    }
    for expr, t in cases.items():
        print(f"{expr}: {type(t.grad_fn).__name__} {t.grad_fn.name()}")
    print("argmax:", a.argmax(), a.argmax().grad_fn, a.argmax().requires_grad)


@snippet
def node_names_shape_and_indexing(torch, Variable):
    a = torch.tensor(A34, requires_grad=True)
    v = torch.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
    idx = torch.tensor([0, 2])
    cases = {
        "view(12)": a.view(12),
        "reshape(4, 3)": a.reshape(4, 3),
        "flatten()": a.flatten(),
        "transpose(0, 1)": a.transpose(0, 1),
        "t()": a.t(),
        "T": a.T,
        "permute(1, 0)": a.permute(1, 0),
        "unsqueeze(0)": a.unsqueeze(0),
        "unsqueeze(0).squeeze()": a.unsqueeze(0).squeeze(),
        "unsqueeze(0).squeeze(0)": a.unsqueeze(0).squeeze(0),
        "v.expand(3, 4)": v.expand(3, 4),
        "cat": torch.cat([a, a]),
        "stack": torch.stack([a, a]),
        "a[0]": a[0],
        "a[:, 1]": a[:, 1],
        "a[1:, :2]": a[1:, :2],
        "a[idx]": a[idx],
        "a[[0, 2]]": a[[0, 2]],
        "a[a > 0]": a[a > 0],
        "a[None]": a[None],
        "a[..., 0]": a[..., 0],
        "repeat(2, 1)": a.repeat(2, 1),
        "narrow(1, 0, 2)": a.narrow(1, 0, 2),
        "unbind(0)[0]": a.unbind(0)[0],
        "split(2, 1)[0]": a.split(2, 1)[0],
        "chunk(2, 1)[1]": a.chunk(2, 1)[1],
        "gather": a.gather(1, torch.tensor([[0], [1], [2]])),
        "clone()": a.clone(),
        "t().contiguous()": a.t().contiguous(),
        "double()": a.double(),
        "to(float64)": a.to(torch.float64),
        "t().reshape(12)": a.t().reshape(12),
        "expand_as": v.expand_as(a),
        "view_as": a.view(12).view_as(a),
        "reshape_as": a.reshape(12).reshape_as(a),
    }
    for expr, t in cases.items():
        print(f"{expr}: {type(t.grad_fn).__name__} {t.grad_fn.name()}")
    print(a.float().grad_fn, a.float() is a, a.contiguous() is a, a.detach().grad_fn)


@snippet
def node_names_inplace_and_setitem(torch, Variable):
    a = torch.tensor([[0.3, -1.2, 2.5], [1.1, 0.4, -2.2]], requires_grad=True)
    c = a * 1
    c += 1
    print(type(c.grad_fn).__name__, c.grad_fn.next_functions[0][0].name())
    c.mul_(2)
    print(type(c.grad_fn).__name__)
    c[0] = 5.0
    print(type(c.grad_fn).__name__, c.grad_fn.name())
    d = a * 1
    d[torch.tensor([0])] = 0.0
    print(type(d.grad_fn).__name__)
    e = a * 1
    e.copy_(torch.zeros(2, 3))
    print(type(e.grad_fn).__name__)
    c.sum().backward()
    print(a.grad)


@snippet
def accumulate_grad_variable_is_leaf(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    print(acc)
    print(type(acc).__name__, acc.name())
    print(acc.variable is x)
    print(acc.next_functions)
    print(y.grad_fn.next_functions[1])


@snippet
def node_repr_equals_str_and_metadata(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    node = y.grad_fn
    print(repr(node) == str(node), node.metadata, isinstance(node, torch.autograd.graph.Node))
    node.metadata["note"] = "times two"
    print(y.grad_fn.metadata)


# ==================================================================================================
# Gradients: accumulation, retain_graph, autograd.grad / autograd.backward


@snippet
def grad_accumulates_with_retain_graph(torch, Variable):
    x = torch.ones(3, requires_grad=True)
    y = (2 * x).sum() / 2
    y.backward(retain_graph=True)
    print(x.grad)
    g = x.grad
    y.backward()
    print(x.grad)
    print(g, g is x.grad)  # accumulated in place into the same tensor
    x.grad.zero_()
    print(x.grad)


@snippet
def x_squared_plus_y_cubed(torch, Variable):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    z = x**2 + y**3
    z.backward(torch.ones_like(x))
    print(z)
    print(x.grad)
    print(y.grad)


@snippet
def chain_rule_sigmoid_by_hand(torch, Variable):
    x = torch.tensor([0.0, 1.0, -2.0], dtype=torch.float64, requires_grad=True)
    s = torch.sigmoid(x)
    s.sum().backward()
    print(s)
    print(x.grad)
    print(torch.allclose(x.grad, s * (1 - s)))


@snippet
def autograd_grad_second_derivative_create_graph(torch, Variable):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x**3).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    print(g)
    (g2,) = torch.autograd.grad(g.sum(), x)
    print(g2)


@snippet
def autograd_grad_second_derivative_without_create_graph_error(torch, Variable):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x**3).sum()
    (g,) = torch.autograd.grad(y, x)
    print(g, g.requires_grad, g.grad_fn, x.grad)
    torch.autograd.grad(g.sum(), x)


@snippet
def autograd_grad_allow_unused(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    u = torch.tensor([3.0, 4.0], requires_grad=True)
    y = (x * 2).sum()
    print(torch.autograd.grad(y, [x, u], allow_unused=True))


@snippet
def autograd_grad_unused_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    u = torch.tensor([3.0, 4.0], requires_grad=True)
    y = (x * 2).sum()
    torch.autograd.grad(y, [x, u])


@snippet
def autograd_grad_grad_outputs(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    print(torch.autograd.grad(y, x, grad_outputs=torch.tensor([1.0, 0.5])))


@snippet
def autograd_backward_two_roots(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y1 = x * 2
    y2 = x**2
    g1 = torch.ones(2)
    g2 = torch.tensor([0.5, 0.25])
    torch.autograd.backward([y1, y2], [g1, g2])
    print(x.grad)


@snippet
def backward_inputs_argument(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    (x * w).sum().backward(inputs=[x])
    print(x.grad, w.grad)


@snippet(fresh_process=True)
def backward_create_graph_second_derivative_warns(torch, Variable):
    # PyTorch warns only once per process: this snippet runs in a fresh interpreter.
    x = torch.tensor(2.0, requires_grad=True)
    y = x**3
    y.backward(create_graph=True)
    print(x.grad)
    g = x.grad
    x.grad = None
    g.backward()
    print(x.grad)


@snippet
def one_element_backward_without_argument(torch, Variable):
    x = torch.tensor([3.0], requires_grad=True)
    y = x * x
    y.backward()
    print(y.shape, x.grad)


# ==================================================================================================
# Hooks


@snippet
def hook_doubles_gradient(torch, Variable):
    v = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    h = v.register_hook(lambda grad: grad * 2)  # double the gradient
    v.backward(torch.tensor([1.0, 2.0, 3.0]))
    print(v.grad)
    h.remove()  # removes the hook


@snippet
def hook_prints_gradient(torch, Variable):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 3
    z = y.pow(2).sum()
    y.register_hook(lambda grad: print("grad of y:", grad))
    x.register_hook(print)
    z.backward()
    print(x.grad)


@snippet
def hook_handle_remove(torch, Variable):
    x = torch.ones(3, requires_grad=True)
    handle = x.register_hook(lambda g: g * 100)
    (x * 2).sum().backward()
    print(x.grad)
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    print(x.grad)


@snippet
def hook_order_every_kind(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    # registered deliberately out of execution order
    acc.register_hook(lambda g_in, g_out: print("7 AccumulateGrad hook", g_in, g_out))
    x.register_post_accumulate_grad_hook(lambda t: print("6 post-accumulate hook on x", t.grad))
    acc.register_prehook(lambda grad_outputs: print("5 AccumulateGrad prehook", grad_outputs))
    y.grad_fn.register_hook(lambda g_in, g_out: print("3 MulBackward0 hook", g_in, g_out))
    y.grad_fn.register_prehook(lambda grad_outputs: print("2 MulBackward0 prehook", grad_outputs))
    y.register_hook(lambda g: print("1 tensor hook on y", g))
    x.register_hook(lambda g: print("4 tensor hook on x", g))
    y.sum().backward()
    print(x.grad)


@snippet
def hook_leaf_replaces_grad_before_post_accumulate(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    x.register_post_accumulate_grad_hook(lambda t: print("post-accumulate sees", t.grad))
    x.register_hook(lambda g: g * 10)
    y.sum().backward()
    print(x.grad)


@snippet
def hook_retain_grad_sees_tensor_hooks(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 3)
    (y * y).sum().backward()
    print(y.grad, x.grad)


@snippet
def hook_node_prehook_replaces_grad(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 0 + 1,))
    (y * 5).sum().backward()
    print(x.grad)


@snippet
def hook_changes_size_error(torch, Variable):
    x = torch.ones(2, requires_grad=True)
    x.register_hook(lambda g: g.sum())
    (x * 2).sum().backward()


@snippet
def register_hook_on_no_grad_tensor_error(torch, Variable):
    t = torch.ones(2)
    t.register_hook(lambda g: g)


# ==================================================================================================
# retain_grad, .grad of non-leaves, requires_grad rules


@snippet
def retain_grad_non_leaf(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    print(y.retains_grad)
    y.retain_grad()
    print(y.retains_grad, x.retains_grad)
    z = (y**2).sum()
    z.backward()
    print(y.grad, x.grad)
    x.retain_grad()  # no-op on a leaf
    print(x.retains_grad)


@snippet
def non_leaf_grad_access_warns(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    print(x.grad)
    print(y.grad)


@snippet
def retain_grad_on_no_grad_tensor_error(torch, Variable):
    t = torch.ones(2)
    t.retain_grad()


@snippet
def requires_grad_method(torch, Variable):
    a = torch.ones(2)
    print(a.requires_grad)
    b = a.requires_grad_()
    print(a.requires_grad, b is a, a.is_leaf, a)
    a.requires_grad_(False)
    print(a.requires_grad)
    a.requires_grad = True
    print(a)


@snippet
def double_on_fresh_leaf_is_not_a_leaf(torch, Variable):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    x = w.double()
    print(x.is_leaf, x.grad_fn, x.dtype)
    x.sum().backward()
    print(w.grad)
    print(x.grad)


@snippet
def non_leaf_requires_grad_false_error(torch, Variable):
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    y.requires_grad = False


@snippet
def tensor_int_requires_grad_error(torch, Variable):
    torch.tensor([1, 2], requires_grad=True)


@snippet
def int_tensor_requires_grad_method_error(torch, Variable):
    torch.tensor([1, 2]).requires_grad_()


@snippet
def int_tensor_requires_grad_attribute_error(torch, Variable):
    t = torch.tensor([1, 2])
    t.requires_grad = True


# ==================================================================================================
# no_grad / enable_grad / set_grad_enabled / inference_mode


@snippet
def no_grad_context(torch, Variable):
    x = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        y = x * 2
        print(torch.is_grad_enabled())
    print(y.requires_grad, y.grad_fn)
    print(torch.is_grad_enabled())


@snippet
def no_grad_decorators(torch, Variable):
    x = torch.tensor([1.0], requires_grad=True)

    @torch.no_grad()
    def doubler(x):
        return x * 2

    @torch.no_grad
    def tripler(x):
        return x * 3

    @torch.enable_grad()
    def quadrupler(x):
        return x * 4

    print(doubler(x).requires_grad, tripler(x).requires_grad)
    with torch.no_grad():
        print(quadrupler(x).requires_grad)
    print(doubler.__name__, torch.is_grad_enabled())


@snippet
def set_grad_enabled_call_and_context(torch, Variable):
    x = torch.tensor([1.0], requires_grad=True)
    is_train = False
    with torch.set_grad_enabled(is_train):
        y = x * 2
    print(y.requires_grad)
    _ = torch.set_grad_enabled(True)
    y = x * 2
    print(y.requires_grad)
    torch.set_grad_enabled(False)
    y = x * 2
    print(y.requires_grad, torch.is_grad_enabled())
    torch.set_grad_enabled(True)
    print(torch.is_grad_enabled())
    print(torch.set_grad_enabled(False))  # the call already switched grad mode off
    print(torch.is_grad_enabled())
    torch.set_grad_enabled(True)
    print(torch.no_grad())


@snippet
def inference_mode_context_and_decorator(torch, Variable):
    x = torch.ones(2, requires_grad=True)
    with torch.inference_mode():
        y = x * 2
        print(torch.is_grad_enabled())
    print(y, y.requires_grad, y.grad_fn)

    @torch.inference_mode()
    def f(t):
        return t * 3

    print(f(x).requires_grad, torch.is_grad_enabled())


@snippet
def inference_tensor_saved_for_backward_error(torch, Variable):
    with torch.inference_mode():
        t = torch.ones(2)
    x = torch.ones(2, requires_grad=True)
    (x * t).sum().backward()


@snippet
def no_grad_weight_update(torch, Variable):
    w = torch.tensor([1.0, -1.0], requires_grad=True)
    loss = (w * torch.tensor([2.0, 3.0])).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.5 * w.grad
    print(w, w.is_leaf, w.grad_fn, w._version)
    w.grad.zero_()
    print(w.grad)


# ==================================================================================================
# detach / .data / storage sharing


@snippet
def detach_shares_storage(torch, Variable):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    d = x.detach()
    print(d, d.requires_grad, d.is_leaf, d.grad_fn)
    d[0] = 10.0
    print(x)
    print(x._version, d._version)


@snippet
def detach_inplace_then_backward_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.detach().add_(1)
    print(y._version)
    y.sum().backward()


@snippet
def data_attribute_shares_storage_not_version(torch, Variable):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    print(x.data, x.data.requires_grad)
    x.data.mul_(0.5)
    print(x, x._version)
    y = x.exp()
    y.data.add_(1)  # silently wrong gradient: no version check through .data
    y.sum().backward()
    print(y._version, x.grad)


@snippet
def detach_in_place_on_view_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    b = x.clone()
    v = b[:1]
    v.detach_()


@snippet
def clone_vs_detach(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    print(c, c.is_leaf)
    c2 = x.detach().clone()
    c2[0] = 7.0
    print(c2, x)
    c.sum().backward()
    print(x.grad)


# ==================================================================================================
# Errors from backward and in-place operations


@snippet
def backward_twice_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (2 * x).sum()  # the scalar multiply saves what it needs
    y.backward()
    print(x.grad)
    y.backward()


@snippet
def backward_twice_without_saved_values_is_fine(torch, Variable):
    b = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (b + 1).sum()  # nothing saved: can be walked twice
    y.backward()
    y.backward()
    print(b.grad)


@snippet
def backward_non_scalar_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    print(y)
    y.backward()


@snippet
def backward_gradient_wrong_shape_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.backward(torch.ones(3))


@snippet
def backward_no_requires_grad_error(torch, Variable):
    x = torch.tensor([1.0, 2.0])
    y = (x * 2).sum()
    print(y.requires_grad, y.grad_fn)
    y.backward()


@snippet
def backward_of_no_grad_result_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        y = (x * 2).sum()
    y.backward()


@snippet
def inplace_on_leaf_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x += 1


@snippet
def inplace_on_view_of_leaf_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x[0] = 5.0


@snippet
def numpy_on_requires_grad_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    print(x.detach().numpy())
    x.numpy()


@snippet
def item_on_two_elements_error(torch, Variable):
    x = torch.tensor([1.0, 2.0])
    print(x[0].item(), x.sum().item())
    x.item()


@snippet
def grad_assign_wrong_shape_error(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.grad = torch.ones(3)


@snippet
def shape_mismatch_error(torch, Variable):
    a = torch.ones(3, 3)
    b = torch.ones(3, 4)
    a + b


@snippet(fresh_process=True)
def float_of_requires_grad_tensor_warns(torch, Variable):
    # PyTorch warns only once per process: this snippet runs in a fresh interpreter.
    x = torch.tensor([1.5, 2.0], requires_grad=True)
    print(x[0].item(), int(x[1]), x.tolist())
    print(float(x[0]))


# ==================================================================================================
# Broadcasting and type promotion


@snippet
def broadcasting_gradient_sums(torch, Variable):
    a = torch.tensor([[1.0], [2.0], [3.0]], requires_grad=True)  # (3, 1)
    b = torch.tensor([[10.0, 20.0, 30.0, 40.0]], requires_grad=True)  # (1, 4)
    c = a + b
    print(c.shape)
    print(c)
    c.sum().backward()
    print(a.grad, a.grad.shape)
    print(b.grad, b.grad.shape)


@snippet
def broadcasting_mul_gradient(torch, Variable):
    a = torch.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
    b = torch.tensor([0.5, -1.0, 2.0, 4.0], requires_grad=True)  # (4,) broadcasts as (1, 4)
    c = (a * b).sum()
    c.backward()
    print(a.grad)
    print(b.grad)
    s = torch.tensor(2.0, requires_grad=True)
    (s * b).sum().backward()
    print(s.grad, s.grad.shape)


@snippet
def type_promotion(torch, Variable):
    i = torch.tensor([1, 2, 3])
    f = torch.tensor([1.0, 2.0, 3.0])
    d = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    for name, t in [
        ("int + 2.5", i + 2.5),
        ("float32 + float64", f + d),
        ("x * 2.0", f * 2.0),
        ("int / 2", i / 2),
        ("int * 2", i * 2),
        ("int // 2", i // 2),
        ("int + True", i + True),
        ("float64 * 2", d * 2),
        ("int ** 2", i**2),
        ("int > 1", i > 1),
    ]:
        print(name, t, t.dtype)


@snippet
def type_promotion_gradient_dtypes(torch, Variable):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    d = torch.tensor([0.5, 0.25], dtype=torch.float64, requires_grad=True)
    y = (x * d).sum()
    print(y, y.dtype)
    y.backward()
    print(x.grad, x.grad.dtype)
    print(d.grad, d.grad.dtype)


# ==================================================================================================
# Tensor reprs (reference sheet 4c) and attributes


@snippet
def repr_float32(torch, Variable):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    print(x)
    print(x * 2)
    print((x * 2).sum())
    print(torch.tensor(2.0, requires_grad=True), torch.tensor(2.0))
    print(torch.tensor([-1.5, 2.0, 0.25]), torch.tensor([0.1, 0.2, 0.3]))
    print(torch.tensor([1.0, -2.0]) * 0, torch.tensor([123.5, -7.25]))
    print([torch.tensor(3.0)], repr(torch.tensor([1.5])))


@snippet
def repr_float64(torch, Variable):
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    print(x)
    print(x * 2)
    print(torch.tensor(1.5, dtype=torch.float64))
    print(torch.tensor([0.1, 0.2], dtype=torch.double))
    print(torch.ones(2, 2, dtype=torch.float64))


@snippet
def repr_int_and_bool(torch, Variable):
    print(torch.tensor([1, 2]))
    print(torch.tensor([1, 2], dtype=torch.int32))
    print(torch.tensor([True, False]))
    print(torch.tensor([-1, 10, 100]))
    print(torch.arange(5), torch.tensor(7), torch.tensor(True))
    print(torch.tensor([[1, -2], [30, 4]]))
    print(torch.tensor([1.0, 2.0]) > 1.5)


@snippet
def repr_empty(torch, Variable):
    print(torch.tensor([]))
    print(torch.zeros(0, 3, requires_grad=True))
    print(torch.ones(2, 0))
    print(torch.tensor([], dtype=torch.int64))
    print(torch.tensor([], dtype=torch.float64))
    print(torch.tensor([]).shape, torch.zeros(0, 3).numel())


@snippet
def repr_2d_and_3d(torch, Variable):
    print(torch.arange(6.0).view(2, 3).requires_grad_())
    print(torch.arange(24).view(2, 3, 4))
    print(torch.tensor([[1.5, -2.25], [10.0, 0.125]]) * 1)
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    print(x @ x)


@snippet
def repr_summarised_over_1000_elements(torch, Variable):
    print(torch.arange(1001.0))
    x = torch.arange(2000.0, requires_grad=True)
    print(x * 1)
    print(torch.arange(2000).view(40, 50))
    print(torch.arange(1200.0).view(2, 600) / 4)


@snippet
def repr_exactly_1000_elements_not_summarised(torch, Variable):
    x = (torch.arange(1000) % 7).view(40, 25)
    print(x.numel())
    print(x)


@snippet
def repr_scientific_notation(torch, Variable):
    print(torch.tensor([1e-5, 1.0, 12345.6]))
    print(torch.tensor([1e10]))
    print(torch.tensor([0.0001, 0.5]))
    print(torch.tensor([1e-8, 1e-9], dtype=torch.float64))
    print(torch.tensor([2.0, 1000.0, 0.001]))
    print(torch.tensor(1e-6), torch.tensor([1e9, 1.0]))


@snippet
def repr_line_wrapping(torch, Variable):
    print(torch.arange(20.0) / 8)
    print(torch.arange(0, 100000, 3000))
    print((torch.arange(30.0) / 8).requires_grad_())
    print(torch.arange(40.0).view(2, 20) / 4)


@snippet
def repr_nan_inf(torch, Variable):
    print(torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0]))
    print(torch.tensor([float("inf"), 1.5]))
    print(torch.tensor(float("nan")))


@snippet
def torch_size_prints(torch, Variable):
    x = torch.zeros(2, 3)
    print(x.size())
    print(x.shape)
    print(torch.tensor(1.0).shape)
    print(x.shape[1:], x.shape[0], list(x.shape), tuple(x.shape))
    print(x.shape == (2, 3), x.size() == torch.zeros(2, 3).shape, len(x.shape))
    print(type(x.shape), isinstance(x.shape, tuple))
    print(x.view(-1).shape, x.unsqueeze(1).shape, x.t().shape)
    print(x.shape.numel(), x.size(0), x.size()[-1])


@snippet
def tensor_attributes(torch, Variable):
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    print(x.dtype)
    print(x.device)
    print(x.shape)
    print(x.size())
    print(x.size(1), x.size(-1))
    print(x.dim(), x.ndim, len(x))
    print(x.numel())
    print(x[1, 2].item(), type(x[1, 2].item()))
    print(x.tolist())
    print(x.sum().item(), torch.tensor([1, 2]).sum().item())
    print(torch.tensor(True).item(), torch.tensor([[5]]).item())


@snippet
def tensor_type_strings_and_legacy_constructors(torch, Variable):
    f = torch.tensor([1.0, 2.0])
    print(f.type(), f.double().type(), torch.tensor([1, 2]).type())
    print(isinstance(f, torch.FloatTensor), isinstance(f, torch.DoubleTensor), type(f) is torch.Tensor)
    print(torch.Tensor([1, 2]), torch.FloatTensor([1.5]), torch.LongTensor([1, 2]))
    print(torch.DoubleTensor([0.5]), torch.Tensor(3, 4).shape, torch.Tensor(3, 4).dtype)
    print(torch.get_default_dtype(), torch.float, torch.double, torch.long)
    print(torch.float32 is torch.float, torch.float64 == torch.double)


@snippet
def devices_cpu(torch, Variable):
    print(torch.cuda.is_available())
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(device, repr(device), device.type)
    x = torch.ones(2, device=device)
    print(x.to("cpu"), x.cpu(), x.to(device).device, x.device == device)
    print(x.to("cpu") is x, x.cpu() is x)
    y = torch.ones(2, requires_grad=True)
    z = y.to(device)
    print(z is y, z.is_leaf)
    print(y.to(torch.float64))
    print(torch.zeros(2, device="cpu").device)


@snippet
def inf_arithmetic_gives_nan_silently(torch, Variable):
    # PyTorch prints no warning for inf - inf or inf * 0 (NumPy would): forward, backward, no_grad
    x = torch.tensor([float("inf"), 1.0], requires_grad=True)
    y = x - x
    print(y)
    print(x * 0.0, x + float("-inf"), x * torch.tensor([0.0, 2.0]))
    (x * torch.tensor([0.0, 2.0])).sum().backward()
    print(x.grad)
    with torch.no_grad():
        print(x - x, (x * 0.0).sum())


# ==================================================================================================
# The one test


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in harness.SNIPPETS.items()])
def test_tutorial_snippet_prints_what_pytorch_prints(fn, torch, minigrad):
    problems = harness.differences(fn, torch, minigrad)
    if problems:
        pytest.fail(problems, pytrace=False)


def test_snippets_reach_the_library_only_through_their_parameter():
    """A snippet that imports torch itself would run real PyTorch on both sides and prove nothing."""
    import inspect
    import re

    offenders = [name for name, fn in harness.SNIPPETS.items()
                 if re.search(r"^\s*(from|import)\s+torch\b", inspect.getsource(fn), re.M)]
    assert offenders == []
