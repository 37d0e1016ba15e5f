"""Checkers for the course exercises: ``from course import check_leaves``.

Every ``check_...()`` prints one verdict and returns nothing:

    ✓ <what is right>
    ✗ <what is wrong>
      hint: <what to look at>

They never raise: a placeholder (``...``), a wrong type, or code of yours that fails inside the
check all give a ✗ with a hint. The checks build their own small examples with minigrad (the
same API as PyTorch), and silence warnings while they run so that only the verdict prints.

This file is the source; ``build.py`` copies it to ``exercises/course.py`` for the learner
notebooks (nbval and Jupyter run each notebook in its own folder).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

OK, FAIL = "✓", "✗"


class Verdict(Exception):
    """Raised inside a check to stop with a ✗ (caught by ``@checker``, never reaches you)."""

    def __init__(self, problem: str, hint: str) -> None:
        super().__init__(problem)
        self.problem, self.hint = problem, hint


def fail(problem: str, hint: str) -> Verdict:
    return Verdict(problem, hint)


def _print_fail(problem: str, hint: str) -> None:
    print(f"{FAIL} {problem}\n  hint: {hint}")


def checker(hint: str) -> Callable:
    """Turn a check into one that prints ✓/✗ and never raises; ``hint`` is used when the
    learner's code fails inside the check."""

    def wrap(func: Callable[..., str]) -> Callable[..., None]:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with np.errstate(all="ignore"):
                        message = func(*args, **kwargs)
            except Verdict as v:
                _print_fail(v.problem, v.hint)
            except Exception as exc:  # noqa: BLE001 - a check never raises
                text = f"{type(exc).__name__}: {exc}".splitlines()[0]
                if len(text) > 160:
                    text = text[:157] + "..."
                _print_fail(f"running your answer raised {text}", hint)
            else:
                print(f"{OK} {message}")

        return run

    return wrap


# -- helpers ---------------------------------------------------------------------------------------------


def _mg():
    import minigrad

    return minigrad


def not_answered(value: Any) -> bool:
    return value is Ellipsis


def require_answer(value: Any, what: str, hint: str) -> None:
    if not_answered(value):
        raise fail(f"{what} is still the placeholder `...`", hint)


def _as_name_set(value: Any, what: str, allowed: set[str]) -> set[str]:
    if isinstance(value, str):
        raise fail(f"{what} should be a set of names, like {{'a', 'b'}}, not one string", "write {\"p\", \"q\"}")
    try:
        names = set(value)
    except TypeError:
        raise fail(f"{what} should be a set of names, got {type(value).__name__}", "write {\"p\", \"q\"}") from None
    unknown = {n for n in names if n not in allowed}
    if unknown:
        raise fail(f"{what} has names that are not in the cell: {sorted(map(str, unknown))}",
                   f"use only {sorted(allowed)}")
    return names


def _to_numpy(value: Any) -> np.ndarray | None:
    """A tensor (minigrad or torch), array or number as a float64 array; None if impossible."""
    if value is None or not_answered(value):
        return None
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "numpy"):
        try:
            return np.asarray(value.numpy(), dtype=np.float64)
        except Exception:  # noqa: BLE001
            pass
    try:
        return np.asarray(value, dtype=np.float64)
    except Exception:  # noqa: BLE001
        return None


def _close(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-8) -> bool:
    a, b = _to_numpy(a), _to_numpy(b)
    return a is not None and b is not None and a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def _fmt(value: Any) -> str:
    arr = _to_numpy(value)
    if arr is None:
        return repr(value)
    return np.array2string(arr, separator=", ", formatter={"float_kind": lambda v: f"{v:.4g}"})


def _require_callable(func: Any, what: str, hint: str) -> None:
    require_answer(func, what, hint)
    if not callable(func):
        raise fail(f"{what} should be a function, got {type(func).__name__}", hint)


# -- 1. tensors and requires_grad -----------------------------------------------------------------------


