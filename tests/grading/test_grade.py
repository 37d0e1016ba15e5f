"""`make grade` end to end: a class of submissions made from the learner notebooks, graded by otter-grader
in real kernels, and the exact grades.csv it must write.

The students: `all_right` (every lesson, the solutions typed in), `all_wrong` (every lesson, the first
known wrong answer of each exercise, tests/notebooks/answers.py), `untouched` (three lessons handed in
as handed out), `sneaky` (lessons 1, 6, 11 and 12 answered in ways the public checks let through and the
hidden tests catch), `crashing` (lesson 5 kills its kernel; lesson 9 right), `endless` (lesson 8 never ends;
lesson 1 right), `cheater` (the cheats a class tried: patching otter-grader's runner and the check, a
verdict printed by hand in place of the check, the check patched through sys.modules, the solution read
from a file; lesson 6's 6a answered honestly). The run must go on past the crash and the endless notebook
and write a row for everyone; every cheat scores 0 and is flagged, the honest 6a scores.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
TIMEOUT = 45  # seconds per notebook in this test; the slowest lesson grades in about 10 s

EXPECTED_CSV = """\
student,1,2,3,4,5,6a,6b,7,8,9,10,11,12,13a,13b,13c,14a,14b,total,flagged
all_right,1,2,2,2,1,1,2,2,2,1,2,3,2,1,2,2,1,2,31,
all_wrong,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
cheater,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,1,{cheats}
crashing,0,0,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,1,
endless,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,
sneaky,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
untouched,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
""".format(cheats='"1: changes the exercise\'s check cell; 6b: imports sys (sys.modules: every loaded module), '
                  'reaches .modules; 9: uses exec, uses open; 10: imports otter-grader (the grader), '
                  'imports the checks (minigrad_course)"')

# The cheats. Exercise 10: otter's test runner patched to pass every test, the check patched to pass, and a
# train_step that does nothing (it scored 2 of 2 before answers were read before grading).
PATCH_OTTER = """\
from otter.test_files.abstract_test import TestCaseResult
from otter.test_files.exception_test import ExceptionTestFile

import minigrad_course


def _everything_passes(self, global_environment):
    self.test_case_results = [TestCaseResult(test_case=tc, message="passed", passed=True) for tc in self.test_cases]


ExceptionTestFile.run = _everything_passes
minigrad_course.check_train_step = lambda *args, **kw: minigrad_course.CheckResult("check_train_step", "10", True, "")


def train_step(model, loss_fn, optimizer, xb, yb):
    return 0.0
"""
# Exercise 6b: the check replaced through sys.modules, with an evaluate that records a graph.
PATCH_MODULES = """\
import sys

sys.modules["minigrad_course"].check_evaluate = lambda *args, **kwargs: True


def evaluate(w, inputs, labels):
    return 0.0, 1.0
"""
# Exercise 9: the solution read from the solutions notebook, a file outside the submission.
READ_SOLUTION = """\
import json

solved = json.load(open({path!r}))
exec(next("".join(c["source"]) for c in solved["cells"] if "def softplus_fixed" in "".join(c["source"])))
"""


def _answer_cells(nb, exercise_id):
    return [c for c in nb.cells if c.cell_type == "code"
            and c.metadata.get("minigrad_course", {}) == {"exercise": exercise_id, "role": "answer"}]


def filled(lesson: str, answers: dict[str, str]) -> nbformat.NotebookNode:
    """The learner notebook of ``lesson`` as a student hands it in: each exercise's answer cell replaced."""
    nb = nbformat.read(NOTEBOOKS / f"{lesson}.ipynb", as_version=4)
    for exercise_id, code in answers.items():
        first, *rest = _answer_cells(nb, exercise_id)
        first.source = code
        for cell in rest:
            cell.source = ""
    return nb


def with_check(nb: nbformat.NotebookNode, exercise_id: str, code: str) -> nbformat.NotebookNode:
    """The notebook with exercise ``exercise_id``'s check cell replaced by ``code`` (a verdict typed by hand)."""
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.metadata.get("minigrad_course", {}).get("role") == "check" \
                and cell.metadata["minigrad_course"]["exercise"] == exercise_id:
            cell.source = code
    return nb


def solution_answers(lesson: str) -> dict[str, str]:
    solved = nbformat.read(NOTEBOOKS / "solutions" / f"{lesson}.ipynb", as_version=4)
    ids = [e["id"] for e in solved.metadata["minigrad_course"]["exercises"]]
    return {i: "\n".join(c.source for c in _answer_cells(solved, i)) for i in ids}


