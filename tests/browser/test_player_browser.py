"""The player in a real browser: live in JupyterLab 4, and as an exported HTML file.

Starts JupyterLab on 127.0.0.1 (a free port, a throwaway config/runtime/settings/root dir,
a random token), opens a notebook that builds a minigrad graph and calls
``viz.animate(...)``, runs it in headless Chromium (Debian's, driven by Playwright), plays
and steps the player and checks the highlighted node and the edge labels. Then it opens
the exported HTML file (file://) and does the same without any kernel. Screenshots go to
test-artifacts/. Frame times are printed, never asserted.

Needs /usr/bin/chromium (``make browser-deps``) and the playwright Python package. Without
them the test is skipped with a "missing tool:" reason, which fails it under CI=true.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = os.environ.get("VIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]
SERVER_TIMEOUT = 40  # seconds for JupyterLab to answer
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


def _require_tools():
    try:
        from playwright.sync_api import sync_playwright  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"missing tool: the playwright Python package ({exc}); pip install -e .[test]")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"missing tool: chromium not found at {CHROMIUM} (make browser-deps installs Debian's)")
    try:
        import jupyterlab  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"missing tool: jupyterlab ({exc}); pip install -e .[test]")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _api(base: str, token: str, path: str, body: dict | None = None, timeout: float = 5.0):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{base}{path}", data=data, method="POST" if body is not None else "GET",
                                     headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read() or b"null")


def _wait(what: str, timeout: float, check):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except Exception as exc:  # not up yet
            last = exc
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last error: {last!r})")


def _notebook(path: Path) -> None:
    nb = {
        "cells": [{"cell_type": "code", "execution_count": None, "id": "player", "metadata": {}, "outputs": [],
                   "source": NOTEBOOK_CODE.splitlines(keepends=True)}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def _start_lab(tmp: Path, port: int, token: str) -> subprocess.Popen:
    root = tmp / "root"
    root.mkdir()
    _notebook(root / "player.ipynb")
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")
    env = dict(os.environ)
    env.update(JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"), JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
               IPYTHONDIR=str(tmp / "ipython"), PYTHONPATH=os.pathsep.join(filter(None, [str(REPO),
                                                                                        env.get("PYTHONPATH")])))
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    with open(tmp / "lab.log", "wb") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    """Stop the server by its PID (its kernels are in its process group, which it leads)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


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


def test_player_in_jupyterlab_and_exported(tmp_path):
    _require_tools()
    from playwright.sync_api import sync_playwright

    import minigrad
    from viz.animate import animate

    started = time.monotonic()
    token = secrets.token_hex(16)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    shots: list[Path] = []
    lab = _start_lab(tmp_path, port, token)
    try:
        _wait("JupyterLab to answer /api/status", SERVER_TIMEOUT, lambda: _api(base, token, "/api/status"))
        _api(base, token, "/api/sessions", {"path": "player.ipynb", "type": "notebook", "name": "player.ipynb",
                                            "kernel": {"name": "python3"}})

        def kernel_idle():
            sessions = _api(base, token, "/api/sessions")
            return sessions and all(s["kernel"]["execution_state"] == "idle" for s in sessions)

        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
                viewport={"width": 1280, "height": 900})
            try:
                page = context.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                page.goto(f"{base}/lab/tree/player.ipynb?token={token}", timeout=UI_TIMEOUT)
                # the server reports the kernel's state once a client is connected to it
                _wait("/api/sessions to report an idle kernel", KERNEL_TIMEOUT, kernel_idle)
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
            finally:
                context.close()
    finally:
        _stop(lab)
    assert lab.poll() is not None
    print(f"\nframe time: {lab_ms:.3f} ms in JupyterLab, {export_ms:.3f} ms in the exported page "
          f"({len(player.frames)} steps, {player.scene.num_nodes} nodes)")
    print("screenshots: " + ", ".join(str(p.relative_to(REPO)) for p in shots))
    print(f"browser test took {time.monotonic() - started:.1f} s")