@checker(hint="answer with two sets of names, e.g. leaves = {'p', 'q'}")
def check_leaves(leaves: Any, gets_grad: Any) -> str:
    names = {"p", "q", "r", "s", "e"}
    require_answer(leaves, "`leaves`", "a leaf is a tensor without a grad_fn: which ones did no tracked op produce?")
    require_answer(gets_grad, "`gets_grad`", "backward() fills .grad only on leaves that require grad")
    got_leaves = _as_name_set(leaves, "`leaves`", names)
    got_grad = _as_name_set(gets_grad, "`gets_grad`", names)
    want_leaves, want_grad = {"p", "q", "s"}, {"p"}
    if got_leaves != want_leaves:
        if "s" not in got_leaves:
            raise fail("`leaves` misses a tensor",
                       "s = q * 2 is computed only from q, which does not require grad: does s get a grad_fn?")
        if "q" not in got_leaves or "p" not in got_leaves:
            raise fail("`leaves` misses a tensor you created yourself",
                       "every tensor made by torch.tensor(...) is a leaf")
        raise fail("`leaves` has a tensor that an operation on p produced",
                   "r and e are computed from p, which requires grad, so they have a grad_fn")
    if got_grad != want_grad:
        if got_grad - want_leaves:
            raise fail("`gets_grad` names a non-leaf",
                       "gradients of intermediate results are thrown away unless you call retain_grad()")
        if "p" not in got_grad:
            raise fail("`gets_grad` misses the one tensor whose gradient you asked for",
                       "which leaf has requires_grad=True?")
        raise fail("`gets_grad` names a leaf that does not require grad",
                   "q and s never asked for gradients (requires_grad=False), so their .grad stays None")
    return "leaves = {p, q, s}; only p gets a .grad (q and s do not require grad; r and e are not leaves)"


# -- 2. the computation graph ---------------------------------------------------------------------------


def _graphs_for_counting() -> list[tuple[str, Any, int]]:
    torch = _mg()
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    c = torch.tensor([1.0, 1.0])
    chain = x
    for _ in range(30):
        chain = chain * 1.5
    return [
        ("(x * x + x).sum()", (x * x + x).sum().grad_fn, 4),
        ("(x * w + c).exp().sum()", (x * w + c).exp().sum().grad_fn, 6),
        ("x * 2 (a None entry)", (x * 2).grad_fn, 2),
        ("a chain of 30 multiplications", chain.sum().grad_fn, 32),
        ("y = x.exp(); (y * y + y.sin()).sum()", _diamond(x).grad_fn, 6),
    ]


def _diamond(x: Any) -> Any:
    y = x.exp()
    return (y * y + y.sin()).sum()


@checker(hint="count_nodes(root) should follow node.next_functions and return an int")
def check_count_nodes(count_nodes: Any) -> str:
    _require_callable(count_nodes, "`count_nodes`", "replace `return ...` with the walk described above")
    for label, root, want in _graphs_for_counting():
        got = count_nodes(root)
        if not_answered(got):
            raise fail("count_nodes still returns the placeholder `...`", "replace `return ...` with your walk")
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
            raise fail(f"count_nodes returned {type(got).__name__}, not an int", "return len(seen)")
        if got != want:
            if got > want:
                hint = ("shared nodes are reached along several paths: count a node only the first time you see it"
                        " (skip None entries too)")
            else:
                hint = "count the root itself and every AccumulateGrad node at the end of the walk"
            raise fail(f"for {label} you counted {got} nodes, the graph has {want}", hint)
    return "count_nodes counts each node once, shared nodes and AccumulateGrad included"


# -- 4. accumulation and retain_graph -------------------------------------------------------------------


def _simulate_train(steps: int, lr: float, fresh_forward: bool, zero_grad: bool) -> float:
    """Plain-float versions of the training loop, right and wrong, for the hints."""
    w, grad, w0 = 1.0, 0.0, 1.0
    for _ in range(steps):
        g = 4 * (2 * (w if fresh_forward else w0) - 6)
        grad = g if zero_grad else grad + g
        w -= lr * grad
    return w


