"""vmap is batched, not a loop: a per-sample-gradient program runs each op function as many times for a batch of
64 as for a batch of 2 (once per op of the program, not once per sample), and hits no fallback."""

from __future__ import annotations

import sys
import warnings
from collections import Counter

import numpy as np
import pytest

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
    """The counter sees a loop: an op without a batching rule (kl_div, which PyTorch loops over too) runs once per
    sample."""
    x = torch.ones(5, 3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        counts = _count_op_calls(lambda: vmap(lambda v: torch.nn.functional.kl_div(v, v, reduction="none"))(x))
    assert counts["nn.functional.kl_div"] == 5


def test_per_sample_gradients_equal_a_loop():
    run, model, x, y = _per_sample_grads(8, parts=True)
    got = run()
    for i in range(8):
        model.zero_grad()
        torch.nn.functional.mse_loss(model(x[i]), y[i]).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(got[name][i].numpy(), p.grad.numpy(), rtol=1e-9, atol=1e-12)


def _per_sample_grads_of(model, make_inputs, batch: int):
    """vmap(grad(loss)) of `model` (built with seed 0) over `batch` samples of make_inputs(rng, batch)."""
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = make_inputs(np.random.default_rng(batch), batch)

    def loss(p, xi, yi):
        return torch.nn.functional.mse_loss(functional_call(model, p, (xi.unsqueeze(0),)).squeeze(0), yi)

    return lambda: vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)


def _block(lib=torch):
    """A small transformer block: token embedding, attention (sdpa), layer norms, an MLP, then a linear head."""
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = lib.nn.Embedding(11, 8)
            self.qkv = lib.nn.Linear(8, 24)
            self.norm1, self.norm2 = lib.nn.LayerNorm(8), lib.nn.LayerNorm(8)
            self.mlp = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.GELU(), lib.nn.Linear(16, 8))
            self.head = lib.nn.Linear(8, 1)

        def forward(self, tokens):
            h = self.embed(tokens)
            q, k, v = self.qkv(self.norm1(h)).chunk(3, -1)
            h = h + lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            h = h + self.mlp(self.norm2(h))
            return self.head(h).mean(-2)

    lib.manual_seed(0)
    return Block().double()


def _conv_net(lib=torch):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.ConvTranspose2d(4, 2, 2, stride=2), nn.Flatten(), nn.Linear(2 * 6 * 6, 1)).double()


def _inputs(net: str, rng, n: int):
    x = rng.integers(0, 11, (n, 5)) if net == "transformer block" else rng.standard_normal((n, 1, 6, 6))
    return x, rng.standard_normal((n, 1))


NETS = {"conv net": _conv_net, "transformer block": _block}


def _per_sample_grads_of(lib, model, net: str, batch: int):
    """vmap(grad(loss)) of `model` in `lib` over `batch` samples."""
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = (lib.tensor(a) for a in _inputs(net, np.random.default_rng(batch), batch))

    def loss(p, xi, yi):
        out = lib.func.functional_call(model, p, (xi.unsqueeze(0),)).squeeze(0)
        return lib.nn.functional.mse_loss(out, yi)

    return lambda: lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


@pytest.mark.parametrize("net", NETS)
def test_a_conv_net_and_a_transformer_block_run_each_op_once(net):
    """Per-sample gradients of a conv net (conv2d, max_pool2d, conv_transpose2d) and of a transformer block
    (embedding, layer_norm, sdpa): every op runs as often for 64 samples as for 2, with no fallback warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = _count_op_calls(_per_sample_grads_of(torch, NETS[net](), net, 2))
        big = _count_op_calls(_per_sample_grads_of(torch, NETS[net](), net, 64))
    assert big == small
    assert max(big.values()) < 64
    ops = {"conv net": ("nn.functional.conv_transpose2d", "nn.functional.max_pool2d"),
           "transformer block": ("nn.functional.embedding", "nn.functional.layer_norm",
                                 "nn.functional.scaled_dot_product_attention")}[net]
    assert all(big[op] >= 1 for op in ops), big


@pytest.mark.parametrize("net", NETS)
def test_the_nets_per_sample_gradients_equal_torch_funcs(request, net):
    """The same per-sample gradients as torch.func's, for the same weights (copied) and inputs."""
    real = request.getfixturevalue("torch")
    model = NETS[net]()
    twin = NETS[net](real)
    twin.load_state_dict({k: real.tensor(v.detach().numpy()) for k, v in model.state_dict().items()})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mine = _per_sample_grads_of(torch, model, net, 4)()
    want = _per_sample_grads_of(real, twin, net, 4)()
    assert list(mine) == list(want)
    for k in want:
        np.testing.assert_allclose(mine[k].numpy(), want[k].detach().numpy(), rtol=1e-9, atol=1e-12)
