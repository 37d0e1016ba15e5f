"""What the func bench's transforms cost, counted (not timed), and the no-op views they no longer make.

jacrev's private level (its batch of copies) makes Tensor's methods give way to a batched argument only when its
function needs it: swapping the ~100 methods in and out is 198 setattr on Tensor a call, which made W10's jacrev
(bench/func_bench.py) 10% slower (1.3x to 1.5x torch.func). A function that needs them (`w.mv(x)`, a plain
tensor's method given a batched argument) raises without them and runs again with them."""

from __future__ import annotations

import builtins
import sys
import warnings

import numpy as np
import pytest

import minigrad
from minigrad._tensor import Tensor
from minigrad.func import _batched
from minigrad.ops import dual

RNG = np.random.default_rng(27)
W1, W2 = RNG.standard_normal((8, 8)) / 3, RNG.standard_normal((8, 8)) / 3
B1, B2, X = RNG.standard_normal(8) / 3, RNG.standard_normal(8) / 3, RNG.standard_normal(8)
NAMES = [name for name in dual.TENSOR_METHODS if _batched._takes_tensors(name)]  # the methods that can give way


def _plain_methods() -> bool:
    return all(getattr(Tensor, name) is dual.TENSOR_METHODS[name][0] for name in NAMES)


def _mlp(lib, seen: list | None = None):
    w1, w2, b1, b2 = (lib.tensor(a) for a in (W1, W2, B1, B2))

    def f(x):
        if seen is not None:
            seen.append(_plain_methods())
        return (w2 @ (w1 @ x + b1).tanh() + b2).tanh()

    return f


def _close(got, want):
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_jacrev_of_an_mlp_runs_it_with_the_plain_methods(torch):
    seen = []
    got = minigrad.func.jacrev(_mlp(minigrad, seen))(minigrad.tensor(X))
    assert seen == [True, True]  # for the outputs' shapes, then on the copies: no method given way
    assert _plain_methods() and not _batched.HANDED_OVER[0]
    _close(got, torch.func.jacrev(_mlp(torch))(torch.tensor(X)))


def _counts(program) -> dict:
    counts = {"calls": 0, "setattr": 0}

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            counts["calls"] += 1
            counts["setattr"] += event == "c_call" and arg is builtins.setattr

    sys.setprofile(profile)
    try:
        program()
    finally:
        sys.setprofile(None)
    return counts


def test_jacrev_of_an_mlp_sets_no_attribute_and_makes_a_bounded_number_of_calls():
    """The regression's signature: 198 setattr, and 1,322 Python and C calls where there are 910 now (1,119 without
    the swap; 910 without the views that changed nothing: the identity cut into one block, the rows moved to where
    they are). The bound leaves room for small changes to the ops; a method swap, 198 calls more, goes over it."""
    jac, x = minigrad.func.jacrev(_mlp(minigrad)), minigrad.tensor(X)
    jac(x)
    counts = _counts(lambda: jac(x))
    assert counts["setattr"] == 0
    assert counts["calls"] <= 1050


def _needs_hand_over(lib, runs: list):
    w = lib.tensor(W1)

    def f(x):
        runs.append(_plain_methods() if lib is minigrad else None)
        return w.mv(x).tanh() * x

    return f


def test_a_function_that_needs_the_methods_runs_again_with_them(torch):
    runs = []
    got = minigrad.func.jacrev(_needs_hand_over(minigrad, runs))(minigrad.tensor(X))
    assert runs == [True, True, False]  # shapes; on the copies, w.mv(x) raises; again, the methods giving way
    assert _plain_methods() and not _batched.HANDED_OVER[0]  # and given back
    _close(got, torch.func.jacrev(_needs_hand_over(torch, []))(torch.tensor(X)))


def test_under_vmap_jacrev_finds_the_methods_giving_way_already(torch):
    runs = []
    xs = RNG.standard_normal((3, 8))
    got = minigrad.vmap(minigrad.func.jacrev(_needs_hand_over(minigrad, runs)))(minigrad.tensor(xs))
    assert runs == [False, False]  # the user's vmap swapped them: no run fails
    assert _plain_methods()
    _close(got, torch.vmap(torch.func.jacrev(_needs_hand_over(torch, [])))(torch.tensor(xs)))


def test_an_error_of_the_function_is_raised_after_one_run_with_the_methods():
    runs = []

    def f(x):
        runs.append(_plain_methods())
        if len(runs) > 1:
            raise ValueError("the function's own error")
        return x * 2

    with pytest.raises(ValueError, match="own error"):
        minigrad.func.jacrev(f)(minigrad.tensor(X))
    assert runs == [True, True, False] and _plain_methods()


