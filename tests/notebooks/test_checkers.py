"""The check_...() helpers: a CheckResult for every answer, printed once, never an exception. ✓ on
the solutions, ✗ with a hint on placeholders and nonsense. The lessons are run in-process, cell by
cell (pictures and widgets are built but not shown), in both versions."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import re
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
    assert len(names) == len(course.EXERCISES) == 18, names
    assert set(course.__all__) >= names
    for source in LESSONS:
        assert "check_" in source.read_text(encoding="utf-8"), source.name


def _verdict(fn, *args, **kwargs):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = fn(*args, **kwargs)  # must not raise
    return result, out.getvalue()


@pytest.mark.parametrize("bad", range(len(_bad_values())))
def test_checks_never_raise_on_nonsense(course, bad):
    value = _bad_values()[bad]
    for name, fn in _checks(course).items():
        arity = len(inspect.signature(fn).parameters)
        result, text = _verdict(fn, *([value] * arity))
        assert isinstance(result, course.CheckResult), name
        assert not result.passed and not result and result.hint and result.reason != "ok", name
        assert text == str(result) + "\n", f"{name}({value!r}) printed {text!r}"
        assert text.startswith("✗ ") and "\n  hint: " in text, f"{name}({value!r}) printed {text!r}"
        assert text.count("\n") == 2, f"{name} printed more than one verdict: {text!r}"


def test_placeholders_get_the_placeholder_reason(course):
    for name, fn in _checks(course).items():
        arity = len(inspect.signature(fn).parameters)
        result = fn(*([...] * arity), quiet=True)
        assert result.reason == "placeholder", name


def test_result_is_data_a_grader_can_use(course, answers):
    ns = {}
    exec(answers.PRELUDE + answers.EX8.right[0], ns)  # noqa: S102
    result, text = _verdict(course.check_hvp, ns["hvp"])
    assert result.passed and bool(result) and result.reason == "ok" and result.hint == ""
    assert (result.check, result.exercise) == ("check_hvp", "8")
    assert text == f"✓ {result.message}\n"
    data = result.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert set(data) == {"check", "exercise", "passed", "message", "hint", "reason"}
    quiet, text = _verdict(course.check_hvp, ns["hvp"], quiet=True)
    assert text == "" and quiet == result
    failed = course.check_hvp(..., quiet=True)
    assert not failed and str(failed).startswith("✗ ") and "\n  hint: " in str(failed)
    with pytest.raises(AssertionError):
        assert course.check_hvp(..., quiet=True)  # how a test or an autograder uses it


def test_result_is_not_shown_twice_in_a_notebook(course, monkeypatch):
    """A check cell ends with the call: IPython must not display the returned result under the
    printed verdict, but shows it when asked for later."""
    monkeypatch.setattr(course, "_cell_number", lambda: 7)
    result, printed = _verdict(course.check_leaves, ..., ...)
    _, shown = _verdict(result._ipython_display_)
    assert printed and shown == ""
    monkeypatch.setattr(course, "_cell_number", lambda: 8)
    _, shown = _verdict(result._ipython_display_)
    assert shown == printed
    _, shown = _verdict(course.check_leaves(..., ..., quiet=True)._ipython_display_)
    assert shown == printed


def test_checks_leave_grad_mode_as_they_found_it(course):
    import minigrad as torch

    def off(w, inputs, labels):
        torch.set_grad_enabled(False)
        return ...

    assert torch.is_grad_enabled()
    course.check_evaluate(off, quiet=True)
    assert torch.is_grad_enabled()
    with torch.no_grad():
        course.check_evaluate(off, quiet=True)
        assert not torch.is_grad_enabled()


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
            if re.search(r"\bcheck_\w+\(", cell.source):  # a check call (not viz.gradcheck_graph)
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
