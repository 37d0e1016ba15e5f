"""Duck-typed reading of autograd nodes and tensors.

viz never imports torch or minigrad: everything here goes through public attributes
(``name()``, ``next_functions``, ``variable``, ``_saved_*``, ``metadata``) and minigrad's
introspection names (``input_metadata``, ``output_tensor``, ``hooks``, ``prehooks``), each
read with a default so that a graph lacking one is drawn without it. A few private PyTorch
attributes fill gaps PyTorch leaves (``_input_metadata`` for edge shapes, ``_backward_hooks``
for tensor hooks); they are optional too.
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
from typing import Any

_SIGNED_WRAP = 2**64
_INTERNAL_SAVED = re.compile(r"_sym_(sizes|strides|numel|storage_offset)$")
_SAVED_PREFIX = "_saved_"
# Names minigrad or PyTorch keep on a node that are plumbing, not attributes of the op.
_NODE_PLUMBING = frozenset(
    {
        "next_functions", "metadata", "input_metadata", "output_tensor", "hooks", "prehooks",
        "variable", "saved_tensors", "saved_variables", "needs_input_grad", "to_save",
        "non_differentiable", "dirty_tensors", "materialize_grads", "requires_grad", "rule_text", "input_names",
    }
)
_NAME_PREFIX = re.compile(r"^.*::")


def signed(value: Any) -> Any:
    """PyTorch returns -1 dims as huge unsigned ints (2**64 - 1): give them back their sign."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value >= 2**63:
        return value - _SIGNED_WRAP
    if isinstance(value, (tuple, list)):
        return type(value)(signed(v) for v in value)
    return value


def is_node(obj: Any) -> bool:
    return obj is not None and hasattr(obj, "next_functions")


def is_tensor(obj: Any) -> bool:
    return obj is not None and hasattr(obj, "shape") and hasattr(obj, "dtype") and not is_node(obj)


def node_name(fn: Any) -> str:
    try:
        name = fn.name()
    except Exception:
        name = type(fn).__name__
    return str(name)


def next_functions(fn: Any) -> tuple:
    try:
        return tuple(getattr(fn, "next_functions", ()) or ())
    except Exception:
        return ()


def leaf_of(fn: Any) -> Any:
    """The leaf tensor an AccumulateGrad node feeds, or None for every other node."""
    try:
        var = getattr(fn, "variable", None)
    except Exception:
        return None
    return var if is_tensor(var) else None


def metadata(fn: Any) -> dict:
    try:
        meta = getattr(fn, "metadata", None)
    except Exception:
        return {}
    return meta if isinstance(meta, dict) else {}


def module_scope(fn: Any) -> str | None:
    scope = metadata(fn).get("module")
    return str(scope) if scope not in (None, "") else None


def shape_of(tensor: Any) -> tuple[int, ...] | None:
    try:
        return tuple(signed(int(d)) for d in tensor.shape)
    except Exception:
        return None


def dtype_name(dtype: Any) -> str | None:
    if dtype is None:
        return None
    text = str(dtype)
    return text.rsplit(".", 1)[-1]


def input_slots(fn: Any) -> list[tuple[tuple[int, ...] | None, str | None]] | None:
    """Shape and dtype of the gradient each input slot of ``fn`` receives, if known.

    minigrad: ``input_metadata`` = ((shape, dtype_str), ...). PyTorch 2.13: private
    ``_input_metadata``, whose items have ``.shape`` (a list) and ``.dtype``.
    """
    meta = _try_attr(fn, "input_metadata")
    if meta is not None:
        try:
            return [(tuple(signed(int(d)) for d in shp), dtype_name(dt)) for shp, dt in meta]
        except Exception:
            pass
    meta = _try_attr(fn, "_input_metadata")
    if meta is not None:
        try:
            return [(tuple(signed(int(d)) for d in m.shape), dtype_name(getattr(m, "dtype", None)))
                    for m in meta]
        except Exception:
            pass
    return None


