"""Tensor reprs that match PyTorch 2.13 character for character.

minigrad's users compare what they see with PyTorch tutorials, so ``repr(tensor)`` must print
exactly what ``torch/_tensor_str.py`` prints (with ``minigrad.`` instead of ``torch.``).  This
module re-implements that algorithm over NumPy arrays:

* one ``_Formatter`` per tensor decides, from the values that will actually be shown, whether
  floats print as integers (``1.``), in fixed point (``1.5000``) or in scientific notation
  (``1.0000e-05``), and how wide every column is;
* ``_body`` lays the values out as nested brackets, summarising big tensors with ``...`` and
  wrapping long rows at ``linewidth`` columns;
* ``format_tensor`` adds the trailing ``size=``/``dtype=`` items plus the caller's ``tail``
  (``requires_grad=True``, ``grad_fn=<...>``), moving an item to its own line when it would
  overflow the line.  Items are measured as PyTorch spells them (``torch.float16``), so the
  breaks fall exactly where PyTorch's do although ``minigrad.`` is 3 characters longer.

Float values are formatted as Python floats (float64), because PyTorch formats the result of
``tensor.tolist()`` / ``tensor.item()``: a float32 ``0.1`` is ``0.10000000149...`` and rounds
like that double, never like NumPy's shortest float32 repr.  The module imports only NumPy and
the standard library, so it can be tested on its own.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["dtype_name", "format_tensor", "get_printoptions", "set_printoptions"]


@dataclasses.dataclass
class _PrintOptions:
    """Global print options; the defaults are PyTorch's ``profile="default"``."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTIONS = _PrintOptions()

# The presets of ``torch.set_printoptions(profile=...)``; they leave ``sci_mode`` alone.
_PROFILES: dict[str, dict[str, float]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}

_DTYPE_NAMES: dict[np.dtype, str] = {
    np.dtype(name): f"minigrad.{name}"
    for name in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
}

