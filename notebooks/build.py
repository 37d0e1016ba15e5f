"""Build the course notebooks from their sources in ``notebooks/src/``.

    python notebooks/build.py                 # every notebook: generate, execute, write
    python notebooks/build.py 03 05           # only the sources whose name starts with 03 or 05
    python notebooks/build.py --no-execute    # write the notebooks without outputs (quick, for the cell structure)
    python notebooks/build.py --check         # exit 1 when a stored notebook's cells differ from its source
    python notebooks/build.py --exercises     # list the exercises: lesson, id, check, points
    python notebooks/build.py --autograder DIR  # write the autograder version (otter-grader tests) into DIR
    python notebooks/build.py --lang zh       # the Chinese lessons (notebooks/zh/), prose from notebooks/locale/zh/

``make notebooks`` runs the first form. For each ``src/NN_name.py`` this writes

- ``NN_name.ipynb``: the lesson a learner opens, with placeholders (``...``) in the exercise
  cells. It is executed (in this folder, as nbval runs it) and stored with the outputs of every
  cell except the exercise cells, so its pictures show as soon as it is opened; the exercise
  cells carry the ``nbval-ignore-output`` tag (nbval runs them and compares the rest);
- ``solutions/NN_name.ipynb`` (only when the source has exercises): the same lesson with the
  solutions, executed in ``solutions/`` and stored with every output (nbval compares them all).

Both are stored without widget state or timings. ``--autograder DIR`` writes the third version, the
one the grader uses (``make grade``; see ``grade.py``): for each lesson with exercises,
``DIR/NN_name/tests/ID.py``, one otter-grader test file per exercise (its public test is the
lesson's own check, its hidden tests come from the source's ``hidden=ID`` cells), and
``DIR/NN_name.zip``, the autograder configuration ``otter run`` takes. Nothing is executed.

The checks the exercises call live in ``minigrad_course`` (``notebooks/minigrad_course/``),
installed with the project, so both folders and the grader import the same file.

Source format (a small dialect of jupytext's "percent" format)
---------------------------------------------------------------
A line starting with ``# %%`` starts a cell. ``# %% [markdown]`` starts a Markdown cell,
whose lines are written as comments (``# text``; a bare ``#`` is an empty line). Words after
the header are flags:

- ``solution-only``: the cell appears only in the solution version;
- ``learner-only``: the cell appears only in the learner version;
- ``reveal``: a cell whose output answers an exercise or a quiz above it (it prints the gradients the
  learner was asked to predict). The learner version stores it without output, like an exercise cell
  (tagged ``nbval-ignore-output``): the answer shows when the learner runs it, not when the lesson opens;
- ``answer=ID``: a cell the learner fills in for exercise ``ID`` (``3``, ``6b``: the lesson's
  number, then a letter when a lesson has several exercises);
- ``check=ID points=N``: the cell that checks exercise ``ID`` (it calls one ``check_...()``
  function of ``minigrad_course``, with names the answer cells define), and the points the
  exercise is worth. Every exercise has one or more answer cells followed by exactly one check
  cell.
- ``hidden=ID``: hidden tests of exercise ``ID`` (after its check cell). The cell defines
  functions ``test_<name>(<names>)``, whose parameters are names the learner's notebook defines
  (otter-grader passes them in); each raises ``AssertionError("what is wrong\n  hint: ...")`` to
  fail, and its docstring's first line says what it catches. These cells appear in no notebook:
  only in the autograder version, so they must import what they use.

Exercise cells carry ``{"minigrad_course": {"exercise": ID, "role": "answer"|"check", ...}}`` in
their metadata (the check cell adds ``points`` and ``check``), and the notebook's metadata lists
the exercises, so a grader finds them without parsing code. Check cells also carry
``{"otter": {"tests": [ID]}}``: when otter-grader runs a submission it runs test file ``ID`` right
after that cell, with the names as they were then (our metadata stays out of ``nbgrader``'s and
otter's keys otherwise).

Inside any cell, three markers (each on its own line, indented like the code around it):

- ``# SOLUTION`` ... ``# END SOLUTION``: the lines between are the solution. They are kept
  (without the marker lines) in the solution version and dropped from the learner version.
- ``# PLACEHOLDER: answer = ...``: in the learner version this line becomes ``answer = ...``
  (same indentation); in the solution version it is dropped. Placeholders must run, so every
  learner cell executes (``...`` is a valid Python expression), and the ``check_...()``
  helpers answer a placeholder with a hint rather than an error.

Everything else is copied as it is, including ``# NBVAL_IGNORE_OUTPUT`` comments (graphs,
widgets and progress bars: nbval does not compare their output; a checked text twin sits in
the next cell). The first Markdown cell is the title; after it the build inserts a short
banner that links the two versions, so the sources do not repeat it. In the solution version,
Markdown links to another lesson (``](NN_name.ipynb)``) point to that lesson's solution version
(or, for a notebook without one, one folder up), so "Next:" links keep working in solutions/.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
SOLUTIONS = "solutions"
KERNEL_TIMEOUT = 120  # seconds per cell while building
KERNEL_ARGS = ["--log-level=ERROR"]  # no "running over TCP without encryption" chatter from the kernel

CELL_RE = re.compile(r"^# %%(?P<rest>.*)$")
FLAGS = {"solution-only", "learner-only", "reveal"}
KEYS = {"answer", "check", "points", "hidden"}
EXERCISE_ID = re.compile(r"^(?P<lesson>\d{1,2})(?P<letter>[a-z]?)$")
CHECK_CALL = re.compile(r"\b(check_\w+)\(")
SOLUTION, END_SOLUTION = "# SOLUTION", "# END SOLUTION"
PLACEHOLDER = re.compile(r"^(?P<indent>\s*)# PLACEHOLDER: (?P<code>.*)$")
LESSON_LINK = re.compile(r"\]\((?P<stem>\d\d_\w+)\.ipynb\)")
META = "minigrad_course"  # our metadata key, in notebooks and cells (never nbgrader's)
OTTER = "otter"  # otter-grader's cell metadata: {"tests": [ID]} on a check cell
TEST_FUNCTION = re.compile(r"^test_\w+$")
IGNORE_OUTPUT_TAG = "nbval-ignore-output"

NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
    },
}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class SourceError(ValueError):
    """A source file breaks the cell format (the message names the file and line)."""


@dataclass
class Cell:
    kind: str  # "code" | "markdown"
    flags: set[str] = field(default_factory=set)
    lines: list[str] = field(default_factory=list)
    line_no: int = 0
    exercise: str | None = None  # the exercise id of an answer or check cell
    role: str | None = None  # "answer" | "check" | "hidden"
    points: int | None = None  # check cells only


@dataclass(frozen=True)
class Exercise:
    """One exercise of a lesson, as its source declares it."""

    lesson: str  # the source's stem, e.g. "06_turning_autograd_off"
    id: str  # "6b"
    check: str  # the check function the check cell calls, e.g. "check_evaluate"
    points: int

    def as_dict(self) -> dict:
        return {"id": self.id, "check": self.check, "points": self.points}


def _header(rest: str, name: str, no: int) -> Cell:
    words = rest.split()
    kind = "code"
    if words and words[0] == "[markdown]":
        kind, words = "markdown", words[1:]
    flags = {w for w in words if "=" not in w}
    values = dict(w.split("=", 1) for w in words if "=" in w)
    unknown = sorted(flags - FLAGS) + sorted(f"{k}=" for k in set(values) - KEYS)
    if unknown:
        raise SourceError(f"{name}:{no}: unknown cell flag(s) {unknown}; known: {sorted(FLAGS)} and "
                          f"{sorted(k + '=' for k in KEYS)}")
    if {"solution-only", "learner-only"} <= flags:
        raise SourceError(f"{name}:{no}: a cell cannot be both solution-only and learner-only")
    if "reveal" in flags and (kind != "code" or flags != {"reveal"}):
        raise SourceError(f"{name}:{no}: reveal belongs on a code cell of both versions")
    cell = Cell(kind, flags, [], no)
    if sum(role in values for role in ("answer", "check", "hidden")) > 1:
        raise SourceError(f"{name}:{no}: a cell is one of answer=, check= or hidden=, not several")
    for role in ("answer", "check", "hidden"):
        if role in values:
            if kind != "code":
                raise SourceError(f"{name}:{no}: {role}= belongs on a code cell")
            if flags:
                raise SourceError(f"{name}:{no}: exercise cells are in both versions (no {sorted(flags)[0]})")
            if not EXERCISE_ID.match(values[role]):
                raise SourceError(f"{name}:{no}: exercise id {values[role]!r} should be the lesson's number, then "
                                  "an optional letter (3, 6b)")
            cell.exercise, cell.role = values[role], role
    if "points" in values:
        if cell.role != "check":
            raise SourceError(f"{name}:{no}: points= belongs on the check= cell")
        if not values["points"].isdigit() or int(values["points"]) < 1:
            raise SourceError(f"{name}:{no}: points={values['points']!r} should be a whole number >= 1")
        cell.points = int(values["points"])
    elif cell.role == "check":
        raise SourceError(f"{name}:{no}: the check= cell declares the exercise's points (points=N)")
    return cell


def parse(text: str, name: str = "<source>") -> list[Cell]:
    """Split a source file into cells; text before the first ``# %%`` must be blank."""
    cells: list[Cell] = []
    for no, line in enumerate(text.splitlines(), 1):
        m = CELL_RE.match(line)
        if m:
            cells.append(_header(m.group("rest"), name, no))
        elif cells:
            cells[-1].lines.append(line)
        elif line.strip():
            raise SourceError(f"{name}:{no}: text before the first '# %%' cell marker")
    for cell in cells:
        while cell.lines and not cell.lines[-1].strip():
            cell.lines.pop()
        while cell.lines and not cell.lines[0].strip():
            cell.lines.pop(0)
    _check_exercises(cells, name)
    return cells


