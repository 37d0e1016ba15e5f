"""A lesson in marimo (the build in notebooks/marimo/), run as an app (`marimo run`) in headless Chromium.

marimo is a home of the course of its own: its lessons are written from the Jupyter lessons by
notebooks/marimo_build.py. Here lesson 3 runs in `marimo run` on 127.0.0.1 (nothing else is reached): its
player shows and steps, its quiz asks, takes an answer and scores it, its printed values show (marimo's app
view has no console: the build prints into the cells' outputs) and its exercise's check gives its verdict.
Screenshot: test-artifacts/marimo_lesson03.png.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"browser_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpers = _load("conftest")
REPO, wait_for = helpers.REPO, helpers.wait_for
ARTIFACTS = REPO / "test-artifacts"
LESSON = REPO / "notebooks" / "marimo" / "03_backward.py"
UI_TIMEOUT = 90_000


@pytest.fixture
def marimo_app(tmp_path):
    try:
        import marimo  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"missing tool: marimo ({exc}); pip install -e .[test]")
    port = helpers._free_port()
    env = {**os.environ, "HOME": str(tmp_path)}  # marimo's own config and state stay in the test's folder
    lesson = tmp_path / LESSON.name  # a copy: marimo writes its session cache beside the notebook it runs
    shutil.copy2(LESSON, lesson)
    proc = subprocess.Popen([sys.executable, "-m", "marimo", "run", str(lesson), "--headless", "--host", "127.0.0.1",
                             "--port", str(port), "--no-token", "--no-sandbox"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for("marimo to answer", 60, lambda: urllib.request.urlopen(base, timeout=2).status == 200)
        yield base
    finally:
        helpers._stop(proc)


def test_a_lesson_runs_in_marimo(marimo_app, chromium):
    context = chromium(viewport={"width": 1280, "height": 900})
    outside: list[str] = []

    def only_here(route):
        url = route.request.url
        if url.startswith((marimo_app, "data:", "blob:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    context.route("**/*", only_here)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(marimo_app, timeout=UI_TIMEOUT)
    page.wait_for_selector(".mg-player svg g.node", timeout=UI_TIMEOUT)
    page.wait_for_function("() => document.body.innerText.includes('jacobian still returns the placeholder')",
                           timeout=UI_TIMEOUT)  # the last cells ran too
    text = page.inner_text("body")
    assert "The marimo version of this lesson" in text  # it says what differs
    assert "quiz, before step 1: Which node runs next?" in text  # a printed value, in the cell's output
    assert "✗ jacobian still returns the placeholder `...`" in text and "hint: build the rows" in text  # the check

    root = page.locator(".mg-player").first
    root.scroll_into_view_if_needed()
    assert root.get_attribute("data-frame") == "0"
    root.locator("button.mg-next").click()
    assert root.locator(".mg-q-prompt").text_content().startswith("Which node runs next?")
    root.locator(".mg-stage g.node[data-n='n1']").click()  # SumBackward0, the first node to run
    quiz = root.evaluate("r => r.querySelector('.mg-quiz').innerText")
    assert "✓ Right" in quiz and "Quiz score: 1 / 1" in quiz, quiz
    assert root.get_attribute("data-frame") == "1"  # revealed: the player stepped
    box = root.bounding_box()
    assert box["width"] >= 900  # the lesson is laid out medium-wide, so the player is not squeezed
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "marimo_lesson03.png"))
    # full screen from inside marimo's shadow root: the player knows it is full screen and fills the screen
    root.locator("button.mg-full").click()
    page.wait_for_function("r => r.getRootNode().fullscreenElement === r", arg=root.element_handle(), timeout=10_000)
    page.wait_for_function("r => r.getBoundingClientRect().height >= 850 && r.querySelector('.mg-stage')"
                           ".getBoundingClientRect().height >= 600", arg=root.element_handle(), timeout=10_000)
    smallest = root.evaluate("r => Math.min(...[...r.querySelectorAll('.mg-stage svg g.node text')]"
                             ".map(t => t.getBoundingClientRect().height).filter(h => h > 0))")
    assert smallest >= 18, smallest  # the projector's text size, as in JupyterLab's full screen
    page.screenshot(path=str(ARTIFACTS / "marimo_lesson03_fullscreen.png"))
    page.keyboard.press("Escape")
    assert outside == [], outside
    assert errors == [], errors


def test_a_page_marimo_exports_offers_nothing_that_needs_a_kernel(tmp_path, chromium):
    """`marimo export html` keeps the widget's state but no kernel: `→ LR` must flip from what the page holds
    (it used to wait 30 s for a kernel, then replace the graph with "the kernel did not answer")."""
    pytest.importorskip("marimo", reason="missing tool: marimo; pip install -e .[test]")
    page_file = tmp_path / "03_backward.html"
    lesson = tmp_path / LESSON.name  # a copy: marimo writes its session cache beside the notebook it runs
    shutil.copy2(LESSON, lesson)
    run = subprocess.run([sys.executable, "-m", "marimo", "export", "html", str(lesson), "-o", str(page_file)],
                         cwd=tmp_path, env={**os.environ, "HOME": str(tmp_path)}, capture_output=True, text=True,
                         timeout=300)
    assert page_file.exists(), run.stderr[-2000:]
    # marimo's exported page loads marimo's own front end from its CDN: offline, the same files are served from
    # the installed marimo package (its _static folder is that build); anything else is refused
    import marimo

    static = Path(marimo.__file__).parent / "_static"
    cdn = f"https://cdn.jsdelivr.net/npm/@marimo-team/frontend@{marimo.__version__}/dist/"
    outside: list[str] = []

    def offline(route):
        url = route.request.url
        if url.startswith(("file:", "data:", "blob:")):
            route.continue_()
        elif url.startswith(cdn) and (static / url[len(cdn):].split("?")[0]).is_file():
            route.fulfill(path=str(static / url[len(cdn):].split("?")[0]))
        else:
            outside.append(url)
            route.abort()

    context = chromium(viewport={"width": 1280, "height": 900})
    context.route("**/*", offline)
    page = context.new_page()
    page.goto(page_file.as_uri(), timeout=UI_TIMEOUT)
    page.wait_for_selector(".mg-player svg g.node", timeout=UI_TIMEOUT)
    root = page.locator(".mg-player").first
    root.scroll_into_view_if_needed()
    root.locator("button.mg-dir").click()
    root.locator(".mg-dir").filter(has_text="TB").wait_for(timeout=5000)  # flipped at once: the button now offers TB
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "marimo_export_lr.png"))
    assert "did not answer" not in root.inner_text()
    assert root.locator("svg g.node").count() >= 4
