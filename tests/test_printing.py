"""Repr parity: ``minigrad._printing.format_tensor`` against PyTorch 2.13's ``repr``.

Every comparison hands the same NumPy array to both libraries; PyTorch's repr with ``torch.``
replaced by ``minigrad.`` is the expected string.  Without torch the comparisons are skipped,
except when ``CI=true``: there they fail, because CI must never be green only because the
parity tests did not run.  The golden strings at the end (from the PyTorch reference sheet,
section 4c) run everywhere.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minigrad._printing import dtype_name, format_tensor, get_printoptions, set_printoptions

FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8")
ALL_DTYPES = (*FLOAT_DTYPES, *INT_DTYPES, "bool")


# --------------------------------------------------------------------------- helpers


def require_torch() -> ModuleType:
    """Import torch, or skip the calling test; with CI=true a missing torch is a failure."""
    try:
        import torch
    except Exception as exc:  # ImportError, or a broken install raising something else
        message = f"missing tool: torch is not importable ({type(exc).__name__}: {exc})"
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail(f"CI=true and {message}; the repr parity tests must run", pytrace=False)
        pytest.skip(message)
    return torch


@pytest.fixture(scope="module")
def torch() -> ModuleType:
    """torch for the parity tests (shadows conftest's fixture so this file stands on its own)."""
    return require_torch()


def reset_all_printoptions() -> None:
    """Put both libraries back to their default print options (and torch's default dtype)."""
    set_printoptions(profile="default")
    torch_module = sys.modules.get("torch")
    if torch_module is not None:
        torch_module.set_printoptions(profile="default")
        torch_module.set_default_dtype(torch_module.float32)


@pytest.fixture
def restore_printoptions() -> Iterator[None]:
    """Restore the defaults after the test, in both libraries, whatever it changed."""
    reset_all_printoptions()
    yield
    reset_all_printoptions()


def torch_tensor(torch: ModuleType, array: np.ndarray) -> Any:
    return torch.from_numpy(array.copy())


def expected(torch_value: Any) -> str:
    """PyTorch's repr, spelled the minigrad way."""
    return repr(torch_value).replace("torch.", "minigrad.")


def assert_same(got: str, want: str) -> None:
    assert got == want, f"\nminigrad:\n{got}\ntorch:\n{want}"


def assert_parity(torch: ModuleType, array: np.ndarray) -> None:
    assert_same(format_tensor(array), expected(torch_tensor(torch, array)))


def f32(values: Any) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def f64(values: Any) -> np.ndarray:
    return np.array(values, dtype=np.float64)


RNG = np.random.default_rng(20240613)
NAN, INF = math.nan, math.inf

# --------------------------------------------------------------------------- fixed cases

CASES: dict[str, np.ndarray] = {
    # 0-d
    "0d-float32": f32(2.5),
    "0d-float32-integral": f32(12.0),
    "0d-float64": f64(1.5),
    "0d-float16": np.array(0.1, np.float16),
    "0d-int64": np.array(-7),
    "0d-int8": np.array(5, np.int8),
    "0d-bool": np.array(True),
    "0d-nan": f32(NAN),
    "0d-inf": f64(-INF),
    "0d-neg-zero": f64(-0.0),
    "0d-tiny": f64(1e-300),
    "0d-huge": f32(3e38),
    # 1-d, every dtype
    "1d-float32-tenths": f32([0.1, 0.2, 0.3]),
    "1d-float32-thirds": (np.arange(8) / 3).astype(np.float32),
    "1d-float64-thirds": np.arange(8) / 3,
    "1d-float16": np.array([0.1, 1.5, -2.25, 65504.0], np.float16),
    "1d-float16-subnormal": np.array([6e-8, 1.0], np.float16),
    "1d-int8": np.array([-128, 0, 127], np.int8),
    "1d-int16": np.array([-32768, 5, 32767], np.int16),
    "1d-int32": np.array([-(2**31), 0, 2**31 - 1], np.int32),
    "1d-int64": np.array([1, 2]),
    "1d-int64-extremes": np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max]),
    "1d-uint8": np.array([0, 7, 255], np.uint8),
    "1d-bool": np.array([True, False, True]),
    "1d-bool-all-true": np.array([True, True]),
    # special values and signed zero
    "1d-specials": f32([NAN, INF, -INF, -0.0, 0.0, 1.5]),
    "1d-only-specials": f64([NAN, INF, -INF]),
    "1d-zeros": np.zeros(4, np.float32),
    "1d-neg-zeros": f32([-0.0, 0.0]),
    "1d-neg-zero-fixed": f32([-0.0, 1.5]),
    "1d-neg-zero-sci": f64([-0.0, 1e-7]),
    "1d-nan-integral": f32([NAN, 1.0, -20.0]),
    # integer-valued floats
    "1d-integral": f32([1.0, -2.0, 300.0]),
    "1d-integral-1e8": f64([1e8, 5.0e7]),
    "1d-integral-above-1e8": f64([2e8, 1e8]),
    "1d-integral-ratio": f32([1e7, 1.0]),
    "1d-integral-float16": np.array([2048.0, -1.0], np.float16),
    # scientific notation
    "1d-tiny": f32([1e-5, 2e-5]),
    "1d-float32-1e-4": f32([1e-4, 1.0]),  # float32(1e-4) < 1e-4 as a double: scientific
    "1d-float64-1e-4": f64([1e-4, 1.0]),
    "1d-ratio-1000": f64([0.001, 1.0]),
    "1d-ratio-over-1000": f64([0.001, 1.5]),
    "1d-huge-float32": f32([1e30, -3e38]),
    "1d-3-digit-exponents": f64([1e300, 1e-300, -5e-324]),
    "1d-sci-with-specials": f32([1e-5, NAN, INF, 1.0, 0.0]),
    "1d-sci-negative": f64([-1e-10, 1e10]),
    "1d-sci-ref": f32([1e-5, 1.0, 12345.6]),
    # rounding
    "1d-round-half": f64([0.00005, 0.00015, 0.12345, 0.12355]),
    "1d-round-up-width": f64([9.99996, 1.0]),
    "1d-round-to-neg-zero": f64([-0.00004, 0.5]),
    # layout
    "2d": np.arange(6, dtype=np.float32).reshape(2, 3),
    "2d-int": np.arange(-6, 6).reshape(3, 4),
    "2d-bool": np.array([[True, False], [False, False]]),
    "2d-column": np.arange(5, dtype=np.float64).reshape(5, 1) / 4,
    "2d-row": np.arange(5, dtype=np.float32).reshape(1, 5),
    "2d-transposed": np.arange(12, dtype=np.float32).reshape(3, 4).T,
    "1d-reversed": np.arange(5, dtype=np.int32)[::-1],
    "3d": (np.arange(24).reshape(2, 3, 4) / 7).astype(np.float32),
    "3d-int16": np.arange(24, dtype=np.int16).reshape(2, 3, 4) - 12,
    "4d": np.arange(24, dtype=np.int32).reshape(2, 2, 2, 3),
    "5d": np.arange(8, dtype=np.float64).reshape(1, 2, 1, 2, 2) * 1.25,
    "size1-1d": f32([3.0]),
    "size1-2d": f64([[3.25]]),
    "size1-3d": np.array([[[True]]]),
    # empty
    "empty-float32": np.zeros(0, np.float32),
    "empty-float64": np.zeros(0, np.float64),
    "empty-int64": np.zeros(0, np.int64),
    "empty-int8": np.zeros(0, np.int8),
    "empty-bool": np.zeros(0, bool),
    "empty-0x3": np.zeros((0, 3), np.float32),
    "empty-2x0x4": np.zeros((2, 0, 4), np.int64),
    "empty-3x0-float16": np.zeros((3, 0), np.float16),
    # lines wrapping at 80 columns
    "wrap-1d": np.linspace(-1, 1, 50).astype(np.float32),
    "wrap-1d-int": np.arange(100) * 12345,
    "wrap-1d-bool": np.arange(40) % 3 == 0,
    "wrap-2d": RNG.standard_normal((3, 20)).astype(np.float32),
    "wrap-3d-sci": RNG.standard_normal((2, 3, 15)) * 1e5,
    "wrap-float16-3d": RNG.standard_normal((3, 4, 5)).astype(np.float16),
    "wrap-wide-cells": f64([1e300, -1e-300] * 10),
    "wrap-1d-large-fixed": (RNG.standard_normal(40) * 1e5).astype(np.float32),
    # summarisation: more than 1000 elements, 3 items per side
    "sum-1001": np.arange(1001, dtype=np.float32),
    "exactly-1000": np.arange(1000, dtype=np.float32),
    "sum-int64": np.arange(5000),
    "sum-bool": np.arange(2000) % 7 == 0,
    "sum-float64-random": RNG.standard_normal(1500),
    "sum-sci": np.arange(2000, dtype=np.float32),
    "sum-2d": np.arange(2000, dtype=np.float32).reshape(40, 50),
    "sum-2d-tall": np.arange(1001, dtype=np.float64).reshape(1001, 1),
    "sum-2d-wide": np.arange(1001, dtype=np.int32).reshape(1, 1001),
    "sum-2d-two-rows": np.arange(1200, dtype=np.float32).reshape(2, 600) / 3,
    "sum-3d": np.arange(5000).reshape(10, 10, 50),
    "sum-3d-random": RNG.standard_normal((11, 11, 11)).astype(np.float32),
    "sum-4d": np.arange(1080, dtype=np.float64).reshape(4, 5, 6, 9) - 500,
    # only the printed edges decide the format: the hidden 1e10 must not force sci mode
    "sum-hidden-middle": np.concatenate([np.arange(500.0), [1e10], np.arange(500.0)]),
    "sum-hidden-nan": np.concatenate([f32([0.5] * 3), f32([NAN] * 1000), f32([1.25] * 3)]),
}