def output_tensor(fn: Any, slot: int = 0) -> Any:
    """The tensor ``fn`` produced (minigrad's ``output_tensor``), or None when unknown or freed."""
    out = _try_attr(fn, "output_tensor")
    if callable(out) and not is_tensor(out):
        try:
            out = out()  # a weak reference
        except Exception:
            out = None
    if isinstance(out, (tuple, list)):
        out = out[slot] if 0 <= slot < len(out) else None
    return out if is_tensor(out) else None


def node_hooks(fn: Any) -> tuple[int, int]:
    """(hooks, prehooks) registered on a node; PyTorch does not expose them, so (0, 0) there."""
    return _count(_try_attr(fn, "hooks")), _count(_try_attr(fn, "prehooks"))


def tensor_hooks(tensor: Any) -> int:
    hooks = _try_attr(tensor, "hooks")
    if hooks is None:
        hooks = _try_attr(tensor, "_backward_hooks")  # PyTorch keeps them here
    return _count(hooks)


def post_accumulate_hooks(tensor: Any) -> int:
    """minigrad's `post_accumulate_hooks`, else PyTorch's private `_post_accumulate_grad_hooks`."""
    hooks = _try_attr(tensor, "post_accumulate_hooks")
    if hooks is None:
        hooks = _try_attr(tensor, "_post_accumulate_grad_hooks")
    return _count(hooks)


def forward_ad_of(tensor: Any) -> Any:
    """``<library>.autograd.forward_ad`` of the library ``tensor`` comes from (minigrad's or PyTorch's), or None."""
    root = type(tensor).__module__.split(".", 1)[0]
    if root not in ("minigrad", "torch"):
        return None
    try:
        return importlib.import_module(f"{root}.autograd.forward_ad")
    except Exception:
        return None


def tangent_of(tensor: Any) -> Any:
    """``forward_ad.unpack_dual(tensor).tangent`` (public in both libraries): the tangent a dual tensor carries at
    the active dual level, else None."""
    if not is_tensor(tensor):
        return None
    fw = forward_ad_of(tensor)
    if fw is None:
        return None
    try:
        return fw.unpack_dual(tensor).tangent
    except Exception:
        return None


def retains_grad(tensor: Any) -> bool:
    return bool(_try_attr(tensor, "retains_grad")) and not bool(_try_attr(tensor, "is_leaf"))


def grad_of(tensor: Any) -> Any:
    """``.grad`` where it can exist (leaves, retained non-leaves), without PyTorch's warning."""
    if not (_try_attr(tensor, "is_leaf") or _try_attr(tensor, "retains_grad")):
        return None
    grad = _try_attr(tensor, "grad")
    return grad if is_tensor(grad) else None


