"""Port of PyTorch's note "Extending PyTorch": custom autograd Functions, a custom Module, __torch_function__.

Source: github.com/pytorch/pytorch, docs/source/notes/extending.rst (published as
pytorch.org/docs/stable/notes/extending.html): `LinearFunction` (both the combined `forward(ctx, ...)`
style and the 2.x `forward` + `setup_context` style), `MulConstant` (with and without
`set_materialize_grads(False)`), `MyCube` (double backward through a saved output), gradcheck /
gradgradcheck, the `Linear` module built on `LinearFunction`, and `ScalarTensor` with
`__torch_function__`. The code is the note's. Changes:
- `torch.randn(20, 20, dtype=torch.double, ...)` gradcheck inputs -> NumPy draws (6x5 and 4x5: gradcheck
  builds the full Jacobian, 20x20 / 30x20 takes a minute in pure Python);
- the note's `self.weight.data.uniform_(-0.1, 0.1)` init is kept, then the values compared are
  computed from the module's own weights, so no random numbers are compared between libraries;
- the results the note shows (`True` from gradcheck, `0.4` from torch.mean, the ScalarTensor repr) are
  asserted, and the custom gradients against the library's built-in ones.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

RNG = np.random.default_rng(0)


def double(lib, *shape):
    return lib.tensor(RNG.standard_normal(shape), dtype=lib.double, requires_grad=True)


def linear_functions(torch):
    Function = torch.autograd.Function

    # Inherit from Function
    class LinearFunction(Function):

        # Note that forward, setup_context, and backward are @staticmethods
        @staticmethod
        def forward(input, weight, bias):
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        # inputs is a Tuple of all of the inputs passed to forward.
        # output is the output of the forward().
        def setup_context(ctx, inputs, output):
            input, weight, bias = inputs
            ctx.save_for_backward(input, weight, bias)

        # This function has only a single output, so it gets only one gradient
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

    class LinearFunctionCombined(Function):
        @staticmethod
        # ctx is the first argument to forward
        def forward(ctx, input, weight, bias=None):
            # The forward pass can use ctx.
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

    return LinearFunction, LinearFunctionCombined


@pytest.mark.parametrize("style", ["setup_context", "combined"])
def test_linear_function_gradients_and_gradcheck(lib, style):
    torch = lib
    LinearFunction, LinearFunctionCombined = linear_functions(torch)
    linear = (LinearFunction if style == "setup_context" else LinearFunctionCombined).apply

    from_torch = torch.autograd
    gradcheck = from_torch.gradcheck
    input = (double(torch, 6, 5), double(torch, 4, 5), double(torch, 4))
    test = gradcheck(linear, input, eps=1e-6, atol=1e-4)
    assert test is True  # print(test) -> True

    x, w, b = input
    out = linear(x, w, b)
    assert out.grad_fn.name() == f"{'LinearFunction' if style == 'setup_context' else 'LinearFunctionCombined'}Backward"
    out.sum().backward()
    grads = [t.grad.numpy().copy() for t in input]
    for t in input:
        t.grad = None
    torch.nn.functional.linear(x, w, b).sum().backward()
    for got, t in zip(grads, input):
        np.testing.assert_allclose(got, t.grad.numpy(), rtol=1e-12)
    no_bias = linear(x, w, None)  # bias is optional: the trailing None gradient is ignored
    no_bias.sum().backward()


def test_mul_constant_with_and_without_materialized_grads(lib):
    torch = lib
    Function = torch.autograd.Function

    class MulConstant(Function):
        @staticmethod
        def forward(tensor, constant):
            return tensor * constant

        @staticmethod
        def setup_context(ctx, inputs, output):
            # ctx is a context object that can be used to stash information
            # for backward computation
            tensor, constant = inputs
            ctx.constant = constant

        @staticmethod
        def backward(ctx, grad_output):
            # We return as many input gradients as there were arguments.
            # Gradients of non-Tensor arguments to forward must be None.
            return grad_output * ctx.constant, None

    class MulConstantLazy(Function):
        @staticmethod
        def forward(tensor, constant):
            return tensor * constant

        @staticmethod
        def setup_context(ctx, inputs, output):
            tensor, constant = inputs
            ctx.set_materialize_grads(False)
            ctx.constant = constant

        @staticmethod
        def backward(ctx, grad_output):
            # Here we must handle None grad_output tensor. In this case we
            # can skip unnecessary computations and just return None.
            if grad_output is None:
                return None, None

            # We return as many input gradients as there were arguments.
            # Gradients of non-Tensor arguments to forward must be None.
            return grad_output * ctx.constant, None

    for fn in (MulConstant, MulConstantLazy):
        x = double(torch, 3)
        y = fn.apply(x, 2.5)
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.5))
        assert torch.autograd.gradcheck(lambda t, fn=fn: fn.apply(t, 2.5), (double(torch, 3),))


def test_my_cube_supports_double_backward(lib):
    torch = lib
    Function = torch.autograd.Function

    class MyCube(Function):
        @staticmethod
        def forward(x):
            # We wish to save dx for backward. In order to do so, it must
            # be returned as an output.
            dx = 3 * x ** 2
            result = x ** 3
            return result, dx

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            result, dx = output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            # In order for the autograd.Function to work with higher-order
            # gradients, we must add the gradient contribution of `dx`,
            # which is grad_dx * 6 * x.
            result = grad_output * dx + grad_dx * 6 * x
            return result

    # Wrap MyCube in a function so that it is clearer what the output is
    def my_cube(x):
        result, dx = MyCube.apply(x)
        return result

    x = double(torch, 4)
    assert torch.autograd.gradcheck(my_cube, (x,))
    assert torch.autograd.gradgradcheck(my_cube, (x,))
    grad, = torch.autograd.grad(my_cube(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(grad.detach().numpy(), 3 * x.detach().numpy() ** 2, rtol=1e-12)
    grad2, = torch.autograd.grad(grad.sum(), x)
    np.testing.assert_allclose(grad2.numpy(), 6 * x.detach().numpy(), rtol=1e-12)


def test_linear_module_on_a_custom_function(lib):
    torch, nn = lib, lib.nn
    LinearFunction, _ = linear_functions(torch)

    class Linear(nn.Module):
        def __init__(self, input_features, output_features, bias=True):
            super().__init__()
            self.input_features = input_features
            self.output_features = output_features

            # nn.Parameter is a special kind of Tensor, that will get
            # automatically registered as Module's parameter once it's assigned
            # as an attribute. Parameters and buffers need to be registered, or
            # they won't appear in .parameters() (doesn't apply to buffers), and
            # won't be converted when e.g. .cuda() is called. You can use
            # .register_buffer() to register buffers.
            # nn.Parameters require gradients by default.
            self.weight = nn.Parameter(torch.empty(output_features, input_features))
            if bias:
                self.bias = nn.Parameter(torch.empty(output_features))
            else:
                # You should always register all possible parameters, but the
                # optional ones can be None if you want.
                self.register_parameter('bias', None)

            # Not a very smart way to initialize weights
            nn.init.uniform_(self.weight, -0.1, 0.1)
            if self.bias is not None:
                nn.init.uniform_(self.bias, -0.1, 0.1)

        def forward(self, input):
            # See the autograd section for explanation of what happens here.
            return LinearFunction.apply(input, self.weight, self.bias)

        def extra_repr(self):
            # (Optional)Set the extra information about this module. You can test
            # it by printing an object of this class.
            return 'input_features={}, output_features={}, bias={}'.format(
                self.input_features, self.output_features, self.bias is not None
            )

    m = Linear(5, 3)
    assert repr(m) == "Linear(input_features=5, output_features=3, bias=True)"
    assert repr(Linear(2, 2, bias=False)) == "Linear(input_features=2, output_features=2, bias=False)"
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert m.weight.abs().max().item() <= 0.1
    x = torch.tensor(RNG.standard_normal((4, 5)).astype(np.float32))
    out = m(x)
    np.testing.assert_allclose(out.detach().numpy(), x.numpy() @ m.weight.detach().numpy().T
                               + m.bias.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(m.bias.grad.numpy(), np.full(3, 4.0))


def test_scalar_tensor_with_torch_function(lib):
    torch = lib
    HANDLED_FUNCTIONS = {}

    class ScalarTensor(object):
        def __init__(self, N, value):
            self._N = N
            self._value = value

        def __repr__(self):
            return "ScalarTensor(N={}, value={})".format(self._N, self._value)

        def tensor(self):
            return self._value * torch.eye(self._N)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if func not in HANDLED_FUNCTIONS or not all(
                issubclass(t, (torch.Tensor, ScalarTensor))
                for t in types
            ):
                return NotImplemented
            return HANDLED_FUNCTIONS[func](*args, **kwargs)

    def implements(torch_function):
        """Register a torch function override for ScalarTensor"""
        def decorator(func):
            functools.update_wrapper(func, torch_function)
            HANDLED_FUNCTIONS[torch_function] = func
            return func
        return decorator

    @implements(torch.mean)
    def mean(input):
        return float(input._value) / input._N

    d = ScalarTensor(5, 2)
    assert torch.mean(d) == 0.4

    def ensure_tensor(data):
        if isinstance(data, ScalarTensor):
            return data.tensor()
        return torch.as_tensor(data)

    @implements(torch.add)
    def add(input, other):
        try:
            if input._N == other._N:
                return ScalarTensor(input._N, input._value + other._value)
            else:
                raise ValueError("Shape mismatch!")
        except AttributeError:
            return torch.add(ensure_tensor(input), ensure_tensor(other))

    s = ScalarTensor(2, 2)
    assert repr(torch.add(s, s)) == "ScalarTensor(N=2, value=4)"
    t = torch.tensor([[1, 1, ], [1, 1]])
    np.testing.assert_array_equal(torch.add(s, t).numpy(), [[3.0, 1.0], [1.0, 3.0]])
