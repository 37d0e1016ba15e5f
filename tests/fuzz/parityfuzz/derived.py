"""Draw functions derived from the op registry: every registered op the catalogue has no hand-written draw for.

An op's declaration (``minigrad.ops.registry``) lists how the test sweeps call it (``samples``: tensor
shapes with value domains, then the other arguments). Here each sample becomes a fuzz draw: its tensors
are variables of the program (views, non-leaves, results of earlier ops) or new inputs, its other
arguments are written as literals, in one of the op's forms (``torch.name``, the method,
``torch.nn.functional.name``). Shapes go beyond the sample's: the first tensor may be any variable of the
program (with the others made to broadcast with it), kept when the op accepts it. An op with an in-place
variant (``Tensor.name_``) gets an in-place entry too, drawn on targets of a shape it accepts.

The generator tracks shapes symbolically; for a derived op the result's shape and dtype come from calling
the op on placeholder arrays of the drawn shapes and dtypes (minigrad, cached), so a new op needs no
shape rule here. A call that fails there is drawn rarely (its error is compared like any other).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

import numpy as np

from . import values as V
from .generator import FLOAT, Builder, Call, Out, Var

FLOAT_DOMAINS = {"real", "positive", "unit", "away", "distinct", "probability"}
VALUE_SHAPED = {"nonzero", "argwhere", "unique"}  # results whose length depends on the values
# Transposed convolutions get finite values only: PyTorch computes them as one matrix product over the whole
# column buffer, so an inf weight times a zero input spreads NaN to outputs that weight never reaches (minigrad's
# NaN stays where the math puts it; see the report of issue 28's fuzz run). Drawn with finite values.
# Attention and the padded convolutions likewise: docs/differences.md ("Attention and padded float32 convolutions
# at inf and nan") says PyTorch's flash-attention and oneDNN kernels, not its formulas, decide there. The ops are
# drawn; their inputs are not inf, nan or huge (exclusions.py).
FINITE_ONLY = {"convolution", "nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
               "nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.scaled_dot_product_attention"}
# Found by the fuzzer and not fixed yet (each in the report of issue 28's fuzz run), so kept out of the CI set's
# draws until fixed; remove an entry with its fix. index_fill_ on an expanded view: PyTorch writes through the
# overlapping memory, minigrad raises its overlap error. batch_norm's weight and bias: under create_graph with an
# upstream gradient that does not require grad, PyTorch's gradients of weight and bias require grad (its one
# double-backward node has all of batch_norm's inputs), minigrad's do not.
NOT_ON_VIEWS = {"index_fill"}  # in-place targets are not views
CONSTANT_PARAMETERS = {"nn.functional.batch_norm"}  # the tensors after the first are constants
KEEP_FAILING = 0.0  # share of drawn calls that the placeholder run rejects, kept to compare errors


_DRAWN: dict = {}  # the ops entry_for made draws for, by key (what the placeholder run calls)


def registry():
    from minigrad.ops import REGISTRY

    return REGISTRY


def fuzz_names(registry: dict) -> list[str]:
    """The registry's public ops (keys as the registry spells them) and their in-place variants (``name_``)."""
    names = [key for key, op in registry.items() if op.public]
    names += [f"{key}_" for key, op in registry.items() if op.public and op.inplace is not None]
    return names


def entry_for(name: str, registry: dict):
    """A draw from the op's samples (``None`` when the op has none: it needs a hand-written draw)."""
    from .catalogue import OpEntry

    inplace = name not in registry and name.endswith("_")
    key = name[:-1] if inplace else name
    op = registry[key]
    if not op.samples:
        return None
    _DRAWN[key] = op
    if inplace:
        return OpEntry(name, _inplace_draw(name[:-1], op), inplace=True, fits=_fits(name[:-1], op))
    return OpEntry(name, _draw(name, op))


# -- drawing the arguments -------------------------------------------------------------------------------


def _array(b: Builder, shape: tuple, domain: str, first: tuple, dtype: str, edge: bool = True) -> np.ndarray:
    """Values in the sample's domain, or (one time in five, for plain real tensors) the fuzzer's edge values."""
    rng = b.rng
    n = int(np.prod(shape)) if shape else 1
    if domain == "bool":
        return V.draw_array(rng, shape, "bool")
    if domain in ("index", "int"):  # indices valid along every dim of the first tensor (the op's dim may be any)
        hi = max(min(first, default=1) - 1, 0) if domain == "index" else 3
        return np.array([rng.randint(0, hi) for _ in range(n)], dtype="int64").reshape(shape)
    if domain == "real" and edge and rng.random() < 0.2:
        return V.draw_array(rng, shape, dtype)
    lo, hi = {"positive": (0.5, 2.0), "positive_const": (0.5, 2.0), "unit": (-0.9, 0.9),
              "probability": (0.05, 0.95)}.get(domain, (-2.0, 2.0))
    if domain == "distinct":
        vals = (np.array(rng.sample(range(n * 3 + 1), n)) - n) / 10.0
    else:
        vals = np.array([round(rng.uniform(lo, hi), 2) for _ in range(n)])
        if domain == "away":
            vals = np.where(np.abs(vals) < 0.1, 0.5, vals)
    return vals.astype(dtype).reshape(shape)


