"""Checks for the course exercises: ``from minigrad_course import check_leaves``.

Each ``check_...()`` runs your answer on examples of its own, prints one verdict and returns it
as a :class:`CheckResult`::

    ✓ <what is right>
    ✗ <what is wrong>
      hint: <what to look at>

A check never raises: a placeholder (``...``), a value of the wrong type, or your code failing
inside the check all give a ✗ with a hint. The result is what other tools use: ``result.passed``
(also ``bool(result)``, so ``assert check_hvp(hvp)`` works in a test or an autograder),
``result.message``, ``result.hint``, ``result.reason`` (a short, stable name for the mistake, such
as ``"saved-input"``) and ``result.exercise`` (the exercise number, as in the lesson: ``"6b"``).
``check_...(answer, quiet=True)`` returns the result without printing it. How many points an
exercise is worth is declared next to the exercise in its lesson source (``notebooks/src/``,
``# %% check=6b points=2``), not here.

This package (``notebooks/minigrad_course/``) is installed with the project (pyproject.toml
declares it beside minigrad and viz), so the lessons in ``notebooks/``, their solutions in
``notebooks/solutions/`` and a grader import the same file. The checks build their examples with
minigrad (PyTorch's API) and silence warnings while they run, so that only the verdict prints.

The verdict speaks the learner's language: ``MINIGRAD_LANG`` (``zh`` or ``en``), else the locale, else
English (``minigrad_course.i18n``; the Chinese lessons in ``notebooks/zh/`` set ``MINIGRAD_LANG=zh``). The
messages below are the English originals; their translations are in ``locale/zh.po``, extracted from this
file by ``notebooks/i18n.py``. PyTorch's error texts and node names inside a message stay as PyTorch prints them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from minigrad_course.i18n import HINT_LABEL, language, translate

__all__ = [
    "CheckResult",
    "EXERCISES",
    "check_leaves",
    "check_count_nodes",
    "check_jacobian",
    "check_train",
    "check_clip_hook",
    "check_grad_quiz",
    "check_evaluate",
    "check_sigmoid",
    "check_hvp",
    "check_softplus",
    "check_train_step",
    "check_batchnorm_backward",
    "check_swish",
    "check_sigmoid_op",
    "check_topological_order",
    "check_dual_divide",
    "check_jacobian_forward",
    "check_grad_norms",
]

OK, FAIL = "✓", "✗"


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The verdict of one check: truthy when the answer passed."""

    check: str  # the function's name, e.g. "check_hvp"
    exercise: str  # the exercise it checks, as numbered in the lesson: "8", "6b"
    passed: bool
    message: str  # what is right (passed) or what is wrong (failed), one line
    hint: str = ""  # what to look at; "" when passed
    reason: str = "ok"  # a stable name for the mistake ("placeholder", "saved-input", ...); "ok" when passed
    _shown_in: Any = dataclasses.field(default=None, repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        if self.passed:
            return f"{OK} {self.message}"
        return f"{FAIL} {self.message}\n  {HINT_LABEL.get(language(), 'hint: ')}{self.hint}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for JSON, a grader's feedback file, a test report)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if not f.name.startswith("_")}

    def _ipython_display_(self) -> None:
        # A check cell ends with the call, so IPython would show the returned result a second time
        # under the printed verdict. Show it only when it was not printed by this very cell.
        if self._shown_in is None or self._shown_in != _cell_number():
            print(self)


def _cell_number() -> int | None:
    """The number of the IPython cell running now (None outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is installed with the course tools
        return None
    shell = get_ipython()
    return None if shell is None else shell.execution_count


# exercise id -> the check function for it, in the order of the course
EXERCISES: dict[str, Callable[..., CheckResult]] = {}


class Verdict(Exception):
    """Raised inside a check to stop with a ✗ (caught by ``@checker``; it never reaches you)."""

    def __init__(self, reason: str, problem: str, hint: str) -> None:
        super().__init__(problem)
        self.reason, self.problem, self.hint = reason, problem, hint


def fail(reason: str, problem: str, hint: str) -> Verdict:
    return Verdict(reason, problem, hint)


def checker(exercise: str, hint: str) -> Callable:
    """Make a check that returns a CheckResult, prints it and never raises. ``hint`` is the
    advice given when your code raises an error the check did not foresee."""

    def wrap(func: Callable[..., str]) -> Callable[..., CheckResult]:
        @functools.wraps(func)
        def run(*args: Any, quiet: bool = False, **kwargs: Any) -> CheckResult:
            result = _evaluate(func, exercise, hint, args, kwargs)
            if not quiet:
                try:
                    print(result)
                except Exception:  # noqa: BLE001 - a closed stdout must not make a check raise
                    pass
                else:
                    object.__setattr__(result, "_shown_in", _cell_number())
            return result

        run.exercise = exercise
        EXERCISES[exercise] = run
        return run

    return wrap


def _evaluate(func: Callable[..., str], exercise: str, hint: str, args: tuple, kwargs: dict) -> CheckResult:
    name = func.__name__
    with _restore_grad_mode():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with np.errstate(all="ignore"):
                    message = func(*args, **kwargs)
        except Verdict as v:
            return CheckResult(name, exercise, False, translate(v.problem), translate(v.hint), v.reason)
        except Exception as exc:  # noqa: BLE001 - a check never raises
            return CheckResult(name, exercise, False, translate(f"running your answer raised {_exc_text(exc)}"),
                               translate(hint), "raised")
    return CheckResult(name, exercise, True, translate(message))


@contextlib.contextmanager
def _restore_grad_mode() -> Iterator[None]:
    """Whatever the learner's code does to grad mode, the notebook gets it back as it was."""
    try:
        torch = _mg()
        before = torch.is_grad_enabled()
    except Exception:  # noqa: BLE001
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            torch.set_grad_enabled(before)


# -- helpers ---------------------------------------------------------------------------------------------


def _mg():
    import minigrad

    return minigrad


def _exc_text(exc: BaseException, limit: int = 160) -> str:
    text = (f"{type(exc).__name__}: {exc}".splitlines() or [type(exc).__name__])[0]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def not_answered(value: Any) -> bool:
    return value is Ellipsis


def require_answer(value: Any, what: str, hint: str) -> None:
    if not_answered(value):
        raise fail("placeholder", f"{what} is still the placeholder `...`", hint)


def _is_tensor(value: Any) -> bool:
    return isinstance(value, _mg().Tensor)


def _call(func: Callable, *args: Any, what: str, errors: tuple = ()) -> Any:
    """Call the learner's code; an exception it raises becomes a ✗. ``errors`` maps a regex on
    "Type: message" to (reason, hint), for the mistakes a lesson warns about."""
    try:
        return func(*args)
    except Verdict:
        raise
    except Exception as exc:  # noqa: BLE001
        text = _exc_text(exc)
        if "ellipsis" in text.lower():
            raise fail("placeholder", f"{what} still uses the placeholder `...` ({text})",
                       "replace every `...` with your code") from None
        for pattern, reason, hint in errors:
            if re.search(pattern, text):
                raise fail(reason, f"{what} raised {text}", hint) from None
        raise


def _to_numpy(value: Any) -> np.ndarray | None:
    """A tensor, array or number as a float64 array; None for anything else (lists included)."""
    if value is None or not_answered(value) or isinstance(value, (str, bytes, list, tuple, dict, set)):
        return None
    if _is_tensor(value):
        return np.asarray(value.detach().numpy(), dtype=np.float64)
    if isinstance(value, (np.ndarray, np.generic, int, float)) and not isinstance(value, bool):
        try:
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return None
    return None


def _close(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-8) -> bool:
    a, b = _to_numpy(a), _to_numpy(b)
    return a is not None and b is not None and a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def _fmt(value: Any) -> str:
    arr = _to_numpy(value)
    if arr is None:
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."
    return np.array2string(arr, separator=", ", formatter={"float_kind": lambda v: f"{v:.4g}"})


def _kind(value: Any) -> str:
    if _is_tensor(value):
        return "a tensor"
    if isinstance(value, np.ndarray):
        return "a NumPy array"
    return f"a {type(value).__name__}"


def _require_callable(func: Any, what: str, hint: str) -> None:
    require_answer(func, what, hint)
    if not callable(func):
        raise fail("not-callable", f"{what} should be a function, got {_kind(func)}", hint)


# -- 1. tensors and requires_grad -----------------------------------------------------------------------

_CELL_NAMES = ("p", "q", "r", "s", "e")
_FORMAT_HINT = 'write the names as a set of strings, e.g. {"x", "y"} (or set() for none)'


def _as_name_set(value: Any, what: str) -> set[str]:
    if isinstance(value, (str, bytes)):
        raise fail("not-a-set", f"{what} should be a set of names, not one string ({value!r})", _FORMAT_HINT)
    try:
        names = set(value)
    except TypeError:
        raise fail("not-a-set", f"{what} should be a set of names, got {_kind(value)}", _FORMAT_HINT) from None
    if any(not isinstance(n, str) for n in names):
        raise fail("not-names", f"{what} should hold the names of the tensors as strings, not the tensors themselves",
                   _FORMAT_HINT)
    unknown = sorted(repr(n) for n in names if n not in _CELL_NAMES)
    if unknown:
        raise fail("unknown-names", f"{what} has names that are not tensors of the cell: {', '.join(unknown)}",
                   f"use only the names {', '.join(map(repr, _CELL_NAMES))} (as strings)")
    return names


@checker("1", hint="answer with two sets of names, e.g. leaves = {'x', 'y'}")
def check_leaves(leaves: Any, gets_grad: Any) -> str:
    require_answer(leaves, "`leaves`", "a leaf is a tensor without a grad_fn: which ones did no recorded op produce?")
    require_answer(gets_grad, "`gets_grad`", "backward() fills .grad only on leaves that require grad")
    got_leaves = _as_name_set(leaves, "`leaves`")
    got_grad = _as_name_set(gets_grad, "`gets_grad`")
    want_leaves, want_grad = {"p", "q", "s"}, {"p"}
    if got_leaves != want_leaves:
        if got_leaves & {"r", "e"}:
            raise fail("leaves-has-computed", "`leaves` has a tensor that an operation on p produced",
                       "r and e are computed from p, which requires grad, so they have a grad_fn: not leaves")
        if "s" not in got_leaves:
            raise fail("leaves-missing-s", "`leaves` misses a tensor",
                       "s = q * 2 is computed only from q, which does not require grad: does s get a grad_fn?")
        raise fail("leaves-missing-created", "`leaves` misses a tensor you created yourself",
                   "every tensor made by torch.tensor(...) is a leaf, whether it requires grad or not")
    if got_grad != want_grad:
        if got_grad & {"r", "e"}:
            raise fail("grad-non-leaf", "`gets_grad` names a non-leaf",
                       "gradients of intermediate results are thrown away unless you call retain_grad()")
        if "p" not in got_grad:
            raise fail("grad-missing-p", "`gets_grad` misses the one tensor whose gradient you asked for",
                       "which leaf has requires_grad=True?")
        raise fail("grad-no-requires-grad", "`gets_grad` names a leaf that does not require grad",
                   "q and s never asked for gradients (requires_grad=False), so their .grad stays None")
    return "leaves = {p, q, s}; only p gets a .grad (q and s do not require grad; r and e are not leaves)"


# -- 2. the computation graph ---------------------------------------------------------------------------


def _walk_count(root: Any, *, dedupe: bool = True, count_none: bool = False, count_root: bool = True,
                count_leaves: bool = True) -> int:
    """How a walk that makes one of the usual mistakes counts (the right one with the defaults)."""
    count, seen, todo = 0, set(), [root]
    while todo:
        node = todo.pop()
        if node is None:
            count += count_none and (None not in seen or not dedupe)
            seen.add(None)
            continue
        if dedupe and node in seen:
            continue
        seen.add(node)
        is_leaf_node = hasattr(node, "variable")
        if (node is not root or count_root) and (count_leaves or not is_leaf_node):
            count += 1
        todo.extend(child for child, _ in node.next_functions)
    return count


_COUNT_MISTAKES = (
    # (reason, keyword arguments of _walk_count, problem, hint)
    ("counts-paths", {"dedupe": False}, "you count a shared node once per path that reaches it",
     "keep a set of the nodes you have seen and skip a node that is already in it"),
    ("counts-none", {"count_none": True}, "you count the None entries of next_functions as nodes",
     "(None, 0) means 'no gradient goes here': skip None, it is not a node"),
    ("misses-root", {"count_root": False}, "you leave out the node you start from",
     "count root itself too: count_nodes(s.grad_fn) is 4, SumBackward0 included"),
    ("misses-accumulate", {"count_leaves": False}, "you leave out the AccumulateGrad nodes",
     "AccumulateGrad nodes are nodes too (they end the walk: their next_functions is empty)"),
)


def _graphs_for_counting() -> list[tuple[str, Any]]:
    torch = _mg()
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    c = torch.tensor([1.0, 1.0])
    chain = x
    for _ in range(30):
        chain = chain * 1.5
    y = x.exp()
    return [
        ("(x * w + c).exp().sum()", (x * w + c).exp().sum().grad_fn),
        ("(x * x + x).sum()", (x * x + x).sum().grad_fn),
        ("y = x.exp(); (y * y + y.sin()).sum()", (y * y + y.sin()).sum().grad_fn),
        ("x * 2 (a None entry)", (x * 2).grad_fn),
        ("a chain of 30 multiplications", chain.sum().grad_fn),
    ]


@checker("2", hint="count_nodes(root) should follow node.next_functions and return an int")
def check_count_nodes(count_nodes: Any) -> str:
    _require_callable(count_nodes, "`count_nodes`", "replace `return ...` with the walk described above")
    results = []
    for label, root in _graphs_for_counting():
        got = _call(count_nodes, root, what="count_nodes", errors=(
            (r"'NoneType' object has no attribute", "none-entries",
             "next_functions holds (None, 0) for inputs that need no gradient: skip None before you look inside it"),
            (r"RecursionError", "recursion", "walk with a list of nodes to visit (a stack) instead of recursion"),
        ))
        if not_answered(got):
            raise fail("placeholder", "count_nodes still returns the placeholder `...`",
                       "replace `return ...` with your walk")
        if got is None:
            raise fail("returns-none", "count_nodes returned None", "end with `return len(seen)` (or your counter)")
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
            shown = f" ({got!r})" if isinstance(got, (float, np.floating)) else ""
            raise fail("not-int", f"count_nodes returned {_kind(got)}{shown}, not an int",
                       "return len(seen): a whole number")
        results.append((label, root, int(got), _walk_count(root)))
    wrong = [(label, root, got, want) for label, root, got, want in results if got != want]
    if not wrong:
        return "count_nodes counts each node once, shared nodes and AccumulateGrad included"
    for reason, kwargs, problem, hint in _COUNT_MISTAKES:
        if all(got == _walk_count(root, **kwargs) for _, root, got, _ in results):
            label, _, got, want = wrong[0]
            raise fail(reason, f"{problem}: for {label} you counted {got}, the graph has {want} nodes", hint)
    label, _, got, want = wrong[0]
    hint = ("count a node only the first time you reach it" if got > want
            else "visit every entry of next_functions, down to the AccumulateGrad nodes, and count the root")
    raise fail("wrong-count", f"for {label} you counted {got} nodes, the graph has {want}", hint)


# -- 3. backward ---------------------------------------------------------------------------------------------


def _jacobian_cases() -> list[tuple[str, Callable, np.ndarray, np.ndarray]]:
    torch = _mg()
    A = np.array([[1.0, 2.0, 0.0, -1.0], [0.5, 0.0, 3.0, 1.0], [0.0, -2.0, 1.0, 0.0]])
    x4 = np.array([1.0, -0.5, 2.0, 0.25])
    x2 = np.array([0.5, 2.0])
    return [
        ("f(t) = A @ t (A is 3x4)", lambda t: torch.tensor(A) @ t, x4, A),
        ("f(t) = [t0 * t1, sin(t1), t0 + t1]",
         lambda t: torch.stack([t[0] * t[1], t[1].sin(), t[0] + t[1]]), x2,
         np.array([[x2[1], x2[0]], [0.0, np.cos(x2[1])], [1.0, 1.0]])),
        ("f(t) = t ** 2", lambda t: t**2, x4, np.diag(2 * x4)),
    ]


@checker("3", hint="jacobian(f, x) should return a 2-D tensor whose row i is the gradient of f(x)[i]")
def check_jacobian(jacobian: Any) -> str:
    torch = _mg()
    _require_callable(jacobian, "`jacobian`", "replace `return ...` with the loop over one-hot vectors")
    for label, f, x, want in _jacobian_cases():
        got = _call(jacobian, f, torch.tensor(x, dtype=torch.float64), what="jacobian", errors=(
            (r"backward through the graph a second time", "graph-freed",
             "each backward pass frees the graph: compute f(x) again for every row (or pass retain_graph=True)"),
            (r"does not require grad", "no-requires-grad",
             "the x you differentiate must require grad: keep the line x = x.detach().requires_grad_()"),
        ))
        if not_answered(got):
            raise fail("placeholder", "jacobian still returns the placeholder `...`",
                       "build the rows, then return torch.stack(rows)")
        if isinstance(got, (list, tuple)):
            raise fail("list-not-tensor", f"jacobian returned a Python {type(got).__name__} of rows, not a tensor",
                       "torch.stack(rows) turns the rows into one 2-D tensor")
        if not _is_tensor(got):
            raise fail("not-a-tensor", f"jacobian returned {_kind(got)}, not a tensor", "return torch.stack(rows)")
        arr = _to_numpy(got)
        symmetric = want.shape == want.T.shape and np.allclose(want, want.T)
        if not symmetric and arr.shape == want.T.shape and np.allclose(arr, want.T, rtol=1e-9, atol=1e-12):
            raise fail("transpose", f"for {label} you got the transpose", "row i should be the gradient of output i")
        if arr.shape != want.shape:
            raise fail("shape", f"for {label} the result has shape {arr.shape}, expected {want.shape}",
                       "one row per output element, one column per input element")
        if np.allclose(arr, want, rtol=1e-9, atol=1e-12):
            continue
        if np.allclose(arr, np.cumsum(want, axis=0), rtol=1e-9, atol=1e-12):
            raise fail("accumulated", f"for {label} each row holds the sum of the rows before it",
                       "backward() adds into x.grad: set x.grad = None before each row (or use torch.autograd.grad)")
        if np.allclose(arr, np.tile(want.sum(axis=0), (want.shape[0], 1)), rtol=1e-9, atol=1e-12):
            raise fail("ones-not-onehot", f"for {label} every row is the gradient of the sum of the outputs",
                       "the vector for row i is one-hot: 1 at position i, 0 elsewhere (not all ones)")
        raise fail("wrong-values", f"for {label} you got {_fmt(arr)}, expected {_fmt(want)}",
                   "row i is torch.autograd.grad(f(x), x, grad_outputs=e_i)[0], with e_i one-hot")
    return "jacobian builds J row by row from vector-Jacobian products with one-hot vectors"


# -- 4. accumulation and retain_graph -------------------------------------------------------------------


def _simulate_train(steps: int, lr: float, fresh_forward: bool, zero_grad: bool) -> float:
    """Plain-float versions of the training loop, right and wrong, for the hints."""
    w, grad, w0 = 1.0, 0.0, 1.0
    for _ in range(steps):
        g = 4 * (2 * (w if fresh_forward else w0) - 6)
        grad = g if zero_grad else grad + g
        w -= lr * grad
    return w


_TRAIN_ERRORS = (
    (r"leaf Variable that requires grad is being used in an in-place operation", "no-no-grad",
     "the update w -= lr * w.grad changes a leaf that requires grad in place: do it inside `with torch.no_grad():`"),
    (r"'NoneType' object has no attribute 'zero_'", "zero-before-backward",
     "w.grad is None until the first backward(): clear it after the update (w.grad = None), not before backward"),
    (r"unsupported operand.*NoneType", "grad-none-at-update",
     "w.grad was None when you updated w: clear the gradient after the update, not between backward() and it"),
    (r"backward through the graph a second time", "stale-forward",
     "compute the loss from w inside the loop: every step needs a fresh forward pass (not retain_graph=True)"),
    (r"does not require grad and does not have a grad_fn", "lost-requires-grad",
     "w = w - ... makes a new tensor that does not require grad: update w in place (w -= ...) under no_grad()"),
)


@checker("4", hint="train(x, target, steps, lr) should run the loop and return the tensor w")
def check_train(train: Any) -> str:
    _require_callable(train, "`train`", "write the loop inside train()")
    torch = _mg()
    for steps, lr in [(1, 0.01), (20, 0.05), (5, 0.1)]:
        call = f"train(x, target, steps={steps}, lr={lr})"
        w = _call(train, torch.tensor(2.0), torch.tensor(6.0), steps, lr, what=call, errors=_TRAIN_ERRORS)
        if not_answered(w):
            raise fail("placeholder", f"{call} returned the placeholder `...`", "return the tensor w at the end")
        if _is_tensor(w) and w.grad_fn is not None:
            raise fail("rebinds-w", f"{call} returned a w with a grad_fn ({w.grad_fn.name()}): it is no longer a leaf",
                       "w = w - lr * w.grad records a new tensor; update the leaf in place: "
                       "`with torch.no_grad(): w -= lr * w.grad`")
        arr = _to_numpy(w)
        if arr is None or arr.size != 1:
            raise fail("not-a-number", f"{call} should return w (one number), got {_fmt(w)}", "return w")
        got = float(arr.reshape(()))
        want = _simulate_train(steps, lr, fresh_forward=True, zero_grad=True)
        if math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-5):
            continue
        where = f"{call} returned w = {got:.6g}, expected {want:.6g}"
        if math.isclose(got, 1.0):
            raise fail("no-update", f"{where} (w never changed)",
                       "in a loop: compute the loss, call backward(), then update w under no_grad()")
        if math.isclose(got, _simulate_train(steps, lr, True, False), rel_tol=1e-4):
            raise fail("accumulating", where, "gradients pile up: clear w.grad (w.grad = None) after each update")
        if any(math.isclose(got, _simulate_train(steps, lr, False, z), rel_tol=1e-4) for z in (True, False)):
            raise fail("stale-forward", where,
                       "the prediction is stale: compute w * x inside the loop, from the current w")
        raise fail("wrong-values", where,
                   "loss = (w * x - target) ** 2; loss.backward(); with torch.no_grad(): w -= lr * w.grad")
    return "train() recomputes the forward pass and clears the gradient every step (w -> 3)"


