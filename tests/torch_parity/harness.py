"""Differential harness: run one snippet under PyTorch and under minigrad, compare what a learner sees.

A *snippet* is a plain function ``snippet(torch, Variable)``: it receives the library module (``torch`` or
``minigrad``, bound to the parameter name ``torch`` so tutorial code reads verbatim) and that library's
``autograd.Variable`` class, and prints things. Each run records

- everything written to stdout,
- every warning raised (category name + message), in order,
- the exception that escaped the snippet, if any (type name + message),
- whether grad mode was still enabled afterwards (a context manager that leaks its mode is a bug).

:func:`compare` judges minigrad's record against PyTorch's:

- stdout: equal after :func:`normalise`;
- warnings: the same list, in the same order, after :func:`normalise`;
- exception: same type name; minigrad's message must contain PyTorch's whole message (both normalised),
  after dropping one optional final line that starts with ``hint:`` (minigrad's teaching hint);
- grad mode after the snippet: equal.

Normalisation (:func:`normalise`) replaces memory addresses ``0x...`` by ``0x?``, drops PyTorch's
`` (Triggered internally at <file>:<line>.)`` tails, replaces file paths by ``<path>``, and — on the
reference side only — rewrites ``torch.`` / ``torch::`` to ``minigrad.`` / ``minigrad::`` (api-contract §3).

Snippets marked ``@snippet(fresh_process=True)`` run each side in a fresh interpreter (for warnings PyTorch
emits only once per process, so the result does not depend on what ran before).
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import importlib
import importlib.util
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import traceback
import warnings
from collections.abc import Callable

SNIPPETS: dict[str, Callable] = {}

TARGET = "minigrad"


def snippet(fn: Callable | None = None, *, fresh_process: bool = False):
    """Register a snippet (usable as ``@snippet`` or ``@snippet(fresh_process=True)``)."""

    def register(f: Callable) -> Callable:
        if f.__name__ in SNIPPETS and SNIPPETS[f.__name__] is not f:
            raise ValueError(f"duplicate snippet name {f.__name__!r}")
        f.fresh_process = fresh_process
        SNIPPETS[f.__name__] = f
        return f

    return register(fn) if fn is not None else register


# --------------------------------------------------------------------------------------------------
# Running


@dataclasses.dataclass
class Outcome:
    stdout: str
    warnings: list[str]  # "Category: message", raw (not normalised)
    exception: tuple[str, str] | None  # (type name, message), raw
    traceback: str | None  # the escaped exception's traceback, for the failure report
    grad_enabled_after: bool | None  # lib.is_grad_enabled() right after the snippet

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Outcome:
        d = json.loads(text)
        if d["exception"] is not None:
            d["exception"] = tuple(d["exception"])
        return cls(**d)


def variable_class(lib):
    """``from <lib>.autograd import Variable``."""
    return importlib.import_module(lib.__name__ + ".autograd").Variable


@contextlib.contextmanager
def _preserved_global_state(lib):
    """Restore grad mode and default dtype after a snippet, so one snippet cannot break the next."""
    saved = []
    for getter, setter in (
        ("is_grad_enabled", "set_grad_enabled"),
        ("get_default_dtype", "set_default_dtype"),
    ):
        get, put = getattr(lib, getter, None), getattr(lib, setter, None)
        if callable(get) and callable(put):
            try:
                saved.append((put, get()))
            except Exception:  # the library under test may be broken; the snippet will tell
                pass
    try:
        yield
    finally:
        for put, value in saved:
            try:
                put(value)
            except Exception:
                pass


def _grad_enabled(lib) -> bool | None:
    try:
        return bool(lib.is_grad_enabled())
    except Exception:
        return None


class SnippetTimeout(Exception):
    """Raised into a snippet that runs longer than SNIPPET_TIMEOUT seconds (e.g. a loop that never ends)."""


SNIPPET_TIMEOUT = 120.0


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Interrupt the snippet after ``seconds`` (main thread on POSIX only; elsewhere no limit)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def interrupt(signum, frame):
        raise SnippetTimeout(f"snippet still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(fn: Callable, lib) -> Outcome:
    """Run ``fn(lib, Variable)`` in this process and record what it printed, warned and raised."""
    buf = io.StringIO()
    exc = tb = None
    with _preserved_global_state(lib), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(buf), _time_limit(SNIPPET_TIMEOUT):
                fn(lib, variable_class(lib))
        except Exception as e:  # noqa: BLE001 - we record whatever the snippet raised
            exc = (type(e).__name__, str(e))
            tb = traceback.format_exc()
        grad_after = _grad_enabled(lib)
    warns = [f"{w.category.__name__}: {w.message}" for w in caught]
    return Outcome(buf.getvalue(), warns, exc, tb, grad_after)


def run_in_fresh_process(fn: Callable, lib_name: str) -> Outcome:
    """Run the snippet in a new interpreter (same sys.path) and return its Outcome."""
    module_file = fn.__code__.co_filename
    args = [
        sys.executable,
        os.path.abspath(__file__),
        module_file,
        fn.__name__,
        lib_name,
        json.dumps(sys.path),
    ]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    marker = "\n@@OUTCOME@@\n"
    if proc.returncode != 0 or marker not in proc.stdout:
        return Outcome(
            stdout="",
            warnings=[],
            exception=("HarnessSubprocessError", f"exit code {proc.returncode}"),
            traceback=f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}",
            grad_enabled_after=None,
        )
    return Outcome.from_json(proc.stdout.rsplit(marker, 1)[1])


def _subprocess_main(module_file: str, name: str, lib_name: str, path_json: str) -> None:
    sys.path[:] = json.loads(path_json)
    # Test modules import this file as ``torch_parity_harness``: make that name this very module.
    sys.modules.setdefault("torch_parity_harness", sys.modules[__name__])
    spec = importlib.util.spec_from_file_location("torch_parity_snippets_" + name, module_file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    lib = importlib.import_module(lib_name)
    outcome = run(SNIPPETS[name], lib)
    sys.stdout.write("\n@@OUTCOME@@\n" + outcome.to_json())


def outcome_for(fn: Callable, lib) -> Outcome:
    if getattr(fn, "fresh_process", False):
        return run_in_fresh_process(fn, lib.__name__)
    return run(fn, lib)


# --------------------------------------------------------------------------------------------------
# Normalising and comparing

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^\n]*?\.\)")
_PATH = re.compile(
    r"(?<![\w.~])(?:[A-Za-z]:)?(?:[\\/][\w.\-+~@]+)+\.(?:py|pyx|pyi|cpp|cc|cxx|c|h|hpp)\b(?::\d+)?"
)


def normalise(text: str, lib_name: str) -> str:
    """What a comparison sees of ``text`` printed by library ``lib_name``."""
    text = _TRIGGERED.sub("", text)
    text = _PATH.sub("<path>", text)
    text = _ADDRESS.sub("0x?", text)
    if lib_name != TARGET:
        # not inside URLs ("...autograd.html#torch.autograd.Function" stays as PyTorch wrote it)
        text = re.sub(rf"(?<![#/])\b{re.escape(lib_name)}(?=\.|::)", TARGET, text)
    return text


def _strip_hint(message: str) -> str:
    lines = message.split("\n")
    if len(lines) > 1 and lines[-1].lstrip().startswith("hint:"):
        lines = lines[:-1]
    return "\n".join(lines)


def _block(title: str, text: str) -> str:
    body = text if text else "<nothing>"
    return f"---- {title} ----\n{body.rstrip(chr(10))}\n"


def _diff(a: list[str], b: list[str], a_name: str, b_name: str) -> str:
    return "\n".join(difflib.unified_diff(a, b, fromfile=a_name, tofile=b_name, lineterm="", n=3))


def compare(ref: Outcome, got: Outcome, ref_name: str, got_name: str) -> list[str]:
    """Return a list of human-readable problems (empty when ``got`` matches ``ref``)."""
    problems: list[str] = []
    ref_out, got_out = normalise(ref.stdout, ref_name), normalise(got.stdout, got_name)
    if ref_out != got_out:
        diff = _diff(ref_out.splitlines(), got_out.splitlines(), ref_name, got_name)
        if not diff:  # differences only in line endings / trailing newline
            diff = f"{ref_name}: {ref_out!r}\n{got_name}: {got_out!r}"
        problems.append(
            "STDOUT differs (unified diff, normalised):\n"
            + diff
            + "\n"
            + _block(f"{ref_name} stdout (normalised)", ref_out)
            + _block(f"{got_name} stdout (normalised)", got_out)
        )

    ref_w = [normalise(w, ref_name) for w in ref.warnings]
    got_w = [normalise(w, got_name) for w in got.warnings]
    if ref_w != got_w:
        problems.append(
            "WARNINGS differ (category: message, in order, normalised):\n"
            + _diff(ref_w, got_w, ref_name, got_name)
            + "\n"
            + _block(f"{ref_name} warnings", "\n".join(f"[{i}] {w}" for i, w in enumerate(ref_w)))
            + _block(f"{got_name} warnings", "\n".join(f"[{i}] {w}" for i, w in enumerate(got_w)))
        )

    if ref.exception is None and got.exception is not None:
        problems.append(
            f"EXCEPTION: {ref_name} raised nothing but {got_name} raised "
            f"{got.exception[0]}: {got.exception[1]}\n" + _block(f"{got_name} traceback", got.traceback or "")
        )
    elif ref.exception is not None and got.exception is None:
        problems.append(
            f"EXCEPTION: {ref_name} raised {ref.exception[0]}: {normalise(ref.exception[1], ref_name)}\n"
            f"but {got_name} raised nothing"
        )
    elif ref.exception is not None:
        ref_type, ref_msg = ref.exception[0], normalise(ref.exception[1], ref_name)
        got_type, got_msg = got.exception[0], normalise(got.exception[1], got_name)
        if ref_type != got_type:
            problems.append(
                f"EXCEPTION TYPE differs: {ref_name} {ref_type}, {got_name} {got_type}\n"
                + _block(f"{ref_name} message", ref_msg)
                + _block(f"{got_name} message", got_msg)
                + _block(f"{got_name} traceback", got.traceback or "")
            )
        elif ref_msg not in _strip_hint(got_msg):
            problems.append(
                f"EXCEPTION MESSAGE: {got_name}'s {got_type} message (without a final 'hint:' line) "
                f"does not contain {ref_name}'s whole message\n"
                + _block(f"{ref_name} message (must be contained)", ref_msg)
                + _block(f"{got_name} message", got_msg)
                + _block(f"{got_name} traceback", got.traceback or "")
            )

    if ref.grad_enabled_after != got.grad_enabled_after:
        problems.append(
            f"GRAD MODE after the snippet: {ref_name} is_grad_enabled() -> {ref.grad_enabled_after}, "
            f"{got_name} -> {got.grad_enabled_after}"
        )
    return problems


def report(fn: Callable, problems: list[str], ref_name: str, got_name: str) -> str:
    where = f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"
    head = f"snippet {fn.__name__} ({where}): {got_name} differs from {ref_name}"
    return head + "\n\n" + "\n".join(problems)


def differences(fn: Callable, ref_lib, lib) -> str | None:
    """Run ``fn`` under both libraries; ``None`` if they agree, else a readable report."""
    ref_name, got_name = ref_lib.__name__, lib.__name__
    ref, got = outcome_for(fn, ref_lib), outcome_for(fn, lib)
    problems = compare(ref, got, ref_name, got_name)
    return report(fn, problems, ref_name, got_name) if problems else None


def check(fn: Callable, ref_lib, lib) -> None:
    """Like :func:`differences`, raising AssertionError with the report."""
    problems = differences(fn, ref_lib, lib)
    if problems:
        raise AssertionError(problems)


if __name__ == "__main__":
    _subprocess_main(*sys.argv[1:5])
