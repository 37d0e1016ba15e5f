"""viz timings for issue 17 (measured, never asserted): a PyTorch Transformer's backward graph folded by
module and drawn, and the player stepping on a 1,000-node graph in headless Chromium.

    .venv/bin/python bench/viz_fold_bench.py
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
STEP_JS = """root => { const p = root.mgPlayer, n = p.steps.length; const t0 = performance.now();
  for (let k = 0; k < n; k++) { p.go(k); root.getBoundingClientRect(); }
  return (performance.now() - t0) / n; }"""


# one step per animation frame, painted: the intervals between frames stay at the display's 16.7 ms while
# a step (its style, layout and paint) fits in a frame
PAINTED_JS = """root => new Promise(done => { const p = root.mgPlayer, n = Math.min(p.steps.length, 300);
  const stamps = []; let k = 0;
  const frame = t => { stamps.push(t); if (k >= n) { const gaps = stamps.slice(2).map((v, i) => v - stamps[i + 1]);
      gaps.sort((a, b) => a - b); done({median: gaps[gaps.length >> 1], p95: gaps[Math.floor(gaps.length * 0.95)],
      n: gaps.length}); return; }
    p.go(k++); requestAnimationFrame(frame); };
  requestAnimationFrame(frame); })"""


def _graphs():
    spec = importlib.util.spec_from_file_location("graphs", ROOT / "tests" / "browser" / "graphs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fold_timing() -> None:
    import torch

    import viz

    loss, model = _graphs().transformer(torch, layers=48)
    nodes = len(viz.walk.walk((loss,)).nodes)
    start = time.perf_counter()
    graph = viz.draw(loss, params=model, fold="module", expand=["1", "1.layers"])
    graph.svg()
    folded = time.perf_counter() - start
    print(f"Transformer (48 layers) backward graph: {nodes:,} nodes folded to {graph.num_nodes} boxes "
          f"and drawn in {folded:.3f} s")


def stepping_timing() -> None:
    from playwright.sync_api import sync_playwright

    import minigrad
    import viz

    x = minigrad.tensor([0.5, -0.25], requires_grad=True)
    y = x
    for i in range(500):
        y = (y * 1.001).tanh() if i % 2 else y + x
    player = viz.animate(y.sum(), params={"x": x})
    with tempfile.TemporaryDirectory() as tmp:
        page_path = player.save_html(Path(tmp) / "big.html")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            page.goto(page_path.as_uri())
            page.wait_for_selector(".mg-player svg g.node", timeout=120_000)
            ms = page.locator(".mg-player").evaluate(STEP_JS)
            painted = page.locator(".mg-player").evaluate(PAINTED_JS)
            browser.close()
    print(f"player stepping on {player.scene.num_nodes:,} nodes: {ms:.2f} ms per step (style and layout, headless "
          f"Chromium); one step per painted frame: {painted['median']:.1f} ms between frames (median), "
          f"{painted['p95']:.1f} ms (95th percentile) over {painted['n']} frames")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    fold_timing()
    stepping_timing()