@pytest.mark.parametrize("array", list(CASES.values()), ids=list(CASES))
def test_fixed_cases_match_torch(torch: ModuleType, array: np.ndarray) -> None:
    assert_parity(torch, array)


# --------------------------------------------------------------------------- default dtype

DEFAULT_FLOAT64_CASES = {
    "float32": f32([1.0, 2.5]),
    "float64": f64([1.0, 2.5]),
    "float16": np.array([1.0, 2.5], np.float16),
    "0d-float32": f32(2.0),
    "0d-float64": f64(2.0),
    "int64": np.array([1, 2]),
    "int32": np.array([1, 2], np.int32),
    "bool": np.array([True]),
    "empty-float32": np.zeros(0, np.float32),
    "empty-float64": np.zeros((0, 2), np.float64),
    "empty-int64": np.zeros(0, np.int64),
    "wrap-float32": RNG.standard_normal((2, 9)).astype(np.float32),
}


@pytest.mark.parametrize("array", list(DEFAULT_FLOAT64_CASES.values()), ids=list(DEFAULT_FLOAT64_CASES))
def test_default_float64_matches_torch(
    torch: ModuleType, restore_printoptions: None, array: np.ndarray
) -> None:
    torch.set_default_dtype(torch.float64)
    got = format_tensor(array, default_float=np.dtype("float64"))
    assert_same(got, expected(torch_tensor(torch, array)))


