"""`make lab` in a real browser: JupyterLab opens on the lessons with nothing covering them.

The server is started the way `make lab` starts it (root notebooks/, the course's settings folder
notebooks/.jupyter/ added to JUPYTER_CONFIG_PATH) but with throwaway user folders, so no earlier
answer to "get notified about news?" can hide the popup. Debian's chromium opens it; the test
asserts that the announcements plugin (news and update checks) is off, that no news or update
notification shows once the app is restored, and that the lesson list is visible. A screenshot goes
to test-artifacts/. The server and browser are conftest's fixtures (a "missing tool:" skip without them,
which fails under CI=true).
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
LAB_CONFIG = REPO / "notebooks" / ".jupyter"
ANNOUNCEMENTS = "@jupyterlab/apputils-extension:announcements"
UI_TIMEOUT = 60_000  # ms


def test_shipped_settings_turn_the_announcements_off():
    page_config = json.loads((LAB_CONFIG / "labconfig" / "page_config.json").read_text(encoding="utf-8"))
    assert page_config == {"disabledExtensions": {ANNOUNCEMENTS: True}}
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "LAB_CONFIG := notebooks/.jupyter" in makefile
    assert 'JUPYTER_CONFIG_PATH="$(CURDIR)/$(LAB_CONFIG)' in makefile


def test_make_lab_opens_on_the_lessons_without_popups(lab_server, chromium):
    base, token = lab_server(REPO / "notebooks", as_make_lab=True)
    page = chromium(viewport={"width": 1280, "height": 800}).new_page()
    page.goto(f"{base}/lab?token={token}", timeout=UI_TIMEOUT)
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=UI_TIMEOUT)
    page.evaluate("() => window.jupyterapp.restored")
    page.locator(".jp-DirListing-item", has_text="00_start_here.ipynb").wait_for(timeout=UI_TIMEOUT)
    config = page.evaluate("() => JSON.parse(document.getElementById('jupyter-config-data').textContent)")
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
