"""The learner lessons as a class uses them: Run All on an untouched lesson raises nothing, every cell
re-run afterwards still works, and no stored output gives an answer away.

Every lesson in notebooks/ is picked up from the folder (new lessons too). Each is executed once, in a
kernel of this interpreter, as stored (placeholders unfilled); an instrumenting first cell records the
questions of every quiz player the lesson makes (``viz.animate(..., quiz=True)``). Then every code cell
is run again, last to first: a cell that reads a name a later cell rebinds (lesson 3's quiz table read
``player`` after another player took the name) fails there, as it fails a learner who scrolls back up.
The lessons run two at a time (the machine's two cores; a kernel is a process of its own).

"Gives an answer away" means, for the stored learner notebook (every output is visible when it opens:
text, HTML and the text of SVG pictures):

- a quiz question's expected values (two elements or more: a single number such as 1 is everywhere)
  appear in no output; a question whose answer is a node's name is not printed beside that name;
- a prediction exercise's answer is not printed (exercise 1: the tensors' ``is_leaf`` and ``.grad``;
  6a: ``r.requires_grad`` after the exercise). The coding exercises are checked on the checks' own
  examples, so values on the lesson's examples cannot answer them; what can, the lines the solved
  exercise prints, is compared for every exercise: none of them is in the learner version.
"""

from __future__ import annotations

import html
import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import numpy as np
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
CELL_TIMEOUT = 120

RECORD_QUIZZES = """\
import json as _json, viz as _viz
_quiz_seen = []
_animate = _viz.animate
def _recording_animate(*args, **kwargs):
    player = _animate(*args, **kwargs)
    quiz = getattr(player, "quiz", None)
    for q in (quiz.questions if quiz is not None else []):
        _quiz_seen.append({"step": q.step, "kind": q.kind, "prompt": q.prompt, "text": q.expected_text,
                           "values": q.expected.tolist() if hasattr(q.expected, "tolist") else None})
    return player
_viz.animate = _recording_animate
"""
REPORT_QUIZZES = "print(_json.dumps(_quiz_seen))"

# prediction exercises: what printing the answer looks like (regexes over the stored outputs)
PREDICTIONS = {
    "1": [r"^\s*[pqrse]: is_leaf=", r"^\s*[pqrse]\.grad\b"],
    "6a": [r"\br\.requires_grad\b.*(True|False)"],
}
NAME_PAIRED = re.compile(r"runs next|before step|Which node")


def _client(nb):
    import sys

    sys.path.insert(0, str(NOTEBOOKS))
    try:
        import build
    finally:
        sys.path.pop(0)
    from nbclient import NotebookClient

    return NotebookClient(nb, km=build._current_env_kernel_manager(), timeout=CELL_TIMEOUT,
                          resources={"metadata": {"path": str(NOTEBOOKS)}}, allow_errors=False,
                          extra_arguments=build.KERNEL_ARGS)