# --------------------------------------------------------------------------- tail items

TAIL_CASES = {
    "1d": f32([1.0, 2.0, 3.0]),
    "0d": f32(2.0),
    "2d": np.arange(6, dtype=np.float32).reshape(2, 3),
    "float64": f64([1.0, 2.0]),
    "float16": np.array([0.5, 1.0], np.float16),
    "empty": np.zeros(0, np.float32),
    "empty-0x3": np.zeros((0, 3), np.float32),
    "empty-float64-2x0": np.zeros((2, 0), np.float64),
    "wrap-2d": RNG.standard_normal((3, 20)).astype(np.float32),
    "wrap-3d-float64": RNG.standard_normal((2, 2, 9)),
    "summarised": np.arange(2000, dtype=np.float32),
}


@pytest.mark.parametrize("array", list(TAIL_CASES.values()), ids=list(TAIL_CASES))
def test_requires_grad_tail_matches_torch(torch: ModuleType, array: np.ndarray) -> None:
    leaf = torch_tensor(torch, array).requires_grad_()
    assert_same(format_tensor(array, tail=("requires_grad=True",)), expected(leaf))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 2, 2), (0,), (4, 0)])
def test_sum_grad_fn_tail_matches_torch(torch: ModuleType, dtype: str, shape: tuple[int, ...]) -> None:
    array = (np.arange(math.prod(shape)) % 5).astype(dtype).reshape(shape)
    total = torch_tensor(torch, array).requires_grad_().sum()
    got = format_tensor(np.asarray(array.sum(dtype=array.dtype)), tail=("grad_fn=<SumBackward0>",))
    assert_same(got, expected(total))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("length", range(1, 46))
