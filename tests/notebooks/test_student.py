"""The student release (`make student`, notebooks/student.py): what a class gets holds the lessons, their
checks and public tests, and the library; it holds no solution, no lesson source and no hidden test."""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.fixture(scope="module")
def student():
    spec = importlib.util.spec_from_file_location("course_student", NOTEBOOKS / "student.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["course_student"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def release(student, tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "student"
    archive = student.write_release(out)
    return out, archive


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_the_release_holds_every_lesson_its_checks_public_tests_and_the_library(release, build):
    out, _ = release
    files = _files(out)
    lessons = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))  # from the folder: new lessons too
    assert lessons and all(f"notebooks/{name}" in files for name in lessons)
    assert "notebooks/minigrad_course/__init__.py" in files
    exercises = [e for source in build.sources() for e in build.exercises(source)]
    assert {f"notebooks/tests/{e.id}.py" for e in exercises} <= files
    assert {"pyproject.toml", "README.md", "LICENSE", "minigrad/__init__.py", "viz/__init__.py"} <= files


def test_the_release_holds_no_solution_source_hidden_test_or_grader(release, build):
    out, _ = release
    files = _files(out)
    for banned in ("notebooks/solutions/", "notebooks/src/", "build/", "tests/notebooks/", "autograder"):
        assert not [f for f in files if f.startswith(banned) or f"/{banned}" in f"/{f}"], banned
    for banned in ("notebooks/build.py", "notebooks/grade.py", "notebooks/INSTRUCTORS.md",
                   "tests/notebooks/answers.py"):
        assert banned not in files
    assert not [f for f in files if "__pycache__" in f]
    text = "\n".join((out / f).read_text(encoding="utf-8") for f in files if f.startswith("notebooks/tests/"))
    assert "public_check" in text and "hidden=True" not in text
    for source in build.sources():
        cells = build.parse(source.read_text(encoding="utf-8"), source.name)
        for cell in cells:
            if cell.role == "hidden":
                for name in build.hidden_test_names(cell):
                    assert f"def {name}(" not in text, (source.name, name)


def test_no_solution_reaches_the_release(release):
    """Neither a solution's answer cell nor a link to the solutions is in any notebook of the release."""
    out, _ = release
    for path in sorted((out / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        text = "\n".join(cell.source for cell in nb.cells)
        assert "solutions/" not in text, path.name
        solved = NOTEBOOKS / "solutions" / path.name
        if not solved.exists():
            continue
        for cell in nbformat.read(solved, as_version=4).cells:
            if cell.metadata.get("minigrad_course", {}).get("role") == "answer":
                assert cell.source.strip() not in text, (path.name, cell.source[:60])


def test_the_zip_holds_the_folder(release):
    out, archive = release
    assert archive == out.with_suffix(".zip")
    with zipfile.ZipFile(archive) as z:
        names = {n.removeprefix("student/") for n in z.namelist() if not n.endswith("/")}
    assert names == _files(out)
