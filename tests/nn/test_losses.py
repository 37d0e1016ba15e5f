"""Every loss, in every reduction, against PyTorch 2.13: values, gradients, graphs, second derivatives, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad
import minigrad.nn as nn

RNG = np.random.default_rng(99)
REDUCTIONS = ["mean", "sum", "none"]


def _t(lib, arr, requires_grad=False):
    if arr is None:
        return None
    return lib.tensor(arr, requires_grad=requires_grad)


def _logits(shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


def _classes(shape, n_classes, ignore=None):
    t = RNG.integers(0, n_classes, shape)
    if ignore is not None and t.size > 1:
        t.flat[1] = ignore
    return t


def _run(lib, fn_name, x, target, kwargs, target_grad=False, tensor_kwargs=()):
    """Call lib's functional loss; returns (loss, input tensor, target tensor)."""
    tx = _t(lib, x, True)
    tt = _t(lib, target, target_grad)
    kw = {k: (_t(lib, v) if k in tensor_kwargs else v) for k, v in kwargs.items()}
    return getattr(lib.nn.functional, fn_name)(tx, tt, **kw), tx, tt


def _compare(torch, graph, close, fn_name, x, target, kwargs, target_grad=False, tensor_kwargs=()):
    tl, tx, tt = _run(torch, fn_name, x, target, kwargs, target_grad, tensor_kwargs)
    ml, mx, mt = _run(minigrad, fn_name, x, target, kwargs, target_grad, tensor_kwargs)
    close(ml, tl)
    assert graph(ml.grad_fn, [mx, mt]) == graph(tl.grad_fn, [tx, tt])
    g = RNG.standard_normal(tuple(tl.shape)).astype(x.dtype)
    tl.backward(torch.tensor(g))
    ml.backward(minigrad.tensor(g))
    close(mx.grad, tx.grad)
    if target_grad:
        close(mt.grad, tt.grad)
    return ml, tl


# -- regression losses ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("fn", ["mse_loss", "l1_loss"])
def test_regression_losses_match_torch(torch, graph, close, fn, reduction, dtype):
    x, y = _logits((3, 5), dtype), _logits((3, 5), dtype)
    _compare(torch, graph, close, fn, x, y, {"reduction": reduction}, target_grad=True)


@pytest.mark.parametrize("target_dtype", ["int64", "int32", "bool"])
@pytest.mark.parametrize("fn", ["mse_loss", "l1_loss"])
def test_regression_losses_promote_an_integer_target_like_torch(torch, graph, close, fn, target_dtype):
    """Found by the port of the blitz tutorial: `MSELoss()(output, torch.arange(1, 11).view(1, -1))` is float32."""
    x = _logits((1, 10), "float32")
    target = (np.arange(1, 11).reshape(1, 10) % 2 == 0) if target_dtype == "bool" else \
        np.arange(1, 11, dtype=target_dtype).reshape(1, 10)
    if fn == "l1_loss" and target_dtype == "bool":  # PyTorch refuses `input - bool_target` here
        for lib in (torch, minigrad):
            with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor"):
                _run(lib, fn, x, target, {})
        return
    ml, tl = _compare(torch, graph, close, fn, x, target, {})
    assert ml.dtype == minigrad.float32 and tl.dtype == torch.float32