# -- 5. hooks ------------------------------------------------------------------------------------------------


@checker("5", hint="clip_hook(grad) should return a new tensor: grad clamped to [-1, 1]")
def check_clip_hook(clip_hook: Any) -> str:
    torch = _mg()
    _require_callable(clip_hook, "`clip_hook`", "replace `return ...` with the clipped gradient")
    # 1. called directly, on a gradient with elements inside and outside [-1, 1]
    values = np.array([-3.0, -0.5, 0.25, 2.0])
    probe = torch.tensor(values, dtype=torch.float64)
    version = probe._version
    got = _call(clip_hook, probe, what="clip_hook(grad)")
    want = np.clip(values, -1.0, 1.0)
    if probe._version != version or not np.array_equal(probe.numpy(), values):
        raise fail("in-place", "clip_hook changed the gradient it was given, in place",
                   "a hook must not modify its argument (PyTorch's docs): return grad.clamp(-1, 1), a new tensor")
    if got is None:
        raise fail("returns-none", "clip_hook returned None, so the gradient passes unchanged",
                   "a hook that returns None only looks: return the clipped tensor")
    if not_answered(got):
        raise fail("placeholder", "clip_hook still returns the placeholder `...`",
                   "a hook receives the gradient and returns the new one: Tensor.clamp limits values")
    if not _is_tensor(got):
        raise fail("not-a-tensor", f"clip_hook returned {_kind(got)}, not a tensor",
                   "return a tensor: grad.clamp(-1, 1)")
    arr = _to_numpy(got)
    if arr.shape != values.shape:
        raise fail("shape", f"clip_hook returned shape {arr.shape} for a gradient of shape {values.shape}",
                   "the new gradient has the shape of the old one: clamp each element, do not reduce")
    if not np.allclose(arr, want, rtol=1e-12, atol=1e-12):
        if np.allclose(arr, values):
            raise fail("unchanged", "clip_hook returned the gradient unchanged", "clamp every element to [-1.0, 1.0]")
        norm = np.linalg.norm(values)
        if np.allclose(arr, values / norm) or np.allclose(arr, values * min(1.0, 1.0 / norm)):
            raise fail("clips-norm", "clip_hook scaled the whole gradient down to norm 1",
                       "that is clipping by norm (clip_grad_norm_); here each element is limited to [-1, 1] on its own")
        if np.allclose(arr, np.sign(values)):
            raise fail("sign", "clip_hook returned the signs of the gradient",
                       "elements already inside [-1, 1] keep their value: clamp, do not take the sign")
        raise fail("wrong-range", f"clip_hook({_fmt(values)}) gave {_fmt(arr)}, expected {_fmt(want)}",
                   "clamp every element to [-1.0, 1.0]: grad.clamp(-1.0, 1.0)")
    # 2. registered on an intermediate tensor, during a real backward pass
    x = torch.tensor(np.array([-0.3, 0.02, 0.5, -0.05]), dtype=torch.float64, requires_grad=True)
    y = x * 5
    y.register_hook(clip_hook)
    _call(lambda: (y * y).sum().backward(), what="backward() with your hook")  # dL/dy = 2y = 10x, clipped
    expected = 5 * np.clip(10 * x.detach().numpy(), -1, 1)
    if not _close(x.grad, expected, rtol=1e-9, atol=1e-12):
        raise fail("wrong-in-graph", f"with the hook on y, x.grad is {_fmt(x.grad)}, expected {_fmt(expected)}",
                   "return the clipped gradient; the nodes further back use what the hook returns")
    return "clip_hook returns a clipped copy (the gradient it receives is left alone), and the leaf sees the clip"


