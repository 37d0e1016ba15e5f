"""minigrad.func's forward-mode transforms (jvp, jacfwd, hessian = jacfwd(jacrev)) against torch.func.

They run on minigrad.autograd.forward_ad (dual_level, make_dual, unpack_dual). A minigrad without it raises
NotImplementedError saying so, which is what these tests check then; with it, they compare with torch.func."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.func import _transforms

RNG = np.random.default_rng(5)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4,))
HAS_FORWARD = _transforms.forward_ad is not None


def _np(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_np(v) for v in x)
    return x.detach().numpy() if hasattr(x, "detach") else x


def both(torch, program):
    want = _np(program(torch))
    if not HAS_FORWARD:
        with pytest.raises(NotImplementedError, match="forward-mode AD"):
            program(minigrad)
        return
    got = _np(program(minigrad))
    flat_w = want if isinstance(want, (tuple, list)) else (want,)
    flat_g = got if isinstance(got, (tuple, list)) else (got,)
    assert len(flat_g) == len(flat_w)
    for g, w in zip(flat_g, flat_w):
        if isinstance(w, (tuple, list)):
            for gg, ww in zip(g, w):
                assert gg.shape == ww.shape and gg.dtype == ww.dtype
                np.testing.assert_allclose(gg, ww, rtol=1e-9, atol=1e-12)
        else:
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def t(lib, a):
    return lib.tensor(a)


def f_two(x, y):
    return (x * y.exp()).sin() + x ** 2


def test_jvp(torch):
    both(torch, lambda lib: lib.func.jvp(f_two, (t(lib, A), t(lib, B)), (t(lib, A * 0 + 1), t(lib, B * 2))))


def test_jvp_has_aux(torch):
    both(torch, lambda lib: lib.func.jvp(lambda x: (x.sin() * 3, x.sum()), (t(lib, B),), (t(lib, B),),
                                         has_aux=True))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacfwd(torch, argnums):
    both(torch, lambda lib: lib.func.jacfwd(f_two, argnums=argnums)(t(lib, A), t(lib, B)))


def test_hessian_and_jacrev_of_jacfwd(torch):
    def f(x):
        return (x ** 3 * x.sum()).sin().sum()
    both(torch, lambda lib: lib.func.hessian(f)(t(lib, B)))
    both(torch, lambda lib: lib.func.jacrev(lib.func.jacfwd(f))(t(lib, B)))


def test_vmap_of_jacfwd_and_jvp(torch):
    both(torch, lambda lib: lib.vmap(lib.func.jacfwd(lambda x: x.exp() * x.sum()))(t(lib, A)))
    both(torch, lambda lib: lib.vmap(lambda x, v: lib.func.jvp(lambda z: z.sin() * 2, (x,), (v,))[1])(
        t(lib, A), t(lib, A[::-1].copy())))


def test_jvp_errors(torch):
    for case in (lambda lib: lib.func.jvp(lambda x: x, t(lib, B), (t(lib, B),)),
                 lambda lib: lib.func.jvp(lambda x: x, (t(lib, B),), (t(lib, B), t(lib, B)))):
        with pytest.raises(RuntimeError) as want:
            case(torch)
        with pytest.raises(RuntimeError) as got:
            case(minigrad)
        assert str(want.value).split(":")[0] in str(got.value)


def test_jacfwd_has_aux_and_vmap_of_hessian(torch):
    both(torch, lambda lib: lib.func.jacfwd(lambda x: (x.sin() * x.sum(), x.exp().sum()), has_aux=True)(t(lib, B)))
    both(torch, lambda lib: lib.vmap(lib.func.hessian(lambda x: (x ** 3 * x.sum()).sin().sum()))(t(lib, A)))
