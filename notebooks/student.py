"""The student release of the course: what a class gets, without the answers.

    python notebooks/student.py              # -> build/student/ and build/student.zip  (make student)
    python notebooks/student.py --out DIR    # -> DIR/ and DIR.zip

The release is a folder a teacher can push as a GitHub Classroom template repository, copy onto a
JupyterHub, or hand out as the zip. It holds

- ``notebooks/NN_name.ipynb``: the learner lessons as stored in this repository (placeholders in the
  exercise cells, every other output stored), every lesson found in ``notebooks/`` (new lessons are picked
  up from the folder); their banner no longer points to a solution, and no Markdown paragraph links into
  ``solutions/``;
- ``notebooks/minigrad_course/``: the checks the exercise cells call;
- ``notebooks/tests/ID.py``: each exercise's public test (the lesson's own check, in otter-grader's
  format: ``otter check`` runs them), without the hidden tests;
- ``minigrad/``, ``viz/``, ``pyproject.toml``, ``LICENSE``: the library the lessons import
  (``pip install -e ".[lab]"`` in the folder), and a README for students.

It leaves out the solutions (``notebooks/solutions/``), the lesson sources (``notebooks/src/``, which hold
the solutions), the hidden tests (``hidden=`` cells, ``build/autograder/``), the grader, the instructor guide
and the repository's tests (``tests/notebooks/answers.py`` lists right and sneaky answers). What it cannot
hide: the checks compute the right result to compare with, so a student who reads ``minigrad_course`` learns
what a right answer does; and this repository, with its solutions, stays public (INSTRUCTORS.md,
"The student release").
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "build" / "student"
sys.path.insert(0, str(HERE))

import build  # noqa: E402

LIBRARY = ("minigrad", "viz")  # the packages the lessons import, copied whole (without caches)
TOP_FILES = ("pyproject.toml", "LICENSE")
SOLUTION_LINK = re.compile(r"\]\((?:\.\./)?solutions/")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")

BANNER = (
    "> **Exercises included.** The exercise cells hold placeholders (`...`): replace them with your answer\n"
    "> and run the `check_...()` cell under them, which prints ✓ or ✗ with a hint. Every cell runs as it\n"
    "> is, so *Run All* works before you start."
)

README = """\
# The autograd course (student release)

Short lessons on automatic differentiation, with `minigrad` (a small autograd library with PyTorch's
API) and `viz` (pictures and animations of autograd graphs). Start with `notebooks/00_start_here.ipynb`,
which lists them.

## Setup

    python -m venv .venv
    .venv/bin/pip install -e ".[lab]"        # Windows: .venv\\Scripts\\pip install -e ".[lab]"
    .venv/bin/jupyter lab notebooks/

## Exercises

Each lesson's exercise cells hold placeholders (`...`). Replace them with your answer and run the
`check_...()` cell under them: it prints ✓, or ✗ with a hint. The same checks are in `notebooks/tests/`
(otter-grader's format). Your teacher grades the notebooks with these checks and with further tests of
their own, so an answer must work in general, not only on the lesson's examples. Hand in the lesson
notebooks (`NN_name.ipynb`) as they are after *Restart Kernel and Run All Cells*.
"""


def lessons() -> list[Path]:
    """The learner lessons stored in ``notebooks/``, whatever lessons there are."""
    return sorted(HERE.glob("[0-9][0-9]_*.ipynb"))


def _without_solution_links(text: str) -> str:
    """Markdown without the paragraphs that point into solutions/ (they would be dead links anyway)."""
    paragraphs = re.split(r"\n\s*\n", text)
    return "\n\n".join(p for p in paragraphs if not SOLUTION_LINK.search(p))


def student_notebook(path: Path) -> nbformat.NotebookNode:
    """A learner lesson as the release holds it: the banner without the solution link, no solution links."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        if cell.source.startswith("> **Exercises included.**"):
            cell.source = BANNER
        else:
            cell.source = _without_solution_links(cell.source)
    meta = nb.metadata.get(build.META)
    if meta is not None:
        meta["version"] = "student"
    return nb


def write_release(out: Path = OUT) -> Path:
    """Write the student release into ``out`` (emptied first) and ``out`` + ``.zip``; returns the zip."""
    if out.exists():
        shutil.rmtree(out)
    target = out / "notebooks"
    target.mkdir(parents=True)
    for path in lessons():
        build.write(student_notebook(path), target / path.name)
    shutil.copytree(HERE / "minigrad_course", target / "minigrad_course", ignore=IGNORED)
    shutil.copytree(HERE / ".jupyter", target / ".jupyter", ignore=IGNORED)
    tests = target / "tests"
    tests.mkdir()
    for source in build.sources():
        for exercise_id, text in build.autograder_tests(source, hidden=False).items():
            (tests / f"{exercise_id}.py").write_text(text, encoding="utf-8")
    for package in LIBRARY:
        shutil.copytree(ROOT / package, out / package, ignore=IGNORED)
    for name in TOP_FILES:
        shutil.copy2(ROOT / name, out / name)
    (out / "README.md").write_text(README, encoding="utf-8")
    return Path(shutil.make_archive(str(out), "zip", root_dir=out.parent, base_dir=out.name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="the release folder (default build/student)")
    args = parser.parse_args(argv)
    archive = write_release(args.out.resolve())
    count = len(lessons())
    print(f"student: {count} lessons -> {args.out}/ and {archive.name} (no solutions, sources or hidden tests)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
