"""nn.MultiheadAttention and F.multi_head_attention_forward against PyTorch 2.13: same weights and inputs -> same
outputs, attention weights, graphs (node names and edges), gradients of the inputs and of every parameter, reprs,
warnings and errors; self-attention (one packed product), cross-attention (key is value), separate key/value
dims, batch_first, unbatched inputs, masks of both kinds, bias_k/bias_v, add_zero_attn, need_weights=False."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad
import minigrad.nn as nn

RNG = np.random.default_rng(11)
L, S, N, E, H = 4, 5, 3, 8, 2

def _close(got, want) -> None:
    """float64 as conventions.md; float32 relative to the tensor's size: a projection's gradient adds products over
    every position and head, and where they cancel, float32 rounding (in an order each library picks) leaves
    ~1e-6 of the terms' size."""
    got, want = got.detach().numpy(), want.detach().numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype == np.float64:
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * max(1.0, float(np.abs(want).max())))


CAUSAL = np.triu(np.ones((L, L), bool), 1)  # True: not allowed (PyTorch's convention for this module)
PADDING = np.zeros((N, S), bool)
PADDING[1, 3:] = True


def _run(torch, graph, kwargs, inputs, call, dtype="float64", self_attention=False, second_order=False):
    tm = torch.nn.MultiheadAttention(E, H, dtype=getattr(torch, dtype), **kwargs)
    mm = nn.MultiheadAttention(E, H, dtype=getattr(minigrad, dtype), **kwargs)
    tparams, mparams = dict(tm.named_parameters()), dict(mm.named_parameters())
    assert list(tparams) == list(mparams) and repr(mm) == repr(tm)
    with minigrad.no_grad():
        for name, p in tparams.items():  # bias_k/bias_v and the biases are drawn too: use random values
            value = RNG.standard_normal(tuple(p.shape)).astype(dtype) * 0.5
            p.data = torch.tensor(value)
            mparams[name].data = minigrad.tensor(value)
    arrays = [RNG.standard_normal(s).astype(dtype) for s in inputs]
    results = []
    for lib, module in ((torch, tm), (minigrad, mm)):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        q, k, v = (xs[0], xs[0], xs[0]) if self_attention else (xs[0], xs[1], xs[1 if len(xs) == 2 else 2])
        extra = {key: lib.tensor(value.astype(dtype) if value.dtype.kind == "f" else value)
                 if isinstance(value, np.ndarray) else value for key, value in call.items()}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out, weights = module(q, k, v, **extra)
        results.append((lib, xs, [*module.parameters()], out, weights, [str(w.message) for w in caught]))
    (_, txs, tps, tout, tw, twarn), (_, mxs, mps, mout, mw, mwarn) = results
    assert mwarn == twarn
    _close(mout, tout)
    assert (mw is None) == (tw is None)
    if tw is not None:
        _close(mw, tw)
    assert graph(mout.grad_fn, [*mxs, *mps]) == graph(tout.grad_fn, [*txs, *tps])
    g = RNG.standard_normal(tuple(tout.shape)).astype(dtype)
    if second_order:
        tfirst = torch.autograd.grad(tout, [*txs, *tps], torch.tensor(g), create_graph=True)
        mfirst = minigrad.autograd.grad(mout, [*mxs, *mps], minigrad.tensor(g), create_graph=True)
        ws = [RNG.standard_normal(tuple(t.shape)) for t in tfirst]
        tsec = torch.autograd.grad(sum((a * torch.tensor(w)).sum() for a, w in zip(tfirst, ws)), [*txs, *tps],
                                   allow_unused=True)
        msec = minigrad.autograd.grad(sum((a * minigrad.tensor(w)).sum() for a, w in zip(mfirst, ws)),
                                      [*mxs, *mps], allow_unused=True)
        for t, m in zip(tsec, msec):
            if t is None or m is None:  # a bias: its gradient does not depend on anything
                assert (t is None or not t.numpy().any()) and (m is None or not m.numpy().any())
                continue
            np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-7, atol=1e-9)
        return
    tout.backward(torch.tensor(g))
    mout.backward(minigrad.tensor(g))
    for t, m in zip([*txs, *tps], [*mxs, *mps]):
        assert (m.grad is None) == (t.grad is None)
        if t.grad is not None:
            _close(m.grad, t.grad)


