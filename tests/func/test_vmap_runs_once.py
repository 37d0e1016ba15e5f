"""vmap is batched, not a loop: a per-sample-gradient program runs each op function as many times for a batch of
64 as for a batch of 2 (once per op of the program, not once per sample), and hits no fallback."""

from __future__ import annotations

import sys
import warnings
from collections import Counter

import numpy as np

import minigrad as torch
from minigrad.func import functional_call, grad, vmap
from minigrad.ops.registry import REGISTRY


def _op_codes() -> dict:
    codes = {}
    for key, op in REGISTRY.items():
        fn = op.function
        while hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        codes[fn.__code__] = key
    return codes


def _count_op_calls(program) -> Counter:
    codes, counts = _op_codes(), Counter()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            counts[codes[frame.f_code]] += 1

    sys.setprofile(profile)
    try:
        program()
    finally:
        sys.setprofile(None)
    return counts


def _per_sample_grads(batch: int, parts: bool = False):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32), torch.nn.Tanh(),
                                torch.nn.Linear(32, 1)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    rng = np.random.default_rng(batch)
    x, y = torch.tensor(rng.standard_normal((batch, 2))), torch.tensor(rng.standard_normal((batch, 1)))

    def loss(p, xi, yi):
        return torch.nn.functional.mse_loss(functional_call(model, p, (xi,)), yi)

    run = lambda: vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)  # noqa: E731
    return (run, model, x, y) if parts else run


def test_per_sample_gradients_run_each_op_once_not_per_sample():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the fallback's performance warning would fail here
        small = _count_op_calls(_per_sample_grads(2))
        big = _count_op_calls(_per_sample_grads(64))
    assert big == small
    assert big["nn.functional.linear"] + big["matmul"] >= 3  # the three layers ran (batched)
    assert max(big.values()) < 64  # a loop over 64 samples would call each op 64 times


def test_the_fallback_would_count_per_sample():
    """The counter sees a loop: an op without a batching rule (tril) runs once per sample."""
    x = torch.ones(5, 3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        counts = _count_op_calls(lambda: vmap(lambda v: v.tril())(x))
    assert counts["tril"] == 5


def test_per_sample_gradients_equal_a_loop():
    run, model, x, y = _per_sample_grads(8, parts=True)
    got = run()
    for i in range(8):
        model.zero_grad()
        torch.nn.functional.mse_loss(model(x[i]), y[i]).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(got[name][i].numpy(), p.grad.numpy(), rtol=1e-9, atol=1e-12)
