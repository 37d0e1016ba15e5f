"""Every exercise's check against the answers of tests/notebooks/answers.py: at least two different
right answers pass, and at least four wrong ones (the mistakes its lesson warns about, and those a
learner made) fail, each with its own reason and a hint that names the mistake."""

from __future__ import annotations

import contextlib
import io
import warnings

import pytest

IDS = ["1", "2", "3", "4", "5", "6a", "6b", "7", "8", "9", "10", "11", "12", "13a", "13b", "13c", "14a", "14b"]


def run_answer(course, answers, exercise_id, code):
    """Run an answer cell as the lesson would (its imports and setup first), then its check."""
    exercise = answers.EXERCISES[exercise_id]
    namespace = {"__name__": "__main__"}
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        exec(answers.PRELUDE + exercise.setup, namespace)  # noqa: S102
        exec(code, namespace)  # noqa: S102
    check = getattr(course, exercise.check)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = check(*(namespace[name] for name in exercise.args))
    assert out.getvalue() == str(result) + "\n", "the check printed something besides its verdict"
    return result


def _cases(answers_module, kind):
    out = []
    for exercise_id in IDS:
        exercise = answers_module.EXERCISES[exercise_id]
        items = exercise.right if kind == "right" else exercise.wrong
        out += [pytest.param(exercise_id, i, id=f"{exercise_id}-{i}") for i in range(len(items))]
    return out


def _answers_module():
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parent / "answers.py"
    spec = importlib.util.spec_from_file_location("course_answers", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["course_answers"] = module
    spec.loader.exec_module(module)
    return module


_ANSWERS = _answers_module()


def test_every_exercise_has_enough_answers(answers, course):
    assert list(answers.EXERCISES) == IDS == list(course.EXERCISES)
    for exercise_id, exercise in answers.EXERCISES.items():
        assert exercise.check == course.EXERCISES[exercise_id].__name__
        assert len(set(exercise.right)) >= 2, exercise_id
        assert len(exercise.wrong) >= 4, exercise_id
        reasons = {w.reason for w in exercise.wrong}
        assert len(reasons) >= 4, f"exercise {exercise_id}: wrong answers need different hints, got {reasons}"
        assert "raised" not in reasons and "ok" not in reasons


@pytest.mark.parametrize("exercise_id, index", _cases(_ANSWERS, "right"))
def test_right_answers_pass(course, answers, exercise_id, index):
    result = run_answer(course, answers, exercise_id, answers.EXERCISES[exercise_id].right[index])
    assert result.passed and result.reason == "ok", str(result)


@pytest.mark.parametrize("exercise_id, index", _cases(_ANSWERS, "wrong"))
def test_wrong_answers_fail_with_their_hint(course, answers, exercise_id, index):
    exercise = answers.EXERCISES[exercise_id]
    wrong = exercise.wrong[index]
    result = run_answer(course, answers, exercise_id, exercise.wrong_code(wrong))
    assert not result.passed, f"{wrong.label}: accepted ({result})"
    assert result.reason == wrong.reason, f"{wrong.label}: {result}"
    assert wrong.hint in result.hint or wrong.hint in result.message, f"{wrong.label}: {result}"
