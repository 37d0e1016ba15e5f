"""viz.forward_vs_reverse in a real browser (its exported page, file://, no kernel, every network request refused):
for a tall function (R^2 -> R^8) and a wide one (R^8 -> R), light and dark, the columns (forward) and rows
(reverse) fill as the Python steps say, the counts shown are Python's, the verdict names the winner; in full
screen at 1920x1080 every text of both pictures and of the panels is 18 px or more and every panel text reads at
4.5:1; a node or title made of HTML stays text. Screenshots: test-artifacts/jacobian_*.png (looked at when the
player changed)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"browser_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpers = _load("conftest")
ARTIFACTS = helpers.REPO / "test-artifacts"
UI_TIMEOUT = 30_000
PROJECTOR_PX = 18

# every text of both pictures (nodes and edges) and of the panels: its size on screen, and the panels' contrast
MEASURE_JS = "root => {\n" + helpers.CONTRAST_JS + """
  const small = [], faint = [];
  let svgTexts = 0, htmlTexts = 0;
  for (const svg of root.querySelectorAll('.mgj-stage svg')) {
    const scale = svg.getScreenCTM().a;
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      svgTexts++;
      const px = parseFloat(t.getAttribute('font-size')) * scale;
      if (px < PX || t.getBoundingClientRect().height < PX) small.push(['svg', t.textContent, +px.toFixed(1)]);
    }
  }
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const e = n.parentElement;
    if (!n.textContent.trim() || e.closest('svg') || !e.getClientRects().length) continue;
    htmlTexts++;
    const style = getComputedStyle(e), px = parseFloat(style.fontSize);
    if (px < PX) small.push(['html', n.textContent.slice(0, 30), px]);
    const ratio = contrast(style.color, backdrop(e));
    if (ratio < 4.5) faint.push([n.textContent.slice(0, 30), +ratio.toFixed(2)]);
  }
  return {svgTexts, htmlTexts, small: small.slice(0, 10), faint: faint.slice(0, 10),
          full: document.fullscreenElement === root, dark: root.classList.contains('mgj-dark')};
}""".replace("PX", str(PROJECTOR_PX))

STATE_JS = """root => {
  const side = name => { const s = root.querySelector('.mgj-' + name);
    return {passes: s.querySelector('.mgj-passes').textContent, evals: s.querySelector('.mgj-evals').textContent,
            filled: [...s.querySelectorAll('td.mgj-filled')].length, now: s.querySelector('.mgj-now').textContent,
            lit: [...s.querySelectorAll('g.node.mgj-lit title')].map(t => t.textContent).sort(),
            flow: [...s.querySelectorAll('g.edge.mgj-flow title')].map(t => t.textContent).sort(),
            winner: s.classList.contains('mgj-winner')}; };
  return {forward: side('forward'), reverse: side('reverse'), verdict: root.querySelector('.mgj-verdict').textContent,
          step: root.querySelector('.mgj-count').textContent};
}"""


def _races(mg):
    t = lambda a: mg.tensor(np.asarray(a, dtype=np.float64), dtype=mg.float64)  # noqa: E731
    W, w = t(np.arange(16.0).reshape(8, 2) / 8 - 0.5), t(np.linspace(-1, 1, 8))
    import viz

    return {"tall": viz.forward_vs_reverse(lambda x: (W @ x).tanh(), t([0.5, -1.0])),
            "wide": viz.forward_vs_reverse(lambda x: (x.tanh() * w).sum(), t(np.linspace(-0.9, 1.1, 8)))}


def _edges_from(race, ids) -> list[str]:
    """The drawn edges leaving the nodes ``ids`` ('n1->n2'), as the SVG titles them."""
    drawn = {n.key: n.id for n in race.graph.model.nodes}
    return sorted(f"{drawn[e.src]}->{drawn[e.dst]}" for e in race.graph.model.edges if drawn[e.src] in ids)


def _expected(steps, k: int) -> dict:
    """What a side shows at clock tick k, from the Python steps: cells filled so far, counts, the nodes lit."""
    at = min(k, len(steps) - 1)
    lines = {s.fill for s in steps[: at + 1] if s.fill is not None}
    done = k >= len(steps) - 1
    return {"lines": len(lines), "evals": steps[at].evaluations, "passes": steps[at].passes, "text": steps[at].text,
            "lit": [] if done else sorted(steps[at].ids)}


def _check_tick(root, race, k: int) -> None:
    shown = root.evaluate(STATE_JS)
    assert shown["step"] == f"step {k} / {race.num_steps - 1}", shown
    for side, steps, per_line in (("forward", race.forward, race.m), ("reverse", race.reverse, race.n)):
        want, got = _expected(steps, k), shown[side]
        assert got["filled"] == want["lines"] * per_line, (side, k, got, want)
        assert got["evals"].split()[0] == str(want["evals"]) and got["now"] == want["text"], (side, k, got, want)
        assert f"passes done {want['passes']} / " in got["passes"], (side, k, got, want)
        assert got["lit"] == want["lit"], (side, k, got, want)
        assert got["flow"] == _edges_from(race, want["lit"]), (side, k, got, want)


def test_forward_and_reverse_race_in_the_page(chromium, pgv, mg):
    ARTIFACTS.mkdir(exist_ok=True)
    context = chromium(viewport={"width": 1920, "height": 1080}, device_scale_factor=1)
    requests: list[str] = []
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                  else (requests.append(route.request.url), route.abort()))
    errors: list[str] = []
    measured = {}
    for name, race in _races(mg).items():
        html = race.save_html(ARTIFACTS / f"jacobian_{name}.html")
        for scheme in ("light", "dark"):
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.emulate_media(color_scheme=scheme)
            page.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
            root = page.locator(".mgj")
            root.wait_for(timeout=UI_TIMEOUT)
            assert root.evaluate("r => r.classList.contains('mgj-dark')") == (scheme == "dark")
            _check_tick(root, race, 0)
            middle = len(min(race.forward, race.reverse, key=len)) + 2  # the winner is done, the other is not
            for _ in range(middle):
                root.locator("button.mgj-next").click()
            _check_tick(root, race, middle)
            assert "has its whole Jacobian" in root.locator(".mgj-verdict").text_content()
            page.screenshot(path=str(ARTIFACTS / f"jacobian_{name}_{scheme}_inline.png"))
            root.locator("button.mgj-full").click()
            page.wait_for_function("() => !!document.fullscreenElement", timeout=UI_TIMEOUT)
            page.wait_for_timeout(200)
            root.locator("button.mgj-prev").click()
            _check_tick(root, race, middle - 1)
            found = root.evaluate(MEASURE_JS)
            assert found["full"] and found["svgTexts"] >= 12 and found["htmlTexts"] >= 20, found
            assert found["small"] == [] and found["faint"] == [], (name, scheme, found)
            measured[f"{name}_{scheme}"] = found
            page.screenshot(path=str(ARTIFACTS / f"jacobian_{name}_{scheme}_full.png"))
            page.keyboard.press("End")
            _check_tick(root, race, race.num_steps - 1)
            end = root.evaluate(STATE_JS)
            assert end["verdict"] == race.verdict(), end
            loser = "reverse" if race.winner == "forward" else "forward"
            assert end[race.winner]["winner"] and not end[loser]["winner"], end
            page.screenshot(path=str(ARTIFACTS / f"jacobian_{name}_{scheme}_end.png"))
            page.close()
    assert requests == [] and errors == [], (requests, errors)
    context.close()
    print("\njacobian: " + ", ".join(f"{k} {v['svgTexts']}+{v['htmlTexts']} texts" for k, v in measured.items()))


def test_labels_made_of_html_stay_text(chromium, pgv, mg, tmp_path):
    import viz

    evil = "<img src=x onerror=alert(1)>"
    Evil = type(evil, (mg.autograd.Function,), {
        "forward": staticmethod(lambda ctx, x: x * 2),
        "backward": staticmethod(lambda ctx, g: g * 2),
        "jvp": staticmethod(lambda ctx, t: t * 2),
    })
    race = viz.forward_vs_reverse(lambda x: Evil.apply(x).sin(), mg.tensor([0.5, 1.0], dtype=mg.float64),
                                  title=evil)
    assert any(evil in s.text for s in race.reverse)
    html = race.save_html(tmp_path / "evil.html")
    page = chromium().new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
    root = page.locator(".mgj")
    root.wait_for(timeout=UI_TIMEOUT)
    for _ in range(len(race.reverse)):
        root.locator("button.mgj-next").click()
    assert page.evaluate("() => document.querySelectorAll('img').length") == 0
    assert evil in page.locator("h1").text_content() and evil in root.locator(".mgj-heading").text_content()
    seen = root.evaluate("r => [...r.querySelectorAll('.mgj-now, svg text')].map(e => e.textContent).join('|')")
    assert evil in seen, seen
    assert dialogs == []


LAB_CELL = """\
import numpy as np
import minigrad as torch
import viz