def _scalar(value: Any, what: str) -> float:
    if not_answered(value):
        raise fail(f"{what} is the placeholder `...`", "return the tensor w at the end of train()")
    arr = _to_numpy(value)
    if arr is None or arr.size != 1:
        raise fail(f"{what} should be one number (the tensor w), got {_fmt(value)}", "return w")
    return float(arr.reshape(()))


@checker(hint="train(x, target, steps, lr) should run the loop and return the tensor w")
def check_train(train: Any) -> str:
    _require_callable(train, "`train`", "write the loop inside train()")
    torch = _mg()
    for steps, lr in [(20, 0.05), (5, 0.1), (1, 0.01)]:
        w = train(torch.tensor(2.0), torch.tensor(6.0), steps=steps, lr=lr)
        got = _scalar(w, f"train(x, target, steps={steps}, lr={lr})")
        want = _simulate_train(steps, lr, fresh_forward=True, zero_grad=True)
        if math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-5):
            continue
        where = f"train(x, target, steps={steps}, lr={lr}) returned w = {got:.6g}, expected {want:.6g}"
        if math.isclose(got, 1.0):
            raise fail(where + " (w never changed: is the placeholder `...` still there?)",
                       "in a loop: compute the loss, call backward(), then update w under no_grad()")
        if math.isclose(got, _simulate_train(steps, lr, True, False), rel_tol=1e-4):
            raise fail(where, "gradients pile up: clear w.grad (w.grad = None) after each update")
        if any(math.isclose(got, _simulate_train(steps, lr, False, z), rel_tol=1e-4) for z in (True, False)):
            raise fail(where, "the prediction is stale: compute w * x inside the loop, from the current w")
        raise fail(where, "loss = (w * x - target) ** 2; loss.backward(); with torch.no_grad(): w -= lr * w.grad")
    return "train() recomputes the forward pass and clears the gradient every step (w -> 3)"


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


@checker(hint="answers should be a dict like {'a': True, 'b': False, ...}")
def check_grad_quiz(answers: Any) -> str:
    require_answer(answers, "`answers`", "fill in the dict with True or False for each snippet")
    if not isinstance(answers, dict):
        raise fail(f"`answers` should be a dict, got {type(answers).__name__}", "answers = {'a': True, ...}")
    missing = sorted(k for k in _GRAD_QUIZ if k not in answers)
    if missing:
        raise fail(f"`answers` has no entry for {missing}", "one key per snippet, 'a' to 'f'")
    todo = sorted(k for k in _GRAD_QUIZ if not_answered(answers[k]))
    if todo:
        raise fail(f"still `...` for {todo}", "replace each ... with True or False")
    wrong = []
    for key, (want, why) in _GRAD_QUIZ.items():
        got = answers[key]
        if not isinstance(got, (bool, np.bool_)):
            raise fail(f"answers[{key!r}] should be True or False, got {got!r}", "use the booleans True and False")
        if bool(got) != want:
            wrong.append((key, why))
    if wrong:
        keys = ", ".join(k for k, _ in wrong)
        raise fail(f"{len(wrong)} of 6 wrong ({keys})", f"({wrong[0][0]}) {wrong[0][1]}")
    return "6 of 6: no_grad, detach and inference_mode stop recording; r = x and requires_grad_() do not; " \
           "volatile is ignored"


def _accuracy_cases() -> list[tuple[Any, Any, Any, float]]:
    torch = _mg()
    rng = np.random.default_rng(6)
    cases = [
        (torch.tensor([1.0, -1.0], requires_grad=True),
         torch.tensor([[2.0, 1.0], [0.0, 3.0], [1.0, 0.5], [1.0, 2.0]]), torch.tensor([1.0, 0.0, 0.0, 0.0]), 0.75),
    ]
    for n in (5, 12):
        w = rng.normal(size=3)
        inputs = rng.normal(size=(n, 3))
        labels = (rng.random(n) < 0.5).astype(np.float64)
        want = float(np.mean(((inputs @ w) > 0).astype(np.float64) == labels))
        cases.append((torch.tensor(w, requires_grad=True), torch.tensor(inputs), torch.tensor(labels), want))
    return cases


