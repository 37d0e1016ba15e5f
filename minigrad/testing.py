"""`minigrad.testing.assert_close`: PyTorch's check that two tensors (or numbers) are close, with its default
tolerances per dtype and its report of the greatest differences."""

from __future__ import annotations

import warnings

import numpy as np

from . import _dtypes
from ._creation import tensor
from ._missing import missing_name
from ._tensor import Tensor, make

# (rtol, atol) by dtype, as torch.testing's defaults
_TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else make(np.asarray(x, np.float32 if isinstance(x, float) else None))


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False, msg=None) -> None:
    """Raise AssertionError unless |actual - expected| <= atol + rtol * |expected| everywhere (same shape and,
    with `check_dtype`, the same dtype); nan counts as equal to nan only with `equal_nan`."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'atol' if atol is None else 'rtol'}.")
    scalars = not isinstance(actual, Tensor) and not isinstance(expected, Tensor)
    a, e = _as_tensor(actual), _as_tensor(expected)
    for attr in ("shape", "dtype") if check_dtype else ("shape",):
        if getattr(a, attr) != getattr(e, attr):
            raise AssertionError(msg or f"The values for attribute '{attr}' do not match: {_name(getattr(a, attr))} "
                                 f"!= {_name(getattr(e, attr))}.")
    ad, ed = a._data, e._data
    if rtol is None:
        rtol, atol = max((_TOLERANCES.get(x.dtype.name, (0.0, 0.0)) for x in (ad, ed)), key=lambda t: t[1])
    common = np.result_type(ad, ed)
    ad, ed = ad.astype(common), ed.astype(common)
    with np.errstate(invalid="ignore", over="ignore"):
        ok = np.abs(ad - ed) <= atol + rtol * np.abs(ed)
        ok |= ad == ed
        if equal_nan:
            ok |= np.isnan(ad) & np.isnan(ed)
    if ok.all():
        return
    raise AssertionError(msg or _report(ad, ed, ok, rtol, atol, scalars or ad.ndim == 0))


def _name(value) -> str:
    return str(value) if isinstance(value, _dtypes.dtype) else f"minigrad.Size({list(value)})"


def _report(ad: np.ndarray, ed: np.ndarray, ok: np.ndarray, rtol: float, atol: float, scalar: bool) -> str:
    exact = rtol == 0 and atol == 0
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.abs(ad - ed)
        rel = diff / np.abs(ed) if diff.dtype.kind == "f" else diff.astype(np.float32) / np.abs(ed).astype(np.float32)
    kind = "equal" if exact and ad.dtype.kind != "f" else "close"
    allowed = (lambda tol: "") if exact and ad.dtype.kind != "f" else (lambda tol: f" (up to {tol} allowed)")
    if scalar:
        return (f"Scalars are not {kind}!\n\nExpected {ed.item()} but got {ad.item()}.\n"
                f"Absolute difference: {diff.item()}{allowed(atol)}\nRelative difference: {rel.item()}{allowed(rtol)}")
    bad = ~ok
    n = int(bad.sum())
    ai = np.unravel_index(np.argmax(np.where(bad, diff, -np.inf)), ad.shape)
    ri = np.unravel_index(np.argmax(np.where(bad, np.nan_to_num(rel, nan=-np.inf), -np.inf)), ad.shape)
    return (f"Tensor-likes are not {kind}!\n\nMismatched elements: {n} / {ad.size} ({100 * n / ad.size:.1f}%)\n"
            f"Greatest absolute difference: {diff[ai].item()} at index {tuple(int(i) for i in ai)}{allowed(atol)}\n"
            f"Greatest relative difference: {rel[ri].item()} at index {tuple(int(i) for i in ri)}{allowed(rtol)}")


__getattr__ = missing_name(__name__, "torch.testing")


_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol: float | None = None, atol: float | None = None, equal_nan: bool = True,
                    msg: str = "") -> None:
    """The deprecated form of `assert_close` that old lectures call: it warns, ignores dtypes, and compares NaNs
    as equal, as PyTorch's does."""
    warnings.warn("`minigrad.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `minigrad.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    actual = actual if isinstance(actual, Tensor) else tensor(actual)
    expected = expected if isinstance(expected, Tensor) else tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(t.dtype.name, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