def _lesson_number(name: str) -> int | None:
    m = re.match(r"(?:.*/)?(\d\d)_", name)
    return int(m.group(1)) if m else None


def _check_exercises(cells: list[Cell], name: str) -> None:
    """Answer cells come before the one check cell of their exercise; ids belong to the lesson."""
    lesson = _lesson_number(name)
    checked: set[str] = set()
    answered: set[str] = set()
    for cell in cells:
        where = f"{name}:{cell.line_no}"
        if cell.exercise is None:
            continue
        if lesson is not None and int(EXERCISE_ID.match(cell.exercise).group("lesson")) != lesson:
            raise SourceError(f"{where}: exercise {cell.exercise} is not numbered after its lesson ({lesson})")
        if cell.role == "hidden":
            if cell.exercise not in checked:
                raise SourceError(f"{where}: hidden tests of exercise {cell.exercise} come after its check= cell")
            if not hidden_test_names(cell, where):
                raise SourceError(f"{where}: a hidden= cell defines one or more test_...() functions")
            continue
        if cell.exercise in checked:
            raise SourceError(f"{where}: exercise {cell.exercise} was already checked above")
        if cell.role == "answer":
            if not any(line.strip() in (SOLUTION, END_SOLUTION) or PLACEHOLDER.match(line) for line in cell.lines):
                raise SourceError(f"{where}: an answer= cell holds a solution (# SOLUTION) or a placeholder")
            answered.add(cell.exercise)
            continue
        calls = set(CHECK_CALL.findall("\n".join(cell.lines)))
        if len(calls) != 1:
            raise SourceError(f"{where}: a check= cell calls exactly one check_...() function, found {sorted(calls)}")
        called_check(cell, where)
        if cell.exercise not in answered:
            raise SourceError(f"{where}: exercise {cell.exercise} has no answer= cell before its check= cell")
        checked.add(cell.exercise)
    missing = sorted(answered - checked)
    if missing:
        raise SourceError(f"{name}: exercise(s) {missing} have answer= cells but no check= cell")


