"""The player on a projector: its own full screen at 1920x1080 (CSS px, device pixel ratio 1) shows every text of
a graph of up to 25 nodes at 18 px or more and fills the graph area (80% of its width or of its height), top to
bottom and left to right, light and dark; the side panel never covers the picture; A+ / A− scale the picture's
text with the panel's; inline, the whole issue MLP still fits. A folded Transformer plays one module per step.
Exported pages (no kernel, no server): the same player as in a notebook. Screenshots: test-artifacts/projector_*.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path


def _load(name: str):
    """A sibling file as a module (the tests run in importlib mode: no package, no sys.path entry)."""
    spec = importlib.util.spec_from_file_location(f"browser_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpers = _load("conftest")
catalogue = _load("graphs")
ARTIFACTS = helpers.REPO / "test-artifacts"
UI_TIMEOUT = 30_000
PROJECTOR_PX = 18

# the picture as the room sees it: each visible text of a node (its font size on screen, its box's height), the
# share of the graph area (the stage inside its padding) the picture covers, and what the side panel covers
MEASURE_JS = """root => {
  const PX = PROJECTOR_PX;
  const stage = root.querySelector('.mg-stage'), svg = stage.querySelector('svg');
  const s = stage.getBoundingClientRect(), pad = parseFloat(getComputedStyle(stage).paddingLeft);
  const area = {left: s.left + pad, top: s.top + pad, right: s.left + stage.clientWidth - pad,
                bottom: s.top + stage.clientHeight - pad};
  const g = svg.getBoundingClientRect();
  const used = [(Math.min(g.right, area.right) - Math.max(g.left, area.left)) / (area.right - area.left),
                (Math.min(g.bottom, area.bottom) - Math.max(g.top, area.top)) / (area.bottom - area.top)];
  const scale = svg.getScreenCTM().a;
  let count = 0, minPx = 99, minHeight = 99;
  const small = [];
  for (const t of svg.querySelectorAll('g.node text')) {
    if (!t.textContent.trim() || !t.getClientRects().length) continue;
    let hidden = false;
    for (let e = t; e && e !== svg; e = e.parentElement) if (getComputedStyle(e).display === 'none') hidden = true;
    if (hidden) continue;
    count++;
    const px = parseFloat(t.getAttribute('font-size') || getComputedStyle(t).fontSize) * scale;
    const height = t.getBoundingClientRect().height;
    minPx = Math.min(minPx, px); minHeight = Math.min(minHeight, height);
    if (px < PX || height < PX) small.push([t.textContent.slice(0, 30), +px.toFixed(1), +height.toFixed(1)]);
  }
  const side = root.querySelector('.mg-side');
  const p = side ? side.getBoundingClientRect() : null;
  const overlap = p ? Math.max(0, Math.min(p.right, s.right) - Math.max(p.left, s.left))
    * Math.max(0, Math.min(p.bottom, s.bottom) - Math.max(p.top, s.top)) : 0;
  // the node texts the stage shows are on top where they are (nothing of the panel or the page over them)
  let covered = 0;
  for (const t of svg.querySelectorAll('g.node text')) {
    const r = t.getBoundingClientRect();
    if (!t.textContent.trim() || !r.width) continue;
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (x < area.left || x > area.right || y < area.top || y > area.bottom) continue;
    const hit = document.elementFromPoint(x, y);
    if (hit && !svg.contains(hit)) covered++;
  }
  return {count, minPx: +minPx.toFixed(2), minHeight: +minHeight.toFixed(2), small: small.slice(0, 8),
          used: used.map(u => +u.toFixed(3)), overlap, covered, fit: root.dataset.fit, zoom: +root.dataset.zoom,
          panelPx: parseFloat(getComputedStyle(root.querySelector('.mg-line') || root).fontSize),
          nodes: svg.querySelectorAll('g.node').length, full: document.fullscreenElement === root};
}""".replace("PROJECTOR_PX", str(PROJECTOR_PX))

SETTLED = "r => !r.classList.contains('mg-busy') && r.querySelector('.mg-stage svg g.node')"


def _settle(page, root) -> None:
    page.wait_for_function(f"r => ({SETTLED})(r)", arg=root.element_handle(), timeout=UI_TIMEOUT)
    page.wait_for_timeout(300)


def _full(page, root, on: bool) -> None:
    if on:
        root.locator("button.mg-full").click()
        page.wait_for_function("() => !!document.fullscreenElement", timeout=UI_TIMEOUT)
    else:
        page.evaluate("() => document.exitFullscreen()")
        page.wait_for_function("() => !document.fullscreenElement", timeout=UI_TIMEOUT)
    _settle(page, root)


def _flip(page, root, to: str) -> None:
    root.locator("button.mg-dir").click()
    page.wait_for_function(f"r => r.querySelector('.mg-dir').textContent.includes('{'TB' if to == 'LR' else 'LR'}')",
                           arg=root.element_handle(), timeout=UI_TIMEOUT)
    _settle(page, root)


def _projected(page, root, label: str, nodes: int) -> dict:
    """Full screen: every node text 18 px or more, the area used, the panel beside the picture; a screenshot."""
    found = root.evaluate(MEASURE_JS)
    assert found["full"] and found["nodes"] == nodes, (label, found)
    assert found["count"] >= nodes and found["small"] == [], (label, found)
    assert found["minPx"] >= PROJECTOR_PX and found["minHeight"] >= PROJECTOR_PX, (label, found)
    assert max(found["used"]) >= 0.8, (label, found)
    assert found["overlap"] == 0 and found["covered"] == 0, (label, found)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"projector_{label}.png"))
    return found


def test_the_projector_reaches_the_back_row(chromium, torch, pgv):
    import minigrad
    import viz

    started = time.monotonic()
    ARTIFACTS.mkdir(exist_ok=True)
    context = chromium(viewport={"width": 1920, "height": 1080}, device_scale_factor=1)
    errors: list[str] = []
    measured: dict[str, dict] = {}
    graphs = {"mlp": catalogue.projector_mlp, "chain25": catalogue.chain25, "lesson5": catalogue.lesson5,
              "tiny": catalogue.tiny}
    for name, build in graphs.items():
        loss, params = build(minigrad)
        player = viz.animate(loss, params=params)
        nodes = player.scene.num_nodes
        assert nodes <= 25
        html = player.save_html(ARTIFACTS / f"projector_{name}.html")
        for scheme in ("light", "dark") if name in ("mlp", "chain25") else ("light",):
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.emulate_media(color_scheme=scheme)
            page.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
            root = page.locator(".mg-player")
            _settle(page, root)
            assert root.evaluate("r => r.classList.contains('mg-dark')") == (scheme == "dark")
            inline = root.evaluate(MEASURE_JS)
            if name == "mlp":  # inline, as before: the whole issue MLP at the starting zoom
                assert inline["fit"] == "whole" and inline["zoom"] >= 0.8, inline
                root.screenshot(path=str(ARTIFACTS / f"projector_{name}_{scheme}_inline.png"))
            root.locator("button.mg-next").click()
            root.locator("button.mg-next").click()
            _full(page, root, True)
            for rankdir in ("TB", "LR"):
                if rankdir == "LR":
                    _flip(page, root, "LR")
                label = f"{name}_{scheme}_{rankdir}"
                measured[label] = _projected(page, root, label, nodes)
            if name == "mlp" and scheme == "light":
                # A+ and A−: the picture's text grows and shrinks with the panel's
                root.locator("button.mg-tbig").click()
                _settle(page, root)
                bigger = root.evaluate(MEASURE_JS)
                ratio = bigger["minPx"] / measured[label]["minPx"]
                assert 1.1 < ratio < 1.2 and bigger["panelPx"] > measured[label]["panelPx"] * 1.1, (bigger, ratio)
                assert max(bigger["used"]) >= 0.8 and bigger["overlap"] == 0 and bigger["covered"] == 0, bigger
                page.screenshot(path=str(ARTIFACTS / "projector_mlp_light_LR_bigger.png"))
                root.locator("button.mg-tsmall").click()
                root.locator("button.mg-tsmall").click()
                _settle(page, root)
                smaller = root.evaluate(MEASURE_JS)
                assert smaller["minPx"] < measured[label]["minPx"] * 0.9, smaller
                assert smaller["panelPx"] < measured[label]["panelPx"] * 0.9, smaller
                root.locator("button.mg-tbig").click()
            _full(page, root, False)
            if name == "mlp":  # out of full screen, the whole graph fits again
                _flip(page, root, "TB")
                back = root.evaluate(MEASURE_JS)
                assert not back["full"] and back["fit"] == "whole" and back["zoom"] == inline["zoom"], back
            page.close()

    # the folded Transformer: one step per module, a box's step names the .grads it filled
    loss, model = catalogue.transformer(torch, squares=True)
    folded = viz.animate(loss, params=model, fold="module")
    html = folded.save_html(ARTIFACTS / "projector_transformer.html")
    for scheme in ("light", "dark"):
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.emulate_media(color_scheme=scheme)
        page.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
        root = page.locator(".mg-player")
        _settle(page, root)
        steps = int(root.locator(".mg-count").text_content().split("/")[1]) + 1
        assert steps == folded.num_steps <= 30, steps
        measured[f"transformer_{scheme}"] = {"steps": steps}
        encoder = next(f.step for f in folded.frames if f.kind == "module" and f.name.startswith("1 · "))
        for _ in range(encoder):
            root.locator("button.mg-next").click()
        assert root.locator(".mg-title").text_content().startswith("1 · TransformerEncoder runs its backward")
        lines = root.evaluate("r => [...r.querySelectorAll('.mg-line')].map(e => e.textContent)")
        assert any(t.startswith("1.layers.5.") and ".grad was None" in t for t in lines), lines
        notes = root.evaluate("r => [...r.querySelectorAll('.mg-note')].map(t => t.textContent).filter(Boolean)")
        assert "72 .grads filled" in notes and "bias.grad, weight.grad" in notes, notes
        _full(page, root, True)
        label = f"transformer_{scheme}_TB"
        measured[label] = _projected(page, root, label, folded.scene.num_nodes)
        page.close()
    assert not errors, errors
    context.close()
    print("\nprojector: " + ", ".join(f"{k} {v}" for k, v in measured.items()))
    print(f"projector browser test took {time.monotonic() - started:.1f} s")
