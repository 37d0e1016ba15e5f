"""Port of PyTorch's tutorial "Jacobians, Hessians, hvp, vhp, and more: composing function transforms".

Source: github.com/pytorch/tutorials, intermediate_source/jacobians_hessians.py (commit
14f19bbffcff42ee752897e57b4b96e4972d302f), published as pytorch.org/tutorials/intermediate/jacobians_hessians.html.
A Jacobian row by row with autograd.grad, then as `vmap(vjp_fn)(unit_vectors)` and `jacrev`; jacfwd against
jacrev; Hessians (`hessian`, `jacfwd(jacfwd)`, `jacrev(jacrev)`); batch Jacobians and Hessians with vmap and the
sum trick; Hessian-vector products forward-over-reverse and reverse-over-reverse.
The code is the tutorial's, statement by statement, in two parts: `reverse_mode` (the sections that use reverse
mode only: computing the Jacobian, jacrev's argnums, batch Jacobians, hvp_revrev) and `whole` (every section).
Changes:
- `import torch.nn.functional as F` becomes `F = torch.nn.functional`; the `from torch.func import ...` lines
  read the names from the library under test;
- sizes shrunk: Din/Dout 32/2048 and 2048/32 -> 8/64 and 64/8, the Hessian's 512/32 -> 16/4, the batch's
  64/31/33 -> 8/5/6, the hvp's 2048 -> 64;
- `torch.randn` -> NumPy draws wrapped by the library (float32, as randn's), so both libraries compute the same
  numbers; the timing statements (torch.utils.benchmark's Timer, get_perf) are left out;
- the bare expressions whose value a notebook would show (`torch.allclose(hess_api, hess_fwdfwd)`,
  `batch_hess.shape`) are asserted / printed.
"""

from __future__ import annotations

from functools import partial

import numpy as np

import minigrad


def _randn(torch, rng, *shape):
    return torch.tensor(rng.standard_normal(shape).astype(np.float32))


def reverse_mode(torch, rng):
    F = torch.nn.functional  # import torch.nn.functional as F
    _ = torch.manual_seed(0)

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    D = 16
    weight = _randn(torch, rng, D, D)
    bias = _randn(torch, rng, D)
    x = _randn(torch, rng, D)  # feature vector

    def compute_jac(xp):
        jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                         for vec in unit_vectors]
        return torch.stack(jacobian_rows)

    xp = x.clone().requires_grad_()
    unit_vectors = torch.eye(D)

    jacobian = compute_jac(xp)

    print(jacobian.shape)
    vmap, vjp = torch.func.vmap, torch.func.vjp  # from torch.func import vmap, vjp

    _, vjp_fn = vjp(partial(predict, weight, bias), x)

    ft_jacobian, = vmap(vjp_fn)(unit_vectors)

    # let's confirm both methods compute the same result
    assert torch.allclose(ft_jacobian, jacobian)

    jacrev = torch.func.jacrev  # from torch.func import jacrev

    ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)

    # confirm
    assert torch.allclose(ft_jacobian, jacobian)

    ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)

    batch_size = 8  # was 64
    Din = 5  # was 31
    Dout = 6  # was 33

    weight = _randn(torch, rng, Dout, Din)
    print(f"weight shape = {weight.shape}")

    bias = _randn(torch, rng, Dout)

    x = _randn(torch, rng, batch_size, Din)

    compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
    batch_jacobian0 = compute_batch_jacobian(weight, bias, x)

    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)

    batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
    assert torch.allclose(batch_jacobian0, batch_jacobian1)

    grad = torch.func.grad  # from torch.func import jvp, grad, vjp

    def f(x):
        return x.sin().sum()

    x = _randn(torch, rng, 64)  # was 2048
    tangent = _randn(torch, rng, 64)

    def hvp_revrev(f, primals, tangents):
        _, vjp_fn = vjp(grad(f), *primals)
        return vjp_fn(*tangents)

    result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
    assert torch.allclose(-x.sin() * tangent, result_hvp_revrev[0])  # (the Hessian of sum(sin) is diag(-sin))
    return [t.detach().numpy() for t in (jacobian, ft_jac_weight, ft_jac_bias, batch_jacobian0,
                                        result_hvp_revrev[0])]


def whole(torch, rng):
    F = torch.nn.functional  # import torch.nn.functional as F
    _ = torch.manual_seed(0)

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    jacrev, jacfwd, hessian = torch.func.jacrev, torch.func.jacfwd, torch.func.hessian
    vmap, jvp, grad, vjp = torch.func.vmap, torch.func.jvp, torch.func.grad, torch.func.vjp

    Din = 8  # was 32
    Dout = 64  # was 2048
    weight = _randn(torch, rng, Dout, Din)
    bias = _randn(torch, rng, Dout)
    x = _randn(torch, rng, Din)
    print(weight.shape)
    assert torch.allclose(jacfwd(predict, argnums=2)(weight, bias, x), jacrev(predict, argnums=2)(weight, bias, x),
                          atol=1e-6)  # (the Timers' statements, run once and compared)

    Din = 16  # was 512
    Dout = 4  # was 32
    weight = _randn(torch, rng, Dout, Din)
    bias = _randn(torch, rng, Dout)
    x = _randn(torch, rng, Din)

    hess_api = hessian(predict, argnums=2)(weight, bias, x)
    hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
    hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)

    assert torch.allclose(hess_api, hess_fwdfwd)
    assert torch.allclose(hess_api, hess_revrev, atol=1e-6)

    x = _randn(torch, rng, 8, Din)
    compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))

    batch_hess = compute_batch_hessian(weight, bias, x)
    print(batch_hess.shape)

    def hvp(f, primals, tangents):
        return jvp(grad(f), primals, tangents)[1]

    def f(x):
        return x.sin().sum()

    x = _randn(torch, rng, 64)
    tangent = _randn(torch, rng, 64)

    result = hvp(f, (x,), (tangent,))

    def hvp_revrev(f, primals, tangents):
        _, vjp_fn = vjp(grad(f), *primals)
        return vjp_fn(*tangents)

    result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
    assert torch.allclose(result, result_hvp_revrev[0])


def test_jacobians_by_reverse_mode(lib, capsys):
    reverse_mode(lib, np.random.default_rng(0))
    assert capsys.readouterr().out.replace("minigrad", "torch") == (
        "torch.Size([16, 16])\nweight shape = torch.Size([6, 5])\n")


def test_jacobians_by_reverse_mode_equal_pytorchs(torch):
    mine, theirs = reverse_mode(minigrad, np.random.default_rng(0)), reverse_mode(torch, np.random.default_rng(0))
    for got, want in zip(mine, theirs):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_the_whole_tutorial(lib, capsys):
    whole(lib, np.random.default_rng(1))
    assert capsys.readouterr().out.replace("minigrad", "torch") == (
        "torch.Size([64, 8])\ntorch.Size([8, 4, 16, 16])\n")