# -- 6. turning autograd off ----------------------------------------------------------------------------

_GRAD_QUIZ = {
    "a": (False, "no_grad() records nothing: results of operations inside it do not require grad"),
    "b": (False, "detach() returns a tensor without history, so x.detach() * 2 is a constant"),
    "c": (True, "r = x is no operation at all: r IS x, which requires grad, whatever the mode"),
    "d": (True, "x * 2 is a leaf that does not require grad (no graph was recorded), and requires_grad_() "
                "switches a leaf on"),
    "e": (False, "inference_mode() is a stricter no_grad: nothing inside requires grad"),
    "f": (True, "volatile does nothing any more: the product with x is recorded as usual"),
}


@checker("6a", hint="answers should be a dict like {'a': True, 'b': False, ...}")
def check_grad_quiz(answers: Any) -> str:
    require_answer(answers, "`answers`", "fill in the dict with True or False for each snippet")
    if not isinstance(answers, dict):
        raise fail("not-a-dict", f"`answers` should be a dict, got {_kind(answers)}", "answers = {'a': True, ...}")
    missing = sorted(k for k in _GRAD_QUIZ if k not in answers)
    if missing:
        raise fail("missing-keys", f"`answers` has no entry for {missing}", "one key per snippet, 'a' to 'f'")
    todo = sorted(k for k in _GRAD_QUIZ if not_answered(answers[k]))
    if todo:
        raise fail("placeholder", f"still `...` for {todo}", "replace each ... with True or False")
    wrong = []
    for key, (want, why) in _GRAD_QUIZ.items():
        got = answers[key]
        if not isinstance(got, (bool, np.bool_)):
            raise fail("not-bool", f"answers[{key!r}] should be True or False, got {got!r}",
                       "use the booleans True and False (not strings or numbers)")
        if bool(got) != want:
            wrong.append((key, why))
    if wrong:
        keys = ", ".join(k for k, _ in wrong)
        raise fail(f"wrong-{wrong[0][0]}", f"{len(wrong)} of 6 wrong ({keys})",
                   f"({wrong[0][0]}) {translate(wrong[0][1])}")  # the explanation alone is a message
    return "6 of 6: no_grad, detach and inference_mode stop recording; r = x and requires_grad_() do not; " \
           "volatile is ignored"


def _evaluate_cases() -> list[tuple[Any, Any, Any, float, float]]:
    torch = _mg()
    rng = np.random.default_rng(6)
    cases = []
    for n in (4, 7, 12):
        w = rng.normal(size=3)
        inputs = rng.normal(size=(n, 3))
        labels = (rng.random(n) < 0.5).astype(np.float64)
        scores = inputs @ w
        loss = float(np.mean(np.maximum(scores, 0) - scores * labels + np.log1p(np.exp(-np.abs(scores)))))
        accuracy = float(np.mean((scores > 0).astype(np.float64) == labels))
        cases.append((torch.tensor(w, requires_grad=True), torch.tensor(inputs), torch.tensor(labels), loss, accuracy))
    return cases


def _pack(saved: list, tensor: Any) -> Any:
    saved.append(1)
    return tensor


def _unpack(tensor: Any) -> Any:
    return tensor


def _number(value: Any, what: str) -> float:
    arr = _to_numpy(value)
    if arr is None or arr.size != 1:
        raise fail("not-a-number", f"{what} should be one number (a tensor or a float), got {_fmt(value)}",
                   "return the mean over the rows: one number")
    return float(arr.reshape(()))


