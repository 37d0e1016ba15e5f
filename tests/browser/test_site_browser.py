"""The course as a website, opened with no kernel and the network cut off: `make site`'s pages play.

A part of the site is built (lessons 00 and 03: 03 has players and a quiz), then opened from the disk in
headless Chromium with every request that is not a file of the site refused and recorded. From the index,
every link of the site is followed (each page loads without a script error); in lesson 3 a player steps,
and the quiz asks, takes an answer and scores it. The link checker finds no dead link. Screenshots go to
test-artifacts/site_*.png.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
UI_TIMEOUT = 30_000


def _website():
    sys.path.insert(0, str(REPO / "notebooks"))
    try:
        spec = importlib.util.spec_from_file_location("website_for_browser", REPO / "notebooks" / "website.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(REPO / "notebooks"))


def _player_frames(page):
    return [f for f in page.frames if f.url.endswith(".html") and "/players/" in f.url]


def test_the_website_plays_and_scores_offline(tmp_path, chromium):
    site = tmp_path / "site"
    built = subprocess.run([sys.executable, str(REPO / "notebooks" / "website.py"), "00", "03", "--out", str(site)],
                           cwd=REPO, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]
    assert "0 dead links" in built.stdout
    assert _website().dead_links(site) == []
    assert not (site.parent / "site.partial").exists()  # written beside, then moved in whole

    context = chromium(viewport={"width": 1280, "height": 900})
    outside: list[str] = []

    def only_the_site(route):
        url = route.request.url
        if url.startswith(("file:", "data:", "blob:", "about:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    context.route("**/*", only_the_site)
    errors: list[str] = []
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(f"{page.url}: {exc}"))

    # every link of the site, followed from the index (links out — Binder, the repository — are not)
    page.goto((site / "index.html").as_uri(), timeout=UI_TIMEOUT)
    assert "Lessons" in page.inner_text("main")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "site_index.png"))
    seen, todo = set(), [page.url]
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        page.goto(url, timeout=UI_TIMEOUT)
        assert page.title(), url
        links = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
        todo += [u.split("#")[0] for u in links  # pages; the notebooks to download are files the link checker saw
                 if u.startswith("file:") and u.split("#")[0].endswith(".html") and u.split("#")[0] not in seen]
    pages = {Path(u.removeprefix("file://")).name for u in seen}
    assert {"index.html", "00_start_here.html", "03_backward.html"} <= pages, pages

    # lesson 3: its players are there, framed, and play
    page.goto((site / "lessons" / "03_backward.html").as_uri(), timeout=UI_TIMEOUT)
    assert page.locator("math").count() > 0  # its formulas, as MathML
    frames = page.locator("iframe.mg-site-player")
    assert frames.count() >= 2
    page.wait_for_function("() => [...document.querySelectorAll('iframe.mg-site-player')].every("
                           "f => f.contentDocument === null || f.contentDocument.querySelector('.mg-player svg'))",
                           timeout=UI_TIMEOUT)
    players = _player_frames(page)
    assert len(players) == frames.count()
    quiz = next(f for f in players if f.locator(".mg-quiz").count())
    plain = next(f for f in players if not f.locator(".mg-quiz").count())
    root = plain.locator(".mg-player")
    root.wait_for(timeout=UI_TIMEOUT)
    before = root.get_attribute("data-frame")
    root.locator("button.mg-next").click()
    assert root.get_attribute("data-frame") != before  # it steps
    # the frame grew to its player (each standalone page posts its height)
    height = page.evaluate("() => document.querySelector('iframe.mg-site-player').getBoundingClientRect().height")
    assert height > 300

    root = quiz.locator(".mg-player")
    root.locator("button.mg-first").click()
    root.locator("button.mg-next").click()
    prompt = root.locator(".mg-q-prompt").text_content()
    assert prompt.startswith("Which node runs next?"), prompt
    choice = root.locator(".mg-q-pick option").nth(1).get_attribute("value")
    root.locator(".mg-q-pick").select_option(choice)
    root.locator(".mg-q-check").click()
    verdict = root.evaluate("r => r.querySelector('.mg-quiz').innerText")
    assert ("✓ Right" in verdict or "✗ Not quite" in verdict) and "/ 1" in verdict, verdict
    root.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "site_lesson03_quiz.png"))

    assert outside == [], outside  # nothing was fetched from the network
    assert errors == [], errors
