"""What the grader takes from a submission (notebooks/grade.py: reach, graded_notebook), without running
anything: only the answer cells, put into the lesson as generated from its source; an answer cell that
reaches the grader, the checks, sys.modules, builtins or files is left out and flagged. Every answer of
tests/notebooks/answers.py (right, wrong and sneaky) and every solution is read as a plain answer."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

CHEATS = {
    "patching otter's runner": ("from otter.test_files.exception_test import ExceptionTestFile\n"
                                "ExceptionTestFile.run = lambda self, env: None\n", "imports otter-grader"),
    "patching the check": ("import minigrad_course\nminigrad_course.check_train_step = lambda *a: True\n",
                           "imports the checks"),
    "through sys.modules": ("import sys\nsys.modules['minigrad_course'].check_hvp = print\n", "imports sys"),
    "builtins": ("import builtins\nbuiltins.print = None\n", "imports builtins"),
    "__builtins__": ("__builtins__['len'] = lambda x: 3\n", "uses __builtins__"),
    "reading a file": ("answer = open('../solutions/01_tensors_and_requires_grad.ipynb').read()\n", "uses open"),
    "pathlib": ("from pathlib import Path\nanswer = Path('x').read_text()\n", "imports pathlib"),
    "a shell": ("!cat ../solutions/01_tensors_and_requires_grad.ipynb\nleaves = {'p'}\n", "runs a shell"),
    "exec": ("exec('leaves = 1')\n", "uses exec"),
    "a function's globals": ("def f():\n    pass\nf.__globals__['x'] = 1\n", "reaches .__globals__"),
}


@pytest.mark.parametrize("label", list(CHEATS))
def test_a_cheat_is_flagged_with_what_it_reaches(grader, label):
    code, reason = CHEATS[label]
    assert any(found.startswith(reason) for found in grader.reach(code)), grader.reach(code)


def test_no_honest_answer_is_flagged(grader, answers):
    for exercise_id, exercise in answers.EXERCISES.items():
        codes = [answers.PRELUDE + exercise.setup + code for code in exercise.right]
        codes += [exercise.wrong_code(w) for w in exercise.wrong] + [s.code for s in exercise.sneaky]
        for code in codes:
            assert grader.reach(code) == [], (exercise_id, code[:80])
    for path in sorted((NOTEBOOKS / "solutions").glob("[0-9][0-9]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.metadata.get("minigrad_course", {}).get("role") == "answer":
                assert grader.reach(cell.source) == [], (path.name, cell.source[:80])


def test_only_the_answer_cells_come_from_the_submission(grader, build):
    """A lesson cell the student changed is the lesson's again; the answers are in their cells (several
    answer cells of one exercise joined in the first); a flagged answer keeps the placeholder; a changed
    check cell flags its exercise."""
    source = build.SRC / "06_turning_autograd_off.py"
    nb = nbformat.read(NOTEBOOKS / "06_turning_autograd_off.ipynb", as_version=4)
    lesson_cell = next(c for c in nb.cells if c.cell_type == "code" and "minigrad_course" not in c.metadata)
    original = lesson_cell.source
    lesson_cell.source = "import minigrad_course  # a lesson cell changed"
    for cell in nb.cells:
        meta = cell.metadata.get("minigrad_course", {})
        if meta.get("role") == "answer" and meta["exercise"] == "6a":
            cell.source = "answers = {'a': False}"
        if meta.get("role") == "answer" and meta["exercise"] == "6b":
            cell.source = "import sys\n\ndef evaluate(w, inputs, labels):\n    return sys.modules\n"
    graded, flagged = grader.graded_notebook(nb, source)
    assert set(flagged) == {"6b"} and flagged["6b"][0].startswith("imports sys")
    assert original in [c.source for c in graded.cells] and "a lesson cell changed" not in str(graded.cells)
    sources = {c.metadata.get("minigrad_course", {}).get("exercise"): c.source for c in graded.cells
               if c.metadata.get("minigrad_course", {}).get("role") == "answer"}
    assert sources["6a"] == "answers = {'a': False}" and "evaluate" in sources["6b"] and "sys" not in sources["6b"]
    check = next(c for c in nb.cells if c.metadata.get("minigrad_course", {}).get("role") == "check"
                 and c.metadata["minigrad_course"]["exercise"] == "6a")
    check.source = 'print("✓ all six right")'
    _, flagged = grader.graded_notebook(nb, source)
    assert flagged["6a"] == ["changes the exercise's check cell"]


def test_each_exercise_of_a_lesson_can_be_graded_alone(grader, build):
    """graded_notebook(..., only=ID) puts in that exercise's answer alone (lesson 6's 6a and 6b are graded in
    kernels of their own: one answer cannot change what the other's tests see)."""
    source = build.SRC / "06_turning_autograd_off.py"
    nb = nbformat.read(NOTEBOOKS / "solutions" / "06_turning_autograd_off.ipynb", as_version=4)
    for only, other in (("6a", "6b"), ("6b", "6a")):
        graded, flagged = grader.graded_notebook(nb, source, only)
        answers = {c.metadata["minigrad_course"]["exercise"]: c.source for c in graded.cells
                   if c.metadata.get("minigrad_course", {}).get("role") == "answer"}
        solved = {c.metadata["minigrad_course"]["exercise"]: c.source for c in nb.cells
                  if c.metadata.get("minigrad_course", {}).get("role") == "answer"}
        assert answers[only] == solved[only] and answers[other] != solved[other] and not flagged
