"""`make grade` on Chinese submissions (issue 32): the learner notebooks of notebooks/zh/ are graded by the same
exercise ids as the English ones, and the feedback gives the checks' verdicts in Chinese.

A small class, graded once (three notebooks, to keep CI short): `zh_right` hands in lesson 1 of notebooks/zh/
with the solution typed in, `zh_wrong` the same lesson with the first known wrong answer
(tests/notebooks/answers.py), and `en_untouched` the English lesson 5 as handed out, graded in the same run.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
TIMEOUT = 45
LESSON_1, LESSON_5 = "01_tensors_and_requires_grad", "05_hooks"


def _answer_cells(nb, exercise_id):
    return [c for c in nb.cells if c.cell_type == "code"
            and c.metadata.get("minigrad_course", {}) == {"exercise": exercise_id, "role": "answer"}]


def _filled(folder: Path, lesson: str, answers: dict[str, str]) -> nbformat.NotebookNode:
    nb = nbformat.read(folder / f"{lesson}.ipynb", as_version=4)
    for exercise_id, code in answers.items():
        first, *rest = _answer_cells(nb, exercise_id)
        first.source = code
        for cell in rest:
            cell.source = ""
    return nb


def _solution(lesson: str, exercise_id: str) -> str:
    solved = nbformat.read(NOTEBOOKS / "zh" / "solutions" / f"{lesson}.ipynb", as_version=4)
    return "\n".join(c.source for c in _answer_cells(solved, exercise_id))


@pytest.fixture(scope="module")
def graded(tmp_path_factory, answers, otter_tests):
    root = tmp_path_factory.mktemp("zh_submissions")
    zh = NOTEBOOKS / "zh"
    wrong = answers.EXERCISES["1"]
    wrong_code = answers.PRELUDE.lstrip() + wrong.setup + wrong.wrong_code(wrong.wrong[0])
    class_ = {
        "zh_right": [(LESSON_1, _filled(zh, LESSON_1, {"1": _solution(LESSON_1, "1")}))],
        "zh_wrong": [(LESSON_1, _filled(zh, LESSON_1, {"1": wrong_code}))],
        "en_untouched": [(LESSON_5, nbformat.read(NOTEBOOKS / f"{LESSON_5}.ipynb", as_version=4))],
    }
    for student, notebooks in class_.items():
        (root / student).mkdir()
        for lesson, nb in notebooks:
            nbformat.write(nb, root / student / f"{lesson}.ipynb")
    run = subprocess.run(["make", "--no-print-directory", "grade", f"SUBMISSIONS={root}", f"TIMEOUT={TIMEOUT}",
                          "JOBS=3"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TMPDIR": str(tmp_path_factory.mktemp("zh_scratch"))})
    assert run.returncode == 0, run.stdout + run.stderr
    with (root / "grades.csv").open(encoding="utf-8") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    return root, rows, run.stdout


def test_chinese_lessons_are_graded_by_the_same_exercise_ids(graded):
    _, rows, log = graded
    assert (rows["zh_right"]["1"], rows["zh_right"]["total"]) == ("1", "1"), log
    assert (rows["zh_wrong"]["1"], rows["zh_wrong"]["total"]) == ("0", "0"), log
    assert (rows["en_untouched"]["5"], rows["en_untouched"]["total"]) == ("0", "0"), log
    assert all(row["flagged"] == "" for row in rows.values())


def test_the_feedback_on_a_chinese_lesson_is_in_chinese(graded, answers, monkeypatch):
    import minigrad_course as course

    root, _, _ = graded
    feedback = (root / "zh_wrong" / "feedback.md").read_text(encoding="utf-8")
    wrong = answers.EXERCISES["1"]
    namespace: dict = {}
    exec(answers.PRELUDE + wrong.setup + wrong.wrong_code(wrong.wrong[0]), namespace)  # noqa: S102
    monkeypatch.setenv("MINIGRAD_LANG", "zh")
    verdict = course.check_leaves(namespace["leaves"], namespace["gets_grad"], quiet=True)
    assert re.search(r"[\u4e00-\u9fff]", verdict.message + verdict.hint)
    assert verdict.message in feedback and verdict.hint in feedback, feedback
    assert feedback.startswith("# zh_wrong 的作业反馈\n") and "- **练习 1**：0 / 1" in feedback, feedback
    # an English lesson graded in the same run gets English feedback
    english = (root / "en_untouched" / "feedback.md").read_text(encoding="utf-8")
    assert "placeholder" in english and not re.search(r"[\u4e00-\u9fff]", english), english


def _feedback(grade, lang_of: dict[str, str]) -> str:
    """The feedback of a student who handed in the lessons of ``lang_of`` (lesson -> language), as grade.py
    writes it (no grading run: outcomes made by hand)."""
    build = grade.build
    exercises = [build.Exercise("01_a", "1", "check_a", 1), build.Exercise("02_b", "2", "check_b", 2),
                 build.Exercise("03_c", "3", "check_c", 1)]
    failed = {"failed": [{"name": "hidden: q1", "hidden": True, "message": "AssertionError"}]}
    outcomes = [grade.Outcome("ann", f"{lesson}.ipynb", lesson, exercises={e.id: failed for e in exercises
                                                                           if e.lesson == lesson}, lang=lang)
                for lesson, lang in lang_of.items()]
    return grade.feedback("ann", outcomes, exercises)


def test_the_feedbacks_own_words_are_chinese_for_a_chinese_submission(grader):
    zh = _feedback(grader, {"01_a": "zh", "02_b": "zh"})
    assert zh.splitlines()[0] == "# ann 的作业反馈" and "**得分：0 / 4。**" in zh
    assert "评分的文件：`01_a.ipynb`。" in zh and "- **练习 2**：0 / 2" in zh
    assert "✗ 隐藏测试 `q1`：AssertionError" in zh
    assert "## 未提交" in zh and "03_c（练习 3，0 / 1）。" in zh
    assert not re.search(r"Feedback|points|Exercise|Graded|hidden test|Not handed in", zh), zh
    en = _feedback(grader, {"01_a": "zh", "02_b": "en"})  # a mixed class of lessons: the feedback's words stay English
    assert en.startswith("# Feedback for ann") and "- **Exercise 2**: 0 of 2" in en and "## Not handed in" in en
    assert not re.search(r"[\u4e00-\u9fff]", en)