@checker("6b", hint="evaluate(w, inputs, labels) should return (loss, accuracy), computed without recording a graph")
def check_evaluate(evaluate: Any) -> str:
    torch = _mg()
    from minigrad.autograd.graph import saved_tensors_hooks

    _require_callable(evaluate, "`evaluate`", "replace `return ...` with the computation under torch.no_grad()")
    for w, inputs, labels, want_loss, want_acc in _evaluate_cases():
        saved: list = []  # every tensor a node saves for backward passes through pack(): a graph is recorded
        with saved_tensors_hooks(functools.partial(_pack, saved), _unpack):
            got = _call(evaluate, w, inputs, labels, what="evaluate")
        mode_after = torch.is_grad_enabled()
        torch.set_grad_enabled(True)
        if not_answered(got):
            raise fail("placeholder", "evaluate still returns the placeholder `...`",
                       "compute scores, loss and accuracy under torch.no_grad() and return (loss, accuracy)")
        if not mode_after:
            raise fail("mode-left-off", "grad mode is still off after evaluate() returned (the check switched it on)",
                       "use `with torch.no_grad():` (or `with torch.set_grad_enabled(False):`), which restores the "
                       "mode when the block ends; a plain torch.set_grad_enabled(False) call does not")
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise fail("not-a-pair", f"evaluate returned {_kind(got)}, not a pair (loss, accuracy)",
                       "return loss, accuracy")
        if any(getattr(v, "requires_grad", False) for v in got):
            raise fail("records-graph", "the result requires grad: evaluate() recorded a graph",
                       "evaluation needs no graph: compute everything inside `with torch.no_grad():`")
        if saved:
            raise fail("recorded-then-dropped",
                       f"evaluate() recorded a graph (its nodes saved {len(saved)} tensor(s) for a backward pass), "
                       "then dropped it",
                       "detach() or .item() at the end come too late: the whole graph was built and kept alive "
                       "meanwhile; under torch.no_grad() nothing is recorded")
        loss, acc = _number(got[0], "the loss"), _number(got[1], "the accuracy")
        if not math.isclose(loss, want_loss, rel_tol=1e-6, abs_tol=1e-9):
            raise fail("wrong-loss", f"the loss is {loss:.6g}, expected {want_loss:.6g}",
                       "loss = F.binary_cross_entropy_with_logits(inputs @ w, labels)")
        if not math.isclose(acc, want_acc, rel_tol=1e-6, abs_tol=1e-9):
            raise fail("wrong-accuracy", f"the accuracy is {acc:.4g}, expected {want_acc:.4g}",
                       "predict 1 where the score inputs @ w is > 0, compare with labels, take the mean")
    note = ""
    if re.search(r"\.data\b", _source_of(evaluate)) and "no_grad" not in _source_of(evaluate):
        note = (" (note: reading w.data records nothing too, so this is accepted; but torch.no_grad() is the "
                "tool: it covers every operation at once, and .data hides in-place changes from autograd)")
    return f"evaluate() computes loss and accuracy without recording anything, and leaves grad mode on{note}"


# -- 7. custom autograd.Function ------------------------------------------------------------------------


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


_FUNCTION_ERRORS = (
    (r"incorrect number of gradients", "wrong-count",
     "backward returns one gradient per input of forward: here one tensor, grad_output * result * (1 - result)"),
    (r"saved_tensors|freed", "saved-tensors", "save with ctx.save_for_backward(result) in forward, "
                                              "read with (result,) = ctx.saved_tensors in backward"),
)


@checker("7", hint="forward should return 1 / (1 + torch.exp(-x)); backward should return grad_output * s * (1 - s)")
def check_sigmoid(MySigmoid: Any) -> str:
    torch = _mg()
    require_answer(MySigmoid, "`MySigmoid`", "define the class in the cell above")
    if not isinstance(MySigmoid, type) or not issubclass(MySigmoid, torch.autograd.Function):
        raise fail("not-a-function", f"`MySigmoid` should be a subclass of torch.autograd.Function, got "
                                     f"{_kind(MySigmoid)}", "class MySigmoid(Function): ...")
    values = np.array([-3.0, -0.5, 0.0, 1.5, 4.0])
    s = _np_sigmoid(values)
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y = _call(MySigmoid.apply, x, what="MySigmoid.apply(x)", errors=_FUNCTION_ERRORS)
    if not_answered(y):
        raise fail("placeholder", "forward still returns the placeholder `...`",
                   "compute the sigmoid, save it, return it")
    if not _is_tensor(y):
        raise fail("not-a-tensor", f"forward returned {_kind(y)}, not a tensor", "return 1 / (1 + torch.exp(-x))")
    if not _close(y, s, rtol=1e-9, atol=1e-12):
        if _close(y, _np_sigmoid(-values), rtol=1e-9, atol=1e-12):
            raise fail("sign", f"forward gives {_fmt(y)}: that is sigmoid(-x)",
                       "the exponent is -x: 1 / (1 + torch.exp(-x))")
        raise fail("wrong-forward", f"forward gives {_fmt(y)}, sigmoid is {_fmt(s)}", "1 / (1 + torch.exp(-x))")
    if y.grad_fn is None:
        raise fail("no-grad-fn", "the output has no grad_fn", "call the function as MySigmoid.apply(x)")
    stored = sorted(k for k, v in vars(y.grad_fn).items() if not k.startswith("_") and _is_tensor(v))
    saved = _call(lambda: tuple(y.grad_fn.saved_tensors), what="reading ctx.saved_tensors", errors=_FUNCTION_ERRORS)
    if not any(_close(t, s, rtol=1e-9, atol=1e-12) for t in saved if t is not None):
        if stored:
            raise fail("tensor-on-ctx", f"forward stored a tensor as ctx.{stored[0]} instead of saving it",
                       "tensors go through ctx.save_for_backward(result): then autograd frees them after backward "
                       "and checks them for in-place changes")
        if any(_close(t, values) for t in saved if t is not None):
            raise fail("saved-input", "forward saved the input x, not the result",
                       "sigma'(x) = sigma(x) * (1 - sigma(x)) needs only the output: ctx.save_for_backward(result), "
                       "so backward does not compute exp again")
        raise fail("nothing-saved", "forward did not save its result", "call ctx.save_for_backward(result) in forward")
    seed = np.array([1.0, -2.0, 0.5, 3.0, 1.0])
    _call(lambda: y.backward(torch.tensor(seed, dtype=torch.float64)), what="backward", errors=_FUNCTION_ERRORS)
    want = seed * s * (1 - s)
    if x.grad is None:
        raise fail("no-gradient", "backward returned None for x", "return grad_output * result * (1 - result)")
    if not _close(x.grad, want, rtol=1e-9, atol=1e-12):
        if _close(x.grad, s * (1 - s)):
            raise fail("ignores-grad-output", "the gradient ignores grad_output",
                       "multiply by grad_output: that is the chain rule")
        raise fail("wrong-backward", f"backward gives {_fmt(x.grad)}, expected {_fmt(want)}",
                   "sigma'(x) = sigma(x) * (1 - sigma(x)), times grad_output")
    x2 = torch.tensor([-1.0, 0.25, 2.0], dtype=torch.float64, requires_grad=True)
    if not torch.autograd.gradcheck(MySigmoid.apply, (x2,), raise_exception=False):
        raise fail("gradcheck", "gradcheck fails", "compare your backward with the formula sigma * (1 - sigma)")
    return "MySigmoid: forward, backward (saving the result) and gradcheck all agree"


# -- 8. higher-order gradients -------------------------------------------------------------------------


def _hvp_cases() -> list[tuple[str, Callable, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """(label, f, x, v, H, gradient at x)."""
    torch = _mg()
    A = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, -1.0], [0.0, -1.0, 1.0]])
    At = torch.tensor(A)
    x = np.array([0.3, -1.2, 0.8])
    v = np.array([1.0, -2.0, 0.5])
    p = np.prod(x)
    return [
        ("f(x) = x @ A @ x / 2", lambda t: 0.5 * t @ At @ t, x, v, A, A @ x),
        ("f(x) = sum(x * sin(x))", lambda t: (t * t.sin()).sum(), x, v, np.diag(2 * np.cos(x) - x * np.sin(x)),
         np.sin(x) + x * np.cos(x)),
        ("f(x) = (x0 * x1 * x2) ** 2", lambda t: t.prod() ** 2, x, v, _prod_sq_hessian(x), 2 * p * p / x),
    ]


def _prod_sq_hessian(x: np.ndarray) -> np.ndarray:
    """Hessian of (x0 x1 x2)^2: d2/dxi dxj = 4 p^2/(xi xj) for i != j, 2 p^2 / xi^2 on the diagonal."""
    p2 = np.prod(x) ** 2
    H = 4 * p2 / np.outer(x, x)
    np.fill_diagonal(H, 2 * p2 / x**2)
    return H


def _counting(f: Callable, passes: list) -> Callable:
    """f, plus a hook on its input that counts the backward passes reaching it."""
    hooked: list = []

    def counted(t: Any) -> Any:
        if getattr(t, "requires_grad", False) and not any(t is h for h in hooked):
            hooked.append(t)
            t.register_hook(lambda g: passes.append(1))
        return f(t)

    return counted


@checker("8", hint="hvp(f, x, v): g = grad(f(x), x, create_graph=True), then return grad(g @ v, x)")
def check_hvp(hvp: Any) -> str:
    torch = _mg()
    _require_callable(hvp, "`hvp`", "replace `return ...` with the two calls to torch.autograd.grad")
    for label, f, x, v, H, g in _hvp_cases():
        passes: list = []
        got = _call(hvp, _counting(f, passes), torch.tensor(x, dtype=torch.float64),
                    torch.tensor(v, dtype=torch.float64), what="hvp", errors=(
                        (r"does not require grad and does not have a grad_fn", "no-create-graph",
                         "the first gradient must be differentiable: pass create_graph=True to the first grad"),
                        (r"backward through the graph a second time", "graph-freed",
                         "the second pass runs through the graph of g: create_graph=True keeps what it needs"),
                    ))
        want = H @ v
        if not_answered(got):
            raise fail("placeholder", "hvp still returns the placeholder `...`", "two calls to torch.autograd.grad")
        if isinstance(got, (tuple, list)):
            raise fail("tuple", f"hvp returned a {type(got).__name__}, not a tensor",
                       "torch.autograd.grad returns a tuple: unpack it with (hv,) = torch.autograd.grad(...)")
        arr = _to_numpy(got)
        if arr is None or arr.shape != want.shape:
            raise fail("shape", f"for {label} hvp returned {_fmt(got)}, expected a vector like x",
                       "return the tensor Hv")
        if not np.allclose(arr, want, rtol=1e-9, atol=1e-12):
            for reason, alt, problem, hint in (
                ("returned-gradient", g, "that is the gradient g", "g is pass 1; Hv is the gradient of g @ v (pass 2)"),
                ("elementwise", g * v, "that is g * v, the gradient times v",
                 "differentiate the scalar g @ v with respect to x (a second backward pass)"),
                ("v-after", (H @ np.ones_like(v)) * v, "v was applied after the second pass",
                 "v goes into the second pass: grad(g @ v, x), not grad(g.sum(), x) * v"),
                ("accumulated-grad", g + want, "x.grad held g and Hv added up",
                 "backward() adds into x.grad: use torch.autograd.grad for both passes"),
            ):
                if np.allclose(arr, alt, rtol=1e-9, atol=1e-12):
                    raise fail(reason, f"for {label} hvp gives {_fmt(arr)}: {problem}", hint)
            raise fail("wrong-values", f"for {label} hvp gives {_fmt(arr)}, expected {_fmt(want)}",
                       "the first grad needs create_graph=True; the second differentiates g @ v")
        if len(passes) > 2:
            reason = "full-hessian" if len(passes) >= 1 + len(x) else "too-many-passes"
            raise fail(reason, f"hvp ran {len(passes)} backward passes for a {len(x)}-element x "
                               "(building the Hessian takes one per row)",
                       "two passes are enough and the Hessian is never built: g = grad(f(x), x, create_graph=True), "
                       "then grad(g @ v, x)")
    return "hvp computes Hessian-vector products with two backward passes, without building the Hessian"


