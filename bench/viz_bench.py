#!/usr/bin/env python
"""Time viz.draw (DOT text, then SVG layout) on PyTorch graphs, and torchviz when it can run.

    python bench/viz_bench.py            # ~1 minute
    python bench/viz_bench.py --repeats 5

Cases:
- chain-1000: a 1,000-node torch graph (a chain of sin and mul nodes on one leaf), drawn with
  the default cap (summarised to viz.DEFAULT_MAX_NODES) and in full (max_nodes=1000).
- shared-900: a loop of 449 steps ``h = tanh(h @ w)`` reusing one weight, ~900 nodes; the
  weight is the hub that makes Graphviz's layout explode unless it is drawn as ghosts.
- torchviz on the same graphs, only if ``torchviz`` and a ``dot`` binary are installed.

Each figure is the median of ``--repeats`` runs, in seconds; "DOT" is walking the graph and
writing DOT text, "SVG" is Graphviz's layout and rendering of that text.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import time
from collections.abc import Callable
from typing import Any


def chain(torch: Any, n: int = 1000) -> Any:
    x = torch.randn(4, requires_grad=True)
    y = x
    for i in range(n - 1):  # n - 1 op nodes + 1 AccumulateGrad
        y = y.sin() if i % 2 else y * 1.5
    return y


def shared_loop(torch: Any, steps: int = 449) -> Any:
    torch.manual_seed(0)
    w = torch.randn(4, 4, requires_grad=True)
    h = torch.randn(1, 4, requires_grad=True)
    for _ in range(steps):
        h = torch.tanh(h @ w)
    return h.sum()


def median_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def time_viz(root: Any, repeats: int, **kw: Any) -> tuple[str, float, float]:
    import viz

    t_dot, graph = median_time(lambda: viz.draw(root, **kw), repeats)
    t_svg, _ = median_time(lambda: viz.draw(root, **kw).svg(), repeats)
    return f"{graph.num_nodes} drawn", t_dot, max(t_svg - t_dot, 0.0)


def time_torchviz(root: Any, repeats: int) -> tuple[str, float, float] | str:
    if importlib.util.find_spec("torchviz") is None:
        return "torchviz not installed"
    if shutil.which("dot") is None:
        return "no `dot` binary on PATH"
    import torchviz

    try:
        t_dot, graph = median_time(lambda: torchviz.make_dot(root), repeats)
        t_svg, _ = median_time(lambda: torchviz.make_dot(root).pipe(format="svg"), repeats)
    except RecursionError:
        return "RecursionError"
    return f"{graph.source.count(' [label=')} drawn", t_dot, max(t_svg - t_dot, 0.0)


def count_nodes(root: Any) -> int:
    from viz.walk import walk

    walked = walk((root,))
    try:
        return len(walked.nodes)
    finally:
        walked.release()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import torch

    graphs = {"chain-1000": chain(torch), "shared-900": shared_loop(torch)}
    rows = []
    for name, root in graphs.items():
        size = count_nodes(root)
        rows.append((name, size, "viz (default cap)", *time_viz(root, args.repeats)))
        rows.append((name, size, "viz max_nodes=1000", *time_viz(root, args.repeats, max_nodes=1000)))
        result = time_torchviz(root, args.repeats)
        if isinstance(result, str):
            rows.append((name, size, "torchviz", result, None, None))
        else:
            rows.append((name, size, "torchviz", *result))

    cols = ("graph", "nodes", "drawer", "drawn", "DOT s", "SVG s", "total s")
    header = "{:<11} {:>5}  {:<19} {:<11} {:>7} {:>7} {:>8}".format(*cols)
    print(header)
    print("-" * len(header))
    for name, size, drawer, drawn, t_dot, t_svg in rows:
        if t_dot is None:
            print(f"{name:<11} {size:>5}  {drawer:<19} skipped: {drawn}")
        else:
            times = f"{t_dot:>7.3f} {t_svg:>7.3f} {t_dot + t_svg:>8.3f}"
            print(f"{name:<11} {size:>5}  {drawer:<19} {drawn:<11} {times}")


if __name__ == "__main__":
    main()
