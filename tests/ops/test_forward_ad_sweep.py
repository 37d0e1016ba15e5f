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
# NotImplementedError text. Each is a gap to close by adding `forward=` to its rule. (None left: an op PyTorch has no
# forward rule for either raises the same error, which the torch sweep checks.)
NO_FORWARD_RULE_YET: set = set()


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


def _with_rules(cases: list) -> list:
    """The cases of ops that have a forward rule (the others, and in-place variants, are covered by the torch
    sweep above, which checks that they raise PyTorch's NotImplementedError)."""
    return [c for c in cases if c.values[1].name not in NO_FORWARD_RULE_YET and not c.values[1].name.endswith("_")]


@pytest.mark.parametrize(("key", "op", "sample"), _with_rules(_cases()))
def test_tangent_is_reverse_jacobian_times_v(key, op, sample):
    arrays, dual, tangents = _draw(sample)
    ours = _run(minigrad, op, sample, arrays, dual, tangents)
    if isinstance(ours, NotImplementedError) or not ours or ours[0][1] is None:
        # no tangent: PyTorch has no forward rule for the op either (the torch sweep compares the two)
        assert isinstance(ours, NotImplementedError) or not ours or ours[0][1] is None
        return
    np.testing.assert_allclose(ours[0][1], _reverse_jvp(op, sample, arrays, dual, tangents), rtol=1e-9, atol=1e-12)


# Forward-over-reverse cases that miss a term of H v or whose backward calls an op without a forward rule (strict
# xfails; none left: the formulas call ops that carry tangents, the fused backward ops, matmul's reshapes and
# convolution's unfold included).
FORWARD_OVER_REVERSE_GAPS: set = set()


def _second_order_cases() -> list:
    return [pytest.param(*c.values, id=c.id, marks=pytest.mark.xfail(strict=True, reason="FORWARD_OVER_REVERSE_GAPS"))
            if c.id in FORWARD_OVER_REVERSE_GAPS else c for c in _with_rules(_cases()) if c.values[2].second_order]


def _gradient_tangents(op, sample, arrays, dual, tangents, w):
    """Forward over reverse: the tangents of the gradient of sum(op(x) * w), the inputs dual and requiring grad."""
    fw = minigrad.autograd.forward_ad
    leaves = [minigrad.tensor(a, requires_grad=d) for a, d in zip(arrays, dual)]
    with fw.dual_level():
        xs = [fw.make_dual(x, minigrad.tensor(t)) if d else x for x, d, t in zip(leaves, dual, tangents)]
        out = sweeps._call(op, minigrad, sample, xs)
        y = out[0] if isinstance(out, (tuple, list)) else out
        gs = minigrad.autograd.grad((y * minigrad.tensor(w)).sum(), [x for x in leaves if x.requires_grad],
                                    create_graph=True, allow_unused=True)
        return [None if g is None else fw.unpack_dual(g).tangent for g in gs]


def _hessian_times_v(op, sample, arrays, dual, tangents, w):
    """Reverse over reverse: H v = ∇(∇(sum(op(x) * w)) · v), H being symmetric."""
    leaves = [minigrad.tensor(a, requires_grad=d) for a, d in zip(arrays, dual)]
    out = sweeps._call(op, minigrad, sample, leaves)
    y = out[0] if isinstance(out, (tuple, list)) else out
    wrt = [x for x in leaves if x.requires_grad]
    gs = minigrad.autograd.grad((y * minigrad.tensor(w)).sum(), wrt, create_graph=True, allow_unused=True)
    vs = [t for t in tangents if t is not None]
    dot = sum(((g * minigrad.tensor(v)).sum() for g, v in zip(gs, vs) if g is not None and g.requires_grad),
              minigrad.tensor(0.0, dtype=minigrad.float64))
    if not dot.requires_grad:
        return [np.zeros_like(a) for a, d in zip(arrays, dual) if d]
    hv = minigrad.autograd.grad(dot, wrt, allow_unused=True)
    return [np.zeros_like(x.detach().numpy()) if h is None else h.numpy() for h, x in zip(hv, wrt)]


@pytest.mark.parametrize(("key", "op", "sample"), _second_order_cases())
def test_forward_over_reverse_is_hessian_times_v(key, op, sample):
    arrays, dual, tangents = _draw(sample)
    first = _run(minigrad, op, sample, arrays, dual, tangents)
    if isinstance(first, NotImplementedError) or not first or first[0][1] is None:
        return  # no tangent at first order (as PyTorch: the torch sweep checks it), so no second order either
    w = np.random.default_rng(7).uniform(-1, 1, first[0][0].shape)
    ours = _gradient_tangents(op, sample, arrays, dual, tangents, w)  # (a backward op without a forward rule raises:
    # list the case in FORWARD_OVER_REVERSE_GAPS until it has one)
    want = _hessian_times_v(op, sample, arrays, dual, tangents, w)
    for t, h in zip(ours, want):
        got = np.zeros_like(h) if t is None else t.detach().numpy()
        np.testing.assert_allclose(got, h, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("key", "op", "sample"), _with_rules(_cases()))
def test_gradcheck_check_forward_ad(key, op, sample):
    """gradcheck(check_forward_ad=True): the Jacobian built column by column in forward mode against finite
    differences (float64; the backward Jacobian is gradchecked in test_registry_sweeps.py)."""
    tensors, wrt = sweeps._inputs(sample)
    positions = [i for i, t in enumerate(tensors) if t.requires_grad]

    def fn(*xs):  # the op's floating outputs (in forward mode the dual inputs need not require grad)
        args = list(tensors)
        for i, x in zip(positions, xs):
            args[i] = x
        out = sweeps._call(op, minigrad, sample, args)
        return tuple(o for o in (out if isinstance(out, (tuple, list)) else (out,))
                     if isinstance(o, minigrad.Tensor) and o.is_floating_point())

    arrays, dual, tangents = _draw(sample)
    first = _run(minigrad, op, sample, arrays, dual, tangents)
    if isinstance(first, NotImplementedError):  # as PyTorch (the torch sweep checks it): gradcheck says so too
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with"):
            minigrad.autograd.gradcheck(fn, tuple(wrt), check_forward_ad=True, check_backward_ad=False)
        return
    assert minigrad.autograd.gradcheck(fn, tuple(wrt), check_forward_ad=True, check_backward_ad=False)