def called_check(cell: Cell, where: str = "<source>") -> tuple[str, tuple[str, ...]]:
    """The check a check= cell calls and the names it passes (``("check_leaves", ("leaves", "gets_grad"))``):
    the grader's public test makes the same call with the learner's values of those names."""
    try:
        tree = ast.parse("\n".join(cell.lines))
    except SyntaxError as err:
        raise SourceError(f"{where}: the check= cell does not parse ({err.msg})") from None
    last = tree.body[-1] if tree.body else None
    call = last.value if isinstance(last, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id.startswith("check_")
            and not call.keywords and all(isinstance(a, ast.Name) for a in call.args)):
        raise SourceError(f"{where}: a check= cell ends with check_...(name, ...): the names the answer defines")
    return call.func.id, tuple(a.id for a in call.args)


def hidden_test_names(cell: Cell, where: str = "<source>") -> list[str]:
    """The ``test_...`` functions a hidden= cell defines, in order."""
    try:
        tree = ast.parse("\n".join(cell.lines))
    except SyntaxError as err:
        raise SourceError(f"{where}: the hidden= cell does not parse ({err.msg})") from None
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and TEST_FUNCTION.match(node.name)]


def _markdown(lines: list[str], name: str, start: int) -> list[str]:
    out = []
    for offset, line in enumerate(lines, 1):
        if line == "#":
            out.append("")
        elif line.startswith("# "):
            out.append(line[2:])
        else:
            raise SourceError(f"{name}:{start + offset}: Markdown lines start with '# ' (or are a bare '#')")
    return out