# Dtypes PyTorch never names in a non-empty tensor's repr (besides the default float dtype).
_ALWAYS_IMPLICIT = (np.dtype("int64"), np.dtype("bool"))


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the global print options, exactly like ``torch.set_printoptions``.

    ``profile`` ("default", "short" or "full"; other names are ignored) is applied first, then
    every other argument that is not None.  As in PyTorch, ``sci_mode`` is always assigned: omitting
    it resets it to None (automatic choice), so ``set_printoptions(precision=2)`` after
    ``set_printoptions(sci_mode=True)`` turns scientific notation back to automatic.
    """
    if profile is not None and profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(_OPTIONS, name, value)
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            setattr(_OPTIONS, name, value)
    _OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current print options as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(_OPTIONS)


def dtype_name(np_dtype: Any) -> str:
    """Return how a dtype appears in reprs: ``np.float32`` -> ``'minigrad.float32'``."""
    dtype = np.dtype(np_dtype).newbyteorder("=")  # a big-endian float32 is still float32
    try:
        return _DTYPE_NAMES[dtype]
    except KeyError:
        supported = ", ".join(name.removeprefix("minigrad.") for name in _DTYPE_NAMES.values())
        raise TypeError(f"minigrad has no dtype {dtype} (supported: {supported})") from None


def format_tensor(
    data: np.ndarray,
    *,
    default_float: np.dtype = np.dtype("float32"),
    tail: Sequence[str] = (),
    prefix: str = "tensor",
) -> str:
    """Return PyTorch 2.13's repr of a tensor holding ``data``.

    For example ``'tensor([1., 2.], dtype=minigrad.float64, requires_grad=True)'``.  ``tail`` holds
    already formatted trailing items (``'requires_grad=True'``, ``'grad_fn=<MulBackward0>'``); they
    come after the items added here: ``size=(0, 3)`` for empty tensors that are not 1-D (and for
    every non-empty tensor when ``edgeitems`` is 0) and ``dtype=...`` when the dtype is not implied.  A
    non-empty tensor hides its dtype when it is ``default_float``, int64 or bool; an empty one
    hides it only when it is ``default_float``, since no value shows what it is.  Continuation
    lines are indented by ``len(prefix + "(")``.
    """
    array = np.asarray(data)
    dtype_label = dtype_name(array.dtype)  # rejects unsupported dtypes early
    array = array.astype(array.dtype.newbyteorder("="), copy=False)  # compare dtypes by kind and size
    default_float = np.dtype(default_float)
    opts = dataclasses.replace(_OPTIONS)  # one consistent snapshot for the whole repr
    opening = prefix + "("
    indent = len(opening)

    items: list[str] = []
    if array.size == 0:
        if array.ndim != 1:
            items.append(f"size={tuple(array.shape)}")
        if array.dtype != default_float:
            items.append(f"dtype={dtype_label}")
        body = "[]"
    else:
        if not opts.edgeitems:
            items.append(f"size={tuple(array.shape)}")
        if array.dtype not in (default_float, *_ALWAYS_IMPLICIT):
            items.append(f"dtype={dtype_label}")
        summarize = array.size > opts.threshold
        shown = _summarized_values(array, opts.edgeitems) if summarize else array
        formatter = _Formatter(shown, opts)
        body = _body(array, indent, summarize, formatter, opts)
    items.extend(tail)
    return _append_items(opening + body, items, indent, opts.linewidth)


class _Formatter:
    """Formats the scalars of one tensor so that they line up in columns.

    Like PyTorch, the mode and the column width come only from the nonzero finite values that
    are shown (the edges of a summarised tensor): zeros, nan and inf never widen a column and
    are simply right-aligned (or overflow) in it.
    """

    def __init__(self, values: np.ndarray, opts: _PrintOptions) -> None:
        self.floating = values.dtype.kind == "f"
        self.precision = opts.precision
        self.int_mode = True  # every float is integral: print "2." rather than "2.0000"
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)

        if not self.floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        as_double = flat.astype(np.float64)  # exact for float16/32, as PyTorch's .double()
        shown = as_double[np.isfinite(as_double) & (as_double != 0)]
        if shown.size == 0:
            return  # only zeros/nan/inf: integer mode, width 1, never scientific
        magnitudes = np.abs(shown)
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        if opts.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = bool(opts.sci_mode)

        for value in shown.tolist():
            if self.sci_mode:
                width = len(f"{value:.{self.precision}e}")
            elif self.int_mode:
                width = len(f"{value:.0f}") + 1  # room for the trailing "."
            else:
                width = len(f"{value:.{self.precision}f}")
            self.max_width = max(self.max_width, width)

    def width(self) -> int:
        return self.max_width

    def __call__(self, value: float | int | bool) -> str:
        """Format one Python scalar (from ``.tolist()``/``.item()``), padded to the column width."""
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{self.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."  # marks a float tensor; "nan"/"inf" need no marker
        else:
            text = f"{value:.{self.precision}f}"
        return text.rjust(self.max_width)


def _summarized_values(array: np.ndarray, edgeitems: int) -> np.ndarray:
    """Return (flattened) the values a summarised tensor shows, mirroring PyTorch.

    Quirk kept on purpose: for a 1-D tensor with ``edgeitems == 0`` PyTorch takes
    ``t[:0]`` and ``t[-0:]`` (the whole tensor), so every value still shapes the format.
    """
    if array.ndim == 0:
        return array.reshape(-1)
    if array.ndim == 1:
        if array.shape[0] > 2 * edgeitems:
            return np.concatenate((array[:edgeitems], array[-edgeitems:]))
        return array
    if not edgeitems:
        return array.reshape(-1)[:0]
    rows = _kept_indices(array.shape[0], edgeitems, summarize=True)
    return np.concatenate([_summarized_values(array[i], edgeitems).reshape(-1) for i in rows])


def _kept_indices(length: int, edgeitems: int, *, summarize: bool) -> list[int]:
    """Indices of the sub-tensors printed along one dimension (all of them unless summarising)."""
    if summarize and length > 2 * edgeitems:
        return [*range(edgeitems), *range(length - edgeitems, length)]
    return list(range(length))


def _body(array: np.ndarray, indent: int, summarize: bool, formatter: _Formatter, opts: _PrintOptions) -> str:
    """Lay out the values in nested brackets; ``indent`` is the column of the opening bracket."""
    if array.ndim == 0:
        return formatter(array.item())
    if array.ndim == 1:
        return _vector(array, indent, summarize, formatter, opts)

    rows = _kept_indices(array.shape[0], opts.edgeitems, summarize=summarize)
    parts = [_body(array[i], indent + 1, summarize, formatter, opts) for i in rows]
    if len(rows) < array.shape[0]:
        parts.insert(opts.edgeitems, "...")  # between the first and the last edgeitems rows
    # Sub-tensors of an n-D tensor are separated by n - 2 blank lines.
    separator = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def _vector(
    array: np.ndarray, indent: int, summarize: bool, formatter: _Formatter, opts: _PrintOptions
) -> str:
    """Format a 1-D tensor, wrapping so that lines stay within ``linewidth``."""
    element_length = formatter.width() + 2  # the value plus ", "
    per_line = max(1, math.floor((opts.linewidth - indent) / element_length))
    edges = opts.edgeitems

    if summarize and not edges:
        cells = ["..."]
    elif summarize and array.shape[0] > 2 * edges:
        cells = [
            *(formatter(v) for v in array[:edges].tolist()),
            " ...",
            *(formatter(v) for v in array[-edges:].tolist()),
        ]
    else:
        cells = [formatter(v) for v in array.tolist()]

    lines = [", ".join(cells[i : i + per_line]) for i in range(0, len(cells), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _append_items(text: str, items: Sequence[str], indent: int, linewidth: int) -> str:
    """Append ``, item`` for each item and the closing parenthesis, as PyTorch does.

    An item goes to a new line (indented to the contents) when it would pass ``linewidth``.  The
    line-length bookkeeping copies PyTorch's, including its asymmetry: the first estimate is the
    last line's length plus 2, after a wrap it is exact.  Items are measured as PyTorch spells
    them (``torch.float16`` is 3 characters shorter than ``minigrad.float16``) so that the line
    breaks fall where PyTorch puts them, even if a line then ends up to 3 columns longer.
    """
    pieces = [text]
    line_length = len(text) - text.rfind("\n") + 1
    for item in items:
        item_length = len(item.replace("minigrad.", "torch."))
        if line_length + item_length + 2 > linewidth:
            pieces.append(",\n" + " " * indent + item)
            line_length = indent + item_length
        else:
            pieces.append(", " + item)
            line_length += item_length + 2
    pieces.append(")")
    return "".join(pieces)
