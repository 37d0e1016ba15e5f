"""Run a program on one library, statement by statement, recording what each statement did.

After every statement the runner records the exception it raised (type and first line), the
warnings it gave, and an observation of every variable defined so far and of the hook log; after
the last statement it records the graph behind every tensor. The same program runs on PyTorch and
on minigrad, each in its own namespace, from the same NumPy literals.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import signal
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .exclusions import UNCOMPARED_WARNINGS
from .observe import GraphObs, first_line, normalise, observe, observe_graph, to_numpy
from .program import PREAMBLE, Program

STATEMENT_TIMEOUT = 20.0  # seconds; a statement that runs longer is recorded as a TimeoutError


# PyTorch gives these warnings once per process (C++ ``TORCH_WARN_ONCE``; measured, and checked by
# test_warn_once_list_is_pytorchs). The runner turns PyTorch's warn-always switch on and keeps only
# the first of each per program, as a program run as its own script would see them.
WARN_ONCE = (
    "UserWarning: The use of `x.T` on tensors of dimension other than 2",
    "UserWarning: Tensor.T is deprecated on 0-D tensors",
    "UserWarning: Tensor.mT is deprecated on 0-D tensors",
    "UserWarning: Tensor.mH is deprecated on 0-D tensors",
    "UserWarning: Using backward() with create_graph=True will create a reference cycle",
    "UserWarning: Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior",
)

# Warn-once messages each library has given in this process: a library that warns once per process
# (minigrad's `.T` warning) stays silent in later programs, which a fresh script would not.
_GIVEN_ONCE: dict[str, set[str]] = {}


def is_warn_once(message: str) -> bool:
    return message.startswith(WARN_ONCE)


@dataclasses.dataclass
class Library:
    """A library under comparison: the module bound to ``torch`` in the program, and how to run it.

    ``prefix`` is the module name its messages use (``torch`` messages are read with ``minigrad.``);
    ``context`` wraps a whole run (PyTorch's warn-always switch, the self-test's broken patches).
    """

    name: str
    module: Any
    prefix: str
    context: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext
    first_once_only: bool = False  # keep only the first of each WARN_ONCE warning per program


def torch_library(torch) -> Library:
    return Library("torch", torch, "torch", lambda: _warn_always(torch), first_once_only=True)


def minigrad_library(minigrad) -> Library:
    return Library("minigrad", minigrad, "minigrad")


@contextlib.contextmanager
def _warn_always(torch):
    """PyTorch gives some warnings only once per process (C++ ``TORCH_WARN_ONCE``, e.g. the
    ``create_graph`` warning); with warn-always on it gives them every time, so that what a
    program's comparison sees does not depend on what ran before it in the same process."""
    before = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        yield
    finally:
        torch.set_warn_always(before)


@dataclasses.dataclass
class Step:
    """What one statement did. ``index`` is the statement's line number (``-1``: the final graph)."""

    index: int
    exc: tuple[str, str] | None
    warnings: list[str]
    state: dict[str, Any]
    log: list
    graph: GraphObs | None = None
    given_once_before: frozenset[str] = frozenset()  # WARN_ONCE messages the library gave earlier in this process
    low: frozenset[str] = frozenset()  # variables computed from float32/float16 values (compared as float32)
    scales: dict[str, float] = dataclasses.field(default_factory=dict)  # largest magnitude each value came from


class StatementTimeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float):
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def interrupt(signum, frame):
        raise StatementTimeout(f"statement still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_PREAMBLE_CODE = compile(PREAMBLE, "<preamble>", "exec")


def run(program: Program, lib: Library, *, codes: list | None = None) -> Iterator[Step]:
    """Yield one Step per statement, then the final Step holding the graph.

    The generator keeps ``lib.context`` entered while it runs; closing it early (the comparer stops
    at the first mismatch) leaves the context properly.
    """
    if codes is None:
        codes = compile_program(program)
    targets = [s.target for s in program.stmts]
    tainted = {s.target for s in program.stmts if s.taint and s.target}
    with lib.context(), _dual_levels_closed(lib.module), warnings.catch_warnings():
        ns: dict[str, Any] = {"torch": lib.module}
        exec(_PREAMBLE_CODE, ns)
        defined: list[str] = []
        first_seen: set[str] = set()
        given = _GIVEN_ONCE.setdefault(lib.name, set())
        low: set[str] = set()
        scales: dict[str, float] = {}
        lines = program.lines()
        words = [set(_WORD.findall(line)) for line in lines]
        for i, code in enumerate(codes):
            exc = None
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    with _time_limit(STATEMENT_TIMEOUT):
                        exec(code, ns)
                except Exception as e:  # noqa: BLE001 - every exception is part of what is compared
                    exc = (type(e).__name__, normalise(first_line(str(e)), lib.prefix))
            target = targets[i]
            if target and target in ns and target not in defined:
                defined.append(target)
            warns = [f"{w.category.__name__}: {normalise(first_line(str(w.message)), lib.prefix)}" for w in caught
                     if not any(phrase in str(w.message) for phrase in UNCOMPARED_WARNINGS)]
            if lib.first_once_only:
                warns = _first_only(warns, first_seen)
            before = frozenset(given)
            given.update(w for w in warns if is_warn_once(w))
            _track_low_precision(ns, words[i], target, low, lib)
            _track_scale(ns, words[i], lines[i], target, scales, lib)
            yield Step(i, exc, warns, _observe_all(ns, defined, lib), _observe_log(ns, lib), None, before,
                       frozenset(low), dict(scales))
        named = _named_tensors(ns, defined, lib)
        graph = _observe_graph_safely(named, named, lib, frozenset(tainted))
        yield Step(-1, None, [], {}, [], graph)


@contextlib.contextmanager
def _dual_levels_closed(module):
    """A forward-mode program enters a dual level by a statement; one the comparison stopped early (or that raised
    before its last line) leaves it open, which the next program must not inherit."""
    try:
        yield
    finally:
        forward_ad = module.autograd.forward_ad
        while getattr(forward_ad, "_current_level", -1) >= 0:
            forward_ad.exit_dual_level()


_WORD = re.compile(r"[A-Za-z_]\w*")
_LOW_WORDS = {"float32", "float16", "float", "half"}


def _track_low_precision(ns: dict, words: set[str], target: str | None, low: set[str], lib: Library) -> None:
    """Mark what a statement made from float32/float16 values (or under the float32 default dtype).

    A float64 tensor computed from float32 values carries float32 rounding (``x32.tanh().double()``
    differs between libraries in the last float32 bit), so it is compared with float32 tolerances.
    Variables a statement mentions that hold low-precision tensors, low variables, float32 names in
    the code, or a float32 result all make the statement low; it then marks its target, or (for
    statements without one, like in-place ops) every variable it mentions.
    """
    mentioned = [w for w in words if w in ns and w != "torch"]
    is_low = bool(words & _LOW_WORDS) or any(w in low or _has_low_tensor(ns[w], lib) for w in mentioned)
    if target and target in ns:
        is_low = is_low or _has_low_tensor(ns[target], lib)
    if not is_low:
        return
    if target:
        low.add(target)
    else:
        low.update(mentioned)
    low.add("*")  # some value in the program is low: gradients may be too


_NUMBER = re.compile(r"(?<![\w.])\d+\.?\d*(?:e[+-]?\d+)?")


def _track_scale(ns: dict, words: set[str], line: str, target: str | None, scales: dict[str, float],
                 lib: Library) -> None:
    """The largest finite magnitude each value was computed from (its operands', recursively).

    Values are compared with an error bound relative to this scale, the usual bound for floating-point
    sums: ``sum([1e30, 1., -1e30])`` is 0 or 1 depending on the order of additions, and either is right.
    """
    mentioned = [w for w in words if w in ns and w != "torch"]
    numbers = [float(n) for n in _NUMBER.findall(line)]
    scale = max([scales.get(w, 0.0) for w in mentioned] + [_magnitude(ns[w], lib) for w in mentioned]
                + [abs(n) for n in numbers if n != float("inf")] + [0.0])
    for name in [target] if target else mentioned:
        if name in ns:
            scales[name] = max(scale, scales.get(name, 0.0), _magnitude(ns[name], lib))
    scales["*"] = max(scales.values(), default=0.0)


def _magnitude(value, lib: Library) -> float:
    if isinstance(value, lib.module.Tensor) and value.dtype.is_floating_point:
        try:
            arr = to_numpy(value)
        except Exception:  # noqa: BLE001 - a tensor that cannot be read adds no scale; observing it reports it
            return 0.0
        finite = np.abs(arr[np.isfinite(arr)]) if arr.size else arr
        return float(finite.max()) if finite.size else 0.0
    if isinstance(value, (tuple, list)):
        return max((_magnitude(v, lib) for v in value[:8]), default=0.0)
    if isinstance(value, float) and np.isfinite(value):
        return abs(value)
    return 0.0


def _has_low_tensor(value, lib: Library) -> bool:
    if isinstance(value, lib.module.Tensor):
        return str(value.dtype).endswith(("float32", "float16"))
    if isinstance(value, (tuple, list)):
        return any(_has_low_tensor(v, lib) for v in value[:8])
    return False


def _first_only(warns: list[str], seen: set[str]) -> list[str]:
    out = []
    for w in warns:
        if is_warn_once(w):
            if w in seen:
                continue
            seen.add(w)
        out.append(w)
    return out


def compile_program(program: Program) -> list:
    out = []
    for i, line in enumerate(program.lines()):
        try:
            out.append(compile(line, f"<line {i}>", "exec"))
        except SyntaxError as e:
            raise ValueError(f"{program.name}: line {i} is not valid Python: {line!r} ({e})") from None
    return out


def _observe_all(ns: dict, defined: list[str], lib: Library) -> dict[str, Any]:
    state = {}
    for name in defined:
        if name in ns:
            try:
                state[name] = observe(ns[name], lib.module, lib.prefix)
            except Exception as e:  # noqa: BLE001 - a library that cannot be observed is a finding
                state[name] = ("unobservable", type(e).__name__, first_line(str(e)))
    return state


def _observe_log(ns: dict, lib: Library) -> list:
    out = []
    for entry in ns.get("log", []):
        try:
            out.append(observe(entry, lib.module, lib.prefix))
        except Exception as e:  # noqa: BLE001
            out.append(("unobservable", type(e).__name__))
    return out


def _named_tensors(ns: dict, defined: list[str], lib: Library) -> list[tuple[str, Any]]:
    out = []
    for name in defined:
        value = ns.get(name)
        if isinstance(value, lib.module.Tensor):
            out.append((name, value))
        elif isinstance(value, (tuple, list)):
            out.extend((f"{name}[{i}]", v) for i, v in enumerate(value) if isinstance(v, lib.module.Tensor))
    return out


def _observe_graph_safely(roots_from, named, lib: Library, second_order: frozenset) -> GraphObs | tuple:
    """Roots are the named tensors (``second_order``: those computed from create_graph results); leaves are
    labelled by any variable that names them."""
    try:
        return observe_graph(roots_from, named, lib.module, lib.prefix, second_order)
    except Exception as e:  # noqa: BLE001 - a graph that cannot be walked is a finding
        return ("unobservable", type(e).__name__, first_line(str(e)))