def render_lines(cell: Cell, version: str, name: str = "<source>") -> list[str]:
    """The cell's lines in ``version`` ("solution" or "learner"), markers resolved."""
    out: list[str] = []
    in_solution = False
    for offset, line in enumerate(cell.lines, 1):
        stripped = line.strip()
        where = f"{name}:{cell.line_no + offset}"
        if stripped == SOLUTION:
            if in_solution:
                raise SourceError(f"{where}: '# SOLUTION' inside a solution block")
            in_solution = True
            continue
        if stripped == END_SOLUTION:
            if not in_solution:
                raise SourceError(f"{where}: '# END SOLUTION' without '# SOLUTION'")
            in_solution = False
            continue
        m = PLACEHOLDER.match(line)
        if m:
            if in_solution:
                raise SourceError(f"{where}: a placeholder inside a solution block")
            if version == "learner":
                out.append(m.group("indent") + m.group("code"))
            continue
        if in_solution and version == "learner":
            continue
        out.append(line)
    if in_solution:
        raise SourceError(f"{name}:{cell.line_no}: '# SOLUTION' block is not closed")
    if cell.kind == "markdown":
        out = _markdown(out, name, cell.line_no)
    return out


def solution_links(text: str) -> str:
    """Links between lessons, as seen from solutions/: the other lesson's solution version, or
    the lesson one folder up when it has none (the index)."""

    def fix(m: re.Match) -> str:
        stem = m.group("stem")
        source = SRC / f"{stem}.py"
        if source.exists() and has_exercises(parse(source.read_text(encoding="utf-8"), source.name)):
            return f"]({stem}.ipynb)"
        return f"](../{stem}.ipynb)"

    return LESSON_LINK.sub(fix, text)


def has_exercises(cells: list[Cell]) -> bool:
    return any(
        line.strip() in (SOLUTION, END_SOLUTION) or PLACEHOLDER.match(line) for cell in cells for line in cell.lines
    ) or any(cell.flags - {"reveal"} or cell.exercise for cell in cells)


def exercises_of(cells: list[Cell], stem: str) -> list[Exercise]:
    return [
        Exercise(stem, cell.exercise, CHECK_CALL.search("\n".join(cell.lines)).group(1), cell.points)
        for cell in cells
        if cell.role == "check"
    ]


def exercises(path: Path) -> list[Exercise]:
    """The exercises a source declares, in order (id, check function, points)."""
    return exercises_of(parse(path.read_text(encoding="utf-8"), f"src/{path.name}"), path.stem)


def solution_path(stem: str) -> str:
    return f"{SOLUTIONS}/{stem}.ipynb"


