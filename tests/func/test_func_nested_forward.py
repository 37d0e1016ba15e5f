"""Forward mode inside forward mode, as torch.func: jacfwd(jacfwd(f)), jvp inside jvp, Hessians by jacfwd(jacfwd),
vmap(jacfwd(jacfwd(f))), against torch.func. minigrad's forward AD has one level (as torch.autograd.forward_ad,
whose dual_level both refuse to nest); the inner transform computes its numbers by reverse mode, which the outer
level's tangents go through."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad


def _close(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape) and str(g.dtype)[-7:] == str(w.dtype)[-7:]
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-9, atol=1e-12)


def _f(lib, w):
    def f(x):
        return (w @ x.sin()).tanh() * x[..., :2].exp() + (x * x).sum(-1, keepdim=True)
    return f


def _g(lib):
    def g(x):
        return (x.sin() * x.cos()).sum() + (x ** 3).sum() * x.exp().mean()
    return g


def _programs(lib, arrays):
    x, v, u, w, xb = (lib.tensor(a) for a in arrays)
    F, f, g = lib.func, _f(lib, w), _g(lib)
    return {
        "jacfwd(jacfwd(f))": lambda: F.jacfwd(F.jacfwd(f))(x),
        "jvp(jvp(f))": lambda: F.jvp(lambda y: F.jvp(f, (y,), (v,))[1], (x,), (u,)),
        "hessian by jacfwd(jacfwd)": lambda: F.jacfwd(F.jacfwd(g))(x),
        "vmap(jacfwd(jacfwd(g)))": lambda: F.vmap(F.jacfwd(F.jacfwd(g)))(xb),
        "jacfwd(jacfwd(jacfwd(g)))": lambda: F.jacfwd(F.jacfwd(F.jacfwd(g)))(x),
        "jacfwd of a jvp": lambda: F.jacfwd(lambda y: F.jvp(f, (y,), (v,))[1])(x),
        "jvp of jacfwd": lambda: F.jvp(F.jacfwd(f), (x,), (u,)),
        "jvp(jvp) with has_aux": lambda: F.jvp(lambda y: F.jvp(lambda z: (f(z), z.cos()), (y,), (v,),
                                                               has_aux=True)[1:], (x,), (u,), has_aux=True),
        "jacfwd(jacfwd) argnums": lambda: F.jacfwd(F.jacfwd(lambda a, b: (a * b.sin()).sum() * a, argnums=(0, 1)),
                                                   argnums=1)(x, v),
    }


def _arrays(rng, n: int, batch: int = 4):
    return (rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal((2, n)),
            rng.standard_normal((batch, n)))


@pytest.mark.parametrize("name", list(_programs(minigrad, _arrays(np.random.default_rng(0), 3))))
def test_nested_forward_mode_as_torch_func(torch, name):
    arrays = _arrays(np.random.default_rng(7), 3)
    want = _programs(torch, arrays)[name]()
    got = _programs(minigrad, arrays)[name]()
    _close(got, want)

@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 4), batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_hessians_by_jacfwd_jacfwd_any_size(torch, n, batch, seed):
    arrays = _arrays(np.random.default_rng(seed), n, batch)
    for name in ("jacfwd(jacfwd(f))", "hessian by jacfwd(jacfwd)", "vmap(jacfwd(jacfwd(g)))"):
        _close(_programs(minigrad, arrays)[name](), _programs(torch, arrays)[name]())


def test_dual_level_itself_does_not_nest_as_in_pytorch(torch):
    for lib in (torch, minigrad):
        with lib.autograd.forward_ad.dual_level():
            with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
                lib.autograd.forward_ad.enter_dual_level()


def _in_users_dual_level(lib, how):
    fw = lib.autograd.forward_ad
    x = lib.tensor(np.array([1.0, 2.0]))
    with fw.dual_level():
        d = fw.make_dual(x, lib.tensor(np.array([1.0, -0.5])))
        out = {"jacrev": lambda y: lib.func.jacrev(lambda z: z.sin() * z)(y),
               "grad": lambda y: lib.func.grad(lambda z: z.sin().sum())(y),
               "vjp": lambda y: lib.func.vjp(lambda z: z.sin(), y)[1](lib.ones(2, dtype=lib.float64))[0],
               "jacrev(jacrev)": lambda y: lib.func.jacrev(lib.func.jacrev(lambda z: (z.sin() * z).sum()))(y),
               "vmap(grad)": lambda y: lib.func.vmap(lib.func.grad(lambda z: z.sin() * z))(y)}[how](d)
        return out.detach().numpy(), fw.unpack_dual(out).tangent.numpy(), out.requires_grad


@pytest.mark.parametrize("how", ["jacrev", "grad", "vjp", "jacrev(jacrev)", "vmap(grad)"])
def test_a_reverse_transform_inside_the_users_dual_level(torch, how):
    """A tangent of the user's own dual level goes through jacrev/grad/vjp (forward over reverse), as in torch.func;
    the result needs no graph (it had no tangent)."""
    got, want = _in_users_dual_level(minigrad, how), _in_users_dual_level(torch, how)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-9, atol=1e-12)
    assert got[2] == want[2]


@pytest.mark.parametrize("how", ["jvp", "jacfwd"])
def test_forward_transforms_inside_the_users_dual_level_refused_as_torch(torch, how):
    for lib in (torch, minigrad):
        x = lib.tensor(np.array([1.0, 2.0]))
        with lib.autograd.forward_ad.dual_level(), pytest.raises(RuntimeError, match="Nested forward mode AD is not"):
            if how == "jvp":
                lib.func.jvp(lib.sin, (x,), (x,))
            else:
                lib.func.jacfwd(lib.sin)(x)