@pytest.mark.parametrize("fn", ["mse_loss", "l1_loss"])
def test_regression_losses_broadcast_with_torch_warning(torch, graph, close, fn):
    x, y = _logits((3, 1)), _logits((3,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ml, tl = _compare(torch, graph, close, fn, x, y, {}, target_grad=True)
    messages = [str(w.message) for w in caught]
    want = [m for m in messages if "torch.Size" in m]
    assert want and want[0].replace("torch.", "minigrad.") in messages


def test_mse_saved_values_match_torch(torch):
    x, y = _logits((2, 3)), _logits((2, 3))
    tl, *_ = _run(torch, "mse_loss", x, y, {"reduction": "sum"})
    ml, *_ = _run(minigrad, "mse_loss", x, y, {"reduction": "sum"})
    assert ml.grad_fn._saved_reduction == tl.grad_fn._saved_reduction == 2
    np.testing.assert_array_equal(ml.grad_fn._saved_target.numpy(), tl.grad_fn._saved_target.numpy())


# -- classification losses -----------------------------------------------------------------------------------------
NLL_CASES = {
    "1d": ((5,), ()),
    "2d": ((4, 5), (4,)),
    "3d": ((2, 5, 3), (2, 3)),
    "4d": ((2, 5, 3, 4), (2, 3, 4)),
    "5d": ((2, 5, 3, 2, 2), (2, 3, 2, 2)),
}


@pytest.mark.parametrize("options", ["plain", "weight", "ignore", "weight+ignore"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", list(NLL_CASES))
@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
def test_class_index_losses_match_torch(torch, graph, close, fn, case, reduction, options):
    shape, tshape = NLL_CASES[case]
    x = _logits(shape)
    if fn == "nll_loss":
        x = x - np.log(np.exp(x).sum(axis=0 if len(shape) == 1 else 1, keepdims=True))
    kwargs = {"reduction": reduction}
    if "weight" in options:
        kwargs["weight"] = RNG.uniform(0.5, 2.0, 5)
    ignore = None
    if "ignore" in options:
        kwargs["ignore_index"] = ignore = 2 if len(shape) > 1 else 0
    target = _classes(tshape, 5, ignore)
    _compare(torch, graph, close, fn, x, target, kwargs, tensor_kwargs=("weight",))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_module_float32_and_saved_values(torch, close, dtype):
    x, target = _logits((6, 4), dtype), _classes((6,), 4)
    w = RNG.uniform(0.5, 2, 4).astype(dtype)
    tl = torch.nn.CrossEntropyLoss(weight=torch.tensor(w), ignore_index=1)(torch.tensor(x), torch.tensor(target))
    ml = nn.CrossEntropyLoss(weight=minigrad.tensor(w), ignore_index=1)(minigrad.tensor(x), minigrad.tensor(target))
    close(ml, tl)
    tx, mx = torch.tensor(x, requires_grad=True), minigrad.tensor(x, requires_grad=True)
    tl = torch.nn.functional.cross_entropy(tx, torch.tensor(target), weight=torch.tensor(w))
    ml = minigrad.nn.functional.cross_entropy(mx, minigrad.tensor(target), weight=minigrad.tensor(w))
    tn, mn = tl.grad_fn, ml.grad_fn
    assert mn._saved_reduction == tn._saved_reduction
    close(mn._saved_total_weight, tn._saved_total_weight)
    close(mn._saved_weight, tn._saved_weight)
    np.testing.assert_array_equal(mn._saved_target.numpy(), tn._saved_target.numpy())


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.5])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("target_kind", ["indices", "probabilities"])
def test_cross_entropy_label_smoothing_and_soft_targets(torch, graph, close, smoothing, reduction, weighted,
                                                        target_kind):
    x = _logits((4, 5))
    if target_kind == "indices":
        target = _classes((4,), 5, ignore=3)
        kwargs = {"ignore_index": 3}
    else:
        p = RNG.uniform(0, 1, (4, 5))
        target = p / p.sum(1, keepdims=True)
        kwargs = {}
    kwargs.update(reduction=reduction, label_smoothing=smoothing)
    if weighted:
        kwargs["weight"] = RNG.uniform(0.5, 2.0, 5)
    _compare(torch, graph, close, "cross_entropy", x, target, kwargs, tensor_kwargs=("weight",))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_cross_entropy_matches_torch(torch, graph, close, reduction, weighted, dtype):
    p = 1 / (1 + np.exp(-_logits((4, 3), dtype)))
    y = RNG.uniform(0, 1, (4, 3)).astype(dtype)
    kwargs = {"reduction": reduction}
    if weighted:
        kwargs["weight"] = RNG.uniform(0.5, 2, (3,)).astype(dtype)
    _compare(torch, graph, close, "binary_cross_entropy", p.astype(dtype), y, kwargs, target_grad=True,
             tensor_kwargs=("weight",))


def test_binary_cross_entropy_clamps_logs_like_torch(torch, close):
    p = np.array([0.0, 1.0, 0.5, 1e-50])
    y = np.array([1.0, 0.0, 0.5, 1.0])
    tl, tx, _ = _run(torch, "binary_cross_entropy", p, y, {"reduction": "none"})
    ml, mx, _ = _run(minigrad, "binary_cross_entropy", p, y, {"reduction": "none"})
    close(ml, tl)
    tl.sum().backward()
    ml.sum().backward()
    close(mx.grad, tx.grad)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("options", ["plain", "weight", "pos_weight", "both"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bce_with_logits_matches_torch(torch, graph, close, reduction, options, dtype):
    x = (_logits((4, 3)) * 4).astype(dtype)
    y = RNG.uniform(0, 1, (4, 3)).astype(dtype)
    kwargs = {"reduction": reduction}
    if options in ("weight", "both"):
        kwargs["weight"] = RNG.uniform(0.5, 2, (3,)).astype(dtype)
    if options in ("pos_weight", "both"):
        kwargs["pos_weight"] = RNG.uniform(0.5, 3, (3,)).astype(dtype)
    _compare(torch, graph, close, "binary_cross_entropy_with_logits", x, y, kwargs, target_grad=True,
             tensor_kwargs=("weight", "pos_weight"))


# -- loss modules ------------------------------------------------------------------------------------------------
MODULE_CASES = [
    ("MSELoss", {}, "regression"), ("MSELoss", {"reduction": "sum"}, "regression"),
    ("L1Loss", {"reduction": "none"}, "regression"),
    ("CrossEntropyLoss", {}, "logits"), ("CrossEntropyLoss", {"weight": "w", "reduction": "sum"}, "logits"),
    ("CrossEntropyLoss", {"ignore_index": 0, "label_smoothing": 0.2}, "logits"),
    ("NLLLoss", {"weight": "w"}, "logprobs"), ("NLLLoss", {"reduction": "none", "ignore_index": 1}, "logprobs"),
    ("BCELoss", {}, "probs"), ("BCELoss", {"weight": "w3"}, "probs"),
    ("BCEWithLogitsLoss", {"pos_weight": "w3"}, "binary"), ("BCEWithLogitsLoss", {"reduction": "none"}, "binary"),
]


@pytest.mark.parametrize("name,options,kind", MODULE_CASES)
def test_loss_modules_match_torch(torch, close, name, options, kind):
    x = _logits((4, 3))
    w = RNG.uniform(0.5, 2, 3)
    if kind == "regression":
        target = _logits((4, 3))
    elif kind in ("logits", "logprobs"):
        target = _classes((4,), 3)
        if kind == "logprobs":
            x = x - np.log(np.exp(x).sum(1, keepdims=True))
    else:
        target = RNG.uniform(0, 1, (4, 3))
        if kind == "probs":
            x = 1 / (1 + np.exp(-x))
    results = []
    for lib in (torch, minigrad):
        kw = {k: (lib.tensor(w) if v in ("w", "w3") else v) for k, v in options.items()}
        loss_mod = getattr(lib.nn, name)(**kw)
        t = lib.tensor(x, requires_grad=True)
        out = loss_mod(t, lib.tensor(target))
        out.sum().backward()
        results.append((loss_mod, out, t.grad))
    (tm, tout, tgrad), (mm, mout, mgrad) = results
    close(mout, tout)
    close(mgrad, tgrad)
    assert list(mm.state_dict()) == list(tm.state_dict())
    assert mm.reduction == tm.reduction


def test_legacy_size_average_and_reduce_warn_like_torch(torch, close):
    x, y = _logits((3,)), _logits((3,))
    outs = []
    for lib in (torch, minigrad):
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please use "
                                             "reduction='sum' instead."):
            outs.append(lib.nn.functional.mse_loss(lib.tensor(x), lib.tensor(y), size_average=False))
        with pytest.warns(UserWarning, match="reduction='none'"):
            assert lib.nn.MSELoss(reduce=False).reduction == "none"
    close(outs[1], outs[0])


# -- second derivatives -----------------------------------------------------------------------------------------------
SECOND_ORDER = {
    "mse": ("mse_loss", lambda: (_logits((3, 4)), _logits((3, 4))), {}),
    "cross_entropy": ("cross_entropy", lambda: (_logits((3, 4)), _classes((3,), 4)), {}),
    "cross_entropy_smooth": ("cross_entropy", lambda: (_logits((3, 4)), _classes((3,), 4)),
                             {"label_smoothing": 0.1}),
    "bce": ("binary_cross_entropy", lambda: (RNG.uniform(0.1, 0.9, (3, 4)), RNG.uniform(0, 1, (3, 4))), {}),
    "bce_logits": ("binary_cross_entropy_with_logits", lambda: (_logits((3, 4)), RNG.uniform(0, 1, (3, 4))),
                   {"pos_weight": np.array([1.0, 2.0, 0.5, 3.0])}),
}


@pytest.mark.parametrize("case", list(SECOND_ORDER))
def test_second_derivatives_match_torch(torch, close, case):
    fn, make_data, kwargs = SECOND_ORDER[case]
    x, y = make_data()
    v = RNG.standard_normal(x.shape)
    results = []
    for lib in (torch, minigrad):
        kw = {k: lib.tensor(a) if isinstance(a, np.ndarray) else a for k, a in kwargs.items()}
        t = lib.tensor(x, requires_grad=True)
        loss = getattr(lib.nn.functional, fn)(t, lib.tensor(y), **kw)
        (g,) = lib.autograd.grad(loss, t, create_graph=True)
        (gg,) = lib.autograd.grad((g * lib.tensor(v)).sum(), t)
        results.append((g, gg))
    close(results[1][0], results[0][0])
    close(results[1][1], results[0][1])


@pytest.mark.parametrize("fn", ["mse_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits"])
def test_mixed_second_derivative_through_the_target(torch, close, fn):
    x, y = RNG.uniform(0.1, 0.9, (2, 3)), RNG.uniform(0.1, 0.9, (2, 3))
    results = []
    for lib in (torch, minigrad):
        t, u = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        loss = getattr(lib.nn.functional, fn)(t, u)
        (g,) = lib.autograd.grad(loss, t, create_graph=True)
        (gu,) = lib.autograd.grad(g.sum(), u)
        results.append(gu)
    close(results[1], results[0])


def test_minigrad_gradgradcheck_on_losses():
    x = minigrad.tensor(RNG.uniform(0.2, 0.8, (2, 3)), requires_grad=True)
    y = minigrad.tensor(RNG.uniform(0, 1, (2, 3)))
    logits = minigrad.tensor(_logits((2, 3)), requires_grad=True)
    labels = minigrad.tensor(np.array([0, 2]))
    F = minigrad.nn.functional
    assert minigrad.autograd.gradgradcheck(lambda a: F.binary_cross_entropy(a, y), (x,))
    assert minigrad.autograd.gradgradcheck(lambda a: F.cross_entropy(a, labels), (logits,))
    assert minigrad.autograd.gradgradcheck(lambda a: F.binary_cross_entropy_with_logits(a, y), (logits,))
    assert minigrad.autograd.gradcheck(lambda a: F.nll_loss(a, labels, reduction="none"), (logits,))


# -- errors ---------------------------------------------------------------------------------------------------------
ERROR_CASES = {
    "target out of bounds": lambda F, lib: F.nll_loss(lib.randn(3, 5), lib.tensor([1, 7, 1])),
    "negative target": lambda F, lib: F.cross_entropy(lib.randn(3, 5), lib.tensor([1, -3, 1])),
    "float target": lambda F, lib: F.nll_loss(lib.randn(3, 5), lib.tensor([1.0, 2.0, 1.0])),
    "batch mismatch": lambda F, lib: F.nll_loss(lib.randn(3, 5), lib.tensor([1, 2])),
    "bce range": lambda F, lib: F.binary_cross_entropy(lib.tensor([0.5, 1.5]), lib.tensor([0.0, 1.0])),
    "bce size": lambda F, lib: F.binary_cross_entropy(lib.tensor([0.5, 0.5]), lib.tensor([[0.0, 1.0]])),
    "bce logits size": lambda F, lib: F.binary_cross_entropy_with_logits(lib.tensor([0.5, 0.5]),
                                                                          lib.tensor([[0.0, 1.0]])),
    "bad reduction": lambda F, lib: F.mse_loss(lib.randn(3), lib.randn(3), reduction="avg"),
    "smoothing range": lambda F, lib: F.cross_entropy(lib.randn(3, 5), lib.tensor([1, 2, 1]), label_smoothing=1.5),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_loss_errors_match_torch(torch, case):
    caught = []
    for lib in (torch, minigrad):
        with pytest.raises(Exception) as info:
            ERROR_CASES[case](lib.nn.functional, lib)
        caught.append(info.value)
    want, got = caught
    assert type(got) is type(want)
    assert str(want).replace("torch.", "minigrad.") in str(got)


def test_nll_all_ignored_gives_nan_mean_and_zero_grad(torch, close):
    x = _logits((3, 5))
    for red in ("mean", "sum"):
        outs = []
        for lib in (torch, minigrad):
            t = lib.tensor(x, requires_grad=True)
            loss = lib.nn.functional.nll_loss(t, lib.tensor([1, 1, 1]), ignore_index=1, reduction=red)
            loss.backward()
            outs.append((loss, t.grad))
        np.testing.assert_array_equal(outs[1][0].detach().numpy(), outs[0][0].detach().numpy())
        close(outs[1][1], outs[0][1])
