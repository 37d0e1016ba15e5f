"""Errors the forward-mode fuzzer found missing (fresh seeds from 1000), each a differential test against torch 2.13:
F.interpolate's argument checks (PyTorch's functional raises ValueError / TypeError, its upsample kernel
RuntimeError; minigrad resized anyway or raised ZeroDivisionError), on a plain and on a dual input; tril_/triu_ of a
dual tensor whose elements share memory."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad

INTERPOLATE = {
    "size of another length": ((1, 2, 3), {"size": (2, 3)}),
    "scale_factor of another length": ((1, 2, 3), {"scale_factor": (2.0, 2.0)}),
    "neither size nor scale_factor": ((1, 2, 3), {}),
    "both": ((1, 2, 3), {"size": 2, "scale_factor": 2.0}),
    "size 0": ((1, 2, 3), {"size": 0}),
    "2-D size 0": ((1, 2, 3, 4), {"size": (0, 8)}),
    "scale_factor to size 0": ((1, 2, 3, 4), {"scale_factor": 0.2}),
    "negative scale_factor": ((1, 2, 3), {"scale_factor": -1.0}),
    "empty spatial input": ((1, 2, 0), {"size": 2}),
    "no channels": ((1, 0, 3, 4), {"size": 2}),
    "float size": ((1, 2, 3), {"size": 2.5}),
    "float in a size tuple": ((1, 2, 3), {"size": (2.5,)}),
    "align_corners with nearest": ((1, 2, 3), {"size": 4, "align_corners": True}),
    "recompute_scale_factor with a size": ((1, 2, 3), {"size": 2, "recompute_scale_factor": True}),
    "antialias with nearest": ((1, 2, 3, 4), {"size": 2, "antialias": True}),
    # (no error: an empty batch resizes)
    "empty batch": ((0, 2, 3), {"size": 2}),
}


def _interpolate(lib, shape: tuple, kwargs: dict, dual: bool):
    """The output's shape, or (exception type, first line), under a dual level."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = lib.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape))
        if dual:
            x = fw.make_dual(x, lib.tensor(np.ones(shape)))
        try:
            out = lib.nn.functional.interpolate(x, **kwargs)
        except Exception as e:  # noqa: BLE001 - the test compares exception types and texts
            return type(e).__name__, str(e).splitlines()[0]
        return tuple(out.shape), None if not dual else tuple(fw.unpack_dual(out).tangent.shape)


@pytest.mark.parametrize("dual", [False, True], ids=["plain", "dual"])
@pytest.mark.parametrize("name", list(INTERPOLATE))
def test_interpolate_checks_as_torch(torch, name, dual):
    shape, kwargs = INTERPOLATE[name]
    assert _interpolate(minigrad, shape, kwargs, dual) == _interpolate(torch, shape, kwargs, dual)


def _expanded_dual(lib):
    fw = lib.autograd.forward_ad
    return fw.make_dual(lib.tensor(np.zeros(3)), lib.tensor(np.ones(3))).expand(2, 3)


# tril_/triu_ on a tensor whose elements share memory: allowed without a tangent (PyTorch writes the zeros through
# the strides), refused with one, after the primal's write (seed 1000 program 103: a meshgrid output's tril_);
# minigrad allowed both. Each case: (the tensor to read afterwards, the write)
def _meshgrid(lib):
    fw = lib.autograd.forward_ad
    x = lib.tensor([0.0, 0.0, 0.0, 1.0], dtype=lib.float64)
    grid = lib.meshgrid([_expanded_dual(lib)[0], fw.make_dual(x, lib.ones(4, dtype=lib.float64))], indexing="xy")
    return x, lambda: grid[1].tril_()


def _of(make, write):
    def case(lib):
        t = make(lib)
        return t, lambda: write(t)
    return case


TRIANGLE = {
    "tril_ of an expanded dual": _of(_expanded_dual, lambda t: t.tril_()),
    "triu_ of an expanded dual": _of(_expanded_dual, lambda t: t.triu_(1)),
    "tril_ of an expanded primal, tangent expanded alike": _of(lambda lib: lib.autograd.forward_ad.make_dual(
        lib.tensor(np.arange(3.0)).expand(2, 3), lib.tensor(np.ones(3)).expand(2, 3)), lambda t: t.tril_()),
    "exp of a contiguous primal, expanded tangent": _of(lambda lib: lib.autograd.forward_ad.make_dual(
        lib.tensor(np.zeros((2, 3))), lib.tensor(np.ones(3)).expand(2, 3)), lambda t: t.exp()),
    "tril_ of a meshgrid output": _meshgrid,
    "tril_ of an expanded plain tensor": _of(lambda lib: lib.tensor(np.arange(3.0)).expand(3, 3), lambda t: t.tril_()),
    "tril_ of a transposed dual": _of(lambda lib: _expanded_dual(lib).clone().t(), lambda t: t.tril_()),
}


def _triangle(lib, case):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        seen, write = case(lib)
        try:
            write()
            error = None
        except Exception as e:  # noqa: BLE001 - the test compares exception types and texts
            error = type(e).__name__, str(e).splitlines()[0]
        primal, tangent = fw.unpack_dual(seen)
        return error, primal.numpy().tolist(), None if tangent is None or error else tangent.numpy().tolist()


@pytest.mark.parametrize("name", list(TRIANGLE))
def test_triangle_inplace_overlap_as_torch(torch, name):
    assert _triangle(minigrad, TRIANGLE[name]) == _triangle(torch, TRIANGLE[name])


@pytest.mark.parametrize("dual", [False, True], ids=["plain", "dual"])
def test_repeat_interleave_of_a_transposed_tensor_as_torch(torch, dual):
    """repeat_interleave by a number clones row-major before its view, as PyTorch's does (minigrad's clone kept the
    transposed layout and the view raised; seed 1002 program 248)."""
    def run(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
            if dual:
                x = fw.make_dual(x, lib.tensor(np.ones((2, 3))))
            y = lib.repeat_interleave(x.mT, 3, -1)
            tangent = fw.unpack_dual(y).tangent
            return (y.tolist(), y.grad_fn.name(), y.is_contiguous(),
                    None if tangent is None else tangent.tolist())
    assert run(minigrad) == run(torch)


@pytest.mark.parametrize(("shape", "start"), [((0, 1, 3), 1), ((2, 0, 3), 0), ((1, 0, 2, 3), 1)])
def test_flatten_of_an_empty_tensor_as_torch(torch, shape, start):
    """flatten of an empty tensor gives the flattened size itself, as PyTorch's does (minigrad asked reshape for -1,
    which 0 elements do not determine: seed 1002 program 443, a split's empty piece)."""
    def run(lib):
        y = lib.flatten(lib.tensor(np.zeros(shape), requires_grad=True), start)
        return tuple(y.shape), y.grad_fn.name()
    assert run(minigrad) == run(torch)
