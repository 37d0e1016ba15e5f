"""Port of PyTorch's tutorial "Forward-mode Automatic Differentiation (Beta)".

Source: github.com/pytorch/tutorials, intermediate_source/forward_ad_usage.py (published as
pytorch.org/tutorials/intermediate/forward_ad_usage.html): Basic Usage, Usage with Modules and the custom
Function with `jvp`, checked by `gradcheck(check_forward_ad=True)`. The code is the tutorial's. Changes:
- `torch.randn` / `torch.rand_like` draws -> NumPy draws wrapped by the library (10x10 and 16x5 as in the
  tutorial; the custom Function's gradcheck input is 3x3, since gradcheck builds the full Jacobian);
- the tutorial's `assert`s are kept, and each JVP is also compared with the one written by hand
  (2x·t for `x ** 2 + y ** 2`, W_t x + b_t for `nn.Linear`, exp(x)·t for the Function);
- the tutorial's `dual_input_alt` lines (a transposed tangent is copied) are left out: minigrad keeps every
  tangent as given;
- not ported: the functional Module API section (`torch.func.functional_call`) and the two functorch sections
  (`jvp`, `make_functional_with_buffers`): they are torch.func, the next issue's transforms.
"""

from __future__ import annotations

import numpy as np

RNG = np.random.default_rng(0)


def randn(torch, *shape, dtype=None):
    return torch.tensor(RNG.standard_normal(shape), dtype=dtype or torch.float32)


def test_basic_usage(lib):
    torch = lib
    fwAD = torch.autograd.forward_ad

    primal = randn(torch, 10, 10)
    tangent = randn(torch, 10, 10)

    def fn(x, y):
        return x ** 2 + y ** 2

    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        assert fwAD.unpack_dual(dual_input).tangent is tangent

        plain_tensor = randn(torch, 10, 10)
        dual_output = fn(dual_input, plain_tensor)

        jvp = fwAD.unpack_dual(dual_output).tangent

    assert fwAD.unpack_dual(dual_output).tangent is None
    np.testing.assert_allclose(jvp.numpy(), (2 * primal * tangent).numpy(), rtol=1e-6)


def _linear_params(torch, model):
    with torch.no_grad():
        model.weight.copy_(randn(torch, 5, 5) / 3)
        model.bias.copy_(randn(torch, 5) / 3)
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: torch.tensor(RNG.uniform(0, 1, tuple(p.shape)), dtype=torch.float32)
                for name, p in params.items()}
    return params, tangents


def test_usage_with_modules(lib):
    torch = lib
    fwAD = torch.autograd.forward_ad
    nn = torch.nn

    model = nn.Linear(5, 5)
    input = randn(torch, 16, 5)

    params, tangents = _linear_params(torch, model)

    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))

        out = model(input)
        jvp = fwAD.unpack_dual(out).tangent

    want = input.numpy() @ tangents["weight"].numpy().T + tangents["bias"].numpy()
    np.testing.assert_allclose(jvp.detach().numpy(), want, rtol=1e-5, atol=1e-6)


def test_custom_function(lib):
    torch = lib
    fwAD = torch.autograd.forward_ad

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = torch.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

    fn = Fn.apply

    primal = torch.tensor(RNG.standard_normal((3, 3)), dtype=torch.double, requires_grad=True)
    tangent = randn(torch, 3, 3)

    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = fn(dual_input)
        jvp = fwAD.unpack_dual(dual_output).tangent

    np.testing.assert_allclose(jvp.detach().numpy(), np.exp(primal.detach().numpy()) * tangent.numpy(), rtol=1e-6)
    assert torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
                                    check_undefined_grad=False, check_batched_grad=False)