def saved_values(fn: Any) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(saved tensors, other attributes) of a node, each as (name, value) in name order.

    Reads ``_saved_*`` attributes; ``_raw_saved_*`` and PyTorch's internal ``*_sym_*`` sizes
    are skipped. A value that was freed by backward comes back as the ``FREED`` marker, one that an
    in-place op changed after it was saved (reading it raises autograd's version error) as ``STALE``.
    A custom Function's ``saved_tensors`` and the plain attributes its ctx holds are added.
    """
    tensors: list[tuple[str, Any]] = []
    attrs: list[tuple[str, Any]] = []
    try:
        names = sorted(dir(fn))
    except Exception:
        names = []
    saved_names = [n for n in names if n.startswith(_SAVED_PREFIX) and not _INTERNAL_SAVED.search(n)]
    for attr in saved_names:
        short = attr[len(_SAVED_PREFIX):]
        try:
            value = getattr(fn, attr)
        except Exception as err:
            tensors.append((short, STALE if "inplace operation" in str(err) else FREED))
            continue
        if is_tensor(value) or (isinstance(value, (tuple, list)) and value and all(map(is_tensor, value))):
            tensors.append((short, value))
        else:
            attrs.append((short, signed(value)))
    if not saved_names and "saved_tensors" in names:
        try:
            saved = tuple(fn.saved_tensors)
        except Exception:
            tensors.append(("saved_tensors", FREED))
        else:
            tensors.extend((f"saved_tensors[{i}]", t) for i, t in enumerate(saved))
        attrs.extend(_ctx_attrs(fn))
    return tensors, attrs


def saved_label(name: str) -> str:
    """How a saved value is named in words: "saved self" for a node's ``_saved_self``; a custom
    Function's ``saved_tensors[0]`` says it already (not "saved saved_tensors[0]")."""
    return name if name.startswith("saved") else f"saved {name}"


def saved_phrase(names: list[str]) -> str:
    """Several saved values in words: "saved self, other", "saved_tensors[0], saved_tensors[1]"."""
    return saved_label(", ".join(names))


def _ctx_attrs(fn: Any) -> list[tuple[str, Any]]:
    """Plain values a custom Function stored on ctx (``ctx.k = 5``)."""
    try:
        items = sorted(vars(fn).items())
    except Exception:
        return []
    out = []
    for key, value in items:
        if key.startswith("_") or key in _NODE_PLUMBING or callable(value) or is_tensor(value):
            continue
        out.append((key, signed(value)))
    return out


class _Freed:
    def __repr__(self) -> str:
        return "<freed>"


FREED = _Freed()


class _Stale:
    def __repr__(self) -> str:
        return "<changed in place>"


STALE = _Stale()


def same_tensor(a: Any, b: Any) -> bool:
    """Identity, or the same storage seen through an equal shape (PyTorch unpacks saved
    tensors into new Python objects)."""
    if a is b:
        return True
    try:
        return a.data_ptr() == b.data_ptr() and shape_of(a) == shape_of(b) and a.dtype == b.dtype
    except Exception:
        return False


def numel(tensor: Any) -> int:
    shape = shape_of(tensor) or ()
    return math.prod(shape) if shape else 1


def format_number(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        text = f"{value:.4g}"
        return "0" if text == "-0" else text
    return str(value)


def _nested(values: Any) -> str:
    if isinstance(values, (list, tuple)):
        return "[" + ", ".join(_nested(v) for v in values) + "]"
    return format_number(values)


def describe_values(tensor: Any, small: int = 6) -> str | None:
    """Readable text for a tensor's values: all of them when small, else a statistics line."""
    if not is_tensor(tensor):
        return None
    try:
        t = tensor.detach() if hasattr(tensor, "detach") else tensor
        count = numel(t)
        if count == 0:
            return "[]"
        if count <= small:
            return _nested(t.tolist())
        flat = t.double() if hasattr(t, "double") else t
        lo, hi = float(flat.min()), float(flat.max())
        mean = _denoised(float(flat.mean()), max(abs(lo), abs(hi)), t)
        std = float(flat.std()) if count > 1 else 0.0
        return (
            f"mean {format_number(mean)} std {format_number(std)} "
            f"min {format_number(lo)} max {format_number(hi)}"
        )
    except Exception:
        return None


_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23}


def _denoised(mean: float, scale: float, tensor: Any) -> float:
    """0.0 for a mean within rounding noise of zero (a bias gradient's mean is 0 up to the last bits, and
    those bits change with the BLAS build): text that tests and nbval compare must not print noise."""
    eps = _EPS.get(str(getattr(tensor, "dtype", "")).rsplit(".", 1)[-1], 2.0**-52)
    return 0.0 if abs(mean) <= 16 * eps * scale else mean


def format_value(value: Any, limit: int = 60) -> str:
    """Short text for a saved value or attribute (tensors summarised, long text cut)."""
    if value is FREED:
        return "freed (after backward)"
    if value is STALE:
        return "changed in place since saved"
    if value is None:
        return "None"
    if is_tensor(value):
        shape = shape_of(value)
        text = describe_values(value) if numel(value) <= 6 else None
        shp = format_shape(shape) if shape is not None else "?"
        return f"{text} {shp}" if text and shape else (text or shp)
    if isinstance(value, (tuple, list)) and value and all(map(is_tensor, value)):
        return "[" + ", ".join(format_shape(shape_of(v)) for v in value) + "]"
    if isinstance(value, float):
        return format_number(value)
    return truncate(repr(value) if not isinstance(value, str) else value, limit)


def format_shape(shape: tuple[int, ...] | None) -> str:
    if shape is None:
        return "?"
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def truncate(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _try_attr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def _count(hooks: Any) -> int:
    if hooks is None:
        return 0
    try:
        return len(hooks)
    except Exception:
        return 0


# -- what a node computes: minigrad's rule_text / input_names, or minigrad.ops.node_rule for PyTorch ---------------


def short_name(name: str) -> str:
    """'torch::autograd::AccumulateGrad' -> 'AccumulateGrad'; other names are kept."""
    return _NAME_PREFIX.sub("", str(name))


def _node_rule(name: str) -> tuple[tuple[str, ...], str] | None:
    """minigrad's declaration of the node called ``name`` (``minigrad.ops.node_rule``), or None when
    minigrad is not installed or declares no such node. Read at call time: viz imports no autograd
    library at import time, and draws PyTorch graphs without minigrad."""
    try:
        lookup = importlib.import_module("minigrad.ops").node_rule
        found = lookup(name)
    except Exception:
        return None
    if not found:
        return None
    names, text = found
    return tuple(str(n) for n in names), (str(text) if text else "")


def _fit_names(names: tuple[str, ...], count: int) -> tuple[str, ...] | None:
    """Names for ``count`` slots: a list input (``tensors``, declared once) is numbered; names that do
    not fit the node's slots are no names at all (an unusual overload must not be mislabelled)."""
    if len(names) == 1 and count != 1 and names[0] in ("tensors",):
        return tuple(f"{names[0]}[{i}]" for i in range(count))
    return names if len(names) == count else None


def input_names(fn: Any) -> tuple[str, ...] | None:
    """One name per ``next_functions`` slot (``('self', 'other')``), or None when unknown.

    minigrad nodes say it themselves (``node.input_names``); a PyTorch node is looked up by its
    name in minigrad's declarations, and used only when the names fit its slots.
    """
    count = len(next_functions(fn))
    own = _try_attr(fn, "input_names")
    if own is not None and not callable(own):
        try:
            names = tuple(str(n) for n in own)
        except TypeError:
            return None
        return names if len(names) == count else None
    if _has_attr(fn, "rule_text"):  # a minigrad node without names: say nothing
        return None
    custom = _custom_input_names(fn, count)
    if custom is not None:
        return custom
    found = _node_rule(node_name(fn))
    return _fit_names(found[0], count) if found else None


def _custom_input_names(fn: Any, count: int) -> tuple[str, ...] | None:
    """A PyTorch custom Function node's inputs, named as its forward names them, when every argument of
    forward has a slot (one per tensor argument: a non-tensor argument would shift the names)."""
    cls = _try_attr(fn, "_forward_cls")
    forward = getattr(cls, "forward", None) if isinstance(cls, type) else None
    try:
        params = list(inspect.signature(forward).parameters.values()) if forward is not None else None
    except (TypeError, ValueError):
        return None
    if params and params[0].name == "ctx":  # a forward with setup_context takes no ctx
        params = params[1:]
    if not params or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params) or len(params) != count:
        return None
    return tuple(p.name for p in params)


def rule_text(fn: Any) -> str | None:
    """The one-line local derivative rule of a node, or None when there is none to show.

    minigrad nodes carry it (``node.rule_text``, with their arguments' values); for a PyTorch node
    minigrad's declaration of the same name is used when its inputs fit the node's slots, since a
    rule for another overload would be wrong. Read it before backward frees the node's values.
    """
    if _has_attr(fn, "rule_text"):
        text = _try_attr(fn, "rule_text")
        return str(text) if text else None
    found = _node_rule(node_name(fn))
    if not found or not found[1] or _fit_names(found[0], len(next_functions(fn))) is None:
        return None
    return found[1]


def _has_attr(obj: Any, name: str) -> bool:
    try:
        return hasattr(obj, name)
    except Exception:
        return False