@checker(hint="accuracy(w, inputs, labels) should return the fraction of correct predictions")
def check_accuracy(accuracy: Any) -> str:
    torch = _mg()
    _require_callable(accuracy, "`accuracy`", "replace `return ...` with the computation under torch.no_grad()")
    for w, inputs, labels, want in _accuracy_cases():
        try:
            got = accuracy(w, inputs, labels)
            mode_after = torch.is_grad_enabled()
        finally:
            torch.set_grad_enabled(True)
        if not_answered(got):
            raise fail("accuracy still returns the placeholder `...`", "compute the predictions under torch.no_grad()")
        if not mode_after:
            raise fail("grad mode is still off after accuracy() returned (the check switched it back on)",
                       "use `with torch.no_grad():` (or `with torch.set_grad_enabled(False):`), which restores the "
                       "mode when the block ends; a plain torch.set_grad_enabled(False) call does not")
        if getattr(got, "requires_grad", False):
            raise fail("the result requires grad: a graph was recorded",
                       "compute inside `with torch.no_grad():`, or detach w first")
        value = _to_numpy(got)
        if value is None or value.size != 1:
            raise fail(f"accuracy returned {_fmt(got)}, expected one number",
                       "return the mean of the correct predictions")
        if not math.isclose(float(value.reshape(())), want, abs_tol=1e-6):
            raise fail(f"accuracy returned {float(value.reshape(())):.4g}, expected {want:.4g}",
                       "predict 1 where (inputs * w).sum(dim=1) > 0, compare with labels, take the mean")
    return "accuracy() is right, records no graph, and leaves grad mode on"


# -- 7. custom autograd.Function ------------------------------------------------------------------------


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


@checker(hint="forward should return 1 / (1 + torch.exp(-x)); backward should return grad_output * s * (1 - s)")
def check_sigmoid(MySigmoid: Any) -> str:
    torch = _mg()
    require_answer(MySigmoid, "`MySigmoid`", "define the class in the cell above")
    if not hasattr(MySigmoid, "apply"):
        raise fail("`MySigmoid` has no .apply: it should be a subclass of torch.autograd.Function",
                   "class MySigmoid(Function): ...")
    values = np.array([-3.0, -0.5, 0.0, 1.5, 4.0])
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y = MySigmoid.apply(x)
    if not_answered(y):
        raise fail("forward still returns the placeholder `...`", "compute the sigmoid, save it, return it")
    if not hasattr(y, "grad_fn"):
        raise fail(f"forward returned {type(y).__name__}, not a tensor", "return 1 / (1 + torch.exp(-x))")
    if not _close(y, _np_sigmoid(values), rtol=1e-9, atol=1e-12):
        raise fail(f"forward gives {_fmt(y)}, sigmoid is {_fmt(_np_sigmoid(values))}", "1 / (1 + torch.exp(-x))")
    if y.grad_fn is None:
        raise fail("the output has no grad_fn", "call the function as MySigmoid.apply(x), with x requiring grad")
    saved = getattr(y.grad_fn, "saved_tensors", ())
    if not saved:
        raise fail("forward saved no tensors", "call ctx.save_for_backward(result) in forward")
    seed = np.array([1.0, -2.0, 0.5, 3.0, 1.0])
    try:
        y.backward(torch.tensor(seed, dtype=torch.float64))
    except Exception as exc:  # noqa: BLE001
        problem = f"{type(exc).__name__}: {exc}".splitlines()[0]
        raise fail(f"backward failed: {problem[:150]}",
                   "backward should return one tensor: grad_output * result * (1 - result)") from None
    s = _np_sigmoid(values)
    want = seed * s * (1 - s)
    if x.grad is None:
        raise fail("backward returned None for x", "return grad_output * result * (1 - result)")
    if not _close(x.grad, want, rtol=1e-9, atol=1e-12):
        if _close(x.grad, s * (1 - s)):
            raise fail("the gradient ignores grad_output", "multiply by grad_output: that is the chain rule")
        raise fail(f"backward gives {_fmt(x.grad)}, expected {_fmt(want)}", "sigma'(x) = sigma(x) * (1 - sigma(x))")
    x2 = torch.tensor([-1.0, 0.25, 2.0], dtype=torch.float64, requires_grad=True)
    if not torch.autograd.gradcheck(MySigmoid.apply, (x2,), raise_exception=False):
        raise fail("gradcheck fails", "compare your backward with the formula sigma * (1 - sigma)")
    return "MySigmoid: forward, backward (saving the result) and gradcheck all agree"