def test_trailing_items_wrap_like_torch(torch: ModuleType, dtype: str, length: int) -> None:
    # Every length puts the end of the last line at another column, so the dtype and
    # grad_fn items land on the first line, on a line of their own, or one of each.
    array = (np.arange(length) * 1.5 + 100).astype(dtype)
    product = torch_tensor(torch, array).requires_grad_() * 2
    got = format_tensor(array * 2, tail=("grad_fn=<MulBackward0>",))
    assert_same(got, expected(product))


def test_parameter_repr_is_a_header_plus_the_plain_repr(torch: ModuleType) -> None:
    array = RNG.standard_normal((3, 12)).astype(np.float32)
    parameter = torch.nn.Parameter(torch_tensor(torch, array))
    got = "Parameter containing:\n" + format_tensor(array, tail=("requires_grad=True",))
    assert_same(got, expected(parameter))


PREFIX_CASES = {
    "2d-wrap": (np.arange(60, dtype=np.float64).reshape(3, 20) / 7),
    "3d": np.arange(24, dtype=np.int32).reshape(2, 3, 4),
    "summarised-2d": np.arange(2000, dtype=np.float32).reshape(40, 50),
    "empty": np.zeros((0, 2), np.float32),
    "0d": f32(1.0),
}


@pytest.mark.parametrize("array", list(PREFIX_CASES.values()), ids=list(PREFIX_CASES))
def test_prefix_sets_the_indentation_like_a_torch_subclass(torch: ModuleType, array: np.ndarray) -> None:
    class MyTensor(torch.Tensor):
        pass

    subclass_tensor = torch_tensor(torch, array).as_subclass(MyTensor)
    assert_same(format_tensor(array, prefix="MyTensor"), expected(subclass_tensor))


# --------------------------------------------------------------------------- print options

OPTION_SETS: list[dict[str, Any]] = [
    {"precision": 2},
    {"precision": 0},
    {"precision": 8},
    {"threshold": 5},
    {"threshold": 0},
    {"threshold": 10, "edgeitems": 1},
    {"edgeitems": 0},
    {"edgeitems": 0, "threshold": 5},
    {"edgeitems": 5},
    {"linewidth": 40},
    {"linewidth": 10},
    {"linewidth": 200},
    {"sci_mode": False},
    {"sci_mode": True},
    {"profile": "full"},
    {"profile": "short"},
    {"profile": "full", "precision": 6},
    {"profile": "short", "sci_mode": True},
    {"precision": 3, "threshold": 20, "edgeitems": 2, "linewidth": 60},
]

OPTION_ARRAYS = {
    "floats": f32([0.1, -2.5, 3.14159, 100.0]),
    "integral": f32([1.0, -2.0, 300.0]),
    "sci": f64([1e-5, 1.0, 12345.678, NAN]),
    "ints": np.arange(-5, 20),
    "bool": np.array([True, False, True, True, False, False, True]),
    "specials": f32([-0.0, INF, -INF, NAN, 0.0]),
    "0d": f64(3.14159),
    "empty-1d": np.zeros(0, np.float32),
    "empty-0x3": np.zeros((0, 3), np.int32),
    "2d": RNG.standard_normal((4, 9)).astype(np.float32),
    "3d": np.arange(60, dtype=np.float64).reshape(3, 4, 5) * 1.1,
    "big-1d": np.arange(1001, dtype=np.float32) / 8,
    "big-2d": np.arange(2000, dtype=np.float32).reshape(40, 50),
}


@pytest.mark.parametrize("options", OPTION_SETS, ids=[repr(o) for o in OPTION_SETS])
@pytest.mark.parametrize("array", list(OPTION_ARRAYS.values()), ids=list(OPTION_ARRAYS))
def test_printoptions_match_torch(
    torch: ModuleType, restore_printoptions: None, options: dict[str, Any], array: np.ndarray
) -> None:
    set_printoptions(**options)
    torch.set_printoptions(**options)
    assert_same(format_tensor(array), expected(torch_tensor(torch, array)))