W = torch.tensor(np.arange(16.0).reshape(8, 2) / 8 - 0.5)
race = viz.forward_vs_reverse(lambda x: (W @ x).tanh(), torch.tensor([0.5, -1.0], dtype=torch.float64))
race"""


def test_live_in_jupyterlab(chromium, lab_server, pgv, tmp_path):
    """The widget in JupyterLab: it plays in the page, and the step shown reaches the kernel (race.frame)."""
    root_dir = tmp_path / "root"
    root_dir.mkdir()
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "c0", "metadata": {}, "outputs": [],
                     "source": LAB_CELL.splitlines(keepends=True)}],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    (root_dir / "race.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    base, token = lab_server(root_dir)
    helpers.lab_api(base, token, "/api/sessions", {"path": "race.ipynb", "type": "notebook", "name": "race.ipynb",
                                                   "kernel": {"name": "python3"}})
    page = chromium(viewport={"width": 1400, "height": 1000}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base}/lab/tree/race.ipynb?token={token}", timeout=UI_TIMEOUT)
    helpers.wait_for("an idle kernel", 60, lambda: all(
        s["kernel"]["execution_state"] == "idle" for s in helpers.lab_api(base, token, "/api/sessions")))
    page.wait_for_function("() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                           " const k = w && w.sessionContext && w.sessionContext.session"
                           " && w.sessionContext.session.kernel;"
                           " return k && k.status === 'idle' && w.content && w.content.widgets.length > 0; }",
                           timeout=UI_TIMEOUT)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function("() => !!document.querySelector('.jp-OutputArea .mgj .mgj-stage svg g.node')",
                           timeout=UI_TIMEOUT)
    root = page.locator(".jp-OutputArea .mgj")
    for _ in range(3):
        root.locator("button.mgj-next").click()
    shown = root.evaluate(STATE_JS)
    assert shown["step"] == "step 3 / 33" and shown["forward"]["filled"] == 8, shown

    def kernel_says(code: str) -> str:
        return page.evaluate("""async code => {
          const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
          const future = kernel.requestExecute({code, silent: false});
          let out = '';
          future.onIOPub = msg => { if (msg.header.msg_type === 'stream') out += msg.content.text; };
          await future.done;
          return out;
        }""", code)

    assert helpers.wait_for("the step in the kernel", 15, lambda: kernel_says("print(race.frame)").strip() == "3")
    kernel_says("race.widget.frame = 33")  # and back: the kernel moves the page
    page.wait_for_function("() => document.querySelector('.jp-OutputArea .mgj-count').textContent === 'step 33 / 33'",
                           timeout=UI_TIMEOUT)
    assert root.locator(".mgj-verdict").text_content().startswith("Forward mode wins for this tall Jacobian (8×2)")
    root.screenshot(path=str(ARTIFACTS / "jacobian_lab.png"))
    assert errors == [], errors
