"""Forward mode's player in a real browser (the exported page, file://, no kernel), at a projector's 1920x1080:
the legend and the panel say "tangent" where the backward player says "gradient", a step shows its node's forward
rule with its numbers, the tangents travel along the edges and sit on the nodes; in the player's full screen
every text of the picture is 18 px or more (the projector's figure). Screenshots: test-artifacts/forward_*."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np


def _load(name: str):
    """A sibling file as a module (the tests run in importlib mode: no package, no sys.path entry)."""
    spec = importlib.util.spec_from_file_location(f"browser_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


projector = _load("test_projector")
ARTIFACTS = projector.ARTIFACTS
UI_TIMEOUT = 30_000

STEP_JS = """(root, k) => {
  root.mgPlayer.go(k);
  const texts = sel => [...root.querySelectorAll(sel)].map(e => e.textContent).filter(Boolean);
  return {title: root.querySelector('.mg-title').textContent, lines: texts('.mg-line'),
          edges: texts('.mg-glabel'), notes: texts('.mg-note'),
          current: [...root.querySelectorAll('g.node.mg-current text')].map(t => t.textContent),
          // each tangent written on a node stays inside its box
          spill: [...root.querySelectorAll('g.node')].filter(g => { const t = g.querySelector('.mg-note');
            if (!t || !t.textContent) return false;
            const a = t.getBoundingClientRect(), b = g.querySelector('.mg-border').getBoundingClientRect();
            return a.left < b.left || a.right > b.right; }).map(g => g.querySelector('.mg-note').textContent)};
}"""


def program(x, w):
    return (x * w).sin().sum()


def test_forward_mode_plays_in_the_browser(chromium, pgv):
    import minigrad
    import viz

    fw = minigrad.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(minigrad.tensor(np.array([0.5, -1.25, 2.0])), minigrad.tensor(np.array([1.0, 0.5, -2.0])))
        player = viz.animate(program, x, minigrad.tensor(np.array([1.5, -0.75, 0.25])))
    ARTIFACTS.mkdir(exist_ok=True)
    html = player.save_html(ARTIFACTS / "forward_player.html")
    errors: list[str] = []
    page = chromium(viewport={"width": 1920, "height": 1080}, device_scale_factor=1).new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
    root = page.locator(".mg-player")
    projector._settle(page, root)
    legend = root.locator(".mg-legend").inner_text()
    assert "computes its value and tangent now" in legend and "gradient" not in legend, legend
    assert root.get_attribute("aria-label") == "forward-mode (tangent) player"

    mul = root.evaluate(STEP_JS, 2)
    assert mul["title"] == "MulBackward0 computes its value and its tangent"
    assert "MulBackward0: result_t = self_t * other + other_t * self" in mul["lines"]
    assert "result_t = [1, 0.5, -2] * [1.5, -0.75, 0.25] + 0 * [0.5, -1.25, 2] = [1.5, -0.375, -0.5]" in mul["lines"]
    assert any("MulBackward0" in t for t in mul["current"]), mul
    assert "[1.5, -0.375, -0.5]" in mul["edges"] and "tangent [1.5, -0.375, -0.5]" in mul["notes"], mul
    assert not any("grad" in t for t in mul["lines"]), mul["lines"]
    assert mul["spill"] == [], mul["spill"]
    root.screenshot(path=str(ARTIFACTS / "forward_player_inline.png"))

    last = root.evaluate(STEP_JS, player.num_steps - 1)
    assert last["title"] == "Forward mode done: the output's tangent is J·v" and last["spill"] == [], last
    want = float(np.sum(np.cos([0.75, 0.9375, 0.5]) * np.array([1.5, -0.375, -0.5])))
    assert f"unpack_dual(output).tangent = {viz.probe.format_number(want)}" in last["lines"], last["lines"]

    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        root.evaluate("root => root.mgPlayer.go(2)")
        projector._full(page, root, True)
        assert root.evaluate("r => r.classList.contains('mg-dark')") == (scheme == "dark")
        projector._projected(page, root, f"forward_{scheme}_TB", player.scene.num_nodes)  # projector_forward_*.png
        if scheme == "light":  # left to right (laid out again by Python: the page asks no kernel here)
            projector._flip(page, root, "LR")
            projector._projected(page, root, "forward_light_LR", player.scene.num_nodes)
            assert root.evaluate(STEP_JS, 2)["spill"] == []
            projector._flip(page, root, "TB")
        projector._full(page, root, False)
    assert not errors, errors
