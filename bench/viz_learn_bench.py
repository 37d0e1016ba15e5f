"""What the learning modes of issue 19 cost (measured, never asserted): a ~300-node minigrad animation
with no mode, with check=True, quiz=True and compare=, and viz.gradcheck_graph alone. Each figure is the
best of three runs on a freshly built graph; the ratios are against the plain animation in the same run.

    .venv/bin/python bench/viz_learn_bench.py
"""

from __future__ import annotations

import time

import numpy as np

import minigrad as torch
import viz
from minigrad.autograd import Function


class Swish(Function):
    """A custom Function (checked by check=True); the built-in ops around it are not."""

    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x, beta)
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, g):
        x, beta = ctx.saved_tensors
        s = torch.sigmoid(beta * x)
        return g * (s + beta * x * s * (1 - s)), (g * x * x * s * (1 - s)).sum()


def build(layers: int = 50, width: int = 16):
    """A deep MLP, each layer x @ W + b -> Swish (about 10 nodes per layer)."""
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((8, width)))
    params = {}
    h = x
    for k in range(layers):
        w = torch.tensor(rng.standard_normal((width, width)) / width**0.5, requires_grad=True)
        b = torch.tensor(np.zeros(width), requires_grad=True)
        beta = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
        params.update({f"W{k}": w, f"b{k}": b, f"beta{k}": beta})
        h = Swish.apply(h @ w + b, beta)
    return (h * h).mean(), params


def best(fn, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    loss, params = build()
    nodes = len(viz.walk.walk((loss,)).nodes)

    def plain():
        loss, params = build()
        viz.animate(loss, params=params)

    def check():
        loss, params = build()
        viz.animate(loss, params=params, check=True)

    def quiz():
        loss, params = build()
        viz.animate(loss, params=params, quiz=True)

    def compare():
        loss, params = build()
        mine = {k: np.zeros(tuple(t.shape)) for k, t in params.items()}
        viz.animate(loss, params=params, compare=viz.compare(loss, mine=mine, params=params, draw=False))

    def gradcheck_graph():
        loss, params = build()
        viz.gradcheck_graph(loss, draw=False)

    base = best(plain)
    print(f"{nodes} nodes, 50 custom Swish nodes")
    print(f"animate, no mode      {base * 1000:8.1f} ms  1.00x")
    for name, fn in (("check=True", check), ("quiz=True", quiz), ("compare=", compare),
                     ("gradcheck_graph", gradcheck_graph)):
        t = best(fn)
        print(f"{name:20s}  {t * 1000:8.1f} ms  {t / base:.2f}x")


if __name__ == "__main__":
    main()
