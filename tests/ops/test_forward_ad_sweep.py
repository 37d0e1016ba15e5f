"""Every declared op under forward AD, swept from the registry: its output's tangent against PyTorch 2.13's
forward AD and against J v from a Jacobian minigrad builds by reverse mode (float64); an op PyTorch has no
forward rule for raises PyTorch's NotImplementedError. A new op is covered by its declaration alone."""

from __future__ import annotations

import numpy as np
import pytest
import sweeps

import minigrad
from minigrad.ops.registry import REGISTRY

# Ops minigrad does not yet give a forward rule (PyTorch has one): under forward AD they raise PyTorch's
# NotImplementedError text. Each is a gap to close by adding `forward=` to its rule.
NO_FORWARD_RULE_YET = {
    "pad", "addmm", "baddbmm", "linear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "layer_norm",
    "batch_norm", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "max_pool2d", "max_pool1d",
    "scaled_dot_product_attention", "cumprod", "embedding", "unfold", "fold", "constant_pad_nd", "convolution",
    "avg_pool1d", "adaptive_avg_pool1d", "topk",
}


def _cases() -> list:
    return [pytest.param(key, op, s, id=f"{key}-{i}") for key, op in REGISTRY.items() if op.public and op.differentiable
            for i, s in enumerate(op.samples) if any(d not in ("int", "bool", "index", "const") for _, d in s.tensors)]


def _draw(sample, seed: int = 0):
    tensors, _ = sweeps._inputs(sample, seed)
    arrays = [t.detach().numpy().copy() for t in tensors]
    rng = np.random.default_rng(seed + 1)
    dual = [t.requires_grad for t in tensors]
    tangents = [rng.uniform(-1, 1, a.shape) if d else None for a, d in zip(arrays, dual)]
    return arrays, dual, tangents


def _run(lib, op, sample, arrays, dual, tangents):
    """(values, tangents) of the op's floating outputs under forward AD in `lib`, or the exception raised."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        args = []
        for a, d, t in zip(arrays, dual, tangents):
            x = lib.tensor(a)
            args.append(fw.make_dual(x, lib.tensor(t)) if d else x)
        try:
            out = sweeps._call(op, lib, sample, args)
        except NotImplementedError as e:
            return e
        outs = out if isinstance(out, (tuple, list)) else (out,)
        result = []
        for o in outs:
            if isinstance(o, lib.Tensor) and o.is_floating_point():
                p, t = fw.unpack_dual(o)
                result.append((p.detach().numpy().copy(), None if t is None else t.detach().numpy().copy()))
        return result


@pytest.mark.parametrize(("key", "op", "sample"), _cases())
def test_tangent_matches_torch(torch, key, op, sample):
    arrays, dual, tangents = _draw(sample)
    theirs = _run(torch, op, sample, arrays, dual, tangents)
    ours = _run(minigrad, op, sample, arrays, dual, tangents)
    if isinstance(theirs, NotImplementedError):
        assert isinstance(ours, NotImplementedError), f"torch has no forward rule for {key}; minigrad computed one"
        assert "Trying to use forward AD with" in str(ours)
        return
    if isinstance(ours, NotImplementedError):
        assert op.name in NO_FORWARD_RULE_YET, f"{key}: {ours}"
        assert "Trying to use forward AD with" in str(ours)
        pytest.xfail(f"no forward rule yet for {key}")
    assert len(ours) == len(theirs)
    for (p, t), (tp, tt) in zip(ours, theirs):
        np.testing.assert_allclose(p, tp, rtol=1e-9, atol=1e-12)
        assert (t is None) == (tt is None)
        if t is not None:
            assert t.shape == tt.shape and t.dtype == tt.dtype
            np.testing.assert_allclose(t, tt, rtol=1e-9, atol=1e-12)


def _reverse_jvp(op, sample, arrays, dual, tangents):
    """J v of the op's first output from a Jacobian built by reverse mode (one backward per output element)."""
    xs = [minigrad.tensor(a, requires_grad=d) for a, d in zip(arrays, dual)]
    out = sweeps._call(op, minigrad, sample, xs)
    y = out[0] if isinstance(out, (tuple, list)) else out
    wrt = [x for x in xs if x.requires_grad]
    jv = np.zeros(y.shape)
    flat = y.reshape(-1)
    for i in range(flat.shape[0]):
        grads = minigrad.autograd.grad(flat[i], wrt, retain_graph=True, allow_unused=True)
        jv.reshape(-1)[i] = sum(float((g.numpy() * t).sum()) for g, t in
                                zip(grads, [t for t in tangents if t is not None]) if g is not None)
    return jv


@pytest.mark.parametrize(("key", "op", "sample"), _cases())
def test_tangent_is_reverse_jacobian_times_v(key, op, sample):
    if op.name in NO_FORWARD_RULE_YET or op.name.endswith("_"):
        pytest.skip("no forward rule yet / in place (the torch sweep covers it)")
    arrays, dual, tangents = _draw(sample)
    ours = _run(minigrad, op, sample, arrays, dual, tangents)
    if isinstance(ours, NotImplementedError) or not ours or ours[0][1] is None:
        pytest.skip("no tangent (PyTorch has no forward rule either: the torch sweep checks it)")
    np.testing.assert_allclose(ours[0][1], _reverse_jvp(op, sample, arrays, dual, tangents), rtol=1e-9, atol=1e-12)