# -- 9. in-place operations and version counters -------------------------------------------------------


@checker("9", hint="softplus_fixed(x) should return log(1 + exp(x)) computed without in-place operations")
def check_softplus(softplus_fixed: Any) -> str:
    torch = _mg()
    _require_callable(softplus_fixed, "`softplus_fixed`", "replace `return ...` with an out-of-place version")
    values = np.array([-2.0, -0.5, 0.0, 1.0, 3.0])
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    version = x._version
    y = _call(softplus_fixed, x, what="softplus_fixed(x)", errors=(
        (r"leaf Variable that requires grad", "modified-x",
         "leave x alone: build new tensors from it (x.exp(), not x.exp_())"),
    ))
    if not_answered(y):
        raise fail("placeholder", "softplus_fixed still returns the placeholder `...`",
                   "compute the same values as softplus_buggy, without changing a tensor in place")
    if not _is_tensor(y):
        raise fail("not-a-tensor", f"softplus_fixed returned {_kind(y)}, not a tensor",
                   "return a tensor computed from x")
    want = np.log1p(np.exp(values))
    if not _close(y, want, rtol=1e-9, atol=1e-12):
        raise fail("wrong-values", f"softplus_fixed gives {_fmt(y)}, expected {_fmt(want)}",
                   "softplus(x) = log(1 + e^x)")
    if x._version != version:
        raise fail("modified-x", "softplus_fixed modified x in place", "leave x alone: build new tensors from it")
    if not getattr(y, "requires_grad", False):
        raise fail("no-graph", "the result does not require grad: no graph was recorded",
                   "do not use no_grad(), detach() or .data here: the gradient has to flow back to x")
    _call(lambda: y.sum().backward(), what="backward()", errors=(
        (r"modified by an inplace operation", "inplace-saved",
         "an in-place operation changed a tensor that a node saved (exp saves its result): "
         "write y = y + 1, not y += 1 (or clone() first)"),
    ))
    if not _close(x.grad, _np_sigmoid(values), rtol=1e-9, atol=1e-12):
        if _close(x.grad, np.ones_like(values)):
            raise fail("data-trick",
                       f"the gradient is {_fmt(x.grad)}, expected sigmoid(x) = {_fmt(_np_sigmoid(values))}",
                       "writing through .data hides the change from the version counter, so backward used the "
                       "modified values: go out of place instead")
        raise fail("wrong-gradient", f"the gradient is {_fmt(x.grad)}, expected sigmoid(x) = "
                                     f"{_fmt(_np_sigmoid(values))}",
                   "did you use .data or detach() somewhere? they cut or corrupt the gradient")
    return "softplus_fixed: right values, x untouched, and backward gives sigmoid(x)"


# -- 10. training -----------------------------------------------------------------------------------------


def _tiny_model_and_data(log: list | None = None) -> tuple[Any, Any, Any, Any]:
    """A 4-3-2 network with fixed weights (no draw from the global RNG) and a batch of 6."""
    torch = _mg()
    nn = torch.nn
    rng = np.random.default_rng(10)

    class Tiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w1 = nn.Parameter(torch.tensor(rng.normal(size=(4, 3)).astype(np.float32)))
            self.b1 = nn.Parameter(torch.tensor(rng.normal(size=3).astype(np.float32)))
            self.w2 = nn.Parameter(torch.tensor(rng.normal(size=(3, 2)).astype(np.float32)))

        def forward(self, x: Any) -> Any:
            return torch.relu(x @ self.w1 + self.b1) @ self.w2

        def zero_grad(self, set_to_none: bool = True) -> None:
            if log is not None:
                log.append("zero_grad")
            super().zero_grad(set_to_none)

    model = Tiny()
    if log is not None:
        model.w2.register_hook(lambda g: log.append("backward"))
    xb = torch.tensor(rng.normal(size=(6, 4)).astype(np.float32))
    yb = torch.tensor(np.array([0, 1, 1, 0, 1, 0], dtype=np.int64))
    return model, nn.CrossEntropyLoss(), xb, yb


def _logged_sgd(params: Any, log: list) -> Any:
    torch = _mg()

    class LoggedSGD(torch.optim.SGD):
        def zero_grad(self, set_to_none: bool = True) -> None:
            log.append("zero_grad")
            super().zero_grad(set_to_none)

        def step(self, closure: Any = None) -> Any:
            log.append("step")
            return super().step(closure)

    return LoggedSGD(params, lr=0.5)


def _reference_steps(zero: bool, steps: int = 2) -> tuple[list[float], list[np.ndarray]]:
    torch = _mg()
    model, loss_fn, xb, yb = _tiny_model_and_data()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for _ in range(steps):
        if zero:
            opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def _order_problem(calls: list[list[str]]) -> tuple[str, str, str] | None:
    """What is wrong with the order of zero_grad / backward / step in the logged calls, if anything."""
    for log in calls:
        if "backward" not in log:
            return "no-backward", "train_step never called loss.backward()", \
                "loss.backward() fills every parameter's .grad; optimizer.step() then uses it"
        if "step" not in log:
            return "no-step", "train_step never called optimizer.step()", \
                "optimizer.step() is what changes the parameters"
        if log.index("step") < log.index("backward"):
            return "step-before-backward", "train_step called optimizer.step() before loss.backward()", \
                "step() uses the gradients backward() computes: backward first, then step"
        between = log[log.index("backward"):log.index("step")]
        if "zero_grad" in between:
            return "zeroed-before-step", "train_step cleared the gradients between backward() and step()", \
                "zero_grad() goes at the start of the step: between backward() and step() it throws the gradient away"
    if not any("zero_grad" in log for log in calls):
        return "no-zero-grad", "train_step never clears the gradients, so the second step used both steps' gradients", \
            "call optimizer.zero_grad() at the start of every step: .grad accumulates"
    return None


@checker("10", hint="train_step should zero the gradients, compute the loss, call backward() and optimizer.step()")
def check_train_step(train_step: Any) -> str:
    _require_callable(train_step, "`train_step`", "replace `return ...` with the four lines of a training step")
    log: list[str] = []
    model, loss_fn, xb, yb = _tiny_model_and_data(log)
    opt = _logged_sgd(model.parameters(), log)
    start = [p.detach().numpy().copy() for p in model.parameters()]
    results, calls = [], []
    for _ in range(2):
        log.clear()
        results.append(_call(train_step, model, loss_fn, opt, xb, yb, what="train_step"))
        calls.append(list(log))
    if any(not_answered(r) for r in results):
        raise fail("placeholder", "train_step still returns the placeholder `...`",
                   "write the step, then return loss.item()")
    params = [p.detach().numpy() for p in model.parameters()]
    want_losses, want_params = _reference_steps(zero=True)
    if not all(np.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(params, want_params)):
        problem = _order_problem(calls)
        if problem is not None:
            raise fail(*problem)
        if all(np.array_equal(a, b) for a, b in zip(params, start)):
            raise fail("no-change", "the parameters did not change",
                       "call loss.backward() to fill the gradients and optimizer.step() to apply them")
        raise fail("wrong-params", "after two steps the parameters differ from a correct run",
                   "order: optimizer.zero_grad(); loss = loss_fn(model(xb), yb); loss.backward(); optimizer.step()")
    for got, want in zip(results, want_losses):
        if got is None:
            raise fail("returns-none", "train_step returned None", "return loss.item(), the loss of this step")
        if isinstance(got, bool) or not isinstance(got, (float, int, np.floating)):
            raise fail("not-a-number", f"train_step returned {_kind(got)}, not a Python number", "return loss.item()")
        if not math.isclose(float(got), want, rel_tol=1e-5):
            raise fail("wrong-loss", f"train_step returned {float(got):.6g}, the loss of that step was {want:.6g}",
                       "return the loss computed in this step, before optimizer.step() changed the parameters")
    return "train_step: zero_grad, forward, backward, step, and it returns the loss as a number"


# -- 11. backprop by hand ------------------------------------------------------------------------------


def _batchnorm_case(seed: int = 11, n: int = 8, width: int = 5) -> dict[str, Any]:
    """A batch-norm layer written out as lesson 11 writes it, with a loss whose gradient at hpreact is
    a fixed random array (so every path matters)."""
    torch = _mg()
    rng = np.random.default_rng(seed)
    hprebn = torch.tensor(rng.standard_normal((n, width)) * 2.0 + 0.5, requires_grad=True)
    bngain = torch.tensor(1.0 + 0.1 * rng.standard_normal((1, width)), requires_grad=True)
    bnbias = torch.tensor(0.1 * rng.standard_normal((1, width)), requires_grad=True)
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bnvar = 1 / (n - 1) * (bndiff**2).sum(0, keepdim=True)
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    dhpreact = rng.standard_normal((n, width))
    loss = (hpreact * torch.tensor(dhpreact)).sum()
    return {"loss": loss, "hprebn": hprebn, "bngain": bngain, "bnbias": bnbias, "bnraw": bnraw,
            "bnvar_inv": bnvar_inv, "dhpreact": dhpreact, "n": n}


