"""nn.TransformerEncoderLayer and nn.TransformerEncoder against PyTorch 2.13: same weights and inputs -> same
outputs, graphs, gradients, reprs and warnings; post-norm and pre-norm, relu and gelu, batch_first, causal and
padding masks (a causal float mask is detected as is_causal), bias=False, a final norm."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(31)
L, N, E, H, FF = 5, 3, 8, 2, 16
PADDING = np.zeros((N, L), bool)
PADDING[2, 3:] = True


def _close(got, want) -> None:
    got, want = got.detach().numpy(), want.detach().numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def _build(lib, layer_kwargs, layers, final_norm):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layer = lib.nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, dtype=lib.float64, **layer_kwargs)
        norm = lib.nn.LayerNorm(E, dtype=lib.float64) if final_norm else None
        model = lib.nn.TransformerEncoder(layer, layers, norm=norm)
    return model, [str(w.message) for w in caught]


CASES = {
    "post-norm relu": ({}, {}, 2, False),
    "pre-norm gelu, final norm": ({"norm_first": True, "activation": "gelu"}, {}, 2, True),
    "batch_first, padding mask": ({"batch_first": True}, {"src_key_padding_mask": PADDING}, 1, False),
    "causal mask detected": ({}, {"mask": "causal"}, 2, False),
    "causal mask and padding": ({"activation": "gelu"}, {"mask": "causal", "src_key_padding_mask": PADDING}, 1,
                                False),
    "no bias": ({"bias": False}, {"mask": "causal", "is_causal": True}, 1, False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_transformer_encoder_matches_torch(torch, graph, case):
    layer_kwargs, call, layers, final_norm = CASES[case]
    (tm, twarn), (mm, mwarn) = (_build(lib, layer_kwargs, layers, final_norm) for lib in (torch, minigrad))
    assert mwarn == twarn and repr(mm) == repr(tm)
    tparams, mparams = dict(tm.named_parameters()), dict(mm.named_parameters())
    assert list(tparams) == list(mparams)
    with torch.no_grad(), minigrad.no_grad():
        for name, p in tparams.items():
            value = RNG.standard_normal(tuple(p.shape)) * 0.3
            p.copy_(torch.tensor(value))
            mparams[name].copy_(minigrad.tensor(value))
    x = RNG.standard_normal((N, L, E) if layer_kwargs.get("batch_first") else (L, N, E))
    outs = []
    for lib, model in ((torch, tm), (minigrad, mm)):
        extra = dict(call)
        if extra.get("mask") == "causal":
            extra["mask"] = lib.nn.Transformer.generate_square_subsequent_mask(L, dtype=lib.float64)
        if "src_key_padding_mask" in extra:
            extra["src_key_padding_mask"] = lib.tensor(extra["src_key_padding_mask"])
        leaf = lib.tensor(x, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = model(leaf, **extra)
        outs.append((leaf, y, list(model.parameters()), [str(w.message) for w in caught]))
    (tx, ty, tps, twarn), (mx, my, mps, mwarn) = outs
    assert mwarn == twarn
    _close(my, ty)
    assert graph(my.grad_fn, [mx, *mps]) == graph(ty.grad_fn, [tx, *tps])
    g = RNG.standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    my.backward(minigrad.tensor(g))
    for t, m in zip([tx, *tps], [mx, *mps]):
        _close(m.grad, t.grad)


def test_square_subsequent_mask_matches_torch(torch):
    t = torch.nn.Transformer.generate_square_subsequent_mask(4)
    m = minigrad.nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(m.numpy(), t.numpy())
    assert str(m.dtype) == "minigrad.float32"


def test_unknown_activation_raises_as_torch(torch):
    errors = []
    for lib in (torch, minigrad):
        with pytest.raises(RuntimeError) as info:
            lib.nn.TransformerEncoderLayer(E, H, activation="tanh")
        errors.append(str(info.value))
    assert errors[0] == errors[1]