# -- 9. in-place operations and version counters -------------------------------------------------------


@checker(hint="softplus_fixed(x) should return log(1 + exp(x)) computed without in-place operations")
def check_softplus(softplus_fixed: Any) -> str:
    torch = _mg()
    _require_callable(softplus_fixed, "`softplus_fixed`", "replace `return ...` with an out-of-place version")
    values = np.array([-2.0, -0.5, 0.0, 1.0, 3.0])
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    version = x._version
    y = softplus_fixed(x)
    if not_answered(y):
        raise fail("softplus_fixed still returns the placeholder `...`",
                   "compute the same values as softplus_buggy, without changing a tensor in place")
    if not hasattr(y, "grad_fn"):
        raise fail(f"softplus_fixed returned {type(y).__name__}, not a tensor", "return a tensor computed from x")
    want = np.log1p(np.exp(values))
    if not _close(y, want, rtol=1e-9, atol=1e-12):
        raise fail(f"softplus_fixed gives {_fmt(y)}, expected {_fmt(want)}", "softplus(x) = log(1 + e^x)")
    if x._version != version:
        raise fail("softplus_fixed modified x in place", "leave x alone: build new tensors from it")
    if not getattr(y, "requires_grad", False):
        raise fail("the result does not require grad: no graph was recorded",
                   "do not use no_grad(), detach() or .data here")
    try:
        y.sum().backward()
    except RuntimeError as exc:
        raise fail(f"backward failed: {str(exc).split(':')[0]}",
                   "an in-place operation changed a tensor that a node saved: write y = y + 1, not y += 1") from None
    if not _close(x.grad, _np_sigmoid(values), rtol=1e-9, atol=1e-12):
        raise fail(f"the gradient is {_fmt(x.grad)}, expected sigmoid(x) = {_fmt(_np_sigmoid(values))}",
                   "did you use .data or detach() somewhere? they cut the gradient")
    return "softplus_fixed: right values, and backward gives sigmoid(x)"


# -- 10. training -----------------------------------------------------------------------------------------


def _tiny_model_and_data() -> tuple[Any, Any, Any, Any]:
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

    model = Tiny()
    xb = torch.tensor(rng.normal(size=(6, 4)).astype(np.float32))
    yb = torch.tensor(np.array([0, 1, 1, 0, 1, 0], dtype=np.int64))
    return model, nn.CrossEntropyLoss(), xb, yb


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


