"""The check_...() helpers: ✓ on the solutions, ✗ with a hint on placeholders and nonsense, and
never an exception. The lessons are run in-process, cell by cell (pictures and widgets are
built but not shown), in both versions."""

from __future__ import annotations

import contextlib
import inspect
import io
import warnings
from pathlib import Path

import pytest

SOURCES = sorted((Path(__file__).resolve().parents[2] / "notebooks" / "src").glob("[0-9][0-9]_*.py"))
LESSONS = SOURCES[1:]


class Weird:
    """Attribute access and calls on it raise, comparisons are strange."""

    def __getattr__(self, name):
        raise RuntimeError(f"no {name} here")

    def __call__(self, *args, **kwargs):
        raise ValueError("called")

    def __eq__(self, other):
        raise TypeError("cannot compare")

    __hash__ = object.__hash__


def _bad_values():
    return [
        ...,
        None,
        42,
        "answer",
        [1, 2],
        {"a": ...},
        lambda *a, **k: ...,
        lambda *a, **k: 1 / 0,
        lambda *a, **k: None,
        lambda *a, **k: "text",
        type("Fake", (), {"apply": staticmethod(lambda *a: ...)}),
        Weird(),
    ]


def _checks(course):
    return {name: fn for name, fn in vars(course).items() if name.startswith("check_") and callable(fn)}


def test_every_lesson_has_a_check(course):
    names = set(_checks(course))
    assert len(names) >= 10, names
    for source in LESSONS:
        assert "check_" in source.read_text(encoding="utf-8"), source.name


def _verdict(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = fn(*args)  # must not raise
    return result, out.getvalue()


@pytest.mark.parametrize("bad", range(len(_bad_values())))
def test_checks_never_raise_on_nonsense(course, bad):
    value = _bad_values()[bad]
    for name, fn in _checks(course).items():
        arity = len(inspect.signature(fn).parameters)
        result, text = _verdict(fn, *([value] * arity))
        assert result is None, name
        assert text.startswith("✗ ") and "\n  hint: " in text, f"{name}({value!r}) printed {text!r}"
        assert text.count("\n") == 2, f"{name} printed more than one verdict: {text!r}"


def _run_cells(build, source, version):
    """Execute a lesson's code cells in one namespace; return the output of each check cell."""
    nb = build.generate(source, version)
    namespace = {"__name__": "__main__"}
    verdicts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(cell.source, f"<{source.stem} {version} cell {i}>", "exec"), namespace)  # noqa: S102
            if "check_" in cell.source:
                verdicts.append(out.getvalue())
    return verdicts


@pytest.mark.parametrize("source", LESSONS, ids=lambda p: p.stem)
def test_solutions_pass_their_checks(build, course, source):
    verdicts = _run_cells(build, source, "solution")
    assert verdicts
    for text in verdicts:
        assert text.startswith("✓ ") and "✗" not in text, text


@pytest.mark.parametrize("source", LESSONS, ids=lambda p: p.stem)
def test_learner_versions_run_and_get_hints(build, course, source):
    verdicts = _run_cells(build, source, "learner")
    assert verdicts
    for text in verdicts:
        assert text.startswith("✗ ") and "\n  hint: " in text, text