# The build's own text, translated with the lessons (notebooks/locale/<lang>/course.po; ``{fields}`` are filled in).
LEARNER_BANNER = (
    "> **Exercises included.** The exercise cells hold placeholders (`...`): replace them with your answer\n"
    "> and run the `check_...()` cell under them, which prints ✓ or ✗ with a hint. Every cell runs as it\n"
    "> is, so *Run All* works before you start. Stuck? The same lesson with the solutions is\n"
    "> [`{solution}`]({solution}). (Generated from `{source}`.)"
)
SOLUTION_BANNER = (
    "> **Solutions.** This is the lesson with every exercise solved. Try the exercises first in\n"
    "> [`../{stem}.ipynb`](../{stem}.ipynb), where they are placeholders.\n"
    "> (Generated from `{source}`: edit the source, then run `make notebooks`.)"
)
LANGUAGE_COMMENT = 'the exercise checks answer in this language ("en": English)'
BUILD_TEXTS = (LEARNER_BANNER, SOLUTION_BANNER, LANGUAGE_COMMENT)
LANGUAGES = ("en", "zh")  # the course's languages: notebooks/ and notebooks/zh/ (catalogs in notebooks/locale/)
UP_LINK = re.compile(r"\]\(\.\./")  # a link out of notebooks/: one more level from notebooks/<lang>/


def banner(stem: str, version: str, translate=lambda text: text) -> str:
    source = f"notebooks/src/{stem}.py"
    if version == "learner":
        return translate(LEARNER_BANNER).format(solution=solution_path(stem), source=source)
    return translate(SOLUTION_BANNER).format(stem=stem, source=source)


def language_cell(lang: str, translate) -> nbformat.NotebookNode:
    """The first code cell of a translated lesson: the checks' feedback in its language."""
    return nbformat.v4.new_code_cell(f'import os\n\nos.environ["MINIGRAD_LANG"] = "{lang}"  # '
                                     f"{translate(LANGUAGE_COMMENT)}")


def generate(path: Path, version: str, lang: str = "en") -> nbformat.NotebookNode:
    """The notebook of one version, unexecuted, with deterministic ids and metadata. In another language
    (``lang="zh"``) its Markdown comes from the catalogs (``i18n.py``) and a first code cell sets the
    checks' language; the code cells are the same."""
    translate = _translator(lang, path.stem)
    text = path.read_text(encoding="utf-8")
    name = f"src/{path.name}"
    cells = parse(text, name)
    with_exercises = has_exercises(cells)
    nb = nbformat.v4.new_notebook()
    nb.metadata = copy.deepcopy(NOTEBOOK_METADATA)
    nb.metadata[META] = {"source": name, "version": version}
    if lang != "en":
        nb.metadata[META]["lang"] = lang
    declared = exercises_of(cells, path.stem)
    if declared:
        nb.metadata[META]["exercises"] = [e.as_dict() for e in declared]
    points = {e.id: e for e in declared}
    out = []
    title_done = False
    for cell in cells:
        if cell.role == "hidden":
            continue  # only in the autograder version (autograder_tests)
        if "solution-only" in cell.flags and version != "solution":
            continue
        if "learner-only" in cell.flags and version != "learner":
            continue
        lines = render_lines(cell, version, name)
        if cell.kind == "markdown":
            text = "\n".join(lines)
            if lang != "en":
                text = UP_LINK.sub("](../../", translate(text))
            out.append(nbformat.v4.new_markdown_cell(solution_links(text) if version == "solution" else text))
            if not title_done and with_exercises:
                out.append(nbformat.v4.new_markdown_cell(banner(path.stem, version, translate)))
            if not title_done and lang != "en":
                out.append(language_cell(lang, translate))
            title_done = True
            continue
        new = nbformat.v4.new_code_cell("\n".join(lines))
        if cell.exercise is not None:
            meta = {"exercise": cell.exercise, "role": cell.role}
            if cell.role == "check":
                meta.update(points=cell.points, check=points[cell.exercise].check)
                new.metadata[OTTER] = {"tests": [cell.exercise]}
            new.metadata[META] = meta
            if version == "learner":
                new.metadata["tags"] = [IGNORE_OUTPUT_TAG]
        elif "reveal" in cell.flags:
            new.metadata[META] = {"role": "reveal"}
            if version == "learner":
                new.metadata["tags"] = [IGNORE_OUTPUT_TAG]
        out.append(new)
    for i, cell in enumerate(out):
        cell.id = f"{path.stem[:2]}-{i:02d}-{hashlib.sha1(cell.source.encode()).hexdigest()[:8]}"
    nb.cells = out
    return nb


