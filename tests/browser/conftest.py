"""Fixtures for the browser tests: a throwaway JupyterLab server and headless Chromium.

``lab_server(root)`` starts JupyterLab on 127.0.0.1 (a free port, a random token, throwaway
config/runtime/settings/workspace dirs, news and update checks off) serving ``root`` and
returns ``(base_url, token)``; every server is stopped by its process group at teardown.
``chromium(tmp_path, **options)`` launches Debian's chromium through Playwright (never
``playwright install``). Both skip with a "missing tool:" reason when Chromium, Playwright or
JupyterLab is missing, which fails the test under CI=true.
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
CHROMIUM = os.environ.get("VIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]
SERVER_TIMEOUT = 40  # seconds for JupyterLab to answer


# JavaScript for a page check, to put first in the body of a `root => {...}` function: WCAG's relative
# luminance (lum) and contrast ratio (contrast) of two CSS colours, and the colour an element's text is seen on
# (backdrop: the layers of backgrounds behind it, semi-transparent ones mixed over what is under them).
CONTRAST_JS = """  const lum = c => { const m = c.match(/[\\d.]+/g).map(Number); const f = v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(m[0]) + 0.7152 * f(m[1]) + 0.0722 * f(m[2]); };
  const contrast = (a, b) => { const x = lum(a), y = lum(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const mix = (top, under) => {
    const a = top.match(/[\\d.]+/g).map(Number), b = under.match(/[\\d.]+/g).map(Number);
    const al = a.length > 3 ? a[3] : 1;
    return 'rgb(' + [0, 1, 2].map(i => a[i] * al + b[i] * (1 - al)).join(',') + ')'; };
  const backdrop = e => { const layers = [];
    for (; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor;
      if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') { layers.push(c); if (!c.startsWith('rgba')) break; } }
    return layers.reverse().reduce((under, top) => mix(top, under), 'rgb(255,255,255)'); };
"""

def require_browser_tools() -> None:
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


def lab_api(base: str, token: str, path: str, body: dict | None = None, timeout: float = 5.0):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{base}{path}", data=data, method="POST" if body is not None else "GET",
                                     headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read() or b"null")


def wait_for(what: str, timeout: float, check):
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


@pytest.fixture
def lab_server(tmp_path):
    """Start JupyterLab over a folder: ``base, token = lab_server(root)``.

    ``as_make_lab=True`` starts it as `make lab` does (the course's settings folder on JUPYTER_CONFIG_PATH) with
    none of the test's own news and update switches, so a test can see what a learner's first start shows."""
    require_browser_tools()
    procs: list[subprocess.Popen] = []

    def start(root: Path, as_make_lab: bool = False) -> tuple[str, str]:
        home = tmp_path / f"lab{len(procs)}"
        settings = home / "settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True)
        if not as_make_lab:
            (settings / "notification.jupyterlab-settings").write_text(
                json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")
        env = dict(os.environ)
        if as_make_lab:
            env["JUPYTER_CONFIG_PATH"] = str(REPO / "notebooks" / ".jupyter")
        env.update(JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
                   JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
                   JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), IPYTHONDIR=str(home / "ipython"),
                   JUPYTER_DATA_DIR=str(home / "data"),  # its own notebook-signing secret: nothing is trusted
                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])))
        token = secrets.token_hex(16)
        port = _free_port()
        cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True"]
        if not as_make_lab:
            cmd += ["--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        with open(home / "lab.log", "wb") as log:  # the child keeps its own copy of the descriptor
            procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root,
                                          start_new_session=True))
        base = f"http://127.0.0.1:{port}"
        wait_for("JupyterLab to answer /api/status", SERVER_TIMEOUT, lambda: lab_api(base, token, "/api/status"))
        return base, token

    yield start
    for proc in procs:
        _stop(proc)
    assert all(proc.poll() is not None for proc in procs)


@pytest.fixture
def chromium(tmp_path):
    """Launch headless Chromium: ``context = chromium(**new_context_options)``; closed at teardown."""
    require_browser_tools()
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    try:
        yield lambda **options: browser.new_context(**{"viewport": {"width": 1280, "height": 900}, **options})
    finally:
        browser.close()
        pw.stop()
