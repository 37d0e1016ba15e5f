"""Edge-hitting shapes, dtypes and values for a program's inputs.

Shapes include 0-d, size-1 and empty dimensions; values include ties, zeros, -0.0, negatives, +-inf,
NaN and large magnitudes. Each draw also says which of these it hit (coverage tags).
"""

from __future__ import annotations

import math
import random

import numpy as np

SHAPES = [(), (1,), (3,), (2, 3), (1, 3), (3, 1), (1, 1), (2, 1, 3), (2, 3, 2), (0,), (0, 3), (2, 0), (4,), (3, 3)]
SHAPE_WEIGHTS = [10, 6, 12, 12, 5, 5, 3, 4, 3, 3, 2, 2, 4, 4]

DTYPES = ["float64", "float32", "int64", "bool", "int32", "uint8"]
DTYPE_WEIGHTS = [50, 30, 10, 5, 3, 2]

SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e30, -1e30, 1.0, -1.0, 0.5]
LARGE = 1e20


def shape_tags(shape: tuple[int, ...]) -> list[str]:
    tags = []
    if shape == ():
        tags.append("shape:0-d")
    if 1 in shape:
        tags.append("shape:size-1")
    if 0 in shape:
        tags.append("shape:empty")
    return tags


def value_tags(a: np.ndarray) -> list[str]:
    tags = []
    if a.size == 0:
        return tags
    flat = a.reshape(-1)
    if a.dtype.kind == "f":
        fin = flat[np.isfinite(flat)].astype(np.float64)
        if np.any(np.isnan(flat)):
            tags.append("value:nan")
        if np.any(flat == np.inf):
            tags.append("value:inf")
        if np.any(flat == -np.inf):
            tags.append("value:-inf")
        if np.any((flat == 0) & np.signbit(flat)):
            tags.append("value:-0.0")
        if np.any(np.abs(fin) >= LARGE):
            tags.append("value:large")
    if np.any(flat == 0):
        tags.append("value:zero")
    if a.dtype.kind in "fi" and np.any(flat < 0):
        tags.append("value:negative")
    if flat.size > 1 and len(np.unique(flat[~np.isnan(flat)] if a.dtype.kind == "f" else flat)) < flat.size:
        tags.append("value:tie")
    return tags


def draw_shape(rng: random.Random) -> tuple[int, ...]:
    return rng.choices(SHAPES, SHAPE_WEIGHTS)[0]


def draw_dtype(rng: random.Random) -> str:
    return rng.choices(DTYPES, DTYPE_WEIGHTS)[0]


def draw_array(rng: random.Random, shape: tuple[int, ...], dtype: str, style: str | None = None) -> np.ndarray:
    """Values for an input of this shape and dtype; ``style`` picks plain, ties, special or positive values."""
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        return np.array([rng.random() < 0.5 for _ in range(n)], dtype=bool).reshape(shape)
    if dtype in ("int64", "int32", "int16"):
        return np.array([rng.randint(-3, 3) for _ in range(n)], dtype=dtype).reshape(shape)
    if dtype == "uint8":
        return np.array([rng.choice([0, 1, 2, 5, 255]) for _ in range(n)], dtype=dtype).reshape(shape)
    style = style or rng.choices(["plain", "ties", "special", "positive"], [45, 15, 30, 10])[0]
    if style == "plain":
        vals = [round(rng.uniform(-3, 3), 2) for _ in range(n)]
    elif style == "ties":
        pool = [round(rng.uniform(-2, 2), 1) for _ in range(2)]
        vals = [rng.choice(pool) for _ in range(n)]
    elif style == "positive":
        vals = [round(rng.uniform(0.1, 3), 2) for _ in range(n)]
    else:
        vals = [rng.choice(SPECIAL) if rng.random() < 0.5 else round(rng.uniform(-3, 3), 2) for _ in range(n)]
    with np.errstate(over="ignore"):  # float16 holds no 1e30: inf, as torch.tensor(1e30, dtype=float16) gives
        return np.array(vals, dtype=dtype).reshape(shape)


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy/PyTorch broadcasting of shapes, or None when they do not broadcast."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        sizes = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcastable_to(shape: tuple[int, ...], rng: random.Random) -> tuple[int, ...]:
    """A shape that broadcasts with ``shape`` without growing it (same, trailing part, some dims set to 1)."""
    r = rng.random()
    if r < 0.4 or not shape:
        return shape if rng.random() < 0.9 else ()
    if r < 0.6:
        k = rng.randint(0, len(shape))
        return shape[k:]
    return tuple(1 if rng.random() < 0.5 else n for n in shape)


def broadcast_partner(shape: tuple[int, ...], rng: random.Random) -> tuple[int, ...]:
    """A shape that broadcasts with ``shape``, sometimes growing the result (size-1 dims, extra leading dims)."""
    r = rng.random()
    if r < 0.6:
        return broadcastable_to(shape, rng)
    if r < 0.8:
        return (2, *shape)
    grown = tuple(rng.choice([2, 3]) if n == 1 else n for n in shape)
    return grown if grown != shape else (1, *shape)
