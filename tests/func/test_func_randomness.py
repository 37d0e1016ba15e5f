"""vmap's `randomness` for every random op inside it (the factories, the draws from a tensor's values: bernoulli,
normal, multinomial; dropout and dropout2d), as torch.func: "error" refuses (PyTorch's text), "different"
draws per sample, "same" draws once. The two libraries' generators differ, so what is compared is the pattern:
the error, the shape, and which samples got equal draws."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad

OPS = {
    "randn(2)": lambda lib, v: v + lib.randn(2),
    "rand(2)": lambda lib, v: v + lib.rand(2),
    "randn_like": lambda lib, v: lib.randn_like(v),
    "rand_like": lambda lib, v: lib.rand_like(v),
    "dropout": lambda lib, v: lib.nn.functional.dropout(v, 0.5),
    "nn.Dropout": lambda lib, v: lib.nn.Dropout(0.5)(v),
    "randint": lambda lib, v: v + lib.randint(0, 1000, (8,)),
    "randperm": lambda lib, v: v + lib.randperm(8),
    "normal(floats)": lambda lib, v: v + lib.normal(0.0, 1.0, (8,)),
    "normal(tensor)": lambda lib, v: lib.normal(v, 1.0),
    "normal(tensor, tensor)": lambda lib, v: lib.normal(v, lib.ones(3, 8)),
    "bernoulli": lambda lib, v: lib.bernoulli(v * 0.5),
    "Tensor.bernoulli": lambda lib, v: (v * 0.5).bernoulli(),
    "multinomial": lambda lib, v: lib.multinomial(v, 4),
    "Tensor.multinomial": lambda lib, v: (v.reshape(2, 4)).multinomial(3, replacement=True),
    "dropout2d": lambda lib, v: lib.nn.functional.dropout2d(v.reshape(8, 1, 1), 0.5),
}


def _pattern(lib, op, randomness):
    lib.manual_seed(0)
    x = lib.ones(6, 8)
    try:
        out = lib.func.vmap(lambda v: OPS[op](lib, v), randomness=randomness)(x).numpy()
    except RuntimeError as e:
        return str(e)
    equal = [bool((out[i] == out[0]).all()) for i in range(1, len(out))]
    return out.shape, all(equal), any(equal)


@pytest.mark.parametrize("randomness", ["error", "same", "different"])
@pytest.mark.parametrize("op", list(OPS))
def test_a_random_op_inside_vmap_as_torch(torch, op, randomness):
    assert _pattern(minigrad, op, randomness) == _pattern(torch, op, randomness)


@pytest.mark.parametrize("outer, inner", [("different", "same"), ("same", "different"), ("different", "different")])
def test_nested_levels_each_keep_their_randomness(torch, outer, inner):
    def pattern(lib):
        lib.manual_seed(0)
        f = lib.func.vmap(lib.func.vmap(lambda v: v + lib.randn(()), randomness=inner), randomness=outer)
        out = f(lib.zeros(3, 4)).numpy()
        return out.shape, [len(set(row.round(6))) for row in out], len(set(out[:, 0].round(6)))
    assert pattern(minigrad) == pattern(torch)


def test_per_sample_gradients_through_dropout_see_each_samples_mask(torch):
    minigrad.manual_seed(0)
    loss = minigrad.func.grad(lambda v: minigrad.nn.functional.dropout(v, 0.5).sum())
    g = minigrad.func.vmap(loss, randomness="different")(minigrad.ones(16, 8)).numpy()
    assert set(np.unique(g)) <= {0.0, 2.0}
    assert len({tuple(row) for row in g}) > 1  # masks differ between samples
    with pytest.raises(RuntimeError, match="randomness error mode"):
        minigrad.func.vmap(loss)(minigrad.ones(2, 2))


def test_jacrev_of_a_function_that_draws_as_torch(torch):
    """jacrev batches its forward over copies of the input; they are one input, so a draw is made once (and
    allowed, as torch.func's jacrev, which runs the forward once)."""
    x = np.array([0.1, 0.2, 0.3])
    for lib in (torch, minigrad):
        jac = lib.func.jacrev(lambda v, lib=lib: v.sin() * (2 + lib.rand(()) * 0))(lib.tensor(x))
        np.testing.assert_allclose(jac.detach().numpy(), np.diag(2 * np.cos(x)), rtol=1e-9, atol=1e-12)