@checker(hint="train_step should zero the gradients, compute the loss, call backward() and optimizer.step()")
def check_train_step(train_step: Any) -> str:
    torch = _mg()
    _require_callable(train_step, "`train_step`", "replace `return ...` with the four lines of a training step")
    model, loss_fn, xb, yb = _tiny_model_and_data()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    start = [p.detach().numpy().copy() for p in model.parameters()]
    results = [train_step(model, loss_fn, opt, xb, yb) for _ in range(2)]
    if any(not_answered(r) for r in results):
        raise fail("train_step still returns the placeholder `...`", "write the step, then return loss.item()")
    params = [p.detach().numpy() for p in model.parameters()]
    want_losses, want_params = _reference_steps(zero=True)
    if all(np.array_equal(a, b) for a, b in zip(params, start)):
        raise fail("the parameters did not change",
                   "call loss.backward() to fill the gradients and optimizer.step() to apply them")
    if not all(np.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(params, want_params)):
        _, no_zero = _reference_steps(zero=False)
        if all(np.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(params, no_zero)):
            raise fail("the second step used the sum of both steps' gradients",
                       "call optimizer.zero_grad() at the start of every step: .grad accumulates")
        raise fail("after two steps the parameters differ from a correct run",
                   "order: optimizer.zero_grad(); loss = loss_fn(model(xb), yb); loss.backward(); optimizer.step()")
    for got, want in zip(results, want_losses):
        if isinstance(got, bool) or not isinstance(got, (float, int, np.floating)):
            kind = "a tensor" if hasattr(got, "grad_fn") else type(got).__name__
            raise fail(f"train_step returned {kind}, not a Python number", "return loss.item()")
        if not math.isclose(float(got), want, rel_tol=1e-5):
            raise fail(f"train_step returned {got:.6g}, the loss of that step was {want:.6g}",
                       "return the loss computed in this step (before optimizer.step())")
    return "train_step: zero_grad, forward, backward, step, and it returns the loss as a number"


# -- 3. backward ---------------------------------------------------------------------------------------------


def _jacobian_cases() -> list[tuple[str, Callable, np.ndarray, np.ndarray]]:
    torch = _mg()
    A = np.array([[1.0, 2.0, 0.0, -1.0], [0.5, 0.0, 3.0, 1.0], [0.0, -2.0, 1.0, 0.0]])
    x4 = np.array([1.0, -0.5, 2.0, 0.25])
    x2 = np.array([0.5, 2.0])
    return [
        ("f(t) = t ** 2", lambda t: t**2, x4, np.diag(2 * x4)),
        ("f(t) = A @ t (A is 3x4)", lambda t: torch.tensor(A) @ t, x4, A),
        ("f(t) = [t0 * t1, sin(t1), t0 + t1]",
         lambda t: torch.stack([t[0] * t[1], t[1].sin(), t[0] + t[1]]), x2,
         np.array([[x2[1], x2[0]], [0.0, np.cos(x2[1])], [1.0, 1.0]])),
    ]


@checker(hint="jacobian(f, x) should return a 2-D tensor whose row i is the gradient of f(x)[i]")
def check_jacobian(jacobian: Any) -> str:
    torch = _mg()
    _require_callable(jacobian, "`jacobian`", "replace `return ...` with the loop over one-hot vectors")
    for label, f, x, want in _jacobian_cases():
        got = jacobian(f, torch.tensor(x, dtype=torch.float64))
        if not_answered(got):
            raise fail("jacobian still returns the placeholder `...`", "build the rows, then torch.stack(rows)")
        arr = _to_numpy(got)
        if arr is None:
            raise fail(f"jacobian returned {type(got).__name__}, not a tensor", "return torch.stack(rows)")
        if arr.shape != want.shape:
            raise fail(f"for {label} the result has shape {arr.shape}, expected {want.shape}",
                       "one row per output element, one column per input element")
        if not np.allclose(arr, want, rtol=1e-9, atol=1e-12):
            if np.allclose(arr, want.T, rtol=1e-9, atol=1e-12):
                raise fail(f"for {label} you got the transpose", "row i should be the gradient of output i")
            raise fail(f"for {label} you got {_fmt(arr)}, expected {_fmt(want)}",
                       "row i is torch.autograd.grad(f(x), x, grad_outputs=e_i)[0], with e_i one-hot")
    return "jacobian builds J row by row from vector-Jacobian products with one-hot vectors"


# -- 5. hooks ------------------------------------------------------------------------------------------------


