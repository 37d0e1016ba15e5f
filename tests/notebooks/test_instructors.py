"""notebooks/INSTRUCTORS.md stays true: every lesson has its section with a time, every exercise's
points are listed as its source declares them, and for every wrong answer in answers.py the guide
quotes exactly what the check prints."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
GUIDE = NOTEBOOKS / "INSTRUCTORS.md"
SOURCES = sorted((NOTEBOOKS / "src").glob("[0-9][0-9]_*.py"))


@pytest.fixture(scope="module")
def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


def test_every_lesson_has_a_section_with_its_time(guide):
    headings = re.findall(r"^### (\d+)\. .+ \((\d+) minutes\)$", guide, re.MULTILINE)
    assert [int(n) for n, _ in headings] == [int(source.name[:2]) for source in SOURCES]
    assert all(int(minutes) > 0 for _, minutes in headings)
    for topic in ("## How learners check themselves", "## `viz` on the projector", 'view="values"', "legend=True",
                  'rankdir="LR"', "save_html", "filmstrip", '.save("graph.png")'):
        assert topic in guide, topic


def test_points_table_matches_the_sources(guide, build):
    exercises = [e for source in SOURCES for e in build.exercises(source)]
    for e in exercises:
        assert f"| {e.id} | `{e.lesson}` | `{e.check}` | {e.points} |" in guide, e
    assert f"| | | total | {sum(e.points for e in exercises)} |" in guide


def test_guide_quotes_what_the_checks_print(guide, course, answers):
    missing = []
    for exercise_id, exercise in answers.EXERCISES.items():
        for wrong in exercise.wrong:
            namespace = {"__name__": "__main__"}
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                exec(answers.PRELUDE + exercise.setup, namespace)  # noqa: S102
                exec(exercise.wrong_code(wrong), namespace)  # noqa: S102
            result = getattr(course, exercise.check)(*(namespace[a] for a in exercise.args), quiet=True)
            row = f"| {wrong.label} | ✗ {result.message}<br>hint: {result.hint} |"
            if row not in guide:
                missing.append(f"exercise {exercise_id}: {row}")
    assert not missing, "INSTRUCTORS.md does not quote these verdicts (update its tables):\n" + "\n".join(missing)


def test_the_session_plan_covers_every_lesson():
    """The plan of sessions names every lesson in notebooks/ (it left out 11 and 12): a lesson added later
    fails here until the plan gives it a session."""
    text = GUIDE.read_text(encoding="utf-8")
    plan = re.search(r"sessions of two\s+hours[^(]*\(([^)]*)\)", text)
    assert plan, "no session plan"
    covered: set[int] = set()
    for a, b in re.findall(r"(\d+)(?: (?:to|and) (\d+))?", plan.group(1)):  # "0 to 3", "11 and 12", "14"
        covered |= set(range(int(a), int(b or a) + 1))
    lessons = {int(p.name[:2]) for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}
    assert lessons <= covered, sorted(lessons - covered)


def test_the_readme_does_not_count_the_lessons():
    """README.md said "Ten short lessons" when there were twelve: it names no count, so it stays true."""
    readme = (NOTEBOOKS.parent / "README.md").read_text(encoding="utf-8")
    assert not re.search(r"\b(?:\d+|ten|eleven|twelve|thirteen|fourteen)\s+short\s+lessons", readme, re.IGNORECASE)
    assert "00_start_here.ipynb" in readme