@checker("11", hint="batchnorm_backward(dhpreact, bnraw, bnvar_inv, bngain) returns (dhprebn, dbngain, dbnbias)")
def check_batchnorm_backward(batchnorm_backward: Any) -> str:
    import viz

    torch = _mg()
    _require_callable(batchnorm_backward, "`batchnorm_backward`", "define the function in the cell above")
    case = _batchnorm_case()
    n = case["n"]
    args = tuple(torch.tensor(_to_numpy(case[k])) for k in ("bnraw", "bnvar_inv", "bngain"))
    with torch.no_grad():
        got = _call(batchnorm_backward, torch.tensor(case["dhpreact"]), *args, what="batchnorm_backward(...)")
    if not_answered(got):
        raise fail("placeholder", "batchnorm_backward still returns the placeholder `...`",
                   "return the three gradients: dhprebn, dbngain, dbnbias")
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise fail("not-three", f"batchnorm_backward returned {_kind(got)}, not three gradients",
                   "return dhprebn, dbngain, dbnbias (a tuple of three tensors)")
    if any(not_answered(g) for g in got):
        raise fail("placeholder", "one of the three gradients is still the placeholder `...`",
                   "compute dhprebn, dbngain and dbnbias")
    names = ("hprebn", "bngain", "bnbias")
    result = viz.compare(case["loss"], mine=dict(zip(names, got)), params={k: case[k] for k in names}, draw=False)
    for name in ("bngain", "bnbias"):
        entry = result[name]
        if entry.mine_shape is not None and entry.mine_shape != entry.shape:
            raise fail("gain-shape", f"d{name} has shape {entry.mine_shape}, {name} has shape {entry.shape}",
                       "a gradient has its tensor's shape: sum over the batch with .sum(0, keepdim=True)")
    if result["bnbias"].verdict == "wrong":
        raise fail("bias", f"dbnbias is wrong (off by up to {result['bnbias'].max_diff:.3g})",
                   "hpreact = bngain * bnraw + bnbias: dbnbias is dhpreact summed over the batch")
    if result["bngain"].verdict == "wrong":
        raise fail("gain", f"dbngain is wrong (off by up to {result['bngain'].max_diff:.3g})",
                   "dbngain = (bnraw * dhpreact) summed over the batch, keepdim=True")
    entry = result["hprebn"]
    if entry.verdict == "wrong":
        mine = _to_numpy(got[0])
        d, raw, inv, gain = case["dhpreact"], *(_to_numpy(a) for a in args)
        biased = gain * inv / n * (n * d - d.sum(0) - raw * (d * raw).sum(0))
        direct = gain * inv * d
        if mine is not None and mine.shape == d.shape and np.allclose(mine, biased, rtol=1e-6, atol=1e-9):
            raise fail("bessel", f"dhprebn is off by up to {entry.max_diff:.3g}: it divides the variance by n",
                       "the forward divides by n - 1 (Bessel's correction): the last term carries n / (n - 1)")
        if mine is not None and mine.shape == d.shape and np.allclose(mine, direct, rtol=1e-6, atol=1e-9):
            raise fail("direct-only", f"dhprebn is off by up to {entry.max_diff:.3g}: only the direct path",
                       "hprebn reaches the loss three ways (directly, through the mean, through the variance): "
                       "add the gradients of all three")
        if entry.mine_shape is not None and entry.mine_shape != entry.shape:
            raise fail("hprebn-shape", f"dhprebn has shape {entry.mine_shape}, hprebn has shape {entry.shape}",
                       "dhprebn has hprebn's shape (batch, features)")
        raise fail("hprebn", f"dhprebn is wrong (off by up to {entry.max_diff:.3g})",
                   "derive it step by step (bnraw, bnvar_inv, bnvar, bndiff, bnmeani) and compare each with "
                   "viz.compare before fusing them into one line")
    return "batchnorm_backward: dhprebn, dbngain and dbnbias match autograd (checked with viz.compare)"


# -- 12. debugging a custom Function -------------------------------------------------------------------


def _np_swish(x: np.ndarray, beta: float) -> np.ndarray:
    return x * _np_sigmoid(beta * x)


_SWISH_ERRORS = (
    (r"incorrect number of gradients", "wrong-count",
     "backward returns one gradient per input of forward: two here, for x and for beta"),
    (r"saved_tensors|freed", "saved-tensors", "save with ctx.save_for_backward(x, beta) in forward"),
)


@checker("12", hint="MySwish.forward(ctx, x, beta) returns x * sigmoid(beta * x); backward returns "
                    "(grad for x, grad for beta)")
def check_swish(MySwish: Any) -> str:
    import viz

    torch = _mg()
    require_answer(MySwish, "`MySwish`", "define the class in the cell above")
    if not isinstance(MySwish, type) or not issubclass(MySwish, torch.autograd.Function):
        raise fail("not-a-function", f"`MySwish` should be a subclass of torch.autograd.Function, got "
                                     f"{_kind(MySwish)}", "class MySwish(Function): ...")
    values, b = np.array([-2.0, -0.5, 0.3, 1.5, 3.0]), 0.8
    x = torch.tensor(values, requires_grad=True)
    beta = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    y = _call(MySwish.apply, x, beta, what="MySwish.apply(x, beta)", errors=_SWISH_ERRORS)
    if not_answered(y):
        raise fail("placeholder", "forward still returns the placeholder `...`",
                   "compute x * sigmoid(beta * x), save what backward needs, return it")
    if not _is_tensor(y):
        raise fail("not-a-tensor", f"forward returned {_kind(y)}, not a tensor", "return x * torch.sigmoid(beta * x)")
    if not _close(y, _np_swish(values, b), rtol=1e-9, atol=1e-12):
        raise fail("forward", f"forward gives {_fmt(y)}, expected {_fmt(_np_swish(values, b))}",
                   "swish(x) = x * sigmoid(beta * x)")
    seed = np.array([1.0, -2.0, 0.5, 3.0, 1.0])
    check = viz.gradcheck_graph((y * torch.tensor(seed)).sum(), draw=False)
    node = next((c for c in check.nodes if c.name == f"{MySwish.__name__}Backward"), None)
    if node is None or node.verdict == "skipped":
        raise fail("not-checked", "the graph check could not run MySwish", "call MySwish.apply(x, beta)")
    if node.verdict == "wrong" and not node.inputs:
        text = node.reason
        if "incorrect number of gradients" in text:
            raise fail("wrong-count", f"{text}", "backward returns one gradient per input of forward: two here, "
                                                  "for x and for beta")
        if re.search(r"shape|size", text):
            raise fail("beta-shape", f"{text}", "beta is one number: its gradient is summed over every element")
        raise fail("backward", text, "read the error: backward must return (gradient for x, gradient for beta)")
    names = {i.position: i for i in node.wrong_inputs}
    if 0 in names:
        bad = names[0]
        raise fail("grad-x", f"the gradient for x is off by up to {bad.max_diff:.3g}",
                   "product rule: d/dx [x * s] with s = sigmoid(beta * x) is s + beta * x * s * (1 - s)")
    if 1 in names:
        bad = names[1]
        if "shape" in bad.note:
            raise fail("beta-shape", f"the gradient for beta has the wrong shape ({bad.note})",
                       "beta is one number: its gradient is summed over every element")
        raise fail("grad-beta", f"the gradient for beta is off by up to {bad.max_diff:.3g}",
                   "d/dbeta [x * sigmoid(beta * x)] = x * x * s * (1 - s), summed over the elements")
    x2 = torch.tensor([-1.0, 0.25, 2.0], dtype=torch.float64, requires_grad=True)
    beta2 = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    if not torch.autograd.gradcheck(MySwish.apply, (x2, beta2), raise_exception=False):
        raise fail("gradcheck", "gradcheck fails", "compare your backward with the product rule, input by input")
    return f"MySwish: forward, both gradients (viz.gradcheck_graph) and gradcheck agree{_unsummed_note(MySwish)}"


def _unsummed_note(MySwish: Any) -> str:
    """A note when backward returns beta's gradient element by element: autograd sums it to beta's shape
    (PyTorch does the same), so the gradient is right, but the lesson asks for the sum."""
    torch = _mg()
    x = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    beta = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    try:
        y = MySwish.apply(x, beta)
        grads = y.grad_fn.apply(torch.ones(3, dtype=torch.float64))
        shape = tuple(grads[1].shape)
    except Exception:  # noqa: BLE001 - only a note: the verdict stands without it
        return ""
    if shape == ():
        return ""
    return (f" (note: backward returns grad_beta with shape {shape}; autograd sums it to beta's shape, as PyTorch "
            "does, so the gradient is right, but write the sum yourself: .sum())")


def _source_of(func: Any) -> str:
    """A function's source, or "" when there is none to read (a lambda in a REPL, a builtin)."""
    import inspect

    try:
        return inspect.getsource(func)
    except (OSError, TypeError):
        return ""


# -- 14. a reference engine ------------------------------------------------------------------------------


# -- 13. forward mode and function transforms -----------------------------------------------------------

_DIVIDE_CASES = (  # (a.value, a.tangent, b.value, b.tangent, what the case shows)
    (1.5, -2.0, -0.5, 3.0, "a = Dual(1.5, -2), b = Dual(-0.5, 3)"),  # first: each mistake gives its own tangent
    (1.2, 1.0, float(np.sin(1.2)), float(np.cos(1.2)), "x / sin(x) at x = 1.2"),
    (3.0, 1.0, 2.0, 0.0, "b = Dual(2, 0), a constant"),
    (3.0, 0.0, 2.0, 1.0, "a = Dual(3, 0), a constant"),
)


def _divide_mistake(a: tuple, got: float) -> tuple[str, str, str] | None:
    """The quotient-rule mistake that gives ``got``, if one does: (reason, what it is, hint)."""
    av, at, bv, bt = a
    for reason, value, what, hint in (
        ("sign", (av * bt - at * bv) / bv**2, "the two terms are swapped (the sign is wrong)",
         "a' b comes first: (a.tangent * b.value - a.value * b.tangent) / b.value**2"),
        ("not-squared", (at * bv - av * bt) / bv, "the tangent is divided by b once, not by b squared",
         "the quotient rule divides by b²: ... / b.value**2"),
        ("ignores-b", at / bv, "the tangent is a' / b: b's tangent is left out",
         "b moves too: (a' b - a b') / b², with b' = b.tangent"),
        ("divided-tangents", at / bt if bt else float("nan"), "the tangent is a' / b'",
         "tangents do not divide: (a' b - a b') / b², the quotient rule"),
        ("plus", (at * bv + av * bt) / bv**2, "the tangent is (a' b + a b') / b²: that is the product rule's sign",
         "for a quotient the second term is subtracted: (a' b - a b') / b²"),
    ):
        if np.isfinite(value) and math.isclose(got, value, rel_tol=1e-9, abs_tol=1e-12):
            return reason, what, hint
    return None


def _dual_part(part: Any, what: str) -> float:
    arr = _to_numpy(part)
    if arr is None or arr.size != 1:
        raise fail("not-a-number", f"the Dual's {what} is {_fmt(part)}, not a number",
                   "for two Duals holding numbers, the value and the tangent are numbers: no tuple, no list")
    return float(arr.reshape(()))


