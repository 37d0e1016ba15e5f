"""A fuzz program: a list of one-line Python statements over `torch`, rendered as a runnable snippet.

A program is plain source text, one statement per line, so that what runs is exactly what a failure
report prints: the same lines run with ``torch`` bound to PyTorch and to minigrad. Statements keep a
little structure beside their text (the variable they define, the NumPy array of an input) so that
the shrinker can drop statements and simplify input values.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

# Run before every program, on both libraries, and printed at the top of every snippet. Hooks record
# what they see in `log` (compared after every statement) instead of printing, so that a comparison
# never depends on tensor reprs.
PREAMBLE = """\
import numpy as np
from numpy import inf, nan
log = []
def logger(tag):
    return lambda g: log.append((tag, g.detach().clone()))
def scaler(k):
    return lambda g: g * k
"""


@dataclasses.dataclass(frozen=True)
class Stmt:
    """One line of a program.

    ``code`` is the line itself; for inputs it is a template with ``{arr}`` where the NumPy array
    literal goes (so the shrinker can change the values). ``target`` is the variable the line
    defines, if any. ``kind`` says what role the line plays (the comparer calls the values of
    ``grad`` lines gradients); ``taint`` marks results of a ``create_graph=True`` pass, whose node
    names and graph PyTorch builds from fused double-backward nodes (README: "Graphs of the backward
    pass"). ``tags`` feed the coverage table.
    """

    code: str
    target: str | None = None
    kind: str = "op"
    tags: tuple[str, ...] = ()
    array: np.ndarray | None = dataclasses.field(default=None, compare=False)
    taint: bool = False

    def text(self) -> str:
        if self.array is None:
            return self.code
        return self.code.replace("{arr}", array_literal(self.array))

    def with_array(self, array: np.ndarray) -> Stmt:
        return dataclasses.replace(self, array=array)


@dataclasses.dataclass(frozen=True)
class Program:
    """A named list of statements; ``name`` says where it came from (``seed:index`` or a corpus case)."""

    name: str
    stmts: tuple[Stmt, ...]
    extra_tags: frozenset[str] = frozenset()

    def lines(self) -> list[str]:
        return [s.text() for s in self.stmts]

    def source(self, library: str = "torch") -> str:
        """The program as a standalone script for ``library`` (``torch`` or ``minigrad``)."""
        head = "import torch\n" if library == "torch" else "import minigrad as torch\n"
        return head + PREAMBLE + "\n".join(self.lines()) + "\n"

    def snippet(self) -> str:
        """The program as it is printed in reports and stored in the known-failures list."""
        return "\n".join(self.lines())

    def tags(self) -> set[str]:
        out: set[str] = set(self.extra_tags)
        for s in self.stmts:
            out.update(s.tags)
        return out


def program_from_text(name: str, text: str, kinds: dict[str, str] | None = None) -> Program:
    """A program from source lines (corpus cases and stored snippets); gradients and tangents (``unpack_dual``)
    are read as the generators emit them."""
    stmts = []
    for line in text.strip("\n").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        target = _assigned_name(line)
        kind = "op"
        if "autograd.grad(" in line or "unpack_dual(" in line:  # (a tangent, read as modes._unpack emits it)
            kind = "grad"
        elif ".backward(" in line:
            kind = "backward"
        taint = "create_graph=True" in line or "unpack_dual(" in line
        stmts.append(Stmt(code=line, target=target, kind=(kinds or {}).get(target or "", kind), taint=taint))
    return Program(name, tuple(propagate_taint(stmts)))


def _assigned_name(line: str) -> str | None:
    """The variable a line assigns (``v = ...``, also after a one-line ``with ...:``), else None."""
    m = re.match(r"^(?:with [^:]+:\s*)?([A-Za-z_]\w*)\s*=(?!=)", line)
    return m.group(1) if m else None


def propagate_taint(stmts: list[Stmt]) -> list[Stmt]:
    """A result computed from a create_graph result is one too (its graph holds backward nodes)."""
    tainted: set[str] = set()
    out = []
    for s in stmts:
        uses_taint = any(_mentions(s.code, name) for name in tainted)
        if s.taint or uses_taint:
            s = dataclasses.replace(s, taint=True)
            if s.target:
                tainted.add(s.target)
        out.append(s)
    return out


def _mentions(code: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", code) is not None


# --------------------------------------------------------------------------------------------------
# Literals


def float_literal(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


def _elem(x, kind: str) -> str:
    if kind == "b":
        return "True" if x else "False"
    if kind in "iu":
        return str(int(x))
    if x.dtype != np.float64 and np.isfinite(x):
        return str(x)  # the shortest text that gives this float32/float16 back
    return float_literal(float(x))


def _nested(a: np.ndarray, kind: str) -> str:
    if a.ndim == 0:
        return _elem(a[()], kind)
    return "[" + ", ".join(_nested(sub, kind) for sub in a) + "]"


def array_literal(a: np.ndarray) -> str:
    """NumPy source that rebuilds ``a`` exactly (values, -0.0, inf, nan, dtype, empty shapes)."""
    dt = a.dtype.name
    if a.size == 0:
        return f"np.zeros({tuple(a.shape)!r}, dtype='{dt}')"
    return f"np.array({_nested(a, a.dtype.kind)}, dtype='{dt}')"
