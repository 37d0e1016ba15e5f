"""What real teaching code calls beyond the registry sweeps' samples, against PyTorch 2.13: NumPy's argument names
(`axis=`, `keepdims=`), indexing and writing with a Python `range`, F.one_hot's edge cases, embedding's
padding_idx and scale_grad_by_freq, sort/topk ties and NaN, histogram's bins."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import F, Int, K

import minigrad
from minigrad.ops.registry import REGISTRY


# -- axis= and keepdims= --------------------------------------------------------------------------------------
def _numpy_named_ops():
    return sorted(key for key, op in REGISTRY.items()
                  if op.public and getattr(op.function, "numpy_names", False))


def test_every_op_with_a_dim_accepts_numpy_names_except_pytorchs_python_functions():
    named = _numpy_named_ops()
    for key in ("sum", "mean", "max", "min", "std", "var", "argmax", "argmin", "prod", "all", "any", "logsumexp",
                "amax", "amin", "softmax", "log_softmax", "cumsum", "cat", "stack", "sort", "topk"):
        assert key in named, key
    assert "norm" not in named and "split" not in named  # Python functions in PyTorch: no aliases there either


REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "std", "var", "logsumexp", "all", "any"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("keep", [False, True])
def test_reductions_accept_axis_and_keepdims(parity, name, keep):
    def fn(lib, x):
        if name in ("all", "any"):
            x = x > 0
        return getattr(x, name)(axis=1, keepdims=keep), getattr(lib, name)(x, axis=0, keepdims=keep)

    parity.check(fn, K(np.random.default_rng(0).permutation(12).reshape(3, 4) / 4 - 1.4, grad=True),
                 backward=name not in ("argmax", "argmin", "all", "any"))


@pytest.mark.parametrize("expr", ["x.max(axis=1)", "x.min(axis=0, keepdims=True)", "x.softmax(axis=1)",
                                  "lib.cat([x, x], axis=1)", "lib.stack([x, x], axis=0)", "x.cumsum(axis=0)",
                                  "x.sort(axis=1)", "x.topk(2, axis=1)", "x.unsqueeze(axis=0)", "x.squeeze(axis=0)",
                                  "x.sum(axis=(0, 1))", "x.mean(axis=[0])"])
def test_other_ops_with_a_dim_accept_axis(parity, expr):
    parity.check(lambda lib, x: eval(expr), K(np.arange(12.0).reshape(3, 4) * 0.37 - 1, grad=True))


@pytest.mark.parametrize("expr", ["x.sum(dim=1, axis=1)", "x.sum(1, keepdim=True, keepdims=True)"])
def test_both_spellings_is_a_type_error(parity, expr):
    parity.error(lambda lib, x: eval(expr), F(3, 4))


@pytest.mark.parametrize("expr", ["x.norm(dim=1, keepdims=True)", "x.split(2, axis=1)"])
def test_no_alias_where_pytorch_has_none(torch, expr):
    for lib in (torch, minigrad):
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            eval(expr, {"x": lib.ones(3, 4)})


# -- range --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("expr", ["x[range(3)]", "x[range(1, 3)]", "x[range(4), [0, 1, 2, 0]]",
                                  "x[range(4), ys]", "x[range(0)]", "x[:, range(2)]", "x[range(3, 0, -1), 1:]"])
def test_indexing_with_a_range(parity, expr):
    parity.check(lambda lib, x, ys: eval(expr), F(4, 3), Int(4, lo=0, hi=2))


def test_writing_with_a_range_as_makemore_does(parity):
    def fn(lib, logits, ys):
        d = lib.zeros_like(logits)
        d[range(4), ys] = -1.0 / 4
        d[range(2)] += 1.0
        out = logits * 1.0
        out[range(4), ys] -= 1
        return d, out

    parity.check(fn, F(4, 3), Int(4, lo=0, hi=2))


# -- F.one_hot and embedding's options ----------------------------------------------------------------------------
@pytest.mark.parametrize("expr", ["F.one_hot(t)", "F.one_hot(t, 5)", "F.one_hot(t.view(2, 2))", "F.one_hot(t[0])",
                                  "F.one_hot(t[:0], 3)", "F.one_hot(lib.zeros(0, 2, dtype=lib.long), 2)"])
def test_one_hot(parity, expr):
    parity.check(lambda lib, t: eval(expr, {"F": lib.nn.functional, "lib": lib, "t": t}), K(np.array([0, 3, 1, 3])))


@pytest.mark.parametrize("expr", ["F.one_hot(t[:0])", "F.one_hot(t, 3)", "F.one_hot(-t, 5)", "F.one_hot(t.int(), 5)",
                                  "F.one_hot(t.float(), 5)", "F.one_hot(t, 0)"])
def test_one_hot_errors(parity, expr):
    parity.error(lambda lib, t: eval(expr, {"F": lib.nn.functional, "lib": lib, "t": t}), K(np.array([0, 3, 1, 3])))


@pytest.mark.parametrize("kwargs", [{"padding_idx": 1}, {"padding_idx": -2}, {"scale_grad_by_freq": True},
                                    {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding_padding_idx_and_scale_grad_by_freq(parity, kwargs):
    idx = K(np.array([[0, 1, 3], [1, 1, 4]]))
    parity.check(lambda lib, w, i: lib.nn.functional.embedding(i, w, **kwargs), F(5, 3), idx)
    if "scale_grad_by_freq" not in kwargs:  # PyTorch's second derivative ignores the scaling; minigrad's does not
        parity.check(lambda lib, w, i: lib.nn.functional.embedding(i, w, **kwargs), F(5, 3), idx, second_order=True)


# -- sort, topk, histogram ------------------------------------------------------------------------------------------
TIES = np.array([[3.0, 1.0, 2.0, 1.0, np.nan], [0.0, 5.0, 5.0, -np.inf, 1.0]])


@pytest.mark.parametrize("expr", ["x.sort()", "x.sort(descending=True)", "x.sort(0)", "x.argsort()",
                                  "x.argsort(descending=True)", "lib.sort(x, stable=True)", "x[:, :4].topk(2)",
                                  "x[:, :4].topk(2, largest=False)", "x.msort()", "lib.argsort(x, dim=0)"])
def test_sort_ties_and_nan(parity, expr):
    parity.check(lambda lib, x: eval(expr), K(TIES, grad=True))


def test_sort_of_integers_and_bools(parity):
    parity.check(lambda lib, x: (x.sort(), x.sort(descending=True), (x > 2).sort(descending=True), x.topk(3)),
                 K(np.array([3, 1, 4, 1, 5, 9, 2, 6])))


def test_topk_k_out_of_range(parity):
    parity.error(lambda lib, x: x.topk(5), F(3, 4))


@pytest.mark.parametrize("expr", ["lib.histogram(x, 4)", "lib.histogram(x, bins=3, range=(-1.0, 1.0))",
                                  "lib.histogram(x, edges)", "lib.histogram(x, 5, density=True)",
                                  "lib.histogram(x, 3, weight=x.detach().abs())", "x.histogram(2)",
                                  "lib.histogram(x[:1] * 0 + 1, 3)", "lib.histc(x, 4)",
                                  "lib.histc(x, bins=3, min=-1, max=1)", "lib.histc(x[:1] * 0, 3)"])
def test_histogram(parity, expr):
    parity.check(lambda lib, x, edges: eval(expr), F(12), K(np.array([-2.0, -0.5, 0.0, 2.0])), backward=False)


def test_histogram_of_a_tensor_that_requires_grad_has_no_derivative(parity):
    parity.error(lambda lib, x: lib.histogram(x, 3).hist.sum().backward(), F(5))
    parity.error(lambda lib, x: lib.histogram(x.long(), 3), F(5))
    assert minigrad.histogram(minigrad.ones(2, requires_grad=True), 2).hist.grad_fn.name() == \
        "minigrad::autograd::NotImplemented"
