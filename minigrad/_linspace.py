"""PyTorch's CPU linspace kernel in NumPy, bit for bit (linspace and histogram's bin edges).

The kernel fills the first half as `start + step * i` and the second half as `end - step * (steps - 1 - i)`, in the
dtype itself (in double for integer dtypes), and its compiled form fuses each multiply-add into one FMA
instruction: one rounding, not two. NumPy has no FMA, so the fused values are computed exactly here (error-free
products and sums, rounded once by the round-to-odd method of Boldo and Melquiond).
"""

from __future__ import annotations

import numpy as np

_SPLIT = 2.0 ** 27 + 1  # Veltkamp's constant: splits a double into two halves of 26 bits


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s + err == a + b exactly, s the rounded sum (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _halves(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """hi + lo == a exactly with 26-bit halves (scaled by frexp first, so no huge value overflows)."""
    m, e = np.frexp(a)
    t = _SPLIT * m
    hi = t - (t - m)
    return np.ldexp(hi, e), np.ldexp(m - hi, e)


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p + err == a * b exactly, p the rounded product (Dekker)."""
    p = a * b
    ah, al = _halves(a)
    bh, bl = _halves(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """s + err (s its rounding to nearest) rounded to odd: of the two doubles around an inexact sum, the one whose
    last bit is 1, which keeps the information a second rounding to fewer bits needs."""
    even = (s.view(np.int64) & 1) == 0
    toward = np.nextafter(s, np.where(err > 0, np.inf, -np.inf))
    return np.where((err != 0) & even, toward, s)


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """a * b + c rounded once to `dtype` (float64 or float32 operands given as float64 arrays), where finite."""
    with np.errstate(all="ignore"):
        p, e = _two_prod(a, b)
        hi, lo = _two_sum(c, p)
        if dtype == np.float64:
            return hi + _odd(*_two_sum(lo, e))
        return _odd(hi, lo).astype(dtype)  # a float32 product is exact in double: one sum rounded to odd


def check_fits(dtype: np.dtype, v: float) -> None:
    """c10's overflow check when start or end (a double) becomes the dtype (so -1 does not go into uint8)."""
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    if v > float(info.max) or v < float(info.min) or (dtype.kind != "f" and v != v):  # (nan: no integer)
        name = {"float16": "c10::Half", "float32": "float", "float64": "double", "int32": "int"}.get(
            dtype.name, dtype.name + "_t")
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def kernel(start: float, end: float, steps: int, dtype: np.dtype) -> np.ndarray:
    """linspace(start, end, steps) as PyTorch's CPU kernel computes it in `dtype` (steps >= 2)."""
    for v in (start, end):
        if dtype.kind != "f" or np.isfinite(v):  # (a float dtype takes inf and nan)
            check_fits(dtype, v)
    i = np.arange(steps, dtype=np.int64)
    half = i < steps // 2
    k = np.where(half, i, steps - 1 - i)  # how many steps from start, or back from end
    if dtype.kind == "f" and dtype.itemsize == 2:  # half precision: every operation rounds to float16 (no FMA)
        s, t = dtype.type(start), dtype.type(end)
        with np.errstate(all="ignore"):
            step = (t - s) / dtype.type(steps - 1)
            kk = k.astype(dtype)
            return np.where(half, s + step * kk, t - step * kk).astype(dtype)
    work = dtype if dtype.kind == "f" else np.dtype(np.float64)  # integers: a double step, a truncated result
    s, t = (work.type(np.trunc(v)) if dtype.kind != "f" else work.type(v) for v in (start, end))
    kk = k.astype(work)
    with np.errstate(all="ignore"):  # (where the result is inf or nan: the plain formula's, a nan's sign as PyTorch's)
        step = (t - s) / work.type(steps - 1)
        plain = np.where(half, s + step * kk, t - step * kk)
    signed = np.where(half, float(step), -float(step))
    res = fma(signed, kk.astype(np.float64), np.where(half, float(s), float(t)), work)
    res = np.where(np.isfinite(res), res, plain)
    if dtype.kind == "f":
        return res
    with np.errstate(all="ignore"):
        return res.astype(dtype)