OPTION_CALL_SEQUENCE: list[dict[str, Any]] = [
    {},
    {"precision": 2},
    {"sci_mode": True},
    {"threshold": 7},  # omitting sci_mode resets it to None, as in PyTorch
    {"profile": "short"},
    {"profile": "full", "edgeitems": 1},
    {"profile": "unknown", "linewidth": 99},
    {"profile": "default", "sci_mode": False},
]


def test_get_printoptions_follows_the_same_calls_as_torch(
    torch: ModuleType, restore_printoptions: None
) -> None:
    for call in OPTION_CALL_SEQUENCE:
        set_printoptions(**call)
        torch.set_printoptions(**call)
        assert get_printoptions() == torch._tensor_str.get_printoptions(), call


def test_set_printoptions_semantics(restore_printoptions: None) -> None:
    defaults = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
    assert get_printoptions() == defaults
    set_printoptions(precision=2, sci_mode=True)
    set_printoptions(linewidth=100)  # keeps precision, resets sci_mode like torch
    assert get_printoptions() == {**defaults, "precision": 2, "linewidth": 100}
    set_printoptions(profile="full")
    assert get_printoptions() == {**defaults, "threshold": math.inf}
    set_printoptions(profile="short")
    assert get_printoptions() == {**defaults, "precision": 2, "edgeitems": 2}
    set_printoptions(profile="default")
    assert get_printoptions() == defaults


# --------------------------------------------------------------------------- Hypothesis

HYPOTHESIS = settings(
    max_examples=300,
    deadline=None,
    database=None,  # no example database (Hypothesis still caches constants in .hypothesis/)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SMALL_SHAPES = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)
BIG_SHAPES = st.sampled_from([(1001,), (1500,), (2, 600), (40, 30), (11, 11, 11), (3, 4, 100), (2, 3, 4, 50)])
# One example in four is big enough (> 1000 elements) to be summarised.
SHAPES = st.integers(0, 3).flatmap(lambda k: BIG_SHAPES if k == 0 else SMALL_SHAPES)


def exact(dtype: np.dtype, values: list[float]) -> list[float]:
    """The values as the dtype stores them (Hypothesis wants exactly representable elements)."""
    with np.errstate(over="ignore"):
        return sorted({dtype.type(v).item() for v in values}, key=repr)


def draw_array(
    draw: st.DrawFn, dtype: np.dtype, shape: tuple[int, ...], elements: st.SearchStrategy
) -> np.ndarray:
    """An array of ``elements``; big ones are scattered from a small drawn pool of values.

    Hypothesis takes tens of milliseconds to build each array of thousands of
    elements, so summarised shapes get a few drawn values placed by a seeded NumPy generator.
    """
    if math.prod(shape) <= 200:
        return draw(hnp.arrays(dtype, shape, elements=elements))
    pool = np.array(draw(st.lists(elements, min_size=1, max_size=10)), dtype=dtype)
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).choice(pool, size=shape)


@st.composite
def float_arrays(draw: st.DrawFn, dtype_name_: str, shapes: st.SearchStrategy = SHAPES) -> np.ndarray:
    """Floats from one value family (so that every print mode is reached), plus special values."""
    dtype = np.dtype(dtype_name_)
    width = dtype.itemsize * 8
    finite = {"width": width, "allow_nan": False, "allow_infinity": False}
    families = {
        "integral": st.integers(-2048, 2048).map(float),
        "unit": st.floats(-1, 1, **finite),
        "moderate": st.floats(-1000, 1000, **finite),
        "positive-small": st.floats(0, 2.0**-10, **finite),
        "anything": st.floats(width=width),  # every magnitude, subnormals, nan, inf
    }
    specials = st.sampled_from(
        exact(
            dtype, [0.0, -0.0, NAN, INF, -INF, 1.0, -1.0, 0.5, 1e-4, 1e-5, 0.1, 1 / 3, 1e4, 1e8, 1e9, 1e-10]
        )
    )
    elements = families[draw(st.sampled_from(sorted(families)))]
    if draw(st.booleans()):
        elements = st.one_of(elements, specials)
    return draw_array(draw, dtype, draw(shapes), elements)


@st.composite
def int_arrays(draw: st.DrawFn, dtype_name_: str, shapes: st.SearchStrategy = SHAPES) -> np.ndarray:
    dtype = np.dtype(dtype_name_)
    info = np.iinfo(dtype)
    small = st.integers(max(info.min, -20), min(info.max, 20))
    elements = draw(st.sampled_from([hnp.from_dtype(dtype), small, st.one_of(small, hnp.from_dtype(dtype))]))
    return draw_array(draw, dtype, draw(shapes), elements)