CASES = {
    "self-attention": ({}, [(L, N, E)], {}, True),
    "self-attention, causal bool mask": ({}, [(L, N, E)], {"attn_mask": CAUSAL}, True),
    "self-attention, float mask, heads kept": ({}, [(L, N, E)], {"attn_mask": np.where(CAUSAL, -1e9, 0.5),
                                                                 "average_attn_weights": False}, True),
    "cross-attention, padding mask": ({}, [(L, N, E), (S, N, E)], {"key_padding_mask": PADDING}, False),
    "separate q, k, v": ({}, [(L, N, E), (S, N, E), (S, N, E)], {}, False),
    "kdim and vdim": ({"kdim": 6, "vdim": 5}, [(L, N, E), (S, N, 6), (S, N, 5)], {}, False),
    "batch_first": ({"batch_first": True}, [(N, L, E)], {"attn_mask": CAUSAL}, True),
    "unbatched": ({}, [(L, E), (S, E)], {"key_padding_mask": PADDING[1]}, False),
    "bias_kv, zero attn, no bias": ({"add_bias_kv": True, "add_zero_attn": True, "bias": False},
                                    [(L, N, E), (S, N, E)], {"key_padding_mask": PADDING}, False),
    "need_weights=False": ({}, [(L, N, E)], {"need_weights": False}, True),
    "need_weights=False, causal": ({"batch_first": True}, [(N, L, E)],
                                   {"need_weights": False, "attn_mask": CAUSAL, "is_causal": True}, True),
    "need_weights=False, masks": ({}, [(L, N, E), (S, N, E)],
                                  {"need_weights": False, "key_padding_mask": PADDING}, False),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", list(CASES))
def test_multihead_attention_matches_torch(torch, graph, case, dtype):
    kwargs, inputs, call, self_attention = CASES[case]
    _run(torch, graph, kwargs, inputs, call, dtype, self_attention)


@pytest.mark.parametrize("case", ["self-attention, causal bool mask", "cross-attention, padding mask"])
def test_multihead_attention_second_order_matches_torch(torch, graph, case):
    kwargs, inputs, call, self_attention = CASES[case]
    _run(torch, graph, kwargs, inputs, call, "float64", self_attention, second_order=True)


def test_mismatched_mask_types_warn_as_torch(torch, graph):
    _run(torch, graph, {}, [(L, N, E), (S, N, E)],
         {"key_padding_mask": PADDING, "attn_mask": np.zeros((L, S))})


def test_initialisation_and_parameters():
    mha = nn.MultiheadAttention(E, H, add_bias_kv=True)
    names = [n for n, _ in mha.named_parameters()]
    assert names == ["in_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight", "out_proj.bias"]
    bound = np.sqrt(6 / (E + 3 * E))  # xavier_uniform_ over (3E, E)
    assert np.abs(mha.in_proj_weight.detach().numpy()).max() <= bound
    assert not mha.in_proj_bias.detach().numpy().any() and not mha.out_proj.bias.detach().numpy().any()
    assert mha.q_proj_weight is None and nn.MultiheadAttention(E, H, kdim=3).in_proj_weight is None


@pytest.mark.parametrize("expr", [
    "lib.nn.MultiheadAttention(8, 3)",
    "lib.nn.MultiheadAttention(0, 2)",
    "lib.nn.MultiheadAttention(8, 2)(lib.zeros(4, 3, 8), lib.zeros(5, 8), lib.zeros(5, 8))",
    "lib.nn.MultiheadAttention(8, 2)(lib.zeros(4, 3, 8), lib.zeros(5, 3, 8), lib.zeros(5, 3, 8), "
    "attn_mask=lib.zeros(4, 4))",
    "lib.nn.MultiheadAttention(8, 2)(lib.zeros(4, 3, 8), lib.zeros(5, 3, 8), lib.zeros(5, 3, 8), "
    "key_padding_mask=lib.zeros(3, 4, dtype=lib.bool))",
    "lib.nn.MultiheadAttention(8, 2)(lib.zeros(4, 3, 8), lib.zeros(4, 3, 8), lib.zeros(4, 3, 8), is_causal=True)",
    "lib.nn.MultiheadAttention(8, 2)(lib.zeros(4, 3, 8), lib.zeros(4, 3, 8), lib.zeros(4, 3, 8), "
    "attn_mask=lib.zeros(4, 4, dtype=lib.int64))",
])
def test_errors_match_torch(torch, expr):
    errors = []
    for lib in (torch, minigrad):
        with pytest.raises(Exception) as info:
            eval(expr, {"lib": lib})
        errors.append(info.value)
    t, m = errors
    assert type(m) is type(t) and str(t).split("\n")[0].replace("torch.", "minigrad.") in str(m)
