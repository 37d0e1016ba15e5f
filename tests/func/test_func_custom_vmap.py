"""A custom `autograd.Function`'s own `vmap` staticmethod, called as torch.func calls it: `vmap(info, in_dims,
*args)` for the innermost level (info.batch_size, info.randomness; each batched argument with that level's batch
as its dim 0, where PyTorch may give it at another dim: a rule reads in_dims), returning (outputs, out_dims). It
was never called: vmap ran `forward` on the whole batch. Compared with torch.func: the calls the rule receives,
the values, and the per-sample gradients through it."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad

X = np.random.default_rng(0).standard_normal((4, 3))
Y = np.random.default_rng(1).standard_normal(3)


def _cube(lib, calls: list):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x ** 3 * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * 3 * x ** 2 * y, g * x ** 3

        @staticmethod
        def vmap(info, in_dims, x, y):
            x = x.movedim(in_dims[0], 0) if in_dims[0] is not None else x.unsqueeze(0)
            y = y.movedim(in_dims[1], 0) if in_dims[1] is not None else y.unsqueeze(0)
            calls.append((info.batch_size, info.randomness, tuple(d is None for d in in_dims), tuple(x.shape),
                          tuple(y.shape)))
            return Cube.apply(x, y), 0

    return Cube


CASES = {
    "vmap": lambda lib, c: lib.func.vmap(c.apply, in_dims=(0, None))(lib.tensor(X), lib.tensor(Y)),
    "vmap in_dims=1": lambda lib, c: lib.func.vmap(c.apply, in_dims=(1, None), randomness="same")(
        lib.tensor(X), lib.tensor(Y[0])),
    "vmap(grad)": lambda lib, c: lib.func.vmap(lib.func.grad(lambda x, y: c.apply(x, y).sum()), in_dims=(0, None))(
        lib.tensor(X), lib.tensor(Y)),
    "nested vmap": lambda lib, c: lib.func.vmap(lib.func.vmap(c.apply, in_dims=(0, None)), in_dims=(1, None))(
        lib.tensor(X), lib.tensor(Y[0])),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_functions_own_vmap_rule_as_torch(torch, case):
    got_calls, want_calls = [], []
    got = CASES[case](minigrad, _cube(minigrad, got_calls))
    want = CASES[case](torch, _cube(torch, want_calls))
    assert got_calls == want_calls and want_calls
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_jacrev_through_a_functions_own_vmap_rule(torch):
    """jacrev's numbers through the rule equal torch.func's (minigrad batches jacrev's forward, so the rule runs
    there too, with randomness 'same'; torch.func's jacrev calls it only through the backward)."""
    got = minigrad.func.jacrev(_cube(minigrad, []).apply)(minigrad.tensor(X[0]), minigrad.tensor(Y))
    want = torch.func.jacrev(_cube(torch, []).apply)(torch.tensor(X[0]), torch.tensor(Y))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12)