def _run(name: str) -> dict:
    """Run All on the stored lesson, then every code cell again, last to first. Returns the quizzes seen
    and the failures: (pass, cell index, error)."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    nb.cells.insert(0, nbformat.v4.new_code_cell(RECORD_QUIZZES))
    nb.cells.append(nbformat.v4.new_code_cell(REPORT_QUIZZES))
    client = _client(nb)
    failures: list[tuple[str, int, str]] = []
    quizzes: list[dict] = []
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            _execute(client, cell, i, "run all", failures, offset=1)
        report = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
        quizzes = json.loads(report.strip().splitlines()[-1]) if report.strip() else []
        for i in reversed(code):
            _execute(client, nb.cells[i + 1], i + 1, "re-run", failures, offset=1)
    return {"failures": failures, "quizzes": quizzes}


def _execute(client, cell, index, when, failures, offset):
    from nbclient.exceptions import CellExecutionError

    try:
        client.execute_cell(cell, index)
    except CellExecutionError as err:
        failures.append((when, index - offset, str(err).strip().splitlines()[-1][:300]))


@pytest.fixture(scope="module")
def runs() -> dict[str, dict]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(LESSONS, pool.map(_run, LESSONS)))


def _strip_tags(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def stored_text(nb) -> list[str]:
    """Every line a stored notebook shows in its outputs: streams, plain text, HTML and SVG text, errors."""
    lines: list[str] = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            chunks = [out.get("text", "")] + out.get("traceback", [])
            data = out.get("data", {})
            chunks.append(data.get("text/plain", ""))
            chunks += [_strip_tags(data.get(m, "")) for m in ("text/html", "image/svg+xml", "text/markdown")]
            for chunk in chunks:
                lines += str(chunk).splitlines()
    return lines


NUMBER = r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?"
LIST = re.compile(rf"\[\s*({NUMBER}(?:\s*,\s*{NUMBER})+)\s*,?\s*\]")


def number_lists(lines: list[str]) -> list[np.ndarray]:
    """Every list of two or more numbers the lines show ([2, 4, 6], tensor([2., 4.]), rows of a matrix)."""
    found = []
    for line in lines:
        for m in LIST.finditer(line):
            found.append(np.array([float(v) for v in re.split(r"\s*,\s*", m.group(1).strip())]))
    return found


def _shows(lists: list[np.ndarray], values: list) -> bool:
    want = np.asarray(values, dtype=float).ravel()
    return any(arr.shape == want.shape and np.allclose(arr, want, rtol=1e-3, atol=1e-4) for arr in lists)


@pytest.mark.parametrize("name", LESSONS)
def test_run_all_then_every_cell_again(runs, name):
    assert runs[name]["failures"] == [], name


@pytest.mark.parametrize("name", LESSONS)
def test_no_stored_output_answers_a_quiz(runs, name):
    lines = stored_text(nbformat.read(NOTEBOOKS / name, as_version=4))
    lists = number_lists(lines)
    leaks = []
    for q in runs[name]["quizzes"]:
        if q["kind"] == "next":
            leaks += [(q["prompt"], line) for line in lines if q["text"] in line and NAME_PAIRED.search(line)]
        elif q["values"] is not None and np.size(q["values"]) >= 2 and _shows(lists, q["values"]):
            leaks.append((q["prompt"], q["text"]))
    assert not leaks, name


def _exercise_cells(nb):
    return {c.metadata["minigrad_course"]["exercise"]: i for i, c in reversed(list(enumerate(nb.cells)))
            if c.metadata.get("minigrad_course", {}).get("role") == "answer"}


@pytest.mark.parametrize("name", [n for n in LESSONS if (NOTEBOOKS / "solutions" / n).exists()])
def test_no_stored_output_answers_an_exercise(name):
    learner = nbformat.read(NOTEBOOKS / name, as_version=4)
    solved = nbformat.read(NOTEBOOKS / "solutions" / name, as_version=4)
    exercises = [e["id"] for e in learner.metadata["minigrad_course"]["exercises"]]
    for exercise in exercises:
        after = _exercise_cells(learner)[exercise]
        for pattern in PREDICTIONS.get(exercise, []):
            shown = [line for c in learner.cells[after:] for line in stored_text(nbformat.v4.new_notebook(cells=[c]))
                     if re.search(pattern, line)]
            assert not shown, (exercise, pattern, shown)
    # what the solved exercises print: the printed lines of the solution's cells after the first exercise
    # that the learner version prints neither in the same cell nor before the exercises (those lines do not
    # depend on an answer); none of them may be shown after the exercises in the learner version
    first = min(_exercise_cells(learner).values())
    before = set(_printed(learner.cells[:first]))
    shown_after = set(stored_text(nbformat.v4.new_notebook(cells=learner.cells[first:])))
    learner_by_source = {c.source: c for c in learner.cells if c.cell_type == "code"}
    for cell in solved.cells[min(_exercise_cells(solved).values()):]:
        twin = learner_by_source.get(cell.source)
        if cell.cell_type != "code" or twin is None:
            continue
        answered = set(_printed([cell])) - set(_printed([twin])) - before
        assert not answered & shown_after, (name, cell.source[:60], sorted(answered & shown_after))


def _printed(cells) -> list[str]:
    """The lines cells print as text (streams and plain text: what depends on the values computed)."""
    lines = []
    for cell in cells:
        for out in cell.get("outputs", []):
            for chunk in (out.get("text", ""), out.get("data", {}).get("text/plain", "")):
                lines += [line for line in str(chunk).splitlines() if len(line.strip()) > 12]
    return lines


def test_every_prediction_exercise_has_its_giveaways_listed():
    """An exercise whose answer is data (not code) lists what printing its answer looks like, above."""
    for name in LESSONS:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        for e in nb.metadata.get("minigrad_course", {}).get("exercises", []):
            if e["check"] in ("check_leaves", "check_grad_quiz"):
                assert e["id"] in PREDICTIONS, e
