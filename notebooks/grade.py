"""Grade the course's exercises with otter-grader: one folder per student, any subset of the lessons.

    python notebooks/grade.py SUBMISSIONS                    # make grade SUBMISSIONS=DIR
    python notebooks/grade.py SUBMISSIONS --timeout 60 --jobs 2

``SUBMISSIONS`` holds one folder per student (the folder's name is the student's name) with that
student's filled learner notebooks, the files as handed out (renamed copies are fine: a notebook is
recognised by the lesson its metadata names). For every notebook this

1. builds the autograder version of its lesson from ``notebooks/src/`` (``build.py --autograder``,
   into ``build/autograder/``): the lesson's own checks as public tests, and the hidden tests;
2. grades it with otter-grader's non-containerised ``otter run`` (``otter.run.main``): a fresh kernel
   of this Python runs the notebook top to bottom, errors and all, and runs each exercise's tests
   right after its check cell. Nothing is installed, no container and no network are used;
3. in a process of its own with a time limit (``--timeout``, seconds per notebook): a notebook that
   kills its kernel or never ends scores 0 for its exercises and the run goes on.

What is graded is not the submitted file as it is: the notebook otter runs is the lesson as generated
from ``notebooks/src/`` (in the submission's language: a lesson of ``notebooks/zh/`` is graded by the same
exercise ids, with the checks' feedback in Chinese) with only the submission's answer cells put in (found by
their metadata), so a
check cell, a lesson cell or a test a student changed counts for nothing. Before that, each answer cell is
read (not run): one that reaches otter-grader, ``minigrad_course`` (the checks), ``sys.modules``,
builtins, files, a shell or other modules' internals (``reach``) is left out of the graded notebook, and
its exercise scores 0 and is flagged. A lesson with several exercises is run once per exercise, with that
exercise's answer alone, so that each exercise's tests run in a kernel no other answer ran in; the tests
import a copy of the checks taken before any submission ran.

It writes ``SUBMISSIONS/grades.csv`` (``student``, one column per exercise with the points scored,
``total``, ``flagged``: the exercises whose answer was left out, and why; a lesson not submitted scores 0)
and ``SUBMISSIONS/<student>/feedback.md``: per exercise the points, and for each failed test its verdict
and hint. Points are those each exercise declares in
its source (``# %% check=ID points=N``); an exercise scores them only when its public check and all of
its hidden tests pass.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import build  # noqa: E402

AUTOGRADER = ROOT / "build" / "autograder"
DEFAULT_TIMEOUT = 120.0  # seconds per notebook: the slowest lesson runs in under 10 s on two shared cores
FEEDBACK = "feedback.md"


@dataclass
class Outcome:
    """What grading one notebook gave: per exercise the score and the failed tests, or why it gave nothing."""

    student: str
    notebook: str  # path relative to the student's folder
    lesson: str | None
    exercises: dict[str, dict] = field(default_factory=dict)  # id -> {"score", "possible", "failed": [...]}
    problem: str = ""  # "" when graded; else what went wrong (crash, time limit, not a lesson)
    seconds: float = 0.0
    flagged: dict[str, list[str]] = field(default_factory=dict)  # exercise id -> what its answer reached
    graded_path: Path | None = None  # the notebook otter runs: the lesson with this submission's answers
    lang: str = "en"  # the submitted lesson's language (notebooks/zh/ lessons say "zh" in their metadata)

    @property
    def total(self) -> float:
        return sum(self.score(i) for i in self.exercises)

    def score(self, exercise_id: str) -> float:
        """The points of one exercise: 0 when its answer was flagged, whatever the tests said."""
        if exercise_id in self.flagged:
            return 0
        return self.exercises.get(exercise_id, {}).get("score", 0)


# -- what an answer cell may reach ------------------------------------------------------------------------

# An answer defines a value, a function or a class with the lesson's libraries. Reaching any of these is
# reaching the grader, the checks or something outside the notebook: the answer is not graded.
FORBIDDEN_MODULES = {
    "otter": "otter-grader (the grader)", "minigrad_course": "the checks (minigrad_course)",
    "sys": "sys (sys.modules: every loaded module)", "builtins": "builtins", "importlib": "importlib",
    "os": "os (files, processes)", "pathlib": "pathlib (files)", "io": "io (files)", "shutil": "shutil (files)",
    "glob": "glob (files)", "subprocess": "subprocess", "ctypes": "ctypes", "gc": "gc (every live object)",
    "inspect": "inspect (other code's frames)", "nbformat": "nbformat (notebook files)",
    "pickle": "pickle", "runpy": "runpy", "types": "types", "unittest": "unittest (mock.patch)",
}
FORBIDDEN_NAMES = {"__builtins__", "__import__", "open", "exec", "eval", "compile", "get_ipython",
                   "breakpoint", "__loader__", "__spec__"}
FORBIDDEN_ATTRIBUTES = {"__globals__", "__code__", "__subclasses__", "__builtins__", "__closure__", "f_globals",
                        "f_back", "__import__", "modules"}


def reach(code: str) -> list[str]:
    """What an answer cell reaches beyond its exercise, read from its code without running it (empty
    when nothing): forbidden imports, names and attributes, and shell or IPython magic lines (``!cat``)."""
    found, kept = set(), []
    for line in code.splitlines():
        if line.lstrip().startswith(("!", "%")):
            found.add("runs a shell command or an IPython magic")
            kept.append("")
        else:
            kept.append(line)
    try:
        tree = ast.parse("\n".join(kept))
    except SyntaxError:
        return sorted(found)  # the tests report the syntax error; the answer scores 0 there
    for node in ast.walk(tree):
        modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                   [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        for module in modules:
            root = module.split(".")[0]
            if root in FORBIDDEN_MODULES:
                found.add(f"imports {FORBIDDEN_MODULES[root]}")
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            found.add(f"uses {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
            found.add(f"reaches .{node.attr}")
    return sorted(found)


def graded_notebook(submitted: nbformat.NotebookNode, source: Path,
                    only: str | None = None) -> tuple[nbformat.NotebookNode, dict[str, list[str]]]:
    """The notebook otter runs for a submission: the lesson generated from its source (``source``), each
    exercise's first answer cell holding the submission's answer cells of that exercise, joined (with
    ``only``, that exercise's alone: the others keep their placeholders); and the exercises whose answer
    reaches beyond it (``reach``), whose cells keep the lesson's placeholders."""
    answers: dict[str, list[str]] = {}
    checks: dict[str, str] = {}
    for cell in submitted.cells:
        meta = cell.get("metadata", {}).get(build.META, {})
        if cell.get("cell_type") == "code" and meta.get("role") == "answer" and "exercise" in meta:
            answers.setdefault(str(meta["exercise"]), []).append(cell.get("source", ""))
        elif cell.get("cell_type") == "code" and meta.get("role") == "check" and "exercise" in meta:
            checks[str(meta["exercise"])] = cell.get("source", "")
    flagged = {i: found for i, cells in answers.items() if (found := reach("\n\n".join(cells)))}
    lang = submitted.metadata.get(build.META, {}).get("lang", "en")  # a Chinese lesson is graded in Chinese
    nb = build.generate(source, "learner", lang if lang in build.LANGUAGES else "en")
    for cell in nb.cells:  # a check cell changed (a verdict printed by hand, the check replaced) is flagged too
        meta = cell.metadata.get(build.META, {})
        exercise = meta.get("exercise")
        if meta.get("role") == "check" and exercise in checks and checks[exercise].strip() != cell.source.strip():
            flagged.setdefault(exercise, []).append("changes the exercise's check cell")
    placed: set[str] = set()
    for cell in nb.cells:
        meta = cell.metadata.get(build.META, {})
        exercise = meta.get("exercise")
        if meta.get("role") != "answer" or exercise not in answers or exercise in flagged or \
                only not in (None, exercise):
            continue
        cell.source = "" if exercise in placed else "\n\n".join(answers[exercise])
        placed.add(exercise)
    return nb, flagged


# -- one notebook, in a process of its own ------------------------------------------------------------


# The grading kernel starts as `python -m ipykernel_launcher` does, with one import marked absent. otter's
# first cell in every graded notebook imports nbformat, hence jsonschema, which imports rfc3987_syntax when it
# is installed (the Jupyter stack asks for jsonschema[format-nongpl]); that module builds some 35 Earley
# parsers at import time, 1.5 to 4 s per notebook here, for the "iri" string format that neither notebooks
# nor otter use (python-jsonschema/jsonschema#1428). Marked absent, jsonschema leaves out that one format.
KERNEL_LAUNCHER = """\
import sys
sys.modules["rfc3987_syntax"] = None
if sys.path[0] == "":  # as ipykernel_launcher: the working folder comes back when IPython starts
    del sys.path[0]
from ipykernel import kernelapp
kernelapp.launch_new_instance()
"""


def _kernel_dir(root: Path) -> Path:
    """A Jupyter data folder whose ``python3`` kernel is this interpreter (first on JUPYTER_PATH), so
    the kernel that runs a submission has this environment, whatever kernels the user has installed."""
    spec = root / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-c", KERNEL_LAUNCHER, "-f", "{connection_file}", "--log-level=ERROR"],
        "display_name": "Python 3 (grading)", "language": "python"}), encoding="utf-8")
    return root