def _translator(lang: str, stem: str):
    if lang == "en":
        return lambda text: text
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import i18n  # the catalogs (i18n.py imports this module, so not at the top)

    return i18n.Translator(lang, stem)


def lang_dir(lang: str) -> Path:
    """Where the lessons of a language are stored: notebooks/ for English, notebooks/<lang>/ otherwise."""
    return HERE if lang == "en" else HERE / lang


def is_exercise_cell(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and "exercise" in cell.metadata.get(META, {})


# -- executing and storing ------------------------------------------------------------------------------


def _current_env_kernel_manager():
    """A kernel of this very interpreter (as nbval's --nbval-current-env), whatever kernelspecs exist."""
    import ipykernel.kernelspec
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import KernelManager

    class CurrentEnv(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):  # noqa: ARG002 (one kernel only)
            return KernelSpec(resource_dir=ipykernel.kernelspec.RESOURCES, **ipykernel.kernelspec.get_kernel_dict())

    return KernelManager(kernel_name="python3", kernel_spec_manager=CurrentEnv())


def execute(nb: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    """Run every cell in ``cwd`` with nbclient; an exception in a cell stops the build."""
    from nbclient import NotebookClient

    client = NotebookClient(
        nb,
        km=_current_env_kernel_manager(),
        timeout=KERNEL_TIMEOUT,
        resources={"metadata": {"path": str(cwd)}},
        record_timing=False,
        store_widget_state=False,
        allow_errors=False,
        extra_arguments=KERNEL_ARGS,
    )
    client.execute()
    return nb


def is_reveal_cell(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and cell.metadata.get(META, {}).get("role") == "reveal"


def blank_exercises(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The learner version keeps no output of its exercise cells and its reveal cells (they would give
    answers away when the lesson opens): the learner's run makes them."""
    for cell in nb.cells:
        if is_exercise_cell(cell) or is_reveal_cell(cell):
            cell.outputs = []
            cell.execution_count = None
    return nb


CARRIAGE_RETURN = re.compile(r"^.*\r(?=[^\n])", re.MULTILINE)  # text a later \r on the same line overwrites


def coalesce_streams(outputs: list) -> list:
    """Merge consecutive stream outputs of the same name and keep, on each line, what follows its
    last carriage return: what the notebook shows (a progress bar's final state), stored once
    rather than as one output per redraw."""
    merged: list = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (output.output_type == "stream" and previous is not None and previous.output_type == "stream"
                and previous.name == output.name):
            previous.text += output.text
        else:
            merged.append(output)
    for output in merged:
        if output.output_type == "stream" and "\r" in output.text:
            output.text = CARRIAGE_RETURN.sub("", output.text.replace("\r\n", "\n"))
    return merged


def clean(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Deterministic metadata: no widget state, no timings, the fixed kernel description, and stream
    outputs coalesced. A player's stored output keeps its picture (image/png) but not its widget view:
    without the widget's state (never stored) the view would only say "Error displaying widget" where the
    picture shows."""
    meta = nb.metadata
    course = meta.get(META)
    meta.clear()
    meta.update(copy.deepcopy(NOTEBOOK_METADATA))
    if course is not None:
        meta[META] = course
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("widgets", None)
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.get("outputs", []))
            for output in cell.outputs:
                if "metadata" in output:
                    output.metadata.pop("widgets", None)
                output.get("data", {}).pop(WIDGET_VIEW, None)
    return nb


def write(nb: nbformat.NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.validate(nb)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def sources(selected: list[str] | None = None) -> list[Path]:
    paths = sorted(SRC.glob("[0-9][0-9]_*.py"))
    if selected:
        paths = [p for p in paths if any(p.name.startswith(s) for s in selected)]
    return paths


def targets(path: Path) -> dict[str, Path]:
    """Which versions a source produces, and where they are stored (relative to ``HERE``)."""
    out = {"learner": Path(f"{path.stem}.ipynb")}
    if has_exercises(parse(path.read_text(encoding="utf-8"), path.name)):
        out["solution"] = Path(solution_path(path.stem))
    return out


def build(path: Path, out_dir: Path | None = None, run: bool = True, lang: str = "en") -> dict[str, Path]:
    """Generate (and execute) both versions of one source into ``out_dir`` (the language's folder)."""
    out_dir = lang_dir(lang) if out_dir is None else out_dir
    written = {}
    for version, rel in targets(path).items():
        nb = generate(path, version, lang)
        target = out_dir / rel
        if run:
            target.parent.mkdir(parents=True, exist_ok=True)
            execute(nb, target.parent)
        if version == "learner":
            blank_exercises(nb)
        write(clean(nb), target)
        written[version] = target
    return written


def cell_signature(nb: nbformat.NotebookNode) -> list[tuple[str, str, str]]:
    """What a stored notebook must share with a fresh generation: kinds, sources and our metadata."""
    return [(cell.cell_type, cell.source,
             json.dumps([cell.metadata.get(META), cell.metadata.get(OTTER), cell.metadata.get("tags")], sort_keys=True))
            for cell in nb.cells]


def drift(path: Path, root: Path | None = None, lang: str = "en") -> list[str]:
    """What differs between the stored notebooks of a source and a fresh generation."""
    root = lang_dir(lang) if root is None else root
    problems = []
    for version, rel in targets(path).items():
        stored_path = root / rel
        if not stored_path.exists():
            problems.append(f"{rel}: missing (run `make notebooks`)")
            continue
        stored = nbformat.read(stored_path, as_version=4)
        fresh = generate(path, version, lang)
        if cell_signature(stored) != cell_signature(fresh) or stored.metadata.get(META) != fresh.metadata.get(META):
            problems.append(f"{rel}: cells differ from src/{path.name} (run `make notebooks`)")
    return problems


# -- the autograder version (otter-grader) ---------------------------------------------------------------

# otter-grader's configuration for each lesson's autograder zip: grading runs with `otter run` in this
# project's environment (no container, no network), so nothing is installed at grading time.
OTTER_CONFIG = {"lang": "python", "show_stdout": False, "show_hidden": False, "pdf": False}

_TEST_FILE_HEAD = '''"""Exercise {id} of {stem} ({points} point{plural}): the lesson's check, then {n} hidden test(s).

Generated by notebooks/build.py from notebooks/src/{stem}.py: edit the source, then `make autograder`.
otter-grader runs this file in the learner's kernel right after the exercise's check cell (the cell's
metadata says so), and the exercise scores its points only when every test passes (all_or_nothing).
"""

import functools

from otter.test_files import test_case

OK_FORMAT = False
name = {id!r}
points = {points}
all_or_nothing = True


@test_case(name={check!r}, hidden=False)
def public_check(env):
    """{check}(): the very check the lesson runs (minigrad_course), with the learner's names."""
    from minigrad_course import {check}

    names = {args!r}
    missing = [n for n in names if n not in env]
    assert not missing, ("`" + "`, `".join(missing) + "` not defined: the exercise's cell did not run, or raised an "
                         "error\\n  hint: Restart Kernel and Run All Cells shows the first cell that fails")
    result = {check}(*(env[n] for n in names), quiet=True)
    assert result.passed, f"{{result.message}}\\n  hint: {{result.hint}}"


def _hidden(func):
    """A hidden test whose call of the learner's code raises still fails with a hint: what the test checks."""

    @functools.wraps(func)
    def run(*args, **kwargs):
        try:
            func(*args, **kwargs)
        except AssertionError:
            raise
        except Exception as exc:
            what = " ".join((func.__doc__ or "").split("\\n\\n")[0].split())
            raise AssertionError(f"{{type(exc).__name__}}: {{exc}}\\n  hint: this test checks: {{what}}") from None

    return run
'''


def autograder_tests(path: Path, hidden: bool = True) -> dict[str, str]:
    """The otter-grader test file of each exercise of a source, {exercise id: Python text}: the public
    test calls the lesson's check (one source of truth), the hidden tests are the source's hidden= cells
    (left out with ``hidden=False``: the public tests of the student release, ``student.py``)."""
    name = f"src/{path.name}"
    cells = parse(path.read_text(encoding="utf-8"), name)
    files = {}
    for exercise in exercises_of(cells, path.stem):
        check_cell = next(c for c in cells if c.role == "check" and c.exercise == exercise.id)
        check, args = called_check(check_cell, f"{name}:{check_cell.line_no}")
        secret = [c for c in cells if c.role == "hidden" and c.exercise == exercise.id] if hidden else []
        tests = [(t, c) for c in secret for t in hidden_test_names(c, f"{name}:{c.line_no}")]
        text = _TEST_FILE_HEAD.format(id=exercise.id, stem=path.stem, points=exercise.points,
                                      plural="s" if exercise.points != 1 else "", n=len(tests), check=check,
                                      args=args)
        for cell in secret:
            text += "\n\n# -- hidden tests (notebooks/src/" + f"{path.name}, line {cell.line_no}) --\n\n"
            text += "\n".join(cell.lines) + "\n"
        text += "\n\n"
        for test, _ in tests:
            text += f"{test} = test_case(name={('hidden: ' + test[len('test_'):])!r}, hidden=True)(_hidden({test}))\n"
        files[exercise.id] = text
    return files


def write_autograder(out_dir: Path, paths: list[Path] | None = None) -> dict[str, Path]:
    """Write the autograder version of each lesson with exercises: ``out_dir/NN_name/tests/ID.py`` and
    ``out_dir/NN_name.zip`` (made by otter-grader's own ``otter generate``). Returns {lesson: zip}."""
    from otter.generate import main as otter_generate

    out_dir.mkdir(parents=True, exist_ok=True)
    zips = {}
    for path in paths if paths is not None else sources():
        files = autograder_tests(path)
        if not files:
            continue
        folder = out_dir / path.stem
        tests = folder / "tests"
        if tests.exists():
            for old in tests.glob("*.py"):
                old.unlink()
        tests.mkdir(parents=True, exist_ok=True)
        for exercise_id, text in files.items():
            (tests / f"{exercise_id}.py").write_text(text, encoding="utf-8")
        config = folder / "otter_config.json"
        config.write_text(json.dumps(OTTER_CONFIG, indent=2) + "\n", encoding="utf-8")
        zips[path.stem] = out_dir / f"{path.stem}.zip"
        otter_generate(tests_dir=str(tests), output_path=str(zips[path.stem]), config=str(config),
                       no_requirements=True, no_environment=True)
    return zips


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="build only sources whose file name starts with one of these")
    parser.add_argument("--no-execute", action="store_true", help="store the notebooks without outputs")
    parser.add_argument("--lang", default="en", help="the lessons' language: en (notebooks/) or zh (notebooks/zh/)")
    parser.add_argument("--check", action="store_true", help="report stored notebooks that differ from their source")
    parser.add_argument("--exercises", action="store_true", help="list the exercises: lesson, id, check, points")
    parser.add_argument("--autograder", metavar="DIR", type=Path,
                        help="write the autograder version (otter-grader tests and zips) into DIR")
    args = parser.parse_args(argv)
    paths = sources(args.names)
    if not paths:
        print(f"build: no sources match {args.names} in {SRC}", file=sys.stderr)
        return 2
    if args.exercises:
        for path in paths:
            for e in exercises(path):
                print(f"{e.lesson:34s} {e.id:4s} {e.check:20s} {e.points} point{'s' if e.points != 1 else ''}")
        return 0
    if args.autograder is not None:
        for lesson, zip_path in write_autograder(args.autograder, paths).items():
            tests = sorted(p.name for p in (args.autograder / lesson / "tests").glob("*.py"))
            print(f"autograder: {zip_path} ({', '.join(tests)})")
        return 0
    if args.check:
        problems = sorted({p for path in paths for p in drift(path, lang=args.lang)})
        for problem in problems:
            print(problem)
        print(f"build --check: {len(paths)} source(s), {'drift found' if problems else 'all in sync'}")
        return 1 if problems else 0
    for path in paths:
        print(f"build: {path.name}", flush=True)
        for version, target in build(path, run=not args.no_execute, lang=args.lang).items():
            print(f"  {version:8s} -> {target.relative_to(HERE)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
