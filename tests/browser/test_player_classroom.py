"""The player on a projector: JupyterLab light and dark at 1280x800 and 1920x1080, Notebook 7, exported
pages, a page whose Python had no Graphviz, and a folded Transformer.

On each player it asserts what a learner in the back row needs: every text of the picture at 10 px or
more and at 4.5:1 or more against what is behind it (the panel and the controls too), the whole 18-node
MLP visible at the starting zoom on 1920x1080, the steps of lesson 5 told in the engine's order. One
JupyterLab server serves both front ends. Screenshots go to test-artifacts/classroom_*.png.
"""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import pytest


def _load(name: str):
    """A sibling file as a module (the tests run in importlib mode: no package, no sys.path entry)."""
    spec = importlib.util.spec_from_file_location(f"browser_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpers = _load("conftest")
catalogue = _load("graphs")
REPO, lab_api, wait_for = helpers.REPO, helpers.lab_api, helpers.wait_for
ARTIFACTS = REPO / "test-artifacts"
GRAPHS = Path(__file__).with_name("graphs.py")
UI_TIMEOUT = 30_000
KERNEL_TIMEOUT = 60

CELLS = [
    f"""import importlib.util, minigrad, viz
spec = importlib.util.spec_from_file_location("graphs", {str(GRAPHS)!r})
graphs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(graphs)
loss, model = graphs.mlp18(minigrad)
viz.animate(loss, params=model)""",
    """loss, params = graphs.lesson5(minigrad)
viz.animate(loss, params=params)""",
    # a kernel without Graphviz (JupyterLite, no pygraphviz wheel): the page lays the graphs out with the
    # WebAssembly Graphviz the kernel sends
    """from viz import render
found = render.find_renderer
render.find_renderer = lambda: None
loss, model = graphs.mlp18(minigrad)
viz.animate(loss, params=model)""",
    """from IPython.display import display
display(viz.draw(loss, params=model))
render.find_renderer = found  # Graphviz again for the cells above (their left-to-right layouts)""",
]

# every visible text of the picture: its size on screen and its contrast with what is behind it
PICTURE_JS = "root => {\n" + helpers.CONTRAST_JS + """
  const bg = getComputedStyle(root).backgroundColor;
  const svg = root.querySelector('.mg-stage svg');
  const scale = svg.getScreenCTM().a;
  const bad = [];
  let count = 0, minPx = 99, minContrast = 21;
  for (const t of svg.querySelectorAll('text')) {
    if (!t.textContent.trim()) continue;
    const style = getComputedStyle(t);
    if (style.display === 'none' || t.closest('[style*="display: none"]')) continue;
    const hidden = [...function* () { for (let e = t; e && e !== svg; e = e.parentElement) yield e; }()]
      .some(e => getComputedStyle(e).display === 'none' || getComputedStyle(e).opacity === '0');
    if (hidden) continue;
    count++;
    const px = parseFloat(t.getAttribute('font-size') || style.fontSize) * scale;
    // what is behind: the innermost filled shape of the same node under the text, else the page
    let behind = bg;
    const node = t.closest('g.node, .mg-stepbadge, .mg-arrbadge');
    const tb = t.getBBox();
    const cx = tb.x + tb.width / 2, cy = tb.y + tb.height / 2;
    if (node) {
      for (const s of node.querySelectorAll('polygon, path, circle')) {
        const f = getComputedStyle(s).fill;
        if (!f || f === 'none' || f.startsWith('rgba(0, 0, 0, 0)')) continue;
        const b = s.getBBox();
        if (cx >= b.x && cx <= b.x + b.width && cy >= b.y && cy <= b.y + b.height) behind = f;
      }
    }
    const r = contrast(style.fill, behind);
    minPx = Math.min(minPx, px); minContrast = Math.min(minContrast, r);
    if (px < 9.99 || r < 4.5)
      bad.push({text: t.textContent, px: +px.toFixed(2), contrast: +r.toFixed(2), fill: style.fill, behind});
  }
  return {count, nodes: svg.querySelectorAll('g.node').length, bad: bad.slice(0, 12), zoom: Number(root.dataset.zoom),
          minPx, minContrast};
}"""

CHROME_JS = "root => {\n" + helpers.CONTRAST_JS + """  const bad = [];
  for (const e of root.querySelectorAll('.mg-title, .mg-line, .mg-key, .mg-count, .mg-zlabel, .mg-btn:not(.mg-play)')) {
    const c = getComputedStyle(e).color, b = backdrop(e);
    const r = contrast(c, b);
    const px = parseFloat(getComputedStyle(e).fontSize);
    if (r < 4.5 || px < 10) bad.push({text: e.textContent.slice(0, 40), contrast: +r.toFixed(2), px});
  }
  return bad;
}"""

WHOLE_JS = """root => {
  const stage = root.querySelector('.mg-stage').getBoundingClientRect();
  const out = [];
  for (const g of root.querySelectorAll('.mg-stage svg g.node')) {
    const r = g.getBoundingClientRect();
    if (r.left < stage.left - 1 || r.right > stage.right + 1 || r.top < stage.top - 1 || r.bottom > stage.bottom + 1
        || r.bottom > innerHeight + 1 || r.top < -1) out.push(g.getAttribute('data-n'));
  }
  return out;
}"""

FITS_JS = """root => root.getBoundingClientRect().bottom
  <= root.closest('.jp-WindowedPanel-outer').getBoundingClientRect().bottom + 1"""

LINES_JS = "root => [...root.querySelectorAll('.mg-line')].map(e => e.textContent)"


def _notebook(path: Path) -> None:
    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
              "source": code.splitlines(keepends=True)} for i, code in enumerate(CELLS)]
    nb = {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                      "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb), encoding="utf-8")


def _check(page, root, label: str, whole: bool = False) -> dict:
    """Size and contrast of every text, a screenshot; the whole graph on screen when asked."""
    root.scroll_into_view_if_needed()
    root.evaluate("r => r.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(250)
    picture = root.evaluate(PICTURE_JS)
    # texts were measured (at least one per box; the 2-node graph has 10 in all) and all are readable
    assert picture["count"] >= max(picture["nodes"], 1) and picture["bad"] == [], (label, picture)
    assert root.evaluate(CHROME_JS) == [], label
    outside = root.evaluate(WHOLE_JS)
    picture["whole"] = not outside
    picture["fit"] = root.get_attribute("data-fit")
    picture["room"] = root.get_attribute("data-room")
    if picture["fit"] == "whole":  # the player chose to show the whole graph: every node is on screen
        assert outside == [], (label, picture["zoom"])
    if whole:  # the player's rule: the whole graph when it fits at 80% or more, else the width
        assert outside == [], (label, picture["zoom"])
        assert picture["zoom"] >= 0.8, picture
    ARTIFACTS.mkdir(exist_ok=True)
    root.screenshot(path=str(ARTIFACTS / f"classroom_{label}.png"))
    return picture


def _lesson5(root) -> None:
    """Step to MulBackward0: the clipped gradient comes before the rule and what the node sends."""
    root.locator("button.mg-first").click()
    for _ in range(3):
        root.locator("button.mg-next").click()
    assert root.locator(".mg-title").text_content() == "MulBackward0 runs"
    lines = root.evaluate(LINES_JS)
    assert lines[:4] == ["grad = [3, -2, -8] (from PowBackward0)",
                         "tensor hook on its output tensor fired and returned [2, -2, -2], replacing [3, -2, -8]",
                         "So MulBackward0 uses grad = [2, -2, -2].",
                         "MulBackward0: grad_self = grad * other, grad_other = grad * self"], lines
    hooked = root.evaluate("r => [...r.querySelectorAll('g.edge.mg-hooked .mg-glabel')].map(t => t.textContent)")
    assert hooked == ["[2, -2, -2]"]


def _run_cells(page, base: str, token: str, url: str) -> None:
    page.goto(url, timeout=UI_TIMEOUT)

    def idle():
        sessions = lab_api(base, token, "/api/sessions")
        return sessions and all(s["kernel"]["execution_state"] == "idle" for s in sessions)

    wait_for("an idle kernel", KERNEL_TIMEOUT, idle)


def test_player_in_the_classroom(tmp_path, lab_server, chromium, torch):
    import minigrad
    import viz
    from viz import render

    started = time.monotonic()
    root_dir = tmp_path / "root"
    root_dir.mkdir()
    _notebook(root_dir / "classroom.ipynb")
    base, token = lab_server(root_dir)
    lab_api(base, token, "/api/sessions", {"path": "classroom.ipynb", "type": "notebook", "name": "classroom.ipynb",
                                           "kernel": {"name": "python3"}})
    context = chromium(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    measured = {}

    # JupyterLab: light and dark, 1920x1080 and 1280x800
    _run_cells(page, base, token, f"{base}/lab/tree/classroom.ipynb?token={token}")
    page.wait_for_function("() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                           " const k = w && w.sessionContext && w.sessionContext.session"
                           " && w.sessionContext.session.kernel;"
                           " return k && k.status === 'idle' && w.content && w.content.widgets.length > 0; }",
                           timeout=UI_TIMEOUT)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea .mg-player svg g.node').length > 20",
                           timeout=UI_TIMEOUT)
    players = page.locator(".jp-OutputArea .mg-player")
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        page.evaluate(f"() => window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{theme}'}})")
        dark = theme.endswith("Dark")
        page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{str(not dark).lower()}'",
                               timeout=UI_TIMEOUT)
        page.wait_for_timeout(400)
        for w, h in ((1920, 1080), (1280, 800)):
            page.set_viewport_size({"width": w, "height": h})
            page.wait_for_timeout(400)
            label = f"lab_{'dark' if dark else 'light'}_{w}x{h}"
            assert players.first.evaluate("r => r.classList.contains('mg-dark')") == dark
            # the projector case: the 18-node MLP shows whole at 80% zoom or more on 1920x1080
            measured[label] = _check(page, players.first, label, whole=w == 1920)
            if w == 1280:
                assert players.first.evaluate("r => r.classList.contains('mg-narrow')")
            # the player, legend included, fits in what the notebook shows, at every step
            for _ in range(3):
                assert players.first.evaluate(FITS_JS), label
                players.first.locator("button.mg-next").click()
            players.first.locator("button.mg-first").click()
    _lesson5(players.nth(1))
    # the kernel without Graphviz: the player and viz.draw, laid out in the page
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea .mg-player').length === 4"
                           " && [...document.querySelectorAll('.jp-OutputArea .mg-player')].slice(2)"
                           ".every(p => p.querySelectorAll('svg g.node[data-n]').length >= 17)", timeout=UI_TIMEOUT)
    for k, label in ((2, "lab_no_graphviz"), (3, "lab_no_graphviz_draw")):
        browser_laid = players.nth(k)
        assert browser_laid.evaluate("r => r.querySelectorAll('svg g.node[data-n]').length") == 18, label
        measured[label] = _check(page, browser_laid, label)
    players.nth(2).locator("button.mg-last").click()
    assert players.nth(2).locator(".mg-title").text_content() == "Backward done"
    # the zoom a teacher sets stays while stepping
    first = players.first
    first.locator("button.mg-zin").click()
    zoom = first.get_attribute("data-zoom")
    first.locator("button.mg-next").click()
    first.locator("button.mg-next").click()
    assert first.get_attribute("data-zoom") == zoom
    # left to right: the kernel lays the graph out again
    first.locator("button.mg-dir").click()
    page.wait_for_function(
        "() => document.querySelector('.jp-OutputArea .mg-player .mg-dir').textContent.includes('TB')",
        timeout=UI_TIMEOUT)
    page.wait_for_function("() => !document.querySelector('.jp-OutputArea .mg-player').classList.contains('mg-busy')",
                           timeout=UI_TIMEOUT)
    box = first.evaluate("r => { const b = r.querySelector('.mg-stage svg').viewBox.baseVal;"
                         " return {width: b.width, height: b.height}; }")
    assert box["width"] > 2 * box["height"], box  # the 18-node MLP laid out left to right is wide
    assert first.get_attribute("data-zoom") == zoom
    first.screenshot(path=str(ARTIFACTS / "classroom_lab_lr.png"))
    assert not errors, errors

    # Notebook 7, from the same server
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
    nb7 = context.new_page()
    # Notebook 7's own front end reports two errors of its own on this server (a settings schema, a file
    # browser command); the player must add none
    nb7_own = ("reading 'schema'", "filebrowser:open-path")
    nb7.on("pageerror", lambda exc: None if any(m in str(exc) for m in nb7_own) else errors.append(str(exc)))
    nb7.set_viewport_size({"width": 1920, "height": 1080})
    nb7.goto(f"{base}/notebooks/classroom.ipynb?token={token}", timeout=UI_TIMEOUT)
    nb7.wait_for_selector(".jp-Notebook .jp-CodeCell .cm-content", timeout=UI_TIMEOUT)
    wait_for("an idle kernel", KERNEL_TIMEOUT, lambda: all(
        s["kernel"]["execution_state"] == "idle" for s in lab_api(base, token, "/api/sessions")))
    nb7.wait_for_timeout(1500)
    nb7.locator(".jp-Notebook .jp-CodeCell .cm-content").first.click()
    nb7.keyboard.press("Shift+Enter")
    nb7.keyboard.press("Shift+Enter")
    nb7.wait_for_function("() => document.querySelectorAll('.mg-player svg g.node').length > 20", timeout=UI_TIMEOUT)
    measured["notebook7"] = _check(nb7, nb7.locator(".mg-player").first, "notebook7")
    _lesson5(nb7.locator(".mg-player").nth(1))
    assert not errors, errors

    # exported pages: light and dark (prefers-color-scheme), every graph of the catalogue
    CATALOGUE, transformer = catalogue.CATALOGUE, catalogue.transformer
    for name, build in CATALOGUE.items():
        loss, params = build(minigrad)
        html = viz.animate(loss, params=params).save_html(ARTIFACTS / f"classroom_{name}.html")
        for scheme in ("light", "dark"):
            export = context.new_page()
            export.emulate_media(color_scheme=scheme)
            requests: list[str] = []
            export.on("request", lambda r, requests=requests: requests.append(r.url))
            export.on("pageerror", lambda exc: errors.append(str(exc)))
            export.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
            export.wait_for_selector(".mg-player svg g.node", timeout=UI_TIMEOUT)
            player = export.locator(".mg-player")
            assert player.evaluate("r => r.classList.contains('mg-dark')") == (scheme == "dark")
            measured[f"export_{name}_{scheme}"] = _check(export, player, f"export_{name}_{scheme}",
                                                         whole=name == "tiny")
            if name == "lesson5" and scheme == "light":
                _lesson5(player)
            assert [u for u in requests if not u.startswith(("file:", "blob:", "data:"))] == []
            export.close()

    # Python without Graphviz: the page lays the graph out with the WebAssembly Graphviz it carries
    loss, model = CATALOGUE["mlp18"](minigrad)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render, "find_renderer", lambda: None)
        player = viz.animate(loss, params=model)
        assert player.scene.root is None
        html = player.save_html(ARTIFACTS / "classroom_no_graphviz.html")
    browser_drawn = context.new_page()
    browser_drawn.on("pageerror", lambda exc: errors.append(str(exc)))
    browser_drawn.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
    browser_drawn.wait_for_selector(".mg-player svg g.node[data-n]", timeout=UI_TIMEOUT)
    root = browser_drawn.locator(".mg-player")
    assert root.evaluate("r => r.querySelectorAll('g.node[data-n]').length") == player.scene.num_nodes
    assert root.evaluate("r => r.querySelectorAll('g.edge[data-e] .mg-glabel').length") > 10
    measured["no_graphviz"] = _check(browser_drawn, root, "no_graphviz")
    root.locator("button.mg-last").click()
    assert root.locator(".mg-title").text_content() == "Backward done"

    # a folded Transformer (PyTorch, tagged by viz.tag_modules)
    loss, model = transformer(torch)
    folded = viz.animate(loss, params=model, fold="module", expand=["1", "1.layers"])
    html = folded.save_html(ARTIFACTS / "classroom_transformer.html")
    tpage = context.new_page()
    tpage.on("pageerror", lambda exc: errors.append(str(exc)))
    tpage.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
    tpage.wait_for_selector(".mg-player svg g.node", timeout=UI_TIMEOUT)
    texts = tpage.locator(".mg-player").evaluate("r => [...r.querySelectorAll('g.node text')].map(t => t.textContent)")
    assert "1.layers.0–5 · TransformerEncoderLayer ×6" in texts, texts
    measured["transformer"] = _check(tpage, tpage.locator(".mg-player"), "transformer", whole=True)
    # nested modules' labels (the encoder and its ModuleList start at the same height) do not cover each other
    chips = tpage.locator(".mg-player").evaluate(
        "r => [...r.querySelectorAll('rect.mg-lchip')].map(c => { const b = c.getBoundingClientRect();"
        " return [b.left, b.top, b.right, b.bottom]; })")
    assert len(chips) >= 2, chips
    assert not [(a, b) for i, a in enumerate(chips) for b in chips[i + 1:]
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]], chips
    assert not errors, errors
    context.close()
    print("\nzoom at start: " + ", ".join(f"{k} {v['zoom']:.2f} {v['fit']}{' whole' if v['whole'] else ''}"
                                        f" [room, picture: {v['room']}]"
                                        f" ({v['count']} texts, smallest {v['minPx']:.1f} px, lowest contrast"
                                        f" {v['minContrast']:.2f}:1)"
                                        for k, v in measured.items()))
    print(f"classroom browser test took {time.monotonic() - started:.1f} s")
