"""Pictures that show before anything runs: a freshly executed notebook with a graph, a
backward player and a forward player, opened UNTRUSTED in JupyterLab (as every clone of
the course is), exported by nbconvert to HTML, and that HTML shown with JavaScript off.

Untrusted JupyterLab renders neither SVG nor widgets, and sanitises HTML; GitHub, nbviewer
and nbconvert behave alike. Each picture output must therefore show its PNG: every output
area with a picture shows an <img> that loaded (naturalWidth > 0) at the size its metadata
asks for, and no output area shows the text of a graph (its repr, DOT or stripped SVG
text, a widget error) without a picture. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
UI_TIMEOUT = 30_000  # ms
CELL_TIMEOUT = 120  # s, executing the notebook

CELLS = [
    ("markdown", "# Pictures without running anything"),
    ("code", "import minigrad as torch\nimport viz\n\n"
             "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
             "b = torch.tensor([3.0, 4.0], requires_grad=True)\n"
             "loss = (a * b * a).sum()\n"
             "viz.draw(loss, params={\"a\": a, \"b\": b}, show_saved=True)"),
    ("code", "print(viz.summary(loss, params={\"a\": a, \"b\": b}))"),
    ("code", "viz.animate(loss, params={\"a\": a, \"b\": b})"),
    ("code", "with viz.record(params={\"a\": a, \"b\": b}) as rec:\n"
             "    h = a * b\n"
             "    out = (h + 1.0).sum()\n"
             "rec.player()"),
]
PICTURE_CELLS = [0, 2, 3]  # among the code cells (0-based) whose output is a picture

# Text that means "a graph was meant to be here": reprs, DOT, the text of a stripped SVG, widget errors.
GRAPH_TEXT = re.compile(r"<viz\.Graph|Player\(nodes=|digraph|n\d+->n\d+|Error displaying widget|"
                        r"Loading widget|model not found")

OUTPUTS_JS = """() => [...document.querySelectorAll('.jp-Cell.jp-CodeCell')].map(cell => {
  const areas = [...cell.querySelectorAll('.jp-OutputArea-output')];
  return areas.map(o => ({
    imgs: [...o.querySelectorAll('img')].map(i => ({complete: i.complete, natural: i.naturalWidth,
      naturalH: i.naturalHeight, shown: i.getBoundingClientRect().width, attr: Number(i.getAttribute('width'))})),
    svgs: o.querySelectorAll('svg').length,
    text: o.innerText || '',
    mime: o.getAttribute('data-mime-type') || '',
  }));
})"""

NBCONVERT_JS = """() => [...document.querySelectorAll('.jp-CodeCell')].map(cell =>
  [...cell.querySelectorAll('.jp-OutputArea-output')].map(o => ({
    imgs: [...o.querySelectorAll('img')].map(i => ({complete: i.complete, natural: i.naturalWidth,
      shown: i.getBoundingClientRect().width, attr: Number(i.getAttribute('width'))})),
    svgs: o.querySelectorAll('svg').length,
    text: o.innerText || '',
  })))"""


def _execute(path: Path) -> nbformat.NotebookNode:
    """Run the notebook as Run All would and save it, as nbclient does for the course: in
    this interpreter's kernel, without widget state (a separate process, so its kernel
    client's sockets are its own business)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "markdown" else nbformat.v4.new_code_cell(src)
                for kind, src in CELLS]
    nbformat.write(nb, path)
    done = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
                           f"--ExecutePreprocessor.timeout={CELL_TIMEOUT}", "--ExecutePreprocessor.kernel_name=python3",
                           "--ExecutePreprocessor.store_widget_state=False", str(path)],
                          capture_output=True, text=True, timeout=4 * CELL_TIMEOUT, check=False, cwd=path.parent,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO),
                                                                                         os.environ.get("PYTHONPATH")]))))
    assert done.returncode == 0, done.stderr[-3000:]
    return nbformat.read(path, as_version=4)


