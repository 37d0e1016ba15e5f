#!/usr/bin/env python
"""Time the animated backward pass on a ~300-node graph: recording, layout, export size,
and the time per frame of the exported HTML player in headless Chromium.

    .venv/bin/python bench/viz_anim_bench.py              # ~20 s
    .venv/bin/python bench/viz_anim_bench.py --layers 100 --rounds 5

The graph: a residual MLP on minigrad, ``h = h + tanh(h @ W_i + b_i)`` for ``--layers``
layers (6 nodes per layer: MmBackward0, AddBackward0, TanhBackward0, AddBackward0 and two
AccumulateGrad), so gradients meet at every layer. Frame times:

- "sync": ``go(k)`` for every step, then a forced style+layout (``getBoundingClientRect``):
  the player's own cost per frame (JavaScript + style + layout, not paint);
- "paced": the same steps, each waiting for the next animation frame (includes paint;
  bounded below by the display's refresh interval, ~16.7 ms at 60 Hz).

Needs /usr/bin/chromium (make browser-deps) and the playwright package for the browser
figures; without them it prints the Python-side figures only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]

SYNC_JS = """([rounds]) => {
  const root = document.querySelector('.mg-player'), p = root.mgPlayer, n = p.steps.length;
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let k = 0; k < n; k++) { p.go(k); root.getBoundingClientRect(); }
    times.push((performance.now() - t0) / n);
  }
  return {n, times};
}"""

PACED_JS = """async () => {
  const root = document.querySelector('.mg-player'), p = root.mgPlayer, n = p.steps.length;
  const frame = () => new Promise(r => requestAnimationFrame(() => r(performance.now())));
  p.go(0); await frame();
  const t0 = await frame();
  for (let k = 1; k < n; k++) { p.go(k); await frame(); }
  return (performance.now() - t0) / (n - 1);
}"""


def build(mg, layers: int):
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.normal(size=(4, 8)))
    params = {}
    h = x
    for i in range(layers):
        w = mg.tensor(rng.normal(size=(8, 8)) * 0.3, requires_grad=True)
        b = mg.tensor(rng.normal(size=(8,)) * 0.1, requires_grad=True)
        params[f"W{i}"], params[f"b{i}"] = w, b
        h = h + (h @ w + b).tanh()
    return h.mean(), params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=50, help="residual layers (6 nodes each; 50 -> ~300 nodes)")
    parser.add_argument("--rounds", type=int, default=5, help="passes over all frames for the sync timing")
    args = parser.parse_args()

    import minigrad as mg
    from viz.animate import animate

    loss, params = build(mg, args.layers)
    start = time.perf_counter()
    player = animate(loss, params=params)
    t_animate = time.perf_counter() - start
    out = Path(tempfile.mkdtemp()) / "anim_bench.html"
    start = time.perf_counter()
    player.save_html(out)
    t_export = time.perf_counter() - start
    size = out.stat().st_size
    svg_size = len(player.scene.svg().encode())
    print(f"graph: {player.scene.num_nodes} drawn nodes, {len(player.frames)} frames ({args.layers} layers)")
    print(f"viz.animate (draw, trace, layout, decorate): {t_animate:.2f} s; save_html: {t_export * 1000:.0f} ms")
    print(f"exported HTML: {size / 1024:.0f} KiB ({svg_size / 1024:.0f} KiB of it the SVG), "
          f"player.js {len(player._esm) / 1024:.1f} KiB")

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("browser: skipped (the playwright package is not installed)")
        return
    if not Path(CHROMIUM).exists():
        print(f"browser: skipped ({CHROMIUM} missing: make browser-deps)")
        return
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            tempfile.mkdtemp(), executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1280, "height": 900})
        try:
            page = context.new_page()
            start = time.perf_counter()
            page.goto(out.as_uri())
            page.wait_for_selector(".mg-player g.node")
            t_load = time.perf_counter() - start
            sync = page.evaluate(SYNC_JS, [args.rounds])
            paced = page.evaluate(PACED_JS)
        finally:
            context.close()
    times = sync["times"]
    print(f"browser: page ready in {t_load * 1000:.0f} ms")
    print(f"time per frame (sync: go + style + layout), {sync['n']} frames x {args.rounds} rounds: "
          f"median {statistics.median(times):.3f} ms, max {max(times):.3f} ms")
    print(f"time per frame (paced by requestAnimationFrame, includes paint): {paced:.2f} ms")


if __name__ == "__main__":
    main()
