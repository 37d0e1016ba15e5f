"""What the stored notebooks contain: the course's vocabulary in executed code, clean storage."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LEARNERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))  # what `make lab` shows first: the lessons with blanks
SOLUTIONS = sorted((NOTEBOOKS / "solutions").glob("[0-9][0-9]_*.ipynb"))
MAX_BYTES = 1_500_000

# name -> regex that must match some executed code cell of the lessons
REQUIRED = {
    "requires_grad": r"requires_grad",
    "is_leaf": r"\.is_leaf\b",
    "grad_fn": r"\.grad_fn\b",
    "next_functions": r"\.next_functions\b",
    "AccumulateGrad": r"AccumulateGrad",
    "backward( with a gradient": r"\.backward\(\s*gradient\s*=",
    "autograd.grad": r"autograd\.grad\(",
    "retain_graph": r"retain_graph\s*=\s*True",
    "register_hook": r"\.register_hook\(",
    "register_prehook": r"\.register_prehook\(",
    "retain_grad": r"\.retain_grad\(\)",
    "no_grad": r"no_grad\(\)",
    "set_grad_enabled": r"set_grad_enabled\(",
    "inference_mode": r"inference_mode\(\)",
    "detach": r"\.detach\(\)",
    ".data": r"\.data\.\w+_\(",  # written through .data (the dangerous use the lesson shows)
    "Variable": r"\bVariable\(",
    "volatile": r"volatile\s*=\s*True",
    "autograd.Function": r"autograd import .*Function|autograd\.Function",
    "save_for_backward": r"ctx\.save_for_backward\(",
    "gradcheck": r"\bgradcheck\(",
    "create_graph": r"create_graph\s*=\s*True",
    "_version": r"\._version\b",
    "nn.Module": r"nn\.Module\b",
    "optim": r"\boptim\.\w+\(",
    "viz.draw": r"\bviz\.draw\(",
    "viz.animate": r"\bviz\.animate\(",
    "viz.record": r"\bviz\.record\(",
    "mark_dirty": r"ctx\.mark_dirty\(",
    "mark_non_differentiable": r"ctx\.mark_non_differentiable\(",
    "momentum": r"momentum\s*=",
}


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def _executed_code() -> str:
    chunks = []
    for path in LEARNERS[:1] + SOLUTIONS:
        for cell in _read(path).cells:
            if cell.cell_type == "code" and cell.execution_count is not None:
                chunks.append(cell.source)
    return "\n".join(chunks)


def test_the_course_is_all_there():
    assert [p.name[:2] for p in LEARNERS] == [f"{i:02d}" for i in range(15)]
    assert [p.name[:2] for p in SOLUTIONS] == [f"{i:02d}" for i in range(1, 15)]
    assert [p.name for p in SOLUTIONS] == [p.name for p in LEARNERS[1:]]


def _is_exercise(cell) -> bool:
    return cell.cell_type == "code" and "exercise" in cell.metadata.get("minigrad_course", {})


def _is_blank(cell) -> bool:
    """Stored without output in the learner version: an exercise cell, or a reveal cell (its output
    answers a quiz or an exercise above it)."""
    return _is_exercise(cell) or cell.metadata.get("minigrad_course", {}).get("role") == "reveal"


@pytest.mark.parametrize("name", list(REQUIRED))
def test_name_appears_in_executed_code(name):
    assert re.search(REQUIRED[name], _executed_code()), f"{name!r} is not used in any executed code cell"


@pytest.mark.parametrize("path", LEARNERS + SOLUTIONS, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_size_and_no_widget_state(path):
    assert path.stat().st_size < MAX_BYTES, f"{path.name} is {path.stat().st_size:,} bytes"
    nb = _read(path)
    nbformat.validate(nb)
    assert "widgets" not in nb.metadata, "widget state is stored"
    raw = path.read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" not in raw
    for cell in nb.cells:
        assert "widgets" not in cell.metadata
        assert "execution" not in cell.metadata, "timings are stored"


@pytest.mark.parametrize("path", LEARNERS, ids=lambda p: p.name)
def test_learner_versions_are_stored_with_outputs_except_the_exercises(path):
    """Opened before anything runs, a lesson shows every output (pictures included) but the
    exercise cells, which hold placeholders, and the reveal cells, whose output would answer a quiz:
    they carry no output and are left out of nbval's comparison."""
    code = [c for c in _read(path).cells if c.cell_type == "code"]
    shown = [c for c in code if not _is_blank(c)]
    assert [c.execution_count for c in code] == [
        None if _is_blank(c) else i for i, c in enumerate(code, 1)], "not executed top to bottom"
    if path.name != "00_start_here.ipynb":  # every shown cell has the output its solution version has
        solution = [c for c in _read(NOTEBOOKS / "solutions" / path.name).cells if c.cell_type == "code"]
        for cell in shown:
            twin = next(i for i, c in enumerate(solution) if c.source == cell.source)
            assert bool(cell.outputs) == bool(solution.pop(twin).outputs), cell.source[:60]
    for cell in code:
        if _is_blank(cell):
            assert cell.outputs == [], cell.source[:60]
            assert cell.metadata.get("tags") == ["nbval-ignore-output"], cell.source[:60]
        else:
            assert "tags" not in cell.metadata, cell.source[:60]
    if path.name != "00_start_here.ipynb":
        assert any(_is_exercise(c) for c in code)
    _no_errors_and_no_paths(code)


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solution_versions_are_executed_cleanly(path):
    nb = _read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), "not executed top to bottom"
    assert all("tags" not in c.metadata for c in code), "solutions are compared in full"
    _no_errors_and_no_paths(code)