@checker("13a", hint="return Dual(a.value / b.value, (a.tangent * b.value - a.value * b.tangent) / b.value**2)")
def check_dual_divide(divide: Any, Dual: Any) -> str:
    _require_callable(divide, "`divide`", "define `def divide(a, b): ...` in the cell above")
    _require_callable(Dual, "`Dual`", "run the cell that defines the Dual class first")
    for case in _DIVIDE_CASES:
        av, at, bv, bt, label = case
        got = _call(divide, Dual(av, at), Dual(bv, bt), what=f"for {label}, divide", errors=(
            (r"ZeroDivisionError", "zero-division", "b.tangent is 0 when b is a constant: the quotient rule "
                                                    "(a' b - a b') / b² divides by b.value only"),
        ))
        if not_answered(got):
            raise fail("placeholder", "divide still returns the placeholder `...`", "return Dual(value, tangent)")
        if not (hasattr(got, "value") and hasattr(got, "tangent")):
            raise fail("not-dual", f"divide returned {_kind(got)}, not a Dual",
                       "return Dual(value, tangent): a new dual number, not a tuple or a plain number")
        if not_answered(got.value) or not_answered(got.tangent):
            raise fail("placeholder", "the Dual divide returns still holds the placeholder `...`",
                       "value a.value / b.value; tangent (a' b - a b') / b²")
        value, tangent = _dual_part(got.value, "value"), _dual_part(got.tangent, "tangent")
        if not math.isclose(value, av / bv, rel_tol=1e-9, abs_tol=1e-12):
            raise fail("value", f"for {label}: the value is {value:.4g}, expected a.value / b.value = {av / bv:.4g}",
                       "the value part is the plain quotient a.value / b.value")
        want = (at * bv - av * bt) / bv**2
        if not math.isclose(tangent, want, rel_tol=1e-9, abs_tol=1e-12):
            mistake = _divide_mistake(case[:4], tangent)
            if mistake:
                reason, what, hint = mistake
                raise fail(reason, f"for {label}: the tangent is {tangent:.4g}, expected {want:.4g}: {what}", hint)
            raise fail("tangent", f"for {label}: the tangent is {tangent:.4g}, expected {want:.4g}",
                       "the quotient rule: (a.tangent * b.value - a.value * b.tangent) / b.value**2")
    return "divide follows the quotient rule: (a' b - a b') / b², and x / sin(x) differentiates"


def _jacobian_forward_cases() -> list:
    """(label, f, x, J): a tall, a wide and a square function, float64."""
    torch = _mg()
    A = np.array([[1.0, -0.5], [0.3, 2.0], [-1.2, 0.7], [0.4, 0.1]])
    B = A.T.copy()
    C = np.array([[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0], [0.0, -2.0, 1.0]])
    At, Bt, Ct = (torch.tensor(m, dtype=torch.float64) for m in (A, B, C))
    x2, x4, x3 = np.array([0.3, -0.7]), np.array([0.5, -1.0, 1.5, 0.2]), np.array([0.8, -0.4, 1.1])
    return [
        ("tall f(x) = tanh(A @ x), R^2 -> R^4", lambda t: (At @ t).tanh(), x2,
         (1 - np.tanh(A @ x2) ** 2)[:, None] * A),
        ("wide f(x) = B @ sin(x), R^4 -> R^2", lambda t: Bt @ t.sin(), x4, B * np.cos(x4)[None, :]),
        ("square f(x) = C @ x**2, R^3 -> R^3", lambda t: Ct @ t**2, x3, C * (2 * x3)[None, :]),
    ]


@checker("13b", hint="one jvp per input: column j = jvp(f, (x,), (e_j,))[1] with e_j one-hot; "
                     "then torch.stack(columns, dim=1)")
def check_jacobian_forward(jacobian_forward: Any) -> str:
    torch = _mg()
    _require_callable(jacobian_forward, "`jacobian_forward`", "define `def jacobian_forward(f, x): ...` above")
    for label, f, x, J in _jacobian_forward_cases():
        calls: list = []

        def counted(t: Any, f: Callable = f, calls: list = calls) -> Any:
            calls.append(1)
            return f(t)

        got = _call(jacobian_forward, counted, torch.tensor(x, dtype=torch.float64), what="jacobian_forward")
        if not_answered(got):
            raise fail("placeholder", "jacobian_forward still returns the placeholder `...`",
                       "return torch.stack(columns, dim=1)")
        if isinstance(got, (list, tuple)):
            raise fail("not-a-tensor", f"jacobian_forward returned a {type(got).__name__} of columns, not a tensor",
                       "stack the columns into one (m, n) tensor: torch.stack(columns, dim=1)")
        arr = _to_numpy(got)
        m, n = J.shape
        if arr is None:
            raise fail("not-a-tensor", f"jacobian_forward returned {_kind(got)}, not a tensor",
                       "return the Jacobian as one (m, n) tensor")
        if arr.shape == (n, m) and np.allclose(arr, J.T, rtol=1e-9, atol=1e-12) and m != n or \
                m == n and np.allclose(arr, J.T, rtol=1e-9, atol=1e-12) and not np.allclose(arr, J):
            raise fail("transposed", f"for {label}: the result is the Jacobian transposed, shape {arr.shape}",
                       "each jvp gives a column (one per input): stack them along dim 1, "
                       "torch.stack(columns, dim=1), to get shape (m, n)")
        if arr.shape != (m, n):
            raise fail("shape", f"for {label}: the result has shape {arr.shape}, expected ({m}, {n}) "
                                "(m outputs, n inputs)", "one column per input, stacked along dim 1")
        if not np.allclose(arr, J, rtol=1e-9, atol=1e-12):
            col = int(np.argmax(np.abs(arr - J).max(axis=0)))
            raise fail("wrong-values", f"for {label}: column {col} of the Jacobian is {_fmt(arr[:, col])}, "
                                       f"expected {_fmt(J[:, col])}",
                       "the tangent of input j is one-hot: 1 at j, 0 elsewhere; jvp returns (f(x), J @ tangent)")
        if len(calls) == 1:
            raise fail("one-pass", f"for {label}: f ran once for {n} inputs (jacfwd, jacrev or one vjp do that)",
                       f"build it yourself, one jvp per input ({n} here), to see the {n} forward passes")
        if len(calls) in (m, m + 1) and m != n:
            raise fail("reverse", f"for {label}: f ran {len(calls)} times for {m} outputs and {n} inputs: one pass "
                                  "per output is reverse mode's count", f"forward mode makes one pass per input ({n} "
                                                                        "here): jvp with a one-hot tangent per input")
        if len(calls) != n:
            raise fail("passes", f"for {label}: f ran {len(calls)} times for {n} inputs",
                       f"one jvp per input: {n} forward passes, each giving one column")
    return "jacobian_forward builds the Jacobian from n jvps, one column per forward pass"


def _norms_case(batch: int = 6) -> tuple:
    """A small tanh network, its params (float64), a batch, its loss_fn and the per-sample gradient norms."""
    torch = _mg()
    from minigrad.func import functional_call

    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh(), torch.nn.Linear(2, 1))
    model = model.double()
    params = {name: torch.tensor(np.linspace(-0.8, 0.9, p.numel()).reshape(tuple(p.shape)), dtype=torch.float64)
              for name, p in model.named_parameters()}
    xs = torch.tensor(np.linspace(-1.0, 1.5, 3 * batch).reshape(batch, 3), dtype=torch.float64)
    ys = torch.tensor(np.linspace(1.0, -0.5, batch), dtype=torch.float64)

    def loss_fn(params: dict, x: Any, y: Any) -> Any:
        return (functional_call(model, params, (x.unsqueeze(0),)).squeeze() - y) ** 2

    per_param = {name: [] for name in params}
    for i in range(batch):
        leaves = {k: v.clone().requires_grad_() for k, v in params.items()}
        grads = torch.autograd.grad(loss_fn(leaves, xs[i], ys[i]), list(leaves.values()))
        for name, g in zip(leaves, grads):
            per_param[name].append(g.numpy().ravel())
    squares = {name: (np.stack(rows) ** 2).sum(axis=1) for name, rows in per_param.items()}
    return loss_fn, params, xs, ys, squares


@checker("13c", hint="grads = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, xs, ys); then the square root of the "
                     "sum, over every parameter, of g.reshape(len(xs), -1) ** 2 summed over dim 1")
def check_grad_norms(per_sample_grad_norms: Any) -> str:
    _require_callable(per_sample_grad_norms, "`per_sample_grad_norms`",
                      "define `def per_sample_grad_norms(loss_fn, params, xs, ys): ...` above")
    loss_fn, params, xs, ys, squares = _norms_case()
    calls: list = []

    def counted(p: dict, x: Any, y: Any) -> Any:
        calls.append(1)
        return loss_fn(p, x, y)

    got = _call(per_sample_grad_norms, counted, params, xs, ys, what="per_sample_grad_norms", errors=(
        (r"same size in the mapped dimension|in_dims", "in-dims",
         "params are the same for every sample: in_dims=(None, 0, 0) (None for params, 0 for xs and ys)"),
    ))
    want = np.sqrt(sum(squares.values()))
    if not_answered(got):
        raise fail("placeholder", "per_sample_grad_norms still returns the placeholder `...`",
                   "return a tensor of one norm per sample")
    if isinstance(got, dict):
        raise fail("dict", "per_sample_grad_norms returned a dict (a gradient per parameter), not one norm per sample",
                   "combine every parameter: the square root of the sum of all their squared elements")
    arr = _to_numpy(got)
    if arr is None:
        raise fail("not-a-tensor", f"per_sample_grad_norms returned {_kind(got)}, not a tensor",
                   "return a tensor of shape (batch,): torch.stack or a computation on the vmapped gradients")
    if arr.size == 1 and len(want) > 1:
        raise fail("batch-gradient", f"per_sample_grad_norms returned one number, {_fmt(arr)}, for a batch of "
                                     f"{len(want)}", "one norm per sample: vmap(grad(loss_fn), in_dims=(None, 0, 0)) "
                                                     "gives each sample's gradient, with the batch in dim 0")
    if arr.shape != want.shape:
        raise fail("shape", f"per_sample_grad_norms returned shape {arr.shape}, expected {want.shape} "
                            f"(one norm per sample)", "sum over everything but the batch dimension (dim 0)")
    if not np.allclose(arr, want, rtol=1e-6, atol=1e-9):
        norms = {name: np.sqrt(sq) for name, sq in squares.items()}
        for reason, alt, what, hint in (
            ("no-sqrt", want**2, "the squared norms", "take the square root at the end: .sqrt()"),
            ("sum-of-norms", sum(norms.values()), "the sum of each parameter's norm",
             "square everything first, add, then one square root: sqrt(sum of g**2 over all parameters)"),
            ("one-parameter", None, "the norm of one parameter's gradient only",
             "add the squares of every parameter's gradient (loop over grads.values())"),
        ):
            alts = list(norms.values()) if alt is None else [alt]
            if any(np.allclose(arr, a, rtol=1e-6, atol=1e-9) for a in alts):
                raise fail(reason, f"the norms are {_fmt(arr)}, expected {_fmt(want)}: {what}", hint)
        raise fail("wrong-values", f"the norms are {_fmt(arr)}, expected {_fmt(want)}",
                   "grad(loss_fn) differentiates with respect to params, its first argument; vmap over xs and ys")
    if len(calls) != 1:
        raise fail("loop", f"loss_fn ran {len(calls)} times for a batch of {len(want)}: a loop over the samples",
                   "vmap(grad(loss_fn), in_dims=(None, 0, 0)) runs loss_fn once, on the whole batch")
    return "per_sample_grad_norms: one gradient norm per sample, loss_fn run once on the whole batch"


