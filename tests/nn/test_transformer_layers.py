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


# --- the decoder and the encoder-decoder nn.Transformer ---------------------------------------------------------

S = 4  # source length (the target has L positions)
MEMORY_PADDING = np.zeros((N, S), bool)
MEMORY_PADDING[1, 2:] = True


def _sync_random(torch, tm, mm) -> None:
    """The same random weights in both (names and order checked), small enough to keep LayerNorm well away from
    its degenerate inputs."""
    tparams, mparams = dict(tm.named_parameters()), dict(mm.named_parameters())
    assert list(tparams) == list(mparams)
    assert {k: tuple(p.shape) for k, p in mparams.items()} == {k: tuple(p.shape) for k, p in tparams.items()}
    state = {k: RNG.standard_normal(tuple(v.shape)) * 0.3 if v.dtype == torch.float64 else v.numpy()
             for k, v in tm.state_dict().items()}
    tm.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    mm.load_state_dict({k: minigrad.tensor(v) for k, v in state.items()})


def _masks(lib, call: dict) -> dict:
    """The call's masks as `lib` tensors ("causal" -> generate_square_subsequent_mask(L))."""
    out = {}
    for key, value in call.items():
        if isinstance(value, str) and value == "causal":
            value = lib.nn.Transformer.generate_square_subsequent_mask(L, dtype=lib.float64)
        elif isinstance(value, np.ndarray):
            value = lib.tensor(value)
        out[key] = value
    return out


def _compare(torch, graph, tm, mm, shapes: list, call: dict, check_graph: bool = True) -> None:
    arrays = [RNG.standard_normal(s) for s in shapes]
    outs = []
    for lib, model in ((torch, tm), (minigrad, mm)):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = model(*leaves, **_masks(lib, call))
        outs.append((leaves, y, list(model.parameters()), [str(w.message) for w in caught]))
    (tl, ty, tps, twarn), (ml, my, mps, mwarn) = outs
    assert mwarn == twarn
    _close(my, ty)
    if check_graph:
        assert graph(my.grad_fn, [*ml, *mps]) == graph(ty.grad_fn, [*tl, *tps])
    g = RNG.standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    my.backward(minigrad.tensor(g))
    for t, m in zip([*tl, *tps], [*ml, *mps]):
        _close(m.grad, t.grad)


def _shapes(batch_first: bool, unbatched: bool = False) -> list:
    if unbatched:
        return [(L, E), (S, E)]
    return [(N, L, E), (N, S, E)] if batch_first else [(L, N, E), (S, N, E)]


DECODER_CASES = {
    # name: (layer kwargs, call kwargs, layers, final norm)
    "post-norm relu": ({}, {}, 2, False),
    "pre-norm gelu, final norm": ({"norm_first": True, "activation": "gelu"}, {}, 2, True),
    "causal tgt mask detected, memory padding": ({}, {"tgt_mask": "causal",
                                                      "memory_key_padding_mask": MEMORY_PADDING}, 1, False),
    "batch_first, tgt padding and causal": ({"batch_first": True, "norm_first": True},
                                            {"tgt_mask": "causal", "tgt_is_causal": True,
                                             "tgt_key_padding_mask": PADDING}, 2, True),
    "callable activation, memory mask, no bias": ({"activation": minigrad.tanh, "bias": False},
                                                  {"memory_mask": np.triu(np.ones((L, S), bool), 2)}, 1, False),
}


@pytest.mark.parametrize("case", list(DECODER_CASES))
def test_transformer_decoder_matches_torch(torch, graph, case):
    layer_kwargs, call, layers, final_norm = DECODER_CASES[case]
    models = []
    for lib in (torch, minigrad):
        kwargs = dict(layer_kwargs)
        if kwargs.get("activation") is minigrad.tanh:
            kwargs["activation"] = lib.tanh
        layer = lib.nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, dtype=lib.float64, **kwargs)
        norm = lib.nn.LayerNorm(E, dtype=lib.float64) if final_norm else None
        models.append(lib.nn.TransformerDecoder(layer, layers, norm=norm))
    tm, mm = models
    assert repr(mm) == repr(tm)
    _sync_random(torch, tm, mm)
    _compare(torch, graph, tm, mm, _shapes(layer_kwargs.get("batch_first", False)), call)


def test_decoder_layer_unbatched_matches_torch(torch, graph):
    tm, mm = (lib.nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, dtype=lib.float64) for lib in (torch, minigrad))
    _sync_random(torch, tm, mm)
    _compare(torch, graph, tm, mm, _shapes(False, unbatched=True), {"tgt_mask": "causal", "tgt_is_causal": True})


TRANSFORMER_CASES = {
    "post-norm, all masks": ({}, {"src_key_padding_mask": MEMORY_PADDING, "tgt_mask": "causal",
                                  "memory_key_padding_mask": MEMORY_PADDING}),
    "batch_first pre-norm gelu": ({"batch_first": True, "norm_first": True, "activation": "gelu"},
                                  {"tgt_mask": "causal", "tgt_key_padding_mask": PADDING}),
}


@pytest.mark.parametrize("case", list(TRANSFORMER_CASES))
def test_transformer_end_to_end_matches_torch(torch, graph, case):
    kwargs, call = TRANSFORMER_CASES[case]
    built = []
    for lib in (torch, minigrad):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = lib.nn.Transformer(E, H, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=FF,
                                       dropout=0.0, dtype=lib.float64, **kwargs)
        built.append((model, [str(w.message) for w in caught]))
    (tm, twarn), (mm, mwarn) = built
    assert mwarn == twarn and repr(mm) == repr(tm)
    _sync_random(torch, tm, mm)
    _compare(torch, graph, tm, mm, _shapes(kwargs.get("batch_first", False))[::-1], call)  # (src, tgt)


def test_transformer_init_and_errors_match_torch(torch):
    """xavier_uniform_ on every matrix (bounds), PyTorch's default sizes, and its errors for mismatched inputs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, mm = torch.nn.Transformer(16, 2, 1, 1, 32), minigrad.nn.Transformer(16, 2, 1, 1, 32)
        assert repr(minigrad.nn.Transformer()) == repr(torch.nn.Transformer())
    for (name, tp), (_, mp) in zip(tm.named_parameters(), mm.named_parameters()):
        values = mp.detach().numpy()
        if tp.dim() > 1:
            fan_out, fan_in = tp.shape
            bound = np.sqrt(6 / (fan_in + fan_out))
            assert np.abs(values).max() <= bound and np.abs(values).max() > 0.7 * bound, name
        elif "norm" in name:
            np.testing.assert_array_equal(values, tp.detach().numpy())
    errors = []
    for lib, model in ((torch, tm), (minigrad, mm)):
        got = []
        for src, tgt in (((5, 2, 16), (4, 3, 16)), ((5, 2, 16), (4, 2, 8))):
            with pytest.raises(RuntimeError) as info:
                model(lib.zeros(src), lib.zeros(tgt))
            got.append(str(info.value))
        errors.append(got)
    assert errors[1] == errors[0]
