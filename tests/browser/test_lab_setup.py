"""`make lab` in a real browser: JupyterLab opens on the lessons with nothing covering them.

The server is started the way `make lab` starts it (root notebooks/, the course's settings folder
notebooks/.jupyter/ added to JUPYTER_CONFIG_PATH) but with throwaway user folders, so no earlier
answer to "get notified about news?" can hide the popup. Debian's chromium opens it; the test
asserts that the announcements plugin (news and update checks) is off, that no news or update
notification shows once the app is restored, and that the lesson list is visible. A screenshot goes
to test-artifacts/. Needs /usr/bin/chromium and the playwright package (else a "missing tool:"
skip, which fails under CI=true).
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
LAB_CONFIG = REPO / "notebooks" / ".jupyter"
ANNOUNCEMENTS = "@jupyterlab/apputils-extension:announcements"
CHROMIUM = os.environ.get("VIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]
SERVER_TIMEOUT = 60  # seconds for JupyterLab to answer
UI_TIMEOUT = 60_000  # ms


def test_shipped_settings_turn_the_announcements_off():
    page_config = json.loads((LAB_CONFIG / "labconfig" / "page_config.json").read_text(encoding="utf-8"))
    assert page_config == {"disabledExtensions": {ANNOUNCEMENTS: True}}
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "LAB_CONFIG := notebooks/.jupyter" in makefile
    assert 'JUPYTER_CONFIG_PATH="$(CURDIR)/$(LAB_CONFIG)' in makefile


def _require_tools():
    try:
        from playwright.sync_api import sync_playwright  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"missing tool: the playwright Python package ({exc}); pip install -e .[test]")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"missing tool: chromium not found at {CHROMIUM} (make browser-deps installs Debian's)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_lab(tmp: Path, port: int, token: str) -> subprocess.Popen:
    env = dict(os.environ)
    env.update(JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"), JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
               IPYTHONDIR=str(tmp / "ipython"), JUPYTER_CONFIG_PATH=str(LAB_CONFIG))
    cmd = [sys.executable, "-m", "jupyter", "lab", "notebooks/", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           "--LabApp.expose_app_in_browser=True"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    with open(tmp / "lab.log", "wb") as log:
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
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


def _wait_for_server(base: str, token: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + SERVER_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"JupyterLab exited:\n{log.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                return
        except OSError:
            time.sleep(0.25)
    raise AssertionError(f"JupyterLab did not answer within {SERVER_TIMEOUT} s")


def test_make_lab_opens_on_the_lessons_without_popups(tmp_path):
    _require_tools()
    from playwright.sync_api import sync_playwright

    token = secrets.token_hex(16)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    lab = _start_lab(tmp_path, port, token)
    try:
        _wait_for_server(base, token, lab, tmp_path / "lab.log")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(f"{base}/lab?token={token}", timeout=UI_TIMEOUT)
                page.wait_for_function("() => window.jupyterapp !== undefined", timeout=UI_TIMEOUT)
                page.evaluate("() => window.jupyterapp.restored")
                page.locator(".jp-DirListing-item", has_text="00_start_here.ipynb").wait_for(timeout=UI_TIMEOUT)
                config = page.evaluate(
                    "() => JSON.parse(document.getElementById('jupyter-config-data').textContent)")
                assert ANNOUNCEMENTS in config.get("disabledExtensions", []), config.get("disabledExtensions")
                assert page.evaluate(f"() => window.jupyterapp.isPluginActivated('{ANNOUNCEMENTS}')") is False
                # Without the setting the question shows a few seconds after the app is restored.
                page.wait_for_timeout(5000)
                toasts = page.locator(".Toastify__toast").all_inner_texts()
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "make_lab_start.png"))
                assert not [t for t in toasts if "news" in t.lower() or "update" in t.lower()], toasts
                listed = page.locator(".jp-DirListing-itemName").all_inner_texts()
                assert {"00_start_here.ipynb", "01_tensors_and_requires_grad.ipynb", "solutions"} <= set(listed)
                assert ".jupyter" not in listed
            finally:
                browser.close()
    finally:
        _stop(lab)
