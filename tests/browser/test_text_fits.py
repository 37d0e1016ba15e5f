"""Text fits its node, and edge labels do not collide, in every player (issue 32 item 4, issue 27 item 3), measured.

Graphviz measures text with hinted whole-pixel widths, up to 6 % narrower than the browser draws it; viz reserves the
browser's widths (viz/metrics.py) and the players centre each row (fitTexts, centreTexts). For each player kind — the
step player with its quiz, the forward recording's player, forward mode's (tangent) player, forward_vs_reverse —
in English and in Chinese (learners' names in Chinese: CJK glyphs are a whole em), one exported page is loaded and
switched to light and dark, inline at 1280x800 and in the player's full screen at 1920x1080 (the projector), the
step player left to right too; at
every step, every text of a node lies inside its node's border line (the inner edge of its stroke, the thick
highlight's too, 1 px tolerance), and no two edges' labels overlap. Screenshots: test-artifacts/fit_*.png."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"browser_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpers = _load("conftest")
catalogue = _load("graphs")
ARTIFACTS = helpers.REPO / "test-artifacts"
UI_TIMEOUT = 30_000

# At every step (stepped inside the page: the step player through root.mgPlayer.go, the race through its buttons),
# node texts against the inside of their node's border and edge labels against each other, in screen pixels.
MEASURE_JS = """(root, race) => {
  const out = [];
  const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden' &&
    getComputedStyle(e).display !== 'none';
  const border = g => g.querySelector('.mg-border') ||
    [...g.querySelectorAll('polygon, path')].find(e => e.getAttribute('fill') === 'none') ||
    g.querySelector('polygon, path');
  const check = k => {
    for (const svg of root.querySelectorAll('svg')) {
      if (!svg.querySelector('g.node') || !shown(svg)) continue;
      const scale = svg.getScreenCTM().a;
      for (const g of svg.querySelectorAll('g.node')) {
        const line = border(g);
        if (!line || g.getAttribute('data-n') === 'legend') continue;
        const b = line.getBoundingClientRect();
        const inset = (parseFloat(getComputedStyle(line).strokeWidth) || 0) / 2 * scale;
        for (const t of g.querySelectorAll('text')) {
          if (!t.textContent.trim() || !shown(t) || t.closest('.mg-stepbadge, .mg-arrbadge')) continue;
          const r = t.getBoundingClientRect();
          if (r.left < b.left + inset - 1 || r.right > b.right - inset + 1 || r.top < b.top + inset - 1 ||
              r.bottom > b.bottom - inset + 1)
            out.push(['node text', k, t.textContent.slice(0, 40), +(b.left + inset - r.left).toFixed(1),
                      +(r.right - b.right + inset).toFixed(1), +(b.top + inset - r.top).toFixed(1),
                      +(r.bottom - b.bottom + inset).toFixed(1)]);
        }
      }
      const labels = [];
      for (const g of svg.querySelectorAll('g.edge')) {
        const rs = [...g.querySelectorAll('text')].filter(t => t.textContent.trim() && shown(t))
          .map(t => t.getBoundingClientRect());
        if (!rs.length) continue;
        labels.push([g.querySelector('title').textContent, Math.min(...rs.map(r => r.left)),
                     Math.min(...rs.map(r => r.top)), Math.max(...rs.map(r => r.right)),
                     Math.max(...rs.map(r => r.bottom))]);
      }
      for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
        const [a, b] = [labels[i], labels[j]];
        const w = Math.min(a[3], b[3]) - Math.max(a[1], b[1]), h = Math.min(a[4], b[4]) - Math.max(a[2], b[2]);
        if (w > 1 && h > 1) out.push(['edge labels', k, a[0], b[0], +w.toFixed(1), +h.toFixed(1)]);
      }
    }
  };
  let texts = 0;
  if (race) {
    root.querySelector('.mgj-first').click();
    const last = +root.querySelector('input[type=range]').max;
    for (let k = 0; k <= last; k++) { check(k); if (k < last) root.querySelector('.mgj-next').click(); }
  } else {
    const p = root.mgPlayer;  // left at the last step: every saved value freed, every edge's value shown
    for (let k = 0; k < p.steps.length; k++) { p.go(k); check(k); }
  }
  for (const t of root.querySelectorAll('svg g.node text')) if (t.textContent.trim()) texts++;
  return {out: out.slice(0, 12), texts};
}"""

CONFIGS = [(scheme, full) for scheme in ("light", "dark") for full in (False, True)]


def _step_player(mg, zh: bool):
    import viz

    loss, params = catalogue.lesson5(mg)
    if zh:
        params = {("输入向量" if k == "x" else "权重参数"): v for k, v in params.items()}
    return viz.animate(loss, params=params, quiz=True, quiz_every=2)


def _forward_player(mg, zh: bool):
    from viz.animate import record

    w = mg.tensor([0.5, -1.25, 2.0], requires_grad=True)
    with record(params={"权重参数" if zh else "w": w}) as rec:
        x = mg.tensor([1.5, -1.0, -4.0], requires_grad=True)
        loss = ((x ** 2) * w + 1.0).sum()
    assert loss.grad_fn is not None
    return rec.player()


def _tangent_player(mg, zh: bool):
    import viz

    fw = mg.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(mg.tensor([0.5, -1.25, 2.0]), mg.tensor([1.0, 0.5, -2.0]))
        w = mg.tensor([1.5, -0.75, 0.25])
        f = (lambda 输入向量, 权重参数: (输入向量 * 权重参数).sin().sum()) if zh else (lambda x, w: (x * w).sin().sum())
        return viz.animate(f, x, w)


def _race(mg, zh: bool):
    import viz

    W = mg.tensor(np.arange(6.0).reshape(3, 2) / 4 - 0.5, dtype=mg.float64)
    f = (lambda 输入向量: (W @ (输入向量 * 输入向量)).sin()) if zh else (lambda x: (W @ (x * x)).sin())
    return viz.forward_vs_reverse(f, mg.tensor([1.0, -2.0], dtype=mg.float64))


KINDS = {"step": _step_player, "forward": _forward_player, "tangent": _tangent_player, "race": _race}


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the eight pages (a page each: the test's time is the pages', not the browsers')."""
    helpers.require_browser_tools()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=helpers.CHROMIUM, args=helpers.CHROMIUM_ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_texts_fit_their_nodes_and_edge_labels_do_not_collide(browser, mg, pgv, kind, lang):
    import viz

    ARTIFACTS.mkdir(exist_ok=True)
    viz.set_language(lang)
    try:
        page_file = KINDS[kind](mg, lang == "zh").save_html(ARTIFACTS / f"fit_{kind}_{lang}.html")
    finally:
        viz.set_language(None)
    race = kind == "race"
    context = browser.new_context(viewport={"width": 1280, "height": 800}, device_scale_factor=1)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(page_file.resolve().as_uri(), timeout=UI_TIMEOUT)
    root = page.locator(".mgj" if race else ".mg-player")
    page.wait_for_function("r => r.querySelector('svg g.node') && !r.classList.contains('mg-busy')",
                           arg=root.element_handle(), timeout=UI_TIMEOUT)
    for scheme, full in CONFIGS:
        page.emulate_media(color_scheme=scheme)
        if full:
            page.set_viewport_size({"width": 1920, "height": 1080})
            root.locator("button.mgj-full" if race else "button.mg-full").click()
            page.wait_for_function("() => !!document.fullscreenElement", timeout=UI_TIMEOUT)
        else:
            page.evaluate("() => document.fullscreenElement && document.exitFullscreen()")
            page.wait_for_function("() => !document.fullscreenElement", timeout=UI_TIMEOUT)
            page.set_viewport_size({"width": 1280, "height": 800})
        page.wait_for_timeout(80)  # the players refit on resize in the next frame
        found = root.evaluate(MEASURE_JS, race)
        label = f"{kind} {lang} {scheme} {'1920x1080 full screen' if full else '1280x800'}"
        assert found["texts"] >= 5, (label, found)
        assert found["out"] == [], (label, found["out"])
        if lang == "zh" or (scheme == "dark" and full):
            page.screenshot(path=str(ARTIFACTS / f"fit_{kind}_{lang}_{scheme}_{'projector' if full else '1280'}.png"))
    if kind == "step":  # left to right too (the edge labels stack; full screen, dark: the last configuration)
        root.locator("button.mg-dir").click()
        page.wait_for_function("r => r.querySelector('.mg-dir').textContent.includes('TB') && "
                               "!r.classList.contains('mg-busy')", arg=root.element_handle(), timeout=UI_TIMEOUT)
        page.wait_for_timeout(80)
        found = root.evaluate(MEASURE_JS, False)
        assert found["texts"] >= 5 and found["out"] == [], (f"{kind} {lang} LR", found)
        page.screenshot(path=str(ARTIFACTS / f"fit_{kind}_{lang}_dark_projector_LR.png"))
    assert not errors, errors
    context.close()
