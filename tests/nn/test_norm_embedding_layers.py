"""Embedding, LayerNorm, BatchNorm1d/2d against PyTorch 2.13: same weights and inputs -> same outputs, graphs,
gradients, running statistics, state_dicts and reprs, in training and eval mode."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
import minigrad.nn as nn

RNG = np.random.default_rng(2024)
DTYPES = ["float32", "float64"]


def _compare_step(torch, graph, close, tmod, mmod, x, *, input_grad=True, dtype="float32"):
    """One forward and backward of both modules on `x` (a float input, or indices): outputs, graphs, gradients."""
    is_float = x.dtype.kind == "f"
    tx = torch.tensor(x, requires_grad=input_grad and is_float)
    mx = minigrad.tensor(x, requires_grad=input_grad and is_float)
    ty, my = tmod(tx), mmod(mx)
    close(my, ty)
    tleaves = [tx, *tmod.parameters()]
    mleaves = [mx, *mmod.parameters()]
    assert graph(my.grad_fn, mleaves) == graph(ty.grad_fn, tleaves)
    g = RNG.standard_normal(tuple(ty.shape)).astype(ty.detach().numpy().dtype)
    ty.backward(torch.tensor(g))
    my.backward(minigrad.tensor(g))
    for tp, mp in zip(tleaves, mleaves):
        if tp.requires_grad:
            close(mp.grad, tp.grad)
    for (tn, tb), (mn, mb) in zip(tmod.named_buffers(), mmod.named_buffers()):
        assert tn == mn
        close(mb, tb)
    return ty, my


# -- Embedding --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                                    {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding_matches_torch(torch, graph, sync, close, dtype, kwargs):
    tm = torch.nn.Embedding(6, 4, dtype=getattr(torch, dtype), **kwargs)
    mm = nn.Embedding(6, 4, dtype=getattr(minigrad, dtype), **kwargs)
    sync(tm, mm)
    idx = np.array([[0, 2, 2, 5], [1, 0, 4, 2]])
    ty, my = _compare_step(torch, graph, close, tm, mm, idx)
    assert my.grad_fn.name() == ty.grad_fn.name() == "EmbeddingBackward0"
    assert repr(mm) == repr(tm)
    assert mm.padding_idx == tm.padding_idx


def test_embedding_init_zeroes_the_padding_row_and_from_pretrained_freezes(torch):
    e = nn.Embedding(5, 3, padding_idx=1)
    assert e.weight[1].abs().sum().item() == 0 and e.weight.requires_grad
    table = minigrad.tensor(RNG.standard_normal((4, 2)))
    frozen = nn.Embedding.from_pretrained(table)
    assert not frozen.weight.requires_grad and frozen(minigrad.tensor([3])).tolist() == [table[3].tolist()]
    t = torch.nn.Embedding.from_pretrained(torch.tensor(table.numpy()), freeze=False)
    m = nn.Embedding.from_pretrained(table, freeze=False)
    assert repr(m) == repr(t) and m.weight.requires_grad


def test_embedding_errors_match_torch(torch):
    for lib in (torch, minigrad):
        emb = lib.nn.Embedding(3, 2)
        with pytest.raises(IndexError, match="index out of range in self"):
            emb(lib.tensor([0, 3]))
        with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
            emb(lib.tensor([0.0, 1.0]))


def test_embedding_max_norm_renormalises_the_rows_read(torch, sync, close):
    tm, mm = torch.nn.Embedding(5, 3, max_norm=1.0), nn.Embedding(5, 3, max_norm=1.0)
    sync(tm, mm)
    idx = np.array([0, 3, 3])
    close(mm(minigrad.tensor(idx)), tm(torch.tensor(idx)))
    close(mm.weight, tm.weight)


# -- LayerNorm --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "normalized", "kwargs"), [
    ((4, 8), 8, {}), ((2, 5, 8), (8,), {}), ((2, 3, 4), (3, 4), {}), ((3, 6), 6, {"elementwise_affine": False}),
    ((3, 6), 6, {"bias": False}), ((2, 6), 6, {"eps": 1e-2})])
def test_layer_norm_matches_torch(torch, graph, sync, close, dtype, shape, normalized, kwargs):
    tm = torch.nn.LayerNorm(normalized, dtype=getattr(torch, dtype), **kwargs)
    mm = nn.LayerNorm(normalized, dtype=getattr(minigrad, dtype), **kwargs)
    with torch.no_grad():  # non-trivial affine parameters
        for p in tm.parameters():
            p.copy_(torch.tensor(RNG.standard_normal(tuple(p.shape))))
    sync(tm, mm)
    ty, my = _compare_step(torch, graph, close, tm, mm, RNG.standard_normal(shape).astype(dtype))
    assert my.grad_fn.name() == "NativeLayerNormBackward0"
    assert repr(mm) == repr(tm)
    x = RNG.standard_normal(shape).astype(dtype)
    tn = tm(torch.tensor(x, requires_grad=True)).grad_fn  # the mean and rstd it saved
    mn = mm(minigrad.tensor(x, requires_grad=True)).grad_fn
    close(mn._saved_result1, tn._saved_result1)
    close(mn._saved_result2, tn._saved_result2)
    assert mn._saved_normalized_shape == tn._saved_normalized_shape


def test_layer_norm_shape_error_matches_torch(torch):
    for lib in (torch, minigrad):
        with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\]"):
            lib.nn.LayerNorm(4)(lib.ones(2, 3))


# -- BatchNorm --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("cls", "shape"), [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)),
                                            ("BatchNorm2d", (4, 3, 2, 5))])
@pytest.mark.parametrize("kwargs", [{}, {"momentum": 0.3}, {"momentum": None}, {"affine": False},
                                    {"track_running_stats": False}, {"bias": False}])
def test_batch_norm_trains_and_evaluates_like_torch(torch, graph, sync, close, dtype, cls, shape, kwargs):
    tm = getattr(torch.nn, cls)(3, dtype=getattr(torch, dtype), **kwargs)
    mm = getattr(nn, cls)(3, dtype=getattr(minigrad, dtype), **kwargs)
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.tensor(RNG.standard_normal(tuple(p.shape))))
    sync(tm, mm)
    for _ in range(3):  # three training steps move the running statistics
        _compare_step(torch, graph, close, tm, mm, RNG.standard_normal(shape).astype(dtype) * 2 + 1)
    tm.eval()
    mm.eval()
    ty, my = _compare_step(torch, graph, close, tm, mm, RNG.standard_normal(shape).astype(dtype))
    assert my.grad_fn.name() == ty.grad_fn.name() == "NativeBatchNormBackward0"
    assert repr(mm) == repr(tm)
    assert list(mm.state_dict()) == list(tm.state_dict())
    if kwargs.get("track_running_stats", True):
        assert mm.num_batches_tracked.item() == tm.num_batches_tracked.item() == 3
        assert mm.running_mean._version == tm.running_mean._version


def test_batch_norm_state_dict_round_trip_and_errors(torch):
    a, b = nn.BatchNorm1d(3), nn.BatchNorm1d(3)
    a(minigrad.tensor(RNG.standard_normal((5, 3)).astype(np.float32)))
    b.load_state_dict(a.state_dict())
    assert b.running_mean.tolist() == a.running_mean.tolist() and b.num_batches_tracked.item() == 1
    sd = a.state_dict()
    del sd["num_batches_tracked"]
    b.load_state_dict(sd)  # a checkpoint from before the counter: accepted, as PyTorch does
    for lib in (torch, minigrad):
        with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
            lib.nn.BatchNorm1d(3)(lib.ones(1, 3))
        with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
            lib.nn.BatchNorm2d(3)(lib.ones(2, 3, 4))
        with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
            lib.nn.BatchNorm1d(3)(lib.ones(2, 3, 4, 4))