def _check_stored(nb: nbformat.NotebookNode) -> list[dict]:
    """What the file holds: every picture cell has exactly one display output with a PNG and
    its size, and no output anywhere holds text/html with inline SVG."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    sizes = []
    for i, cell in enumerate(code):
        for out in cell.outputs:
            html = out.get("data", {}).get("text/html", "")
            assert "<svg" not in html.lower(), f"cell {i}: inline SVG in text/html"
        if i in PICTURE_CELLS:
            (out,) = [o for o in cell.outputs if o.output_type in ("display_data", "execute_result")]
            assert "image/png" in out.data, f"cell {i}: no PNG ({sorted(out.data)})"
            sizes.append(dict(out.metadata["image/png"]))
    return sizes


def _check_areas(cells: list[list[dict]], sizes: list[dict], where: str) -> None:
    assert len(cells) == len([c for c in CELLS if c[0] == "code"]), (where, cells)
    pictures = iter(sizes)
    for i, areas in enumerate(cells):
        for area in areas:
            shown = [img for img in area["imgs"] if img["complete"] and img["natural"] > 0]
            if GRAPH_TEXT.search(area["text"]) and not (shown or area["svgs"]):
                pytest.fail(f"{where}: cell {i} shows graph text without its picture: {area['text'][:120]!r}")
        if i in PICTURE_CELLS:
            size = next(pictures)
            imgs = [img for area in areas for img in area["imgs"]]
            assert len(imgs) == 1, f"{where}: cell {i}: expected one picture, got {areas}"
            (img,) = imgs
            if where.startswith("nbconvert") and i == PICTURE_CELLS[0]:
                # nbconvert prefers the graph's SVG, as an <img> of its own: fine, it needs no script
                assert img["complete"] and abs(img["natural"] - size["width"]) <= 1.42, (where, i, img, size)
            else:
                assert img["complete"] and img["natural"] == 2 * size["width"], (where, i, img, size)
            assert abs(img["shown"] - size["width"]) <= 1.42, (where, i, img, size)  # shown at its CSS size


def test_pictures_show_untrusted_in_jupyterlab_and_in_nbconvert_html(tmp_path, lab_server, chromium):
    started = time.monotonic()
    root = tmp_path / "root"
    root.mkdir()
    path = root / "pictures.ipynb"
    nb = _execute(path)
    executed = time.monotonic()
    sizes = _check_stored(nb)
    ARTIFACTS.mkdir(exist_ok=True)

    # 1. JupyterLab, the notebook as stored: untrusted, nothing run
    base, token = lab_server(root)
    context = chromium(viewport={"width": 1100, "height": 2600})  # tall: every output in one screenshot
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base}/lab/tree/pictures.ipynb?token={token}", timeout=UI_TIMEOUT)
    # Every code cell in the page with all its outputs (a loaded machine renders the last cells late).
    page.wait_for_function(
        "([cells, pictures]) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return w && w.content && w.content.widgets.length === cells"
        " && w.content.widgets.every(c => c.model.type !== 'code' || (c.node.isConnected"
        "    && c.node.querySelectorAll('.jp-OutputArea-output').length >= c.model.outputs.length))"
        " && document.querySelectorAll('.jp-OutputArea-output').length >= pictures; }",
        arg=[len(CELLS), len(PICTURE_CELLS)], timeout=UI_TIMEOUT)
    page.wait_for_function("() => [...document.querySelectorAll('.jp-OutputArea-output img')]"
                           ".every(i => i.complete)", timeout=UI_TIMEOUT)
    trusted = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets"
                            ".filter(c => c.model.type === 'code').map(c => c.model.trusted)")
    assert trusted and not any(trusted), f"the notebook opened trusted: {trusted}"  # the premise of the test
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets"
                         ".every(c => c.model.type !== 'code' || c.model.executionCount === null"
                         " || c.model.executionCount > 0)")
    lab_cells = page.evaluate(OUTPUTS_JS)
    page.locator(".jp-NotebookPanel").screenshot(path=str(ARTIFACTS / "untrusted_jupyterlab.png"))
    _check_areas(lab_cells, sizes, "JupyterLab (untrusted)")
    mimes = [area["mime"] for areas in lab_cells for area in areas]
    assert mimes.count("image/png") == len(PICTURE_CELLS), mimes
    assert not errors, errors

    # 2. nbconvert's HTML, and the same page with JavaScript off
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nbformat.read(path, as_version=4))
    html_path = ARTIFACTS / "pictures_nbconvert.html"
    html_path.write_text(body, encoding="utf-8")
    for script_on in (True, False):
        ctx = chromium(java_script_enabled=script_on)
        view = ctx.new_page()
        view.goto(html_path.resolve().as_uri(), timeout=UI_TIMEOUT)
        view.wait_for_load_state("load")
        cells = view.evaluate(NBCONVERT_JS)  # Playwright's own script runs even with the page's scripts off
        if not script_on:
            assert view.evaluate("() => document.querySelectorAll('.jp-OutputArea-output script').length") == 0
            view.screenshot(path=str(ARTIFACTS / "pictures_nbconvert_nojs.png"), full_page=True)
        _check_areas(cells, sizes, "nbconvert" + ("" if script_on else " without JavaScript"))
        ctx.close()
    print(f"\nexecuted in {executed - started:.1f} s, checked in the browser in {time.monotonic() - executed:.1f} s;"
          f" PNG sizes (CSS px): {json.dumps(sizes)}")