def make_class(root: Path, build, answers) -> None:
    lessons = {e.id: e.lesson for source in build.sources() for e in build.exercises(source)}
    by_lesson: dict[str, list[str]] = {}
    for exercise_id, lesson in lessons.items():
        by_lesson.setdefault(lesson, []).append(exercise_id)

    def cell(exercise_id: str, code: str) -> str:
        # the lesson's imports first (harmless again), then what the learner typed
        return answers.PRELUDE.lstrip() + answers.EXERCISES[exercise_id].setup + code

    def hand_in(student: str, lesson: str, nb: nbformat.NotebookNode) -> None:
        (root / student).mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, root / student / f"{lesson}.ipynb")

    for lesson, ids in by_lesson.items():
        hand_in("all_right", lesson, filled(lesson, solution_answers(lesson)))
        ex = answers.EXERCISES
        hand_in("all_wrong", lesson, filled(lesson, {i: cell(i, ex[i].wrong_code(ex[i].wrong[0])) for i in ids}))
    for lesson in ("01_tensors_and_requires_grad", "06_turning_autograd_off", "10_training"):
        hand_in("untouched", lesson, nbformat.read(NOTEBOOKS / f"{lesson}.ipynb", as_version=4))
    hand_in("sneaky", "01_tensors_and_requires_grad", filled("01_tensors_and_requires_grad", {
        "1": cell("1", answers.EXERCISES["1"].sneaky[0].code)}))
    hand_in("sneaky", "06_turning_autograd_off", filled("06_turning_autograd_off", {
        "6a": cell("6a", answers.EXERCISES["6a"].sneaky[0].code),
        "6b": cell("6b", answers.EXERCISES["6b"].sneaky[0].code)}))
    for lesson, exercise_id in (("11_backprop_by_hand", "11"), ("12_debugging_a_custom_function", "12")):
        hand_in("sneaky", lesson, filled(lesson, {exercise_id: cell(exercise_id,
                                                                    answers.EXERCISES[exercise_id].sneaky[0].code)}))
    hand_in("crashing", "05_hooks", filled("05_hooks", {
        "5": "import signal\n\nsignal.raise_signal(signal.SIGKILL)  # the kernel dies here"}))
    hand_in("cheater", "10_training", filled("10_training", {"10": PATCH_OTTER}))
    hand_in("cheater", "06_turning_autograd_off", filled("06_turning_autograd_off", {
        "6a": solution_answers("06_turning_autograd_off")["6a"], "6b": PATCH_MODULES}))
    solved_9 = NOTEBOOKS / "solutions" / "09_inplace_and_versions.ipynb"
    hand_in("cheater", "09_inplace_and_versions", filled("09_inplace_and_versions", {
        "9": READ_SOLUTION.format(path=str(solved_9))}))
    hand_in("cheater", "01_tensors_and_requires_grad", with_check(
        nbformat.read(NOTEBOOKS / "01_tensors_and_requires_grad.ipynb", as_version=4), "1",
        'print("✓ leaves and gradients predicted right")'))
    hand_in("crashing", "09_inplace_and_versions", filled("09_inplace_and_versions",
                                                           solution_answers("09_inplace_and_versions")))
    # never ends, without burning the CPU the other notebooks need meanwhile
    endless = "import time\n\nwhile True:\n    time.sleep(0.1)"
    hand_in("endless", "08_higher_order", filled("08_higher_order", {"8": endless}))
    hand_in("endless", "01_tensors_and_requires_grad", filled("01_tensors_and_requires_grad",
                                                               solution_answers("01_tensors_and_requires_grad")))


@pytest.fixture(scope="module")
def graded(tmp_path_factory, build, answers, otter_tests):
    """The class above, graded once by `make grade`, three notebooks at a time (the endless one sleeps)."""
    root = tmp_path_factory.mktemp("submissions")
    make_class(root, build, answers)
    # the grader's temporary folders (one per notebook, each the working folder of its kernel) go here,
    # so that test_nothing_is_left_running looks at this run's processes only
    scratch = tmp_path_factory.mktemp("scratch")
    run = subprocess.run(["make", "--no-print-directory", "grade", f"SUBMISSIONS={root}", f"TIMEOUT={TIMEOUT}",
                          "JOBS=3"], cwd=ROOT, capture_output=True, text=True, timeout=900,
                         env={**os.environ, "TMPDIR": str(scratch)})
    assert run.returncode == 0, run.stdout + run.stderr
    return root, run.stdout, scratch


