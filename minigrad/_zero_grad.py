"""PyTorch's "efficient zero" gradient (`_efficientzerotensor`), which sgn's derivative returns: zeros that act
as an absent term. In a plain backward it is an array of zeros of this class, and NumPy's arithmetic on it
follows PyTorch's zero tensor: `a + 0` and `a - 0` are `a` (its -0. stays -0.), `0 - a` is `-a`, `-0` is a real
-0., and `0 * a`, `0 / a` are zero again even where `a` is inf or NaN (so exp's `grad * result` gives 0, not NaN,
when exp(x) is inf). Any other operation sees plain zeros. `.grad` and autograd.grad receive plain zeros."""

from __future__ import annotations

import numpy as np

_PRODUCTS = (np.multiply, np.divide, np.true_divide)


class ZeroGrad(np.ndarray):
    """Zeros that the engine's sums and the formulas' products treat as PyTorch's zero tensor (module doc)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [x.view(np.ndarray) if isinstance(x, ZeroGrad) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, ZeroGrad) else o for o in kwargs["out"])
        if method != "__call__" or "out" in kwargs or len(inputs) > 2 or kwargs.get("where") is not None:
            return getattr(ufunc, method)(*plain, **kwargs)
        zero = [isinstance(x, ZeroGrad) for x in inputs]
        shape = np.broadcast_shapes(*(np.shape(x) for x in inputs))
        dtype = kwargs.get("dtype") or np.result_type(*plain)
        if ufunc is np.negative:
            return np.negative(plain[0])  # a real -0.
        if ufunc not in _PRODUCTS + (np.add, np.subtract):
            return ufunc(*plain, **kwargs)
        if all(zero) or (ufunc in _PRODUCTS and zero[0]) or (ufunc is np.multiply and zero[1]):
            return zeros(shape, dtype)  # 0 * a, a * 0, 0 / a; 0 + 0
        if ufunc is np.add or (ufunc is np.subtract and zero[1]):  # a + 0, 0 + a, a - 0: the other term itself, copied
            other = plain[1] if zero[0] else plain[0]
            return np.array(np.broadcast_to(other, shape), dtype=dtype)
        if zero[0]:  # 0 - a
            return np.negative(np.broadcast_to(plain[1], shape), dtype=dtype)
        return ufunc(*plain, **kwargs)  # a / 0


def zeros(shape: tuple, dtype) -> ZeroGrad:
    """An efficient zero gradient of this shape and dtype."""
    return np.zeros(shape, dtype).view(ZeroGrad)


def plain(g):
    """A gradient as `.grad` and autograd.grad hand it out: an efficient zero becomes plain zeros."""
    return g.view(np.ndarray) if isinstance(g, ZeroGrad) else g
