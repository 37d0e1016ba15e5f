"""PyTorch's CPU row moments (`RowwiseMoments`, aten/src/ATen/native/cpu/moments_utils.h) in NumPy, bit for bit.

layer_norm's mean and variance are not a sum divided by n: each row is read as vectors of 32 bytes (8 float32 or
4 float64 lanes, the AVX2 kernel), the vectors in chunks of 16; within a chunk each lane runs Welford's update
(`m1 += δ/k`, `m2 += δ·(x - m1)`), the chunks' moments are merged pairwise as a binary counter (a cascade sum),
the elements left over (fewer than one vector) run scalar Welford, and at last the lanes are merged into that
scalar. The compiled kernel fuses some multiply-adds into one FMA (one rounding; measured against torch 2.13):
fused ones go through `_linspace.fma`. The order decides the last bits, and so the signs of zeros downstream;
a row like [1e-300, 1e300] (float64) gets a nan variance (δ² overflows, times an empty lane's weight 0).
"""

from __future__ import annotations

import numpy as np

from ._linspace import fma as _exact_fma

_CHUNK = 16


def _fma(a, b, c, dtype: np.dtype) -> np.ndarray:
    """a·b + c rounded once to dtype where everything is finite; the plain expression (its inf and nan) elsewhere.
    float32: in double, where the product is exact and the sum's second rounding is off only at an exact tie
    between two float32s (about 2^-29 of sums; the exact method costs three times the step)."""
    if dtype == np.float32:
        return (a.astype(np.float64) * b + c).astype(np.float32)
    a, b, c = np.broadcast_arrays(np.asarray(a, dtype), np.asarray(b, dtype), np.asarray(c, dtype))
    plain = a * b + c
    fused = _exact_fma(a.astype(np.float64), b.astype(np.float64), c.astype(np.float64), dtype)
    return np.where(np.isfinite(plain) & np.isfinite(fused), fused, plain).astype(dtype, copy=False)


def _merge_vec(acc: list, part: tuple, dtype: np.dtype) -> None:
    """AddMomentsVec: fold (count, m1, m2) `part` into `acc` in place (its m2 term compiled as one FMA)."""
    n = acc[0] + part[0]
    c = dtype.type(0) if n == 0 else dtype.type(part[0]) / dtype.type(n)
    delta = part[1] - acc[1]
    m1 = acc[1] + c * delta
    acc[2] = _fma(delta, delta * (c * dtype.type(acc[0])), acc[2] + part[2], dtype)
    acc[0], acc[1] = n, m1


def _chunks(v: np.ndarray, dtype: np.dtype) -> tuple:
    """Welford over each chunk of 16 vectors, every chunk at once: (counts, m1, m2), m1 and m2 (M, chunks, lanes)."""
    rows, n, lanes = v.shape
    m = -(-n // _CHUNK)
    padded = np.zeros((rows, m * _CHUNK, lanes), dtype)
    padded[:, :n] = v
    padded = padded.reshape(rows, m, _CHUNK, lanes)
    counts = np.minimum(_CHUNK, n - _CHUNK * np.arange(m))
    m1 = np.zeros((rows, m, lanes), dtype)
    m2 = np.zeros((rows, m, lanes), dtype)
    for j in range(min(n, _CHUNK)):
        x = padded[:, :, j]
        delta = x - m1
        new1 = _fma(delta, dtype.type(1) / dtype.type(j + 1), m1, dtype)
        new2 = _fma(delta, x - new1, m2, dtype)
        if j < counts[-1]:  # every chunk still reading
            m1, m2 = new1, new2
        else:  # the last, shorter chunk keeps its moments
            live = (j < counts)[None, :, None]
            m1, m2 = np.where(live, new1, m1), np.where(live, new2, m2)
    return counts, m1, m2


def _cascade(v: np.ndarray, dtype: np.dtype) -> tuple:
    """The chunks merged as PyTorch's stack of partial moments (a binary counter): (count, m1, m2) per lane."""
    counts, m1, m2 = _chunks(v, dtype)
    m = len(counts)
    depth = int(m - 1).bit_length() if m > 1 else 0
    zero = np.zeros(m1[:, 0].shape, dtype)
    stack = [[0, zero, zero] for _ in range(max(depth, 1))]
    for i in range(m):
        _merge_vec(stack[0], (int(counts[i]), m1[:, i], m2[:, i]), dtype)
        mask, j = i + 1, 1
        while j < depth and mask & 1 == 0:
            _merge_vec(stack[j], tuple(stack[j - 1]), dtype)
            stack[j - 1] = [0, zero, zero]
            mask, j = mask >> 1, j + 1
    for j in range(1, depth):
        _merge_vec(stack[0], tuple(stack[j]), dtype)
    return stack[0]


def row_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, biased variance) of each row of a 2-D float32 or float64 array, as PyTorch's CPU kernel rounds them."""
    dtype = x.dtype
    rows, size = x.shape
    lanes = 32 // dtype.itemsize
    n = size // lanes
    with np.errstate(all="ignore"):
        if n:
            vm1, vm2 = _cascade(x[:, :n * lanes].reshape(rows, n, lanes), dtype)[1:]
        else:
            vm1 = vm2 = np.zeros((rows, lanes), dtype)
        count, m1, m2 = 0, np.zeros(rows, dtype), np.zeros(rows, dtype)
        for i in range(n * lanes, size):  # the tail: scalar Welford (not fused)
            delta = x[:, i] - m1
            count += 1
            m1 = m1 + delta / dtype.type(count)
            m2 = m2 + delta * (x[:, i] - m1)
        for lane in range(lanes):  # AddMoments of each lane (n elements) into the scalar ones
            total = count + n
            c = dtype.type(0) if total == 0 else dtype.type(n) / dtype.type(total)
            delta = vm1[:, lane] - m1
            m1 = _fma(np.asarray(c, dtype), delta, m1, dtype)
            m2 = m2 + _fma(delta * delta * c, np.asarray(count, dtype), vm2[:, lane], dtype)
            count = total
        return m1, m2 / dtype.type(size)