def _tensor(b: Builder, shape: tuple, domain: str, first: tuple, dtype: str | None,
            edge: bool = True) -> tuple[str, Var | None, str]:
    """(source text, variable or None, dtype) of one tensor argument; ``dtype``: the first tensor's, which the
    others take (dtype mixes are the hand-written entries' to draw). Values in a domain that keeps away from ties
    or kinks are new inputs; other float tensors may be variables of the program."""
    rng = b.rng
    if domain in ("real", "unit") and edge and rng.random() < 0.5:
        v = b.pick(lambda u: u.shape == shape and u.dtype == (dtype or u.dtype) and u.is_float and not u.taint)
        if v is not None:
            return v.name, v, v.dtype
    if domain in FLOAT_DOMAINS or domain in ("const", "positive_const"):
        dtype = dtype or rng.choice(["float64", "float64", "float32"])
        arr = _array(b, shape, domain, first, dtype, edge)
        if domain in ("const", "positive_const"):
            return f"torch.tensor({_literal(arr)})", None, dtype
        v = b.new_input(shape=shape, dtype=dtype, rg=rng.random() < 0.8, array=arr)
        return v.name, v, dtype
    arr = _array(b, shape, domain, first, "int64")
    return f"torch.tensor({_literal(arr)})", None, str(arr.dtype)


def _literal(arr: np.ndarray) -> str:
    from .program import array_literal

    return array_literal(arr)


def _shapes(b: Builder, sample, first: Var | None) -> list[tuple]:
    """The sample's shapes, or the first tensor's shape taken from a variable (the others broadcasting with it)."""
    shapes = [s for s, _ in sample.tensors]
    if first is None:
        return shapes
    out = [first.shape]
    for shape, domain in sample.tensors[1:]:
        same = shape == sample.tensors[0][0] and domain in FLOAT_DOMAINS
        out.append(V.broadcastable_to(first.shape, b.rng) if same else shape)
    return out


def _render(b: Builder, key: str, op, sample, texts: list[str]) -> str:
    """The call in one of the op's forms (function, method, nn.functional)."""
    name = key.rsplit(".", 1)[-1]
    n = len(texts) - len(sample.keywords)
    if sample.as_list:
        positional, named = [f"[{', '.join(texts)}]"], {}
    else:
        positional, named = texts[:n], dict(zip(sample.keywords, texts[n:]))
    rest = [repr(a) for a in sample.args] + [f"{k}={v}" for k, v in named.items()]
    rest += [f"{k}={v!r}" for k, v in sample.kwargs.items()]
    forms = []
    if op.namespace == "nn.functional":
        forms.append("torch.nn.functional")
    elif op.namespace != "Tensor":
        forms.append("torch")
    if op.method and op.namespace != "nn.functional" and positional and not sample.as_list:
        forms.append("method")
    form = b.rng.choice(forms)
    b.tags.add("form:method" if form == "method" else "form:function")
    if form == "method":
        return f"{positional[0]}.{name}({', '.join(positional[1:] + rest)})"
    return f"{form}.{name}({', '.join(positional + rest)})"


