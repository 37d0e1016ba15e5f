"""The player in a real browser: live in JupyterLab 4, and as an exported HTML file.

Starts JupyterLab on 127.0.0.1 (a free port, a throwaway config/runtime/settings/root dir,
a random token), opens a notebook that builds a minigrad graph and calls
``viz.animate(...)``, runs it in headless Chromium (Debian's, driven by Playwright), plays
and steps the player and checks the highlighted node and the edge labels. Then it opens
the exported HTML file (file://) and does the same without any kernel. Screenshots go to
test-artifacts/. Frame times are printed, never asserted.

The server and the browser come from conftest's ``lab_server`` and ``chromium`` fixtures (skipped with a
"missing tool:" reason without them, which fails the test under CI=true).
"""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path


def _load(name: str):
    """A sibling file as a module (the tests run in importlib mode: no package, no sys.path entry)."""
    spec = importlib.util.spec_from_file_location(f"browser_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpers = _load("conftest")
REPO, lab_api, wait_for = helpers.REPO, helpers.lab_api, helpers.wait_for
ARTIFACTS = REPO / "test-artifacts"
KERNEL_TIMEOUT = 40
UI_TIMEOUT = 30_000  # ms, for each wait in the page

NOTEBOOK_CODE = """\
import minigrad as torch
from viz.animate import animate

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
c = a * b
loss = (c * a).sum()
player = animate(loss, params={"a": a, "b": b})
player"""

# The run, as the recorder numbers it: 0 start, 1 SumBackward0, 2 MulBackward0 (c * a),
# 3 MulBackward0 (a * b), 4-5 the two AccumulateGrad nodes, 6 done.
EXPECTED = {
    1: ("SumBackward0", ["[1, 1]"]),
    2: ("MulBackward0", ["[1, 2]", "[3, 8]"]),
    3: ("MulBackward0", ["[3, 8]", "[1, 4]"]),
}

CURRENT_JS = """root => {
  const g = root.querySelector('g.node.mg-current');
  const texts = g ? [...g.querySelectorAll('text')].map(t => t.textContent) : [];
  const now = [...root.querySelectorAll('g.edge.mg-now .mg-glabel')].map(t => t.textContent);
  return {frame: Number(root.dataset.frame), texts, now, title: root.querySelector('.mg-title').textContent};
}"""

FRAME_TIME_JS = """root => {
  const p = root.mgPlayer, n = p.steps.length, rounds = 20;
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++) for (let k = 0; k < n; k++) { p.go(k); root.getBoundingClientRect(); }
  const ms = (performance.now() - t0) / (rounds * n);
  p.go(0);
  return ms;
}"""


VISIBLE_JS = "root => [...root.querySelectorAll('g.node')].filter(g => !g.classList.contains('mg-unborn')).length"


def _forward_page(minigrad):
    """A forward recording: three ops on two leaves, one of them made before the block."""
    from viz.animate import record

    w = minigrad.tensor([0.5, -1.0], requires_grad=True)
    with record() as rec:
        x = minigrad.tensor([1.0, 2.0], requires_grad=True)
        h = x * w
        loss = (h + 1.0).sum()
    assert loss.grad_fn is not None
    return rec.player()


def _notebook(path: Path) -> None:
    nb = {
        "cells": [{"cell_type": "code", "execution_count": None, "id": "player", "metadata": {}, "outputs": [],
                   "source": NOTEBOOK_CODE.splitlines(keepends=True)}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def _check_steps(page, root_sel: str, label: str, shots: list[Path]) -> float:
    """Play, pause, then step with the buttons and the arrow keys; return ms per frame."""
    root = page.locator(root_sel).first
    state = root.evaluate(CURRENT_JS)
    assert state["frame"] == 0 and state["title"] == "Backward starts", state
    assert any("output" in t for t in state["texts"]), state
    # Play until the player has moved on its own, then pause it
    root.locator("button.mg-play").click()
    page.wait_for_function(f"() => Number(document.querySelector('{root_sel}').dataset.frame) >= 2",
                           timeout=UI_TIMEOUT)
    root.locator("button.mg-play").click()  # pause
    paused = root.evaluate(CURRENT_JS)["frame"]
    page.wait_for_timeout(1200)
    assert root.evaluate(CURRENT_JS)["frame"] == paused, "the player kept going after Pause"
    # step with the buttons, then with the keyboard
    root.locator("button.mg-first").click()
    root.locator("button.mg-next").click()
    for k in (1, 2, 3):
        if k > 1:
            root.focus()
            page.keyboard.press("ArrowRight")
        state = root.evaluate(CURRENT_JS)
        name, labels = EXPECTED[k]
        assert state["frame"] == k, state
        assert name in state["texts"], state
        assert sorted(state["now"]) == sorted(labels), state
        assert state["title"] == f"{name} runs", state
    page.keyboard.press("ArrowLeft")
    assert root.evaluate(CURRENT_JS)["frame"] == 2
    root.locator("button.mg-last").click()
    final = root.evaluate(CURRENT_JS)
    assert final["title"] == "Backward done" and final["texts"] == [] and final["now"] == []
    notes = root.evaluate("r => [...r.querySelectorAll('.mg-note')].map(t => t.textContent).sort()")
    assert notes == [".grad = [1, 4]", ".grad = [6, 16]"], notes
    root.locator("button.mg-first").click()
    root.locator("button.mg-next").click()
    root.locator("button.mg-next").click()
    page.wait_for_timeout(300)  # let the transitions settle for the picture
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"player_{label}.png"
    root.screenshot(path=str(shot))
    shots.append(shot)
    return root.evaluate(FRAME_TIME_JS)


def test_player_in_jupyterlab_and_exported(tmp_path, lab_server, chromium):
    import minigrad
    from viz.animate import animate

    started = time.monotonic()
    root = tmp_path / "root"
    root.mkdir()
    _notebook(root / "player.ipynb")
    shots: list[Path] = []
    base, token = lab_server(root)
    lab_api(base, token, "/api/sessions", {"path": "player.ipynb", "type": "notebook", "name": "player.ipynb",
                                           "kernel": {"name": "python3"}})

    def kernel_idle():
        sessions = lab_api(base, token, "/api/sessions")
        return sessions and all(s["kernel"]["execution_state"] == "idle" for s in sessions)

    context = chromium()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base}/lab/tree/player.ipynb?token={token}", timeout=UI_TIMEOUT)
    # the server reports the kernel's state once a client is connected to it
    wait_for("/api/sessions to report an idle kernel", KERNEL_TIMEOUT, kernel_idle)
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel; return k && k.status === 'idle'"
        " && w.content && w.content.widgets.length > 0; }", timeout=UI_TIMEOUT)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_selector(".jp-OutputArea .mg-player g.node", timeout=UI_TIMEOUT)
    lab_ms = _check_steps(page, ".jp-OutputArea .mg-player", "jupyterlab", shots)
    assert not errors, errors

    # the exported file: no kernel, no server, file://
    a = minigrad.tensor([1.0, 2.0], requires_grad=True)
    b = minigrad.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    player = animate((c * a).sum(), params={"a": a, "b": b})
    ARTIFACTS.mkdir(exist_ok=True)
    html = player.save_html(ARTIFACTS / "player_export.html")
    offline = context.new_page()
    requests: list[str] = []
    offline.on("request", lambda r: requests.append(r.url))
    offline.on("pageerror", lambda exc: errors.append(str(exc)))
    offline.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
    offline.wait_for_selector(".mg-player g.node", timeout=UI_TIMEOUT)
    export_ms = _check_steps(offline, ".mg-player", "export", shots)
    assert not errors, errors
    assert [u for u in requests if not u.startswith("file:")] == []

    # the forward animation, exported: the graph grows step by step
    forward = _forward_page(minigrad).save_html(ARTIFACTS / "player_forward.html")
    grow = context.new_page()
    grow.on("pageerror", lambda exc: errors.append(str(exc)))
    grow.goto(forward.resolve().as_uri(), timeout=UI_TIMEOUT)
    grow.wait_for_selector(".mg-player g.node", timeout=UI_TIMEOUT)
    shown = []
    for k in range(4):  # 0: before the block (w's node), 1-3: Mul, Add, Sum appear
        if k:
            grow.locator(".mg-player button.mg-next").click()
        shown.append(grow.locator(".mg-player").evaluate(VISIBLE_JS))
    assert shown == sorted(shown) and shown[0] < shown[-1], shown
    title = grow.locator(".mg-player .mg-title").text_content()
    assert title == "loss = …  →  loss.grad_fn is SumBackward0", title
    grow.locator(".mg-player").screenshot(path=str(ARTIFACTS / "player_forward.png"))
    shots.append(ARTIFACTS / "player_forward.png")
    assert not errors, errors
    print(f"\nframe time: {lab_ms:.3f} ms in JupyterLab, {export_ms:.3f} ms in the exported page "
          f"({len(player.frames)} steps, {player.scene.num_nodes} nodes)")
    print("screenshots: " + ", ".join(str(p.relative_to(REPO)) for p in shots))
    print(f"browser test took {time.monotonic() - started:.1f} s")
