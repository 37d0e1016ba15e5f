"""Compare minigrad's run of a program with PyTorch's, statement by statement, and name the first difference.

Categories (the ones issue 14 counts), checked in this order within a statement:

- ``crash``: minigrad raised where PyTorch did not;
- ``missing error``: PyTorch raised, minigrad did not;
- ``error type``: both raised, different exception types;
- ``error text``: same type, different first line (after ``torch.`` -> ``minigrad.``);
- ``shape``: a tensor's shape or dtype differs, or a tuple's length;
- ``value``: forward values differ (NaN and inf positions and signs, the sign of zeros, else close);
- ``gradient``: a gradient's values differ (``.grad``, ``autograd.grad`` results, second order, what
  hooks saw);
- ``None-vs-zeros``: one side has ``None`` where the other has a zero gradient;
- ``flags``: ``requires_grad``, ``is_leaf``, ``retains_grad`` or ``_version`` differ;
- ``node name``: ``grad_fn.name()`` differs (here, or anywhere in the final ``next_functions`` graph);
- ``warning``: the warnings a statement gave differ (category and first line, in order);
- ``graph structure``: the final ``next_functions`` graphs differ in shape (edges, ``input_nr``,
  ``None`` edges, shared nodes, which leaf an AccumulateGrad holds);
- ``second-order node name`` / ``second-order graph``: the same two, in the graph that a
  ``create_graph=True`` pass built (the ``grad_fn`` of its gradients and of what was computed from them:
  PyTorch's fused double-backward nodes, its scalar ``MulBackward1``, ...). Counted apart so that the
  graphs of the backward pass have their own figure; the first-order graph is compared first.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from typing import Any

import numpy as np

from . import exclusions
from .observe import NOT_READ, GraphObs, OtherObs, PyObs, SeqObs, TensorObs
from .program import Program
from .runner import Library, Step, compile_program, is_warn_once, run

CATEGORIES = (
    "crash",
    "missing error",
    "error type",
    "error text",
    "shape",
    "value",
    "gradient",
    "None-vs-zeros",
    "flags",
    "node name",
    "warning",
    "graph structure",
    "second-order node name",
    "second-order graph",
)
SECOND_ORDER = {"node name": "second-order node name", "graph structure": "second-order graph"}
_RANK = {c: i for i, c in enumerate(CATEGORIES)}

# Tolerances of the project's differential tests (conventions: float64 rtol 1e-9 / atol 1e-12,
# float32 rtol 1e-5). A fuzz program chains many ops over inputs up to 1e30, so the absolute part
# also scales with the largest finite magnitude the values were computed from (runner._track_scale;
# a norm-wise relative error): a sum of [1e30, 1, -1e30] may be 0 or 1 in either library.
# ``_version`` of gradient tensors (``.grad``, ``autograd.grad`` results, what hooks saw) counts how
# often PyTorch's engine wrote into its own gradient buffers (``x.sum().backward()`` leaves
# ``x.grad._version == 1``, ``(x * 3).backward()`` leaves 0): an internal detail, not part of the
# program. Off by default; ``--grad-versions`` counts these differences too.
GRAD_VERSIONS = False

_RTOL = {"f2": 1e-3, "f4": 1e-5, "f8": 1e-9}
_ATOL = {"f2": 1e-4, "f4": 1e-6, "f8": 1e-12}


@dataclasses.dataclass
class Mismatch:
    category: str
    detail: str
    line: int  # index of the statement after which it showed (-1: the final graph)
    program: Program

    def where(self) -> str:
        if self.line < 0:
            return "the final graph"
        return f"line {self.line + 1}: {self.program.lines()[self.line]}"

    def report(self) -> str:
        return (
            f"# {self.program.name}: {self.category} after {self.where()}\n"
            f"# {self.detail}\n" + self.program.snippet()
        )


def check(program: Program, ref: Library, lib: Library) -> Mismatch | None:
    """Run ``program`` on both libraries; the first difference, or None when they agree."""
    codes = compile_program(program)
    ref_steps = list(run(program, ref, codes=codes))
    got_steps = run(program, lib, codes=codes)
    try:
        for rs in ref_steps:
            gs = next(got_steps)
            found = compare_step(rs, gs, program)
            if found is not None:
                category, detail = found
                return Mismatch(category, detail, rs.index, program)
    finally:
        got_steps.close()
    return None


def compare_step(ref: Step, got: Step, program: Program) -> tuple[str, str] | None:
    found = _compare_step(ref, got, program)
    if found is not None and found[0] in exclusions.FORWARD_UNCOMPARED and _forward_mode(program):
        return None  # (second-order categories rank last: nothing else differed in this step)
    return found


def _forward_mode(program: Program) -> bool:
    """A forward-mode program (modes.py): its second-order graphs are the graphs of tangents (exclusions.py)."""
    return any("autograd.forward_ad" in line for line in program.lines())


def _compare_step(ref: Step, got: Step, program: Program) -> tuple[str, str] | None:
    if ref.graph is not None or got.graph is not None:
        return diff_graph(ref.graph, got.graph)
    found = step_differences(ref, got, program)
    if not found:
        return None
    return min(found, key=lambda cd: _RANK[cd[0]])


def step_differences(ref: Step, got: Step, program: Program) -> list[tuple[str, str]]:
    """Every (category, detail) by which two runs of one statement differ (the final graph step aside)."""
    found: list[tuple[str, str]] = []
    found.extend(_diff_exception(ref.exc, got.exc))
    ref_warnings = [w for w in ref.warnings
                    if not (is_warn_once(w) and w in got.given_once_before and w not in got.warnings)]
    if ref_warnings != got.warnings:
        found.append(("warning", f"warnings: torch {ref.warnings}, minigrad {got.warnings}"))
    stmts = {s.target: s for s in program.stmts if s.target}
    for name in list(ref.state) + [n for n in got.state if n not in ref.state]:
        if name not in ref.state or name not in got.state:
            continue  # defined on one side only: the exception comparison already said why
        stmt = stmts.get(name)
        grad_ctx = stmt is not None and (stmt.kind == "grad" or stmt.taint)
        check_node = True
        second = stmt is not None and stmt.taint  # made by a create_graph pass, or computed from its results
        low = name in ref.low or (grad_ctx and "*" in ref.low)
        scale = ref.scales.get("*" if grad_ctx else name, 0.0)
        diffs = diff_obs(ref.state[name], got.state[name], name, grad_ctx=grad_ctx, check_node=check_node,
                         low=low, low_grads="*" in ref.low, scale=scale, grad_scale=ref.scales.get("*", 0.0))
        found.extend((SECOND_ORDER.get(c, c) if second else c, d) for c, d in diffs)
    if len(ref.log) != len(got.log):
        found.append(("gradient", f"hooks ran {len(ref.log)} times under torch, {len(got.log)} under minigrad"))
    else:
        for i, (a, b) in enumerate(zip(ref.log, got.log)):
            found.extend(diff_obs(a, b, f"log[{i}]", grad_ctx=True, check_node=False, low="*" in ref.low,
                                  scale=ref.scales.get("*", 0.0)))
    return found


def _diff_exception(a: tuple[str, str] | None, b: tuple[str, str] | None) -> list[tuple[str, str]]:
    if a is None and b is None:
        return []
    if a is None:
        return [("crash", f"minigrad raised {b[0]}: {b[1]}")]
    if b is None:
        return [("missing error", f"torch raised {a[0]}: {a[1]}; minigrad raised nothing")]
    if a[0] != b[0]:
        return [("error type", f"torch raised {a[0]}: {a[1]}; minigrad raised {b[0]}: {b[1]}")]
    if not exclusions.error_texts_match(a[1], b[1]):
        return [("error text", f"{a[0]}: torch {a[1]!r}; minigrad {b[1]!r}")]
    return []


def diff_obs(a: Any, b: Any, where: str, *, grad_ctx: bool, check_node: bool, low: bool = False,
             low_grads: bool = False, scale: float = 0.0, grad_scale: float = 0.0) -> list[tuple[str, str]]:
    """Differences between two observations of the same variable.

    ``low``: the values carry float32 rounding whatever their dtype (compared with float32
    tolerances); ``low_grads``: the same for the variable's ``.grad``. ``scale`` (``grad_scale``):
    the largest magnitude the values (the gradient) were computed from; errors are bounded relative to it.
    """
    if isinstance(a, TensorObs) and isinstance(b, TensorObs):
        return _diff_tensor(a, b, where, grad_ctx=grad_ctx, check_node=check_node, low=low, low_grads=low_grads,
                            scale=scale, grad_scale=grad_scale)
    if isinstance(a, SeqObs) and isinstance(b, SeqObs):
        if len(a.items) != len(b.items):
            return [("shape", f"{where}: torch gives {len(a.items)} items, minigrad {len(b.items)}")]
        out = []
        for i, (x, y) in enumerate(zip(a.items, b.items)):
            out.extend(diff_obs(x, y, f"{where}[{i}]", grad_ctx=grad_ctx, check_node=check_node, low=low,
                                low_grads=low_grads, scale=scale, grad_scale=grad_scale))
        return out
    if a is None and isinstance(b, TensorObs) or b is None and isinstance(a, TensorObs):
        t = b if a is None else a
        side = "minigrad" if a is None else "torch"
        zero = t.values.size == 0 or not np.any(t.values)
        cat = "None-vs-zeros" if zero else ("gradient" if grad_ctx else "value")
        other = "torch" if side == "minigrad" else "minigrad"
        return [(cat, f"{where}: {other} None, {side} {_show(t.values)}")]
    if isinstance(a, PyObs) and isinstance(b, PyObs):
        if a.type != b.type:
            return [("value", f"{where}: torch {a.type} {a.value!r}, minigrad {b.type} {b.value!r}")]
        if not _py_equal(a.value, b.value, low, scale):
            return [("gradient" if grad_ctx else "value", f"{where}: torch {a.value!r}, minigrad {b.value!r}")]
        return []
    if isinstance(a, OtherObs) and isinstance(b, OtherObs):
        return []
    if isinstance(a, tuple) and a and a[0] == "unobservable" and a != b:  # PyTorch raises when it is used
        return [("missing error", f"using {where} raises under torch ({a[1]}: {a[2] if len(a) > 2 else ''}); "
                                  "minigrad raises nothing")]
    if isinstance(b, tuple) and b and b[0] == "unobservable" and a != b:
        return [("crash", f"observing {where} under minigrad raised {b[1]}: {b[2] if len(b) > 2 else ''}")]
    if a == b:
        return []
    return [("value", f"{where}: torch {_kind(a)}, minigrad {_kind(b)}")]


def _kind(x: Any) -> str:
    if isinstance(x, TensorObs):
        return f"a tensor {_show(x.values)}"
    if isinstance(x, PyObs):
        return f"{x.type} {x.value!r}"
    if isinstance(x, SeqObs):
        return f"a sequence of {len(x.items)}"
    return repr(x)


def _py_equal(a: Any, b: Any, low: bool, scale: float = 0.0) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return not _values_differ(np.array([a]), np.array([b]), low, scale)
    if isinstance(a, list) and isinstance(b, list):  # tolist()
        try:
            x, y = np.array(a), np.array(b)
        except ValueError:
            return a == b
        return x.shape == y.shape and x.dtype == y.dtype and not _values_differ(x, y, low, scale)
    return a == b


def _diff_tensor(a: TensorObs, b: TensorObs, where: str, *, grad_ctx: bool, check_node: bool, low: bool,
                 low_grads: bool, scale: float, grad_scale: float) -> list:
    if a.dtype != b.dtype or a.shape != b.shape:
        return [("shape", f"{where}: torch {a.dtype} {list(a.shape)}, minigrad {b.dtype} {list(b.shape)}")]
    out = []
    why = _values_differ(a.values, b.values, low, scale)
    if why:
        out.append(("gradient" if grad_ctx else "value",
                    f"{where}: torch {_show(a.values)}, minigrad {_show(b.values)} ({why})"))
    names = ("requires_grad", "is_leaf", "retains_grad") + (("version",) if GRAD_VERSIONS or not grad_ctx else ())
    flags = [f for f in names if getattr(a, f) != getattr(b, f)]
    if flags:
        out.append(("flags", f"{where}: " + ", ".join(
            f"{f} torch {getattr(a, f)} minigrad {getattr(b, f)}" for f in flags)))
    if check_node and not exclusions.node_names_match(a.node, b.node):
        out.append(("node name", f"{where}.grad_fn: torch {a.node}, minigrad {b.node}"))
    if a.grad is NOT_READ or b.grad is NOT_READ:
        return out  # is_leaf / retains_grad differ: already a flags difference
    if a.grad is None and b.grad is None:
        return out
    out.extend(diff_obs(a.grad, b.grad, f"{where}.grad", grad_ctx=True, check_node=False, low=low_grads,
                        scale=grad_scale))
    return out


def _values_differ(a: np.ndarray, b: np.ndarray, low: bool = False, scale: float = 0.0) -> str:
    """Why two same-shape, same-dtype arrays differ ('' when they agree); ``low``: float32 tolerances;
    ``scale``: the magnitude of the operands the values were computed from (bounds the error too)."""
    if a.dtype.kind != "f":
        return "" if np.array_equal(a, b) else "values differ"
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not np.array_equal(nan_a, nan_b):
        return "NaN positions differ"
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    if not np.array_equal(inf_a, inf_b) or not np.array_equal(a[inf_a], b[inf_b]):
        return "inf positions differ"
    fin = ~(nan_a | inf_a)
    fa, fb = a[fin].astype(np.float64), b[fin].astype(np.float64)
    if fa.size == 0:
        return ""
    key = "f4" if low and a.dtype.itemsize > 4 else f"{a.dtype.kind}{a.dtype.itemsize}"
    rtol, atol = _RTOL.get(key, 1e-5), _ATOL.get(key, 1e-6)
    scale = max(float(np.max(np.abs(fa))), scale)
    if np.any(np.abs(fa - fb) > atol + rtol * np.abs(fa) + rtol * scale):
        return "values differ"
    zero = (fa == 0) & (fb == 0)
    if not np.array_equal(np.signbit(fa[zero]), np.signbit(fb[zero])):
        return "signs of zeros differ"
    return ""


def _show(values: np.ndarray) -> str:
    text = np.array2string(np.asarray(values), threshold=12, edgeitems=3, precision=6, separator=", ")
    return " ".join(text.split())


def diff_graph(a: GraphObs | tuple | None, b: GraphObs | tuple | None) -> tuple[str, str] | None:
    """Walk both graphs from the same roots in step; a structural difference wins over a name difference.
    The roots of the first-order graph are walked first; then those a create_graph pass made (whose
    differences are the ``second-order`` categories)."""
    if not isinstance(a, GraphObs) or not isinstance(b, GraphObs):
        if isinstance(a, GraphObs) and isinstance(b, tuple):
            return ("crash", f"walking the graph under minigrad raised {b[1]}: {b[2]}")
        return None
    if set(a.roots) != set(b.roots):
        only_a, only_b = sorted(set(a.roots) - set(b.roots)), sorted(set(b.roots) - set(a.roots))
        cat = "graph structure" if (set(a.roots) ^ set(b.roots)) - a.second_order - b.second_order \
            else "second-order graph"
        return (cat, f"grad_fn only under torch: {only_a}, only under minigrad: {only_b}")
    seen: dict[int, int] = {}
    seen_b: dict[int, int] = {}
    first = [label for label in a.roots if label not in a.second_order]
    second = [label for label in a.roots if label in a.second_order]
    found = _walk(a, b, first, seen, seen_b)
    if found is not None:
        return found
    found = _walk(a, b, second, seen, seen_b)
    return None if found is None else (SECOND_ORDER[found[0]], found[1])


def _walk(a: GraphObs, b: GraphObs, labels: list, seen: dict, seen_b: dict) -> tuple[str, str] | None:
    name_issue = None
    queue = deque((a.roots[label], b.roots[label], f"{label}.grad_fn") for label in labels)
    while queue:
        ia, ib, path = queue.popleft()
        if ia in seen or ib in seen_b:
            if seen.get(ia) != ib or seen_b.get(ib) != ia:
                return ("graph structure", f"{path}: nodes shared differently")
            continue
        seen[ia], seen_b[ib] = ib, ia
        (na, ea, la), (nb, eb, lb) = a.nodes[ia], b.nodes[ib]
        if exclusions.stops_graph_walk(na, nb):
            continue
        if na != nb and name_issue is None:
            name_issue = ("node name", f"{path}: torch {na}, minigrad {nb}")
        if la != lb:
            return ("graph structure", f"{path}: AccumulateGrad of {la} under torch, of {lb} under minigrad")
        if len(ea) != len(eb):
            return ("graph structure", f"{path} ({na}): torch has {len(ea)} next_functions, minigrad {len(eb)}")
        for k, ((ca, ra), (cb, rb)) in enumerate(zip(ea, eb)):
            if (ca is None) != (cb is None) or ra != rb:
                sa = "None" if ca is None else a.nodes[ca][0]
                sb = "None" if cb is None else b.nodes[cb][0]
                return ("graph structure",
                        f"{path}.next_functions[{k}] ({na}): torch ({sa}, {ra}), minigrad ({sb}, {rb})")
            if ca is not None:
                queue.append((ca, cb, f"{path}.next_functions[{k}][0]"))
    return name_issue