def _no_errors_and_no_paths(code) -> None:
    for cell in code:
        for out in cell.outputs:
            assert out.output_type != "error", f"a cell raised: {cell.source[:60]}"
    text = json.dumps([c.get("outputs", []) for c in code])
    repo = str(NOTEBOOKS.parent)
    assert repo not in text, "an output names this checkout's path (nbval would fail in another clone)"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_lessons_are_focused(path):
    nb = _read(path)
    assert 10 <= len(nb.cells) - 1 <= 25, len(nb.cells)  # 10-25 lesson cells, plus the banner
    assert any("check_" in c.source for c in nb.cells if c.cell_type == "code"), "no exercise"


@pytest.mark.parametrize("path", LEARNERS + SOLUTIONS, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_pictures_and_widgets_are_ignored_and_have_a_text_twin(path):
    cells = _read(path).cells
    for i, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        rich = re.search(r"\bviz\.(draw|animate)\(|\btqdm\b", cell.source)
        ignored = cell.source.startswith("# NBVAL_IGNORE_OUTPUT")
        if rich and not ignored:
            pytest.fail(f"cell {i} shows a picture/widget/progress bar but is checked: {cell.source[:60]}")
        if ignored and "tqdm" not in cell.source:
            twin = cells[i + 1] if i + 1 < len(cells) else None
            # the twin: viz.summary, a player's frames, or a printed table (print(viz.compare(...)))
            assert twin is not None and twin.cell_type == "code" and re.search(
                r"viz\.summary\(|\.frames\b|^print\(", twin.source, re.MULTILINE), f"cell {i}: no text twin after it"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_stored_checks_pass(path):
    """Every check cell of a lesson printed ✓ when it was executed (nbval keeps it that way)."""
    verdicts = []
    for cell in _read(path).cells:
        if cell.cell_type == "code" and re.search(r"\bcheck_\w+\(", cell.source):  # not viz.gradcheck_graph
            text = "".join(o.get("text", "") for o in cell.outputs)
            verdicts.append(text)
            assert text.startswith("✓") and "✗" not in text, f"{path.name}: {text!r}"
    assert verdicts


@pytest.mark.parametrize("path", LEARNERS + SOLUTIONS, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_links_to_notebooks_resolve(path):
    for cell in _read(path).cells:
        if cell.cell_type == "markdown":
            for target in re.findall(r"\]\(([^)\s]+\.ipynb)\)", cell.source):
                assert (path.parent / target).exists(), f"{path.name}: broken link {target}"