def _draw(key: str, op) -> Callable[[Builder], Call | None]:
    def draw(b: Builder) -> Call | None:
        rng = b.rng
        index = rng.randrange(len(op.samples))
        sample = op.samples[index]
        first = None
        edge = key not in FINITE_ONLY
        if sample.tensors and sample.tensors[0][1] in ("real", "unit") and edge and rng.random() < 0.4:
            first = b.pick(lambda u: u.is_float and u.known and not u.taint)
        shapes = _shapes(b, sample, first)
        domains = [d for _, d in sample.tensors]
        dtypes = [first.dtype if first else "float64"] + ["float64"] * (len(shapes) - 1)
        outs = _outcome(key, index, tuple(shapes), tuple(dtypes))
        if first is not None and outs is None and rng.random() > KEEP_FAILING:
            first, shapes = None, [s for s, _ in sample.tensors]
        texts, uses, dtypes = [], [], []
        for i, (shape, domain) in enumerate(zip(shapes, domains)):
            if i == 0 and first is not None:
                text, var, dtype = first.name, first, first.dtype
            else:
                if i and key in CONSTANT_PARAMETERS and domain in FLOAT_DOMAINS:
                    domain = "const"
                want = next((d for d, (_, dom) in zip(dtypes, sample.tensors) if dom in FLOAT_DOMAINS), None)
                text, var, dtype = _tensor(b, shape, domain, shapes[0] if shapes else (), want, edge)
            texts.append(text)
            dtypes.append(dtype)
            if var is not None:
                uses.append(var)
        outs = _outcome(key, index, tuple(shapes), tuple(dtypes))
        expr = _render(b, key, op, sample, texts)
        if outs is not None and key.rsplit(".", 1)[-1] in VALUE_SHAPED:
            outs = ([], False)
        result = None if outs is None else [Out(s, d, view) for s, d, view in outs[0]]
        return Call(expr, result, uses, multi=bool(outs and outs[1]), rg=None if op.differentiable else False,
                    tags=(f"sample:{key}",))

    return draw


def _fits(key: str, op) -> Callable[[Var], bool]:
    """A target the in-place variant accepts: the out-of-place op keeps its shape and float dtype."""

    def fits(v: Var) -> bool:
        if not v.is_float or not v.known or key in NOT_ON_VIEWS and v.base is not None:
            return False
        for index, sample in enumerate(op.samples):
            shapes = (v.shape, *[s for s, _ in sample.tensors[1:]])
            got = _outcome(key, index, shapes, (v.dtype,) + ("float64",) * (len(shapes) - 1))
            if got is not None and not got[1] and got[0] and got[0][0][:2] == (v.shape, v.dtype):
                return True
        return False

    return fits


def _inplace_draw(key: str, op) -> Callable:
    fits = _fits(key, op)

    def draw(b: Builder, t: Var) -> Call:
        rng = b.rng
        ok = [s for i, s in enumerate(op.samples) if _outcome(key, i, (t.shape, *[x for x, _ in s.tensors[1:]]),
                                                              (t.dtype,) + ("float64",) * (len(s.tensors) - 1))
              is not None]
        sample = rng.choice(ok or list(op.samples))
        texts, uses = [t.name], [t]
        first = t.shape
        for shape, domain in sample.tensors[1:]:
            text, var, _ = _tensor(b, shape, domain, first, t.dtype)
            texts.append(text)
            uses += [var] if var is not None else []
        rest = texts[1:len(texts) - len(sample.keywords)]
        named = dict(zip(sample.keywords, texts[len(texts) - len(sample.keywords):]))
        args = rest + [repr(a) for a in sample.args] + [f"{k}={v}" for k, v in named.items()]
        args += [f"{k}={v!r}" for k, v in sample.kwargs.items()]
        b.tags.add("form:method")
        tags = (f"sample:{key}_",) if fits(t) else ()
        return Call(f"{t.name}.{key}_({', '.join(args)})", [], uses, inplace=t, tags=tags)

    return draw


# -- the result's shape and dtype ---------------------------------------------------------------------------


@functools.cache
def _outcome(key: str, index: int, shapes: tuple, dtypes: tuple):
    """([(shape, dtype, is a view)], is a tuple) of the op on placeholders of these shapes, or None if it raises."""
    import minigrad

    op = _DRAWN[key]
    sample = op.samples[index]
    tensors = []
    for shape, dtype, (_, domain) in zip(shapes, dtypes, sample.tensors):
        if domain in ("index", "int"):
            arr = np.zeros(shape, dtype="int64")
        elif domain == "bool":
            arr = np.zeros(shape, dtype=bool)
        else:
            arr = np.full(shape, 0.75, dtype=dtype if dtype in FLOAT else "float64")
        tensors.append(minigrad.tensor(arr))
    n = len(tensors) - len(sample.keywords)
    named = dict(zip(sample.keywords, tensors[n:]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if sample.as_list:
                out = op.function(tensors, *sample.args, **sample.kwargs)
            else:
                out = op.function(*tensors[:n], *sample.args, **named, **sample.kwargs)
    except Exception:  # noqa: BLE001 - a call the op refuses: drawn rarely, its error compared
        return None
    multi = isinstance(out, (tuple, list))
    items = list(out) if multi else [out]
    if not all(isinstance(o, minigrad.Tensor) for o in items):
        return [], False
    return [(tuple(o.shape), str(o.dtype).split(".")[-1], o._base is not None) for o in items], multi
