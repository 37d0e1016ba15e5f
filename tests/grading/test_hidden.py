"""The autograder version's tests, run in-process with otter-grader's own test-file machinery against the
answers of tests/notebooks/answers.py: every exercise has hidden tests; every right answer passes them
all; every wrong answer fails the public test with the check's own verdict; every "sneaky" answer passes
the public check and is caught by the hidden test it names. (Untouched placeholders: tests/grading/test_grade.py.)"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

SOURCES = sorted((Path(__file__).resolve().parents[2] / "notebooks" / "src").glob("[0-9][0-9]_*.py"))
IDS = ["1", "2", "3", "4", "5", "6a", "6b", "7", "8", "9", "10", "11", "12", "13a", "13b", "13c", "14a", "14b"]


@pytest.fixture(scope="module")
def ExceptionTestFile(otter_tests):
    return otter_tests.ExceptionTestFile


@pytest.fixture(scope="module")
def test_files(build):
    """{exercise id: its otter test file text}, as `make autograder` writes them."""
    files = {}
    for source in SOURCES:
        files.update(build.autograder_tests(source))
    return files


def run(test_files, answers, exercise_id, code, ExceptionTestFile):
    """Run an answer cell as the lesson would (the lesson's imports in an earlier cell), then the exercise's
    test file on the resulting names, as otter does in the learner's kernel; {test name: (passed, message)}."""
    exercise = answers.EXERCISES[exercise_id]
    cell = exercise.setup + code
    env = {"__name__": "__main__", "In": ["", answers.PRELUDE, cell]}
    test_file = ExceptionTestFile.from_string(test_files[exercise_id], path=f"tests/{exercise_id}.py")
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        exec(answers.PRELUDE, env)  # noqa: S102
        exec(cell, env)  # noqa: S102
        test_file.run(env)
    results = {r.test_case.name: (r.passed, r.message) for r in test_file.test_case_results}
    score = test_file.score
    assert score in (0, test_file.possible), "all or nothing"
    return results, score


def test_every_exercise_has_a_public_and_hidden_tests(test_files, answers, build, ExceptionTestFile):
    assert list(test_files) == IDS
    for source in SOURCES:
        for exercise in build.exercises(source):
            test_file = ExceptionTestFile.from_string(test_files[exercise.id], path="t.py")
            public = [tc for tc in test_file.test_cases if not tc.hidden]
            hidden = [tc for tc in test_file.test_cases if tc.hidden]
            assert [tc.name for tc in public] == [exercise.check], exercise.id
            assert hidden, f"exercise {exercise.id} has no hidden test"
            assert test_file.possible == exercise.points and test_file.all_or_nothing
            for tc in hidden:
                assert tc.body.test_func.__doc__, f"{tc.name} of exercise {exercise.id} says nothing about itself"
            assert answers.EXERCISES[exercise.id].sneaky, f"no answer shows what exercise {exercise.id}'s hidden " \
                                                          "tests catch"


def _cases(kind):
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[1] / "notebooks" / "answers.py"
    module = sys.modules.get("course_answers")
    if module is None:
        spec = importlib.util.spec_from_file_location("course_answers", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["course_answers"] = module
        spec.loader.exec_module(module)
    return [pytest.param(i, n, id=f"{i}-{n}") for i in IDS for n in range(len(getattr(module.EXERCISES[i], kind)))]


@pytest.mark.parametrize("exercise_id, index", _cases("right"))
def test_right_answers_pass_every_test(test_files, answers, exercise_id, index, ExceptionTestFile):
    results, score = run(test_files, answers, exercise_id, answers.EXERCISES[exercise_id].right[index],
                         ExceptionTestFile)
    failed = {name: message for name, (passed, message) in results.items() if not passed}
    assert not failed and score > 0, failed


@pytest.mark.parametrize("exercise_id, index", _cases("wrong"))
def test_wrong_answers_fail_the_public_test_with_the_checks_verdict(test_files, answers, exercise_id, index,
                                                                    ExceptionTestFile):
    exercise = answers.EXERCISES[exercise_id]
    wrong = exercise.wrong[index]
    results, score = run(test_files, answers, exercise_id, exercise.wrong_code(wrong), ExceptionTestFile)
    passed, message = results[exercise.check]
    assert not passed and score == 0, wrong.label
    assert wrong.hint in message, message


@pytest.mark.parametrize("exercise_id, index", _cases("sneaky"))
def test_sneaky_answers_pass_the_check_and_fail_their_hidden_test(test_files, answers, exercise_id, index,
                                                                   ExceptionTestFile):
    exercise = answers.EXERCISES[exercise_id]
    sneaky = exercise.sneaky[index]
    results, score = run(test_files, answers, exercise_id, sneaky.code, ExceptionTestFile)
    assert results[exercise.check][0], f"{sneaky.label}: the public check already rejects it: {results}"
    name = "hidden: " + sneaky.hidden.removeprefix("test_")
    passed, message = results[name]
    assert not passed and score == 0, f"{sneaky.label}: {name} let it through"
    assert "hint: " in message, message


def test_the_instructor_guide_lists_every_hidden_test(test_files, ExceptionTestFile):
    """notebooks/INSTRUCTORS.md documents the hidden tests for teachers: one row per test, in order."""
    guide = (Path(__file__).resolve().parents[2] / "notebooks" / "INSTRUCTORS.md").read_text(encoding="utf-8")
    rows = []
    for exercise_id, text in test_files.items():
        test_file = ExceptionTestFile.from_string(text, path="t.py")
        hidden = [tc.name.removeprefix("hidden: ") for tc in test_file.test_cases if tc.hidden]
        rows += [f"| {exercise_id} | `{name}` |" for name in hidden]
    section = guide.split("### What the hidden tests catch", 1)[1].split("\n## ", 1)[0]
    documented = [line[: line.index("` |") + 3] for line in section.splitlines()
                  if re.match(r"^\| \d+[a-z]? \| `\w+` \|", line)]
    assert documented == rows