def _message(text: str | None) -> str:
    """The failure a test reported, without otter's frame: "Error at line N in test 5:", the line."""
    lines = (text or "").splitlines()
    if lines and lines[0].startswith("❌"):
        lines = lines[1:]
    if lines and lines[0].startswith("Error at line"):
        lines = lines[2:]
    text = "\n".join(lines).strip()
    return text.removeprefix("AssertionError: ")


def _grade_one(autograder: str, notebook: str, workdir: str, result_path: str, pristine: str = "") -> None:
    """Child process: run otter on one notebook and write what it gave as JSON (or nothing, if killed).
    ``pristine``: a folder holding the copy of the checks taken before any submission ran, first on the
    kernel's path, so that the tests import that copy whatever happened to the installed one."""
    log = os.open(os.path.join(workdir, "otter.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.environ["JUPYTER_PATH"] = str(_kernel_dir(Path(workdir) / "jupyter")) + os.pathsep + \
        os.environ.get("JUPYTER_PATH", "")
    os.environ["IPYTHONDIR"] = os.path.join(workdir, "ipython")  # no shared history database between kernels
    os.environ["TMPDIR"] = workdir
    if pristine:
        os.environ["PYTHONPATH"] = pristine + os.pathsep + os.environ.get("PYTHONPATH", "")
    tempfile.tempdir = workdir
    result: dict = {}
    try:
        import otter.run

        graded = otter.run.main(notebook, autograder=autograder, output_dir=None, no_logo=True)
        if graded.catastrophic_error is not None:
            result["problem"] = f"the notebook could not be graded ({graded.catastrophic_error!r})"
        for name, test_file in graded.results.items():
            failed = [{"name": r.test_case.name, "hidden": r.test_case.hidden, "message": _message(r.message)}
                      for r in test_file.test_case_results if not r.passed]
            result.setdefault("exercises", {})[name] = {
                "score": test_file.score, "possible": test_file.possible, "failed": failed}
    except Exception as exc:  # noqa: BLE001 - whatever happened is the outcome of this notebook
        name = type(exc).__name__
        if name == "DeadKernelError":
            result["problem"] = "the notebook stopped its kernel (it crashed, or called exit) before it was graded"
        else:
            result["problem"] = f"grading stopped with {name}: {str(exc).splitlines()[0] if str(exc) else ''}"
    Path(result_path).write_text(json.dumps(result), encoding="utf-8")


def _kill_tree(pid: int) -> None:
    """End a grading process and everything it started (the kernel, whatever the kernel started)."""
    import psutil

    try:
        parent = psutil.Process(pid)
        family = parent.children(recursive=True) + [parent]
    except psutil.NoSuchProcess:
        return
    for proc in family:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(family, timeout=10)


def _context() -> multiprocessing.context.BaseContext:
    """forkserver where there is one: each notebook's process starts from a server that has otter
    imported already (a fresh import costs seconds); spawn elsewhere (Windows)."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["otter.run", "otter.test_files", "nbconvert.preprocessors", "nbclient"])
        return ctx
    return multiprocessing.get_context("spawn")


Job = tuple  # (outcome, notebook to run, autograder zip, the one exercise it grades or None for all)


def run_jobs(jobs: list[Job], timeout: float, n_jobs: int, pristine: str = "") -> None:
    """Grade ``(outcome, notebook, autograder zip, exercise)`` jobs, ``n_jobs`` at a time, each in its own
    process killed (with its kernel) after ``timeout`` seconds; fills in each outcome (with ``exercise``,
    that exercise's result only: a lesson's exercises can be graded in processes of their own)."""
    ctx = _context()
    pending = list(jobs)
    running: list[tuple[Outcome, multiprocessing.Process, str, float, str | None]] = []
    while pending or running:
        while pending and len(running) < n_jobs:
            outcome, notebook, autograder, only = pending.pop(0)
            workdir = tempfile.mkdtemp(prefix="minigrad-grade-")
            proc = ctx.Process(target=_grade_one, args=(str(autograder), str(notebook), workdir,
                                                        os.path.join(workdir, "result.json"), pristine),
                               daemon=False)
            proc.start()
            running.append((outcome, proc, workdir, time.monotonic(), only))
        time.sleep(0.05)
        for item in list(running):
            outcome, proc, workdir, start, only = item
            elapsed = time.monotonic() - start
            if proc.is_alive() and elapsed < timeout:
                continue
            if proc.is_alive():
                _kill_tree(proc.pid)
                outcome.problem = (f"the notebook did not finish within the time limit ({timeout:g} s)"
                                   + (f" while exercise {only} was graded" if only else "")
                                   + ": look for a loop that never ends")
            else:
                _kill_tree(proc.pid)  # a kernel that outlived its grader
                result_file = Path(workdir, "result.json")
                result = json.loads(result_file.read_text(encoding="utf-8")) if result_file.exists() else {
                    "problem": f"the grading process ended without a result (exit code {proc.exitcode})"}
                graded = result.get("exercises", {})
                if only is None:
                    outcome.exercises = graded
                elif only in graded:
                    outcome.exercises[only] = graded[only]
                outcome.problem = outcome.problem or result.get("problem", "")
            proc.join(5)
            outcome.seconds += elapsed
            shutil.rmtree(workdir, ignore_errors=True)
            running.remove(item)
            print(f"grade: {outcome.student}/{outcome.notebook}: {_points(outcome.total)} point(s) in {elapsed:.1f} s"
                  f"{' (' + outcome.problem.split(':')[0] + ')' if outcome.problem else ''}", flush=True)


# -- a class of submissions ---------------------------------------------------------------------------------


def lesson_of(path: Path, lessons: set[str]) -> str | None:
    """The lesson a submitted notebook is (its metadata says which source made it; else its file name)."""
    try:
        nb = nbformat.read(path, as_version=4)
        source = nb.metadata.get(build.META, {}).get("source", "")
    except Exception:  # noqa: BLE001 - an unreadable file is reported, not graded
        return None
    stem = Path(source).stem
    if stem in lessons:
        return stem
    return next((lesson for lesson in lessons if path.name.startswith(lesson)), None)


def _language_of(path: Path) -> str:
    """The language a submitted lesson was written in (its metadata; "en" when unreadable or not said)."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get(build.META, {})
    except (OSError, ValueError, AttributeError):
        return "en"
    return meta.get("lang", "en") if meta.get("lang") in build.LANGUAGES else "en"


# The feedback's own words in Chinese, for a student who handed in Chinese lessons (the verdicts quoted in it
# are already in the lesson's language; lesson names, exercise ids, file names and test names stay as they are).
_ZH = {
    "# Feedback for {student}": "# {student} 的作业反馈",
    "**{total} of {possible} points.** Each exercise scores its points when its check and its hidden tests all "
    "pass.": "**得分：{total} / {possible}。** 每道练习的检查和隐藏测试全部通过，才能得到这道题的分数。",
    "Graded: `{notebook}`": "评分的文件：`{notebook}`",
    " (the best of {n} copies: {copies})": "（共 {n} 份，取得分最高的一份：{copies}）",
    ".": "。",
    "**{problem}.** The exercises graded in that run score 0; *Restart Kernel and Run All Cells* in JupyterLab "
    "shows where it stops.": "**{problem}。** 这次运行中评分的练习得 0 分；在 JupyterLab 中用 *Restart Kernel and "
    "Run All Cells*（重启内核并运行全部单元格）可以看到它停在哪里。",
    "- **Exercise {id}**: 0 of {points}, flagged: the answer {what}, so it was not graded":
    "- **练习 {id}**：0 / {points}，已标记：答案 {what}，因此没有评分",
    "an answer defines its values, functions or classes with the lesson's libraries only: no grader, checks, "
    "sys.modules, builtins or files; ask your teacher if you think this is a mistake":
    "答案只能用本课的库来定义值、函数或类：不能访问评分程序、检查函数、sys.modules、builtins "
    "或文件；如果你认为这是误判，请询问老师",
    "- **Exercise {id}**: {score} of {points}": "- **练习 {id}**：{score} / {points}",
    "✗ hidden test `{name}`: {message}": "✗ 隐藏测试 `{name}`：{message}",
    "  - (and {n} hidden test(s): fix the check above first)": "  - （另有 {n} 个隐藏测试：请先修正上面的检查）",
    "## Not handed in": "## 未提交",
    "{lesson} (exercise {id}, 0 of {points})": "{lesson}（练习 {id}，0 / {points}）",
    "## Not graded": "## 未评分",
}


def _say(lang: str, template: str, **values: object) -> str:
    """One of the feedback's sentences in ``lang``, filled in."""
    return (_ZH.get(template, template) if lang == "zh" else template).format(**values)


def _points(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def collect(submissions: Path, lessons: set[str], zips: dict[str, Path],
            staging: Path | None = None) -> tuple[list[Outcome], list[Job]]:
    """Every notebook in every student's folder: outcomes to fill, and the jobs that fill them (lessons
    with exercises only: the others have nothing to grade). With ``staging``, a job grades the notebook
    ``graded_notebook`` makes (written there), not the submitted file."""
    outcomes, jobs = [], []
    students = sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    for student in students:
        notebooks = sorted(p for p in student.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        if not notebooks:
            outcomes.append(Outcome(student.name, "", None, problem="no notebook in this folder"))
        for path in notebooks:
            lesson = lesson_of(path, lessons)
            outcome = Outcome(student.name, path.relative_to(student).as_posix(), lesson, lang=_language_of(path))
            outcomes.append(outcome)
            if lesson is None:
                outcome.problem = "not one of the course's lessons (or not a readable notebook): not graded"
            elif lesson not in zips:
                outcome.problem, outcome.lesson = "a lesson without exercises: nothing to grade", None
            else:
                staged = _staged(outcome, path, staging) if staging else [(path, None)]
                jobs += [(outcome, notebook, zips[lesson], only) for notebook, only in staged]
    return outcomes, jobs


def _staged(outcome: Outcome, path: Path, staging: Path) -> list[tuple[Path, str | None]]:
    """Write the notebooks otter is to run for this submission (``graded_notebook``), one per exercise when
    the lesson has several (each exercise's tests then run in a kernel that ran no other exercise's answer),
    and note the flags. Returns [(notebook, the exercise it grades, or None for the lesson's only one)]."""
    source = build.SRC / f"{outcome.lesson}.py"
    submitted = nbformat.read(path, as_version=4)
    ids = [e.id for e in build.exercises(source)]
    staged = []
    for only in ids if len(ids) > 1 else [None]:
        nb, outcome.flagged = graded_notebook(submitted, source, only)
        folder = staging / f"{len(list(staging.iterdir())):04d}"
        folder.mkdir()
        outcome.graded_path = folder / path.name
        nbformat.write(nb, outcome.graded_path)
        staged.append((outcome.graded_path, only))
    return staged


def student_by_student(jobs: list[Job]) -> list[Job]:
    """The jobs in turns: each student's first notebook, then each one's second, and so on. A student whose
    notebooks are slow or never end then takes one of the parallel slots at a time, early in the run, while
    the others' notebooks go on in the remaining slots; student after student, such notebooks would come
    together, late, and the run would end waiting for their time limits alone."""
    queues: dict[str, list] = {}
    for job in jobs:
        queues.setdefault(job[0].student, []).append(job)
    turns = []
    while any(queues.values()):
        turns += [queue.pop(0) for queue in queues.values() if queue]
    return turns


def best_per_lesson(outcomes: list[Outcome]) -> dict[tuple[str, str], Outcome]:
    """One graded notebook per student and lesson: the best-scoring when a student handed in copies."""
    best: dict[tuple[str, str], Outcome] = {}
    for outcome in outcomes:
        if outcome.lesson is None:
            continue
        key = (outcome.student, outcome.lesson)
        if key not in best or outcome.total > best[key].total:
            best[key] = outcome
    return best


def write_grades(submissions: Path, outcomes: list[Outcome], exercises: list[build.Exercise]) -> Path:
    """SUBMISSIONS/grades.csv: student, one column per exercise (points scored), total."""
    best = best_per_lesson(outcomes)
    path = submissions / "grades.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["student"] + [e.id for e in exercises] + ["total", "flagged"])
        for student in sorted({o.student for o in outcomes}):
            scores, flags = [], []
            for e in exercises:
                graded = best.get((student, e.lesson))
                scores.append(graded.score(e.id) if graded else 0)
                if graded and e.id in graded.flagged:
                    flags.append(f"{e.id}: {', '.join(graded.flagged[e.id])}")
            writer.writerow([student] + [_points(s) for s in scores] + [_points(sum(scores)), "; ".join(flags)])
    return path


def feedback(student: str, outcomes: list[Outcome], exercises: list[build.Exercise]) -> str:
    """The Markdown feedback of one student: per exercise the points, failed checks and their hints."""
    mine = [o for o in outcomes if o.student == student]
    best = {lesson: o for (s, lesson), o in best_per_lesson(outcomes).items() if s == student}
    total = sum(best[e.lesson].score(e.id) for e in exercises if e.lesson in best)
    # in Chinese when every lesson the student handed in is a Chinese one
    lang = "zh" if best and all(o.lang == "zh" for o in best.values()) else "en"
    lines = [_say(lang, "# Feedback for {student}", student=student), "",
             _say(lang, "**{total} of {possible} points.** Each exercise scores its points when its check and its "
                  "hidden tests all pass.", total=_points(total), possible=sum(e.points for e in exercises)), ""]
    missing = [e for e in exercises if e.lesson not in best]
    for lesson in sorted(best):
        in_lesson = [e for e in exercises if e.lesson == lesson]
        graded = best[lesson]
        lines.append(f"## {lesson}")
        lines.append("")
        copies = [o.notebook for o in mine if o.lesson == lesson]
        best_of = _say(lang, " (the best of {n} copies: {copies})", n=len(copies),
                       copies=", ".join(f"`{c}`" for c in copies)) if len(copies) > 1 else ""
        lines.append(_say(lang, "Graded: `{notebook}`", notebook=graded.notebook) + best_of + _say(lang, "."))
        if graded.problem:
            lines.append(_say(lang, "**{problem}.** The exercises graded in that run score 0; *Restart Kernel and "
                              "Run All Cells* in JupyterLab shows where it stops.",
                              problem=graded.problem[0].upper() + graded.problem[1:]))
        lines.append("")
        for e in in_lesson:
            result = graded.exercises.get(e.id)
            if e.id in graded.flagged:
                lines.append(_say(lang, "- **Exercise {id}**: 0 of {points}, flagged: the answer {what}, so it was "
                                  "not graded", id=e.id, points=e.points, what=", ".join(graded.flagged[e.id])))
                lines += _indented(_say(lang, "an answer defines its values, functions or classes with the lesson's "
                                        "libraries only: no grader, checks, sys.modules, builtins or files; ask "
                                        "your teacher if you think this is a mistake"))
                continue
            lines.append(_say(lang, "- **Exercise {id}**: {score} of {points}", id=e.id,
                              score=_points(graded.score(e.id)), points=e.points)
                         + (" ✓" if result and not result["failed"] else ""))
            public = [t for t in (result or {}).get("failed", []) if not t["hidden"]]
            hidden = [t for t in (result or {}).get("failed", []) if t["hidden"]]
            for test in public:
                lines += _indented(f"✗ {test['message']}")
            if hidden and not public:
                for test in hidden:
                    lines += _indented(_say(lang, "✗ hidden test `{name}`: {message}",
                                            name=test["name"].removeprefix("hidden: "), message=test["message"]))
            elif hidden:
                lines.append(_say(lang, "  - (and {n} hidden test(s): fix the check above first)", n=len(hidden)))
        lines.append("")
    if missing:
        lines += [_say(lang, "## Not handed in"), "", ", ".join(
            _say(lang, "{lesson} (exercise {id}, 0 of {points})", lesson=e.lesson, id=e.id, points=e.points)
            for e in missing) + _say(lang, "."), ""]
    stray = [o for o in mine if o.lesson is None and o.notebook]
    if stray:
        lines += [_say(lang, "## Not graded"), ""] + [f"- `{o.notebook}`: {o.problem}" for o in stray] + [""]
    return "\n".join(lines).rstrip() + "\n"


def _indented(text: str) -> list[str]:
    first, *rest = text.splitlines() or [""]
    return [f"  - {first}"] + [f"    {line.strip()}" for line in rest]


def grade(submissions: Path, timeout: float = DEFAULT_TIMEOUT, n_jobs: int = 2) -> Path:
    """Grade every student's notebooks; write grades.csv and each student's feedback.md. Returns the CSV."""
    paths = build.sources()
    exercises = [e for path in paths for e in build.exercises(path)]
    zips = build.write_autograder(AUTOGRADER, paths)
    staging = Path(tempfile.mkdtemp(prefix="minigrad-graded-"))
    pristine = Path(tempfile.mkdtemp(prefix="minigrad-checks-"))
    shutil.copytree(HERE / "minigrad_course", pristine / "minigrad_course",
                    ignore=shutil.ignore_patterns("__pycache__"))
    try:
        outcomes, jobs = collect(submissions, {path.stem for path in paths}, zips, staging)
        start = time.monotonic()
        print(f"grade: {len(jobs)} notebook(s) of {len({o.student for o in outcomes})} student(s), {n_jobs} at a "
              f"time, at most {timeout:g} s each", flush=True)
        run_jobs(student_by_student(jobs), timeout, n_jobs, str(pristine))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(pristine, ignore_errors=True)
    csv_path = write_grades(submissions, outcomes, exercises)
    for student in sorted({o.student for o in outcomes}):
        (submissions / student / FEEDBACK).write_text(feedback(student, outcomes, exercises), encoding="utf-8")
    print(f"grade: wrote {csv_path} and {FEEDBACK} in each student's folder ({time.monotonic() - start:.0f} s)")
    return csv_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", type=Path, help="a folder with one folder of notebooks per student")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per notebook (default 120)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="notebooks graded at once (default: 2, or 1 on one core)")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        print(f"grade: {args.submissions} is not a folder (SUBMISSIONS=DIR, one folder per student)", file=sys.stderr)
        return 2
    grade(args.submissions.resolve(), args.timeout, max(1, args.jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