def _ref():
    from minigrad.reference import engine

    return engine


_SIGMOID_OP_ERRORS = (
    (r"bad operand type|unsupported operand type.*Tensor|Tensor.*not supported|ufunc .* not supported",
     "tensor-not-array", "compute on x.data, the NumPy array inside the Tensor: np.exp(-x.data)"),
)


@checker("14a", hint="sigmoid(x) computes out = 1 / (1 + np.exp(-x.data)) and returns "
                     "record(\"SigmoidBackward0\", out, (x,), lambda g: (g * out * (1 - out),))")
def check_sigmoid_op(sigmoid: Any) -> str:
    engine = _ref()
    _require_callable(sigmoid, "`sigmoid`", "define `def sigmoid(x): ...` in the cell above")
    values = np.array([-3.0, -0.5, 0.0, 0.7, 1.5, 4.0])
    s = _np_sigmoid(values)
    x = engine.Tensor(values, requires_grad=True)
    y = _call(sigmoid, x, what="sigmoid(x)", errors=_SIGMOID_OP_ERRORS)
    if not_answered(y):
        raise fail("placeholder", "sigmoid still returns the placeholder `...`",
                   "return record(\"SigmoidBackward0\", out, (x,), lambda g: ...)")
    if not isinstance(y, engine.Tensor):
        raise fail("not-a-tensor", f"sigmoid returned {_kind(y)}, not a reference Tensor",
                   "return what record(...) returns: a Tensor with its node")
    if not_answered(getattr(y, "data", None)) or y.data.dtype == object:
        raise fail("placeholder", "the output's value is still the placeholder `...`",
                   "out = 1 / (1 + np.exp(-x.data))")
    if y.data.shape != values.shape or not np.allclose(y.data, s, rtol=1e-12, atol=1e-14):
        raise fail("forward", f"sigmoid gives {_fmt(y.data)} for x = {_fmt(values)}, expected {_fmt(s)}",
                   "out = 1 / (1 + np.exp(-x.data)): the exponent is -x")
    if y.grad_fn is None:
        raise fail("no-node", "the output has no grad_fn although x requires grad",
                   "make the result with record(name, out, (x,), backward): record adds the node")
    if y.grad_fn.name() != "SigmoidBackward0":
        raise fail("name", f"the node is called {y.grad_fn.name()!r}",
                   "use PyTorch's name, \"SigmoidBackward0\", so viz and the lesson's comparisons recognise it")
    seed = np.array([1.0, -2.0, 0.5, 3.0, 1.0, -1.5])
    returned = _call(y.grad_fn.backward, seed, what="the node's backward", errors=_SIGMOID_OP_ERRORS)
    if not_answered(returned) or (isinstance(returned, tuple) and any(not_answered(g) for g in returned)):
        raise fail("placeholder", "the node's backward still returns the placeholder `...`",
                   "lambda g: (g * out * (1 - out),)")
    if not isinstance(returned, (tuple, list)) or len(returned) != 1:
        raise fail("not-a-tuple", f"the node's backward returned {_kind(returned)}, not a tuple of one gradient",
                   "backward returns one gradient per input, as a tuple: (g * out * (1 - out),) with the comma")
    want = seed * s * (1 - s)
    arrays = (np.ndarray, float, np.floating)
    got = np.asarray(returned[0], dtype=np.float64) if isinstance(returned[0], arrays) else None
    if got is None or got.shape != values.shape:
        shape = "" if got is None else f" of shape {got.shape}"
        raise fail("grad-shape", f"the gradient for x is {_kind(returned[0])}{shape}, expected an array shaped like x",
                   "g * out * (1 - out): g, out and x have one shape")
    if not np.allclose(got, want, rtol=1e-9, atol=1e-12):
        if np.allclose(got, s * (1 - s), rtol=1e-9, atol=1e-12):
            raise fail("ignores-g", "the gradient ignores g, the gradient of the output",
                       "multiply the local derivative by g: that is the chain rule")
        raise fail("derivative", f"the gradient for x is {_fmt(got)}, expected {_fmt(want)}",
                   "sigmoid'(x) = out * (1 - out), times g")
    w = engine.Tensor(np.array([0.5, 1.0, -1.0, 2.0, 0.0, 1.0]))
    x2 = engine.Tensor(values, requires_grad=True)
    _call(lambda: (sigmoid(x2) * w).sum().backward(), what="(sigmoid(x) * w).sum().backward()")
    if x2.grad is None or not np.allclose(x2.grad, w.data * s * (1 - s), rtol=1e-9, atol=1e-12):
        raise fail("backward", "backward() through sigmoid gives x.grad = "
                               f"{_fmt(x2.grad)}, expected {_fmt(w.data * s * (1 - s))}",
                   "the node's next_functions must lead to x: record(name, out, (x,), backward)")
    return "sigmoid: the value, the node SigmoidBackward0 and its local derivative out * (1 - out), times g"


def _order_graphs() -> list[tuple[str, Any]]:
    engine = _ref()
    T = engine.Tensor
    a, b = T([1.0, 2.0], requires_grad=True), T([3.0, -1.0], requires_grad=True)
    h = (a * b).tanh()
    x, W, bias = T(np.ones((4, 3))), T(np.full((3, 2), 0.1), requires_grad=True), T(np.zeros(2), requires_grad=True)
    chain = a
    for _ in range(20):
        chain = chain * 1.1
    return [
        ("(x @ W + bias).relu().sum(), a small layer", (x @ W + bias).relu().sum().grad_fn),
        ("(a * b).sum()", (a * b).sum().grad_fn),
        ("h = (a * b).tanh(); (h * h + h).sum()", (h * h + h).sum().grad_fn),
        ("(a * 3 + a.exp()).sum(), a used twice", (a * 3 + a.exp()).sum().grad_fn),
        ("a chain of 20 multiplications", chain.sum().grad_fn),
    ]


def _reachable(root: Any) -> list:
    seen, stack = {id(root): root}, [root]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None and id(child) not in seen:
                seen[id(child)] = child
                stack.append(child)
    return list(seen.values())


@checker("14b", hint="topological_order(root) returns a list of the nodes reachable from root, each before every "
                     "node its next_functions lead to")
def check_topological_order(topological_order: Any) -> str:
    engine = _ref()
    _require_callable(topological_order, "`topological_order`", "define `def topological_order(root): ...` above")
    for label, root in _order_graphs():
        got = _call(topological_order, root, what="topological_order", errors=(
            (r"'NoneType' object has no attribute", "none-node",
             "next_functions holds (None, 0) for inputs that need no gradient: skip None, it is not a node"),
            (r"RecursionError", "recursion", "keep a stack of nodes to visit instead of calling yourself"),
        ))
        if not_answered(got):
            raise fail("placeholder", "topological_order still returns the placeholder `...`",
                       "replace `return ...` with your walk")
        if isinstance(got, (str, bytes, dict, set)) or not hasattr(got, "__iter__"):
            raise fail("not-a-list", f"topological_order returned {_kind(got)}, not a list of nodes",
                       "return a list: [root, ...] (a set has no order)")
        order = list(got)
        if any(item is None for item in order):
            raise fail("none-node", f"for {label}: the order holds None",
                       "(None, 0) in next_functions means 'no gradient goes here': skip it")
        if any(not isinstance(item, engine.Node) for item in order):
            bad = next(item for item in order if not isinstance(item, engine.Node))
            raise fail("not-nodes", f"the order holds {_kind(bad)}, not nodes",
                       "put the nodes themselves in the list (node, not node.name() or a pair (node, 0))")
        nodes = _reachable(root)
        if len({id(n) for n in order}) != len(order):
            raise fail("duplicates", f"for {label}: a node appears more than once",
                       "keep a set of the nodes you have seen and add each node once")
        if {id(n) for n in order} != {id(n) for n in nodes}:
            missing = [n.name() for n in nodes if all(n is not m for m in order)]
            raise fail("missing", f"for {label}: the order misses {', '.join(missing) or 'nodes'}"
                                  f" ({len(order)} of {len(nodes)} nodes)",
                       "follow next_functions down to the AccumulateGrad nodes; every reachable node runs once")
        position = {id(n): k for k, n in enumerate(order)}
        edges = [(n, c) for n in nodes for c, _ in n.next_functions if c is not None]
        late = [(n, c) for n, c in edges if position[id(c)] < position[id(n)]]
        if late:
            if len(late) == len(edges):
                raise fail("reversed", f"for {label}: every node comes after the nodes it leads to: leaves first",
                           "that is the forward order: backward needs the reverse (reversed(order), or "
                           "order[::-1])")
            node, child = late[0]
            raise fail("order", f"for {label}: {child.name()} comes before {node.name()}, which sends it a gradient",
                       "a node may come only once all its consumers are placed: count the edges into each node "
                       "(or add a node after all its children in a depth-first walk, then reverse)")
    return "topological_order lists every node once, each before the nodes it sends gradients to"
