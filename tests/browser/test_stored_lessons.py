"""Every stored lesson shows its pictures the moment it is opened: each notebook of the course, as it is
in the repository (the learner versions at the top of notebooks/, and the solutions), opened UNTRUSTED in
JupyterLab, as every clone is, with nothing run.

For each code cell, every output the file stores as a PNG must show as an <img> that loaded; no output
may show the text of a graph (a repr, DOT, a widget error) without a picture. Screenshots of each lesson
go to test-artifacts/lessons/.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = REPO / "test-artifacts" / "lessons"
UI_TIMEOUT = 60_000  # ms
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")) + sorted((NOTEBOOKS / "solutions").glob("*.ipynb"))
GRAPH_TEXT = re.compile(r"<viz\.Graph|Player\(nodes=|digraph|n\d+->n\d+|Error displaying widget|"
                        r"Loading widget|model not found")

# Each code cell is scrolled into view before it is read: JupyterLab renders only the cells near the view.
CELLS_JS = """async () => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const out = [];
  for (let i = 0; i < nb.widgets.length; i++) {
    const c = nb.widgets[i];
    if (c.model.type !== 'code') continue;
    await nb.scrollToItem(i, 'center');
    const shown = () => c.node.querySelectorAll('.jp-OutputArea-output').length >= c.model.outputs.length
      && [...c.node.querySelectorAll('.jp-OutputArea-output img')].every(im => im.complete && im.naturalWidth > 0);
    // up to 30 s a cell: a loaded machine may take seconds to decode a big PNG (a shown cell waits none)
    for (let k = 0; k < 600 && !shown(); k++) await new Promise(r => setTimeout(r, 50));
    out.push({
      trusted: c.model.trusted,
      outputs: c.model.outputs.length,
      areas: [...c.node.querySelectorAll('.jp-OutputArea-output')].map(o => ({
        loaded: [...o.querySelectorAll('img')].filter(im => im.complete && im.naturalWidth > 0).length,
        text: o.innerText || '',
      })),
    });
  }
  return out;
}"""


def _stored_pictures(path: Path) -> list[int]:
    """Per code cell, how many outputs the file stores with a PNG."""
    nb = nbformat.read(path, as_version=4)
    return [sum("image/png" in out.get("data", {}) for out in cell.outputs)
            for cell in nb.cells if cell.cell_type == "code"]


def test_the_course_stores_pictures():
    """The premise: the stored lessons carry PNG pictures (the browser test below checks they show)."""
    assert len(LESSONS) >= 20
    assert sum(sum(_stored_pictures(p)) for p in LESSONS) >= 20


@pytest.fixture(scope="module")
def course_root(tmp_path_factory):
    """A copy of notebooks/ (the server's root): JupyterLab must not write checkpoints into the repository."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(NOTEBOOKS, root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return root / "notebooks"


def test_every_stored_lesson_shows_its_pictures_untrusted(course_root, lab_server, chromium):
    base, token = lab_server(course_root)
    context = chromium(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    problems = []
    for path in LESSONS:
        rel = path.relative_to(NOTEBOOKS).as_posix()
        want = _stored_pictures(path)
        page.goto(f"{base}/lab/tree/{rel}?token={token}", timeout=UI_TIMEOUT)
        # this notebook, not one JupyterLab restored from the workspace: three lessons have 13 code cells
        page.wait_for_function(
            "([n, rel]) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            " return w && w.context && w.context.path.endsWith(rel) && w.content"
            " && w.content.widgets.filter(c => c.model.type === 'code').length === n; }",
            arg=[len(want), rel], timeout=UI_TIMEOUT)
        cells = page.evaluate(CELLS_JS)
        page.screenshot(path=str(ARTIFACTS / (rel.replace("/", "_") + ".png")))
        if any(c["trusted"] and c["outputs"] for c in cells):  # (a cell without outputs counts as trusted)
            problems.append(f"{rel}: opened trusted")
        for i, (cell, pictures) in enumerate(zip(cells, want)):
            loaded = sum(a["loaded"] for a in cell["areas"])
            if loaded < pictures:
                problems.append(f"{rel}: code cell {i}: {pictures} stored picture(s), {loaded} shown")
            for area in cell["areas"]:
                if GRAPH_TEXT.search(area["text"]) and not area["loaded"]:
                    problems.append(f"{rel}: code cell {i} shows graph text without a picture: "
                                    f"{area['text'][:80]!r}")
    assert not problems, "\n".join(problems)
    assert not errors, errors
