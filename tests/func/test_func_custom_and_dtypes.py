"""Two ways minigrad.func once gave a different answer from torch.func without a word, now tested against torch:

- a custom `autograd.Function` under a transform: PyTorch refuses one without `setup_context`, and vmap of one
  without a vmap rule; minigrad gave a zero Jacobian (its output was cut from the graph). A batched call to
  differentiate now runs once per sample, and jacrev of a Function without a vmap rule takes one backward pass per
  row, as torch.func's vmap over vjp_fn;
- the dtype of a tangent: a float64 tangent of a float32 primal stays float64 (jvp, make_dual), as in PyTorch.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad

X = np.array([0.5, 1.5])
XB = np.array([[0.5, 1.5], [0.1, 0.2], [1.0, 2.0]])


def _functions(lib):
    """Old-style (forward(ctx, ...)), new-style (setup_context), with jvp, with generate_vmap_rule."""

    class Old(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.exp()

    class New(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

        @staticmethod
        def jvp(ctx, t):
            (y,) = ctx.saved_tensors
            return t * y

    class Gen(New):
        generate_vmap_rule = True

    return {"Old": Old, "New": New, "Gen": Gen}


def _run(lib, cls_name: str, transform: str):
    f = _functions(lib)[cls_name].apply
    fn = lib.func
    x, xb = lib.tensor(X), lib.tensor(XB)
    programs = {
        "grad": lambda: fn.grad(lambda v: f(v).sum())(x),
        "vjp": lambda: fn.vjp(f, x)[1](lib.ones(2))[0],
        "jvp": lambda: fn.jvp(f, (x,), (x,))[1],
        "jacfwd": lambda: fn.jacfwd(f)(x),
        "jacrev": lambda: fn.jacrev(f)(x),
        "vmap": lambda: fn.vmap(f)(xb),
        "vmap_grad": lambda: fn.vmap(fn.grad(lambda v: f(v).sum()))(xb),
    }
    return programs[transform]()


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "jacfwd", "jacrev", "vmap", "vmap_grad"])
def test_an_old_style_function_is_refused_by_every_transform(torch, transform):
    for lib in (torch, minigrad):
        with pytest.raises(RuntimeError, match="must override the setup_context staticmethod") as info:
            _run(lib, "Old", transform)
        if lib is torch:
            want = str(info.value)
    assert str(info.value) == want


def test_an_old_style_function_still_runs_outside_transforms(torch):
    for lib in (torch, minigrad):
        y = _functions(lib)["Old"].apply(lib.tensor(X, requires_grad=True))
        y.sum().backward()


@pytest.mark.parametrize("cls_name, transform", [(c, t) for c in ("New", "Gen")
                                                 for t in ("grad", "vjp", "jvp", "vmap", "jacrev", "jacfwd",
                                                           "vmap_grad")])
def test_a_new_style_function_under_a_transform_as_torch(torch, cls_name, transform):
    try:
        want = _run(torch, cls_name, transform)
    except RuntimeError as e:  # vmap of a Function with no vmap rule
        with pytest.raises(RuntimeError) as info:
            _run(minigrad, cls_name, transform)
        assert str(info.value) == str(e)
        return
    got = _run(minigrad, cls_name, transform)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_jacfwd_through_the_per_sample_loop_carries_the_tangents(torch):
    """An op with no batching rule runs once per sample; the rows' tangents are stacked too (they were dropped:
    a zero Jacobian). (kl_div has no rule; under jacfwd alone it loops without the warning, as PyTorch runs its
    forward formula of batched ops.)"""
    x = np.arange(1.0, 5.0)
    def f(lib):
        return lambda v: lib.nn.functional.kl_div(v.reshape(2, 2).sin(), v.reshape(2, 2), reduction="none")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "There is a performance drop")
        got = minigrad.func.jacfwd(f(minigrad))(minigrad.tensor(x))
    want = torch.func.jacfwd(f(torch))(torch.tensor(x))
    assert np.abs(want.numpy()).sum() > 0
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12)


# -- the dtype of a tangent ---------------------------------------------------------------------------------------
PROGRAMS = {
    "mul": lambda lib, a: a * 2,
    "exp": lambda lib, a: a.exp(),
    "sin": lambda lib, a: lib.sin(a),
    "tanh": lambda lib, a: lib.tanh(a),
    "square": lambda lib, a: a * a,
    "sum": lambda lib, a: a.sum(),
    "reshape": lambda lib, a: a.reshape(2, 2),
    "identity": lambda lib, a: a,
}
DTYPES = [("float32", "float64"), ("float64", "float32"), ("float32", "float16"), ("float32", "float32")]


def _tangent_out(lib, program, dtypes, via: str):
    p = lib.tensor(np.linspace(0.5, 2.0, 4), dtype=getattr(lib, dtypes[0]))
    t = lib.tensor(np.linspace(-1.0, 1.0, 4), dtype=getattr(lib, dtypes[1]))
    if via == "jvp":
        return lib.func.jvp(lambda a: program(lib, a), (p,), (t,))[1]
    fwd = lib.autograd.forward_ad
    with fwd.dual_level():
        return fwd.unpack_dual(program(lib, fwd.make_dual(p, t))).tangent


@pytest.mark.parametrize("via", ["jvp", "make_dual"])
@pytest.mark.parametrize("dtypes", DTYPES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_tangent_dtype_is_torchs(torch, name, dtypes, via):
    want = _tangent_out(torch, PROGRAMS[name], dtypes, via)
    got = _tangent_out(minigrad, PROGRAMS[name], dtypes, via)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    rtol = 1e-9 if dtypes == ("float64", "float64") else 1e-3
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=1e-6)