def test_grades_csv_is_exactly_right(graded):
    root, log, _ = graded
    assert (root / "grades.csv").read_text(encoding="utf-8") == EXPECTED_CSV, log


def test_every_student_gets_feedback_with_the_failed_checks_and_their_hints(graded, answers):
    root, _, _ = graded
    right = (root / "all_right" / "feedback.md").read_text(encoding="utf-8")
    assert "**31 of 31 points.**" in right and "✗" not in right and "Not handed in" not in right
    wrong = (root / "all_wrong" / "feedback.md").read_text(encoding="utf-8")
    for exercise_id, exercise in answers.EXERCISES.items():
        assert f"**Exercise {exercise_id}**: 0 of" in wrong
        assert exercise.wrong[0].hint in wrong, (exercise_id, exercise.wrong[0].hint)
    assert wrong.count("hint: ") >= len(answers.EXERCISES)
    untouched = (root / "untouched" / "feedback.md").read_text(encoding="utf-8")
    assert "placeholder" in untouched and "## Not handed in" in untouched and "02_computation_graph" in untouched
    sneaky = (root / "sneaky" / "feedback.md").read_text(encoding="utf-8")
    for exercise_id in ("1", "6a", "6b", "11", "12"):
        test = answers.EXERCISES[exercise_id].sneaky[0].hidden.removeprefix("test_")
        assert f"✗ hidden test `{test}`" in sneaky, (exercise_id, sneaky)
    crashing = (root / "crashing" / "feedback.md").read_text(encoding="utf-8")
    assert "stopped its kernel" in crashing and "**Exercise 9**: 1 of 1 ✓" in crashing
    endless = (root / "endless" / "feedback.md").read_text(encoding="utf-8")
    assert f"time limit ({TIMEOUT} s)" in endless and "**Exercise 1**: 1 of 1 ✓" in endless
    cheater = (root / "cheater" / "feedback.md").read_text(encoding="utf-8")
    for exercise_id, points in (("1", 1), ("6b", 2), ("9", 1), ("10", 2)):
        assert f"**Exercise {exercise_id}**: 0 of {points}, flagged: the answer " in cheater, (exercise_id, cheater)
    assert "**Exercise 6a**: 1 of 1 ✓" in cheater and "**1 of 31 points.**" in cheater


def test_nothing_is_left_running(graded):
    """The endless notebook's kernel was killed with its grader: no process of the run survives it. Each
    notebook is graded in its own folder under the run's TMPDIR, the working folder of its kernel, whose
    connection file is there too; so a survivor works in that folder or names it on its command line."""
    import psutil

    _, _, scratch = graded
    leftovers = []
    for proc in psutil.process_iter(["pid", "cmdline", "cwd"]):
        cwd, cmdline = proc.info["cwd"] or "", proc.info["cmdline"] or []
        if cwd.startswith(str(scratch)) or any(str(scratch) in part for part in cmdline):
            leftovers.append((proc.info["pid"], cwd, cmdline))
    assert not leftovers


def test_notebooks_are_graded_in_turns_student_by_student(grader):
    """A student's slow or endless notebooks take one parallel slot at a time, early, not all slots at the end."""
    jobs = [(grader.Outcome(student, f"{n}.ipynb", None), None, None)
            for student, n in [("ann", 1), ("ann", 2), ("ann", 3), ("bob", 1), ("cid", 1), ("cid", 2)]]
    order = [(outcome.student, outcome.notebook) for outcome, _, _ in grader.student_by_student(jobs)]
    assert order == [("ann", "1.ipynb"), ("bob", "1.ipynb"), ("cid", "1.ipynb"), ("ann", "2.ipynb"),
                     ("cid", "2.ipynb"), ("ann", "3.ipynb")]


def test_the_instructor_guide_walks_from_clone_to_this_csv():
    guide = (NOTEBOOKS / "INSTRUCTORS.md").read_text(encoding="utf-8")
    section = guide.split("## Grading a class: from clone to `grades.csv`", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^(\d+)\. \*\*(.+?)\*\*", section, re.MULTILINE)
    assert [int(n) for n, _ in steps] == list(range(1, len(steps) + 1)) and len(steps) >= 6
    assert steps[0][1] == "Clone" and "grades.csv" in steps[-2][1] + steps[-1][1]
    assert "make grade SUBMISSIONS=" in section and "Why otter-grader, not nbgrader" in section
    assert "\n".join("   " + line for line in EXPECTED_CSV.splitlines()) in section