@checker(hint="clip_hook(grad) should return a new tensor: grad clamped to [-1, 1]")
def check_clip_hook(clip_hook: Any) -> str:
    torch = _mg()
    _require_callable(clip_hook, "`clip_hook`", "replace `return ...` with the clipped gradient")
    values = np.array([-0.3, 0.02, 0.5, -0.05])
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y = x * 5
    y.register_hook(clip_hook)
    try:
        (y * y).sum().backward()  # dL/dy = 2y = 10x, clipped, then times 5
    except Exception as exc:  # noqa: BLE001
        problem = f"{type(exc).__name__}: {exc}".splitlines()[0][:150]
        if "ellipsis" in problem.lower():
            raise fail("clip_hook still returns the placeholder `...`",
                       "a hook receives the gradient and returns the new one: Tensor.clamp limits values") from None
        raise fail(f"backward failed with your hook: {problem}", "return a tensor of the same shape as grad") from None
    want = 5 * np.clip(10 * values, -1, 1)
    if _close(x.grad, 10 * 5 * values):
        raise fail("the gradient was not clipped", "a hook changes the gradient only by *returning* the new tensor")
    if not _close(x.grad, want, rtol=1e-9, atol=1e-12):
        raise fail(f"x.grad is {_fmt(x.grad)}, expected {_fmt(want)}", "clamp every element to [-1.0, 1.0]")
    return "clip_hook clips the gradient flowing through y, and the leaf sees the clipped value"


# -- 8. higher-order gradients -------------------------------------------------------------------------


def _hvp_cases() -> list[tuple[str, Callable, np.ndarray, np.ndarray, np.ndarray]]:
    torch = _mg()
    A = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, -1.0], [0.0, -1.0, 1.0]])
    At = torch.tensor(A)
    x = np.array([0.3, -1.2, 0.8])
    v = np.array([1.0, -2.0, 0.5])
    return [
        ("f(x) = x @ A @ x / 2", lambda t: 0.5 * t @ At @ t, x, v, A @ v),
        ("f(x) = sum(x * sin(x))", lambda t: (t * t.sin()).sum(), x, v, (2 * np.cos(x) - x * np.sin(x)) * v),
        ("f(x) = (x0 * x1 * x2) ** 2", lambda t: t.prod() ** 2, x, v, _prod_sq_hessian(x) @ v),
    ]


def _prod_sq_hessian(x: np.ndarray) -> np.ndarray:
    """Hessian of (x0 x1 x2)^2: d2/dxi dxj = 4 p^2/(xi xj) for i != j, 2 p^2 / xi^2 on the diagonal."""
    p2 = np.prod(x) ** 2
    H = 4 * p2 / np.outer(x, x)
    np.fill_diagonal(H, 2 * p2 / x**2)
    return H


@checker(hint="hvp(f, x, v): g = grad(f(x), x, create_graph=True), then return grad(g @ v, x)")
def check_hvp(hvp: Any) -> str:
    torch = _mg()
    _require_callable(hvp, "`hvp`", "replace `return ...` with the two calls to torch.autograd.grad")
    for label, f, x, v, want in _hvp_cases():
        try:
            got = hvp(f, torch.tensor(x, dtype=torch.float64), torch.tensor(v, dtype=torch.float64))
        except RuntimeError as exc:
            if "does not require grad" not in str(exc):
                raise
            raise fail(f"hvp raised RuntimeError: {str(exc).splitlines()[0][:120]}",
                       "the first gradient must be differentiable: pass create_graph=True to the first grad") from None
        if not_answered(got):
            raise fail("hvp still returns the placeholder `...`", "two calls to torch.autograd.grad")
        if isinstance(got, (tuple, list)) and len(got) == 1:
            raise fail("hvp returned a tuple", "torch.autograd.grad returns a tuple: unpack it with (hv,) = ...")
        arr = _to_numpy(got)
        if arr is None or arr.shape != want.shape:
            raise fail(f"for {label} hvp returned {_fmt(got)}, expected a vector like x", "return the tensor Hv")
        if not np.allclose(arr, want, rtol=1e-9, atol=1e-12):
            raise fail(f"for {label} hvp gives {_fmt(arr)}, expected {_fmt(want)}",
                       "the first grad needs create_graph=True; the second differentiates g @ v")
    return "hvp computes Hessian-vector products with two backward passes"