@st.composite
def bool_arrays(draw: st.DrawFn, shapes: st.SearchStrategy = SHAPES) -> np.ndarray:
    return draw_array(draw, np.dtype(bool), draw(shapes), st.booleans())


def any_array(shapes: st.SearchStrategy = SHAPES) -> st.SearchStrategy[np.ndarray]:
    return st.sampled_from(ALL_DTYPES).flatmap(
        lambda name: (
            float_arrays(name, shapes)
            if name in FLOAT_DTYPES
            else (int_arrays(name, shapes) if name in INT_DTYPES else bool_arrays(shapes))
        )
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@HYPOTHESIS
@given(data=st.data())
def test_hypothesis_float_parity(torch: ModuleType, dtype: str, data: st.DataObject) -> None:
    assert_parity(torch, data.draw(float_arrays(dtype)))


@settings(HYPOTHESIS, max_examples=200)
@given(array=float_arrays("float16"))
def test_hypothesis_float16_parity(torch: ModuleType, array: np.ndarray) -> None:
    assert_parity(torch, array)


@HYPOTHESIS
@given(array=int_arrays("int64"))
def test_hypothesis_int64_parity(torch: ModuleType, array: np.ndarray) -> None:
    assert_parity(torch, array)


@settings(HYPOTHESIS, max_examples=200)
@given(array=st.sampled_from(["int8", "int16", "int32", "uint8"]).flatmap(int_arrays))
def test_hypothesis_small_int_parity(torch: ModuleType, array: np.ndarray) -> None:
    assert_parity(torch, array)


@HYPOTHESIS
@given(array=bool_arrays())
def test_hypothesis_bool_parity(torch: ModuleType, array: np.ndarray) -> None:
    assert_parity(torch, array)


@HYPOTHESIS
@given(
    array=any_array(),
    options=st.fixed_dictionaries(
        {},
        optional={
            "precision": st.integers(0, 8),
            "threshold": st.sampled_from([0, 1, 5, 10, 100, 1000, math.inf]),
            "edgeitems": st.integers(0, 4),
            "linewidth": st.integers(1, 120),
            "profile": st.sampled_from(["default", "short", "full"]),
            "sci_mode": st.sampled_from([None, True, False]),
        },
    ),
)
def test_hypothesis_printoptions_parity(
    torch: ModuleType, array: np.ndarray, options: dict[str, Any]
) -> None:
    try:
        set_printoptions(**options)
        torch.set_printoptions(**options)
        assert_parity(torch, array)
    finally:
        reset_all_printoptions()


@settings(HYPOTHESIS, max_examples=200)
@given(array=any_array(SMALL_SHAPES), default_float64=st.booleans(), requires_grad=st.booleans())
def test_hypothesis_default_dtype_and_tail_parity(
    torch: ModuleType, array: np.ndarray, default_float64: bool, requires_grad: bool
) -> None:
    requires_grad = requires_grad and array.dtype.kind == "f"  # only floats can require grad
    try:
        if default_float64:
            torch.set_default_dtype(torch.float64)
        tensor = torch_tensor(torch, array).requires_grad_(requires_grad)
        got = format_tensor(
            array,
            default_float=np.dtype("float64" if default_float64 else "float32"),
            tail=("requires_grad=True",) if requires_grad else (),
        )
        assert_same(got, expected(tensor))
    finally:
        reset_all_printoptions()


# --------------------------------------------------------------------------- golden strings (no torch)

GOLDEN: list[tuple[np.ndarray, tuple[str, ...], str]] = [
    (f32([1, 2, 3]), ("requires_grad=True",), "tensor([1., 2., 3.], requires_grad=True)"),
    (f32([2, 4, 6]), ("grad_fn=<MulBackward0>",), "tensor([2., 4., 6.], grad_fn=<MulBackward0>)"),
    (f32(12), ("grad_fn=<SumBackward0>",), "tensor(12., grad_fn=<SumBackward0>)"),
    (f32(2), ("requires_grad=True",), "tensor(2., requires_grad=True)"),
    (f32(2), (), "tensor(2.)"),
    (f64([1, 2]), ("requires_grad=True",), "tensor([1., 2.], dtype=minigrad.float64, requires_grad=True)"),
    (
        f64([2, 4]),
        ("grad_fn=<MulBackward0>",),
        "tensor([2., 4.], dtype=minigrad.float64, grad_fn=<MulBackward0>)",
    ),
    (f64(1.5), (), "tensor(1.5000, dtype=minigrad.float64)"),
    (np.array([1, 2]), (), "tensor([1, 2])"),
    (np.array([1, 2], np.int32), (), "tensor([1, 2], dtype=minigrad.int32)"),
    (np.array([True, False]), (), "tensor([ True, False])"),
    (f32([1e-5, 1.0, 12345.6]), (), "tensor([1.0000e-05, 1.0000e+00, 1.2346e+04])"),
    (np.zeros(0, np.float32), (), "tensor([])"),
    (np.zeros((0, 3), np.float32), ("requires_grad=True",), "tensor([], size=(0, 3), requires_grad=True)"),
    (
        np.arange(6, dtype=np.float32).reshape(2, 3),
        ("requires_grad=True",),
        "tensor([[0., 1., 2.],\n        [3., 4., 5.]], requires_grad=True)",
    ),
    (np.arange(1001, dtype=np.float32), (), "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.])"),
    (
        np.arange(2000, dtype=np.float32),
        ("grad_fn=<MulBackward0>",),
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
        "        1.9990e+03], grad_fn=<MulBackward0>)",
    ),
    (
        np.exp(f32([1, 2, 3])),
        ("grad_fn=<ExpBackward0>",),
        "tensor([ 2.7183,  7.3891, 20.0855], grad_fn=<ExpBackward0>)",
    ),
    (f32([1, 4, 9]), ("grad_fn=<SquareBackward>",), "tensor([1., 4., 9.], grad_fn=<SquareBackward>)"),
    (np.ones(2, np.float32), (), "tensor([1., 1.])"),
]


@pytest.mark.parametrize(("array", "tail", "want"), GOLDEN, ids=[g[2].split("\n")[0][:50] for g in GOLDEN])
def test_golden_reprs(array: np.ndarray, tail: tuple[str, ...], want: str) -> None:
    assert format_tensor(array, tail=tail) == want


def test_golden_parameter_repr() -> None:
    got = "Parameter containing:\n" + format_tensor(np.ones(2, np.float32), tail=("requires_grad=True",))
    assert got == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"


def test_golden_with_printoptions(restore_printoptions: None) -> None:
    set_printoptions(precision=2)
    assert format_tensor(f32([1.12345])) == "tensor([1.12])"
    set_printoptions(threshold=5)
    assert format_tensor(np.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    set_printoptions(profile="default")
    assert format_tensor(f32([1.12345])) == "tensor([1.1235])"
    assert format_tensor(np.arange(10)) == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"


def test_dtype_names() -> None:
    for name in ALL_DTYPES:
        assert dtype_name(np.dtype(name)) == f"minigrad.{name}"
    assert dtype_name(np.float32) == "minigrad.float32"
    assert dtype_name(bool) == "minigrad.bool"


@pytest.mark.parametrize("dtype", ["complex64", "uint16", "float128" if hasattr(np, "float128") else "U3"])
def test_unsupported_dtypes_are_rejected(dtype: str) -> None:
    with pytest.raises(TypeError, match="minigrad has no dtype"):
        dtype_name(dtype)
    with pytest.raises(TypeError, match="minigrad has no dtype"):
        format_tensor(np.zeros(2, dtype=dtype))


def test_byte_order_and_python_inputs_do_not_matter() -> None:
    native = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    assert format_tensor(native.astype(">f4")) == format_tensor(native)
    assert format_tensor(np.array([1, -2], dtype=">i8")) == "tensor([ 1, -2])"
    assert dtype_name(">f8") == "minigrad.float64"
    assert format_tensor([1.5, 2.0]) == "tensor([1.5000, 2.0000], dtype=minigrad.float64)"
    assert format_tensor(np.float32(3.0)) == "tensor(3.)"


def test_format_tensor_leaves_printoptions_alone() -> None:
    before = get_printoptions()
    format_tensor(np.arange(5000.0))
    assert get_printoptions() == before