@pytest.mark.parametrize("name", NAMES)
def test_a_plain_method_given_a_batched_argument_raises(name):
    """What running the copies without the methods giving way relies on: each plain method refuses a batched
    argument (it cannot read its `_data`), or computes what the giving-way one computes; it never gives a wrong
    result silently."""
    plain, level = dual.TENSOR_METHODS[name][0], 10**9
    w = minigrad.tensor(RNG.uniform(0.5, 1.5, (3, 3)))
    b = _batched.BatchedTensor(minigrad.tensor(RNG.uniform(0.5, 1.5, (2, 3, 3))), (level,))
    for args in ((b,), (b, b), (b, 1.0), (b, b, b)):
        _batched.push_level([level, 2, "different"], user=False, hand_over=False)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    got = plain(w.clone(), *args)
                except Exception:
                    continue
                _batched.hand_over()
                want = getattr(Tensor, name)(w.clone(), *args)
        finally:
            _batched.pop_level()
        assert type(got) is type(want)
        if isinstance(got, Tensor):
            _close(got, want)


# (in_dims == out_dims == 1 is still two moves, a view of x, where PyTorch, which keeps the batch dim where it is,
# gives x itself)
@pytest.mark.parametrize(("in_dim", "out_dim"), [(0, 0), (0, 1), (1, 0), (-1, 0)])
def test_vmap_moves_no_dim_that_is_in_place(torch, in_dim, out_dim):
    """vmap moves an input's batch dim to the front and an output's to `out_dims` only where it is not there:
    `vmap(lambda t: t)(x)` is `x` itself, as PyTorch's (it was a view of it, PermuteBackward0 where PyTorch has
    no grad_fn)."""
    def run(lib):
        x = lib.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
        out = lib.vmap(lambda t: t, in_dims=in_dim, out_dims=out_dim)(x)
        return x, out

    (x, got), (tx, want) = run(minigrad), run(torch)
    assert (got is x) == (want is tx)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    _close(got, want)


def test_per_sample_gradients_make_a_bounded_number_of_calls():
    """W10's per-sample gradients (vmap(grad(loss)) of W2's 2-32-32-1 MLP, bench/func_bench.py) at a batch of 4: 5,049
    Python and C calls before the no-op views went (an input's movedim(0, 0), an output's, a parameter's reshape
    before its expand), 4,365 after; the count does not depend on the batch (tests/func/test_vmap_runs_once.py)."""
    nn, F = minigrad.nn, minigrad.nn.functional
    model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = minigrad.tensor(RNG.standard_normal((4, 2))), minigrad.tensor(RNG.standard_normal((4, 1)))

    def loss(p, xi, yi):
        return F.mse_loss(minigrad.func.functional_call(model, p, (xi,)), yi)

    run = minigrad.func.vmap(minigrad.func.grad(loss), in_dims=(None, 0, 0))
    run(params, x, y)
    assert _counts(lambda: run(params, x, y))["calls"] <= 4600


COMPOSED = {
    "jacrev(jacrev)": lambda lib, f, x: lib.func.jacrev(lib.func.jacrev(f))(x),
    "hessian": lambda lib, f, x: lib.func.hessian(lambda v: f(v).sum())(x),
    "jacrev(jacfwd)": lambda lib, f, x: lib.func.jacrev(lib.func.jacfwd(f))(x),
    "vmap(jacrev)": lambda lib, f, x: lib.vmap(lib.func.jacrev(f))(x.expand(3, 8) * lib.arange(1.0, 4.0)[:, None]),
    "jacrev(vmap)": lambda lib, f, x: lib.func.jacrev(lib.vmap(f))(x.reshape(2, 4).repeat(1, 2)),
    "grad(jacrev)": lambda lib, f, x: lib.func.grad(lambda v: lib.func.jacrev(f)(v).sum())(x),
}


@pytest.mark.parametrize("name", list(COMPOSED))
def test_composed_jacrev_of_a_function_that_needs_the_methods(torch, name):
    """The inner jacrev's run again nested in other transforms (its level is not the first one), and Tensor's
    methods plain again after, whichever level swapped them in."""
    got = COMPOSED[name](minigrad, _needs_hand_over(minigrad, []), minigrad.tensor(X))
    assert _plain_methods() and not _batched.HANDED_OVER[0] and not _batched.LEVELS
    _close(got, COMPOSED[name](torch, _needs_hand_over(torch, []), torch.tensor(X)))
