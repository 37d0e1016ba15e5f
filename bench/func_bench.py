"""W10: function transforms (torch.func), minigrad.func against torch.func (float64, one thread).

W10 jacrev / jacfwd  the Jacobian of a 100-100-100 tanh MLP (x -> tanh(W2 tanh(W1 x + b1) + b2)) at one input
    of 100: jacrev computes its 100 rows in one backward pass (minigrad: the forward on a batch of 100 copies, one
    backward), jacfwd its 100 columns in one forward pass carrying 100 tangents;
W10 hessian (sum)  `hessian(lambda x: f(x).sum())` of the same MLP at the same input (jacfwd over jacrev, as
    torch.func computes it): a 100x100 Hessian, for information (the issue sets no gate);
W10 per-sample grads  `vmap(grad(loss), in_dims=(None, 0, 0))` of W2's 2-32-32-1 tanh MLP (MSE) written with
    functional_call, over a batch of 64; and the same per-sample gradients by a Python loop of 64 backward
    passes in minigrad (what vmap replaces).

Before timing, each library's result is checked against torch.func's (float64: rtol 1e-9). The two libraries
take turns, `--repeats` samples of `--calls` calls each; the figure is the median time per call and the ratio
minigrad / torch.func (the issue's gates: jacrev, jacfwd <= 1.5; per-sample grads <= 2.0, and minigrad's vmap
>= 5x faster than its own loop).

    .venv/bin/python bench/func_bench.py
    .venv/bin/python bench/func_bench.py --repeats 7 --calls 50
"""

# ruff: noqa: E402  -- the thread variables must be set before NumPy or torch is imported.
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import importlib
import statistics
import time

import numpy as np

GATES = {"jacrev": 1.5, "jacfwd": 1.5, "per-sample grads": 2.0}


def jacobian_case(lib, kind: str):
    rng = np.random.default_rng(0)
    w1, w2 = (lib.tensor(rng.standard_normal((100, 100)) / 10) for _ in range(2))
    b1, b2 = (lib.tensor(rng.standard_normal(100) / 10) for _ in range(2))
    x = lib.tensor(rng.standard_normal(100))

    def f(x):
        return (w2 @ (w1 @ x + b1).tanh() + b2).tanh()

    if kind == "hessian":  # of the outputs' sum: a 100x100 Hessian, jacfwd(jacrev(.)) as torch.func computes it
        return lambda: lib.func.hessian(lambda x: f(x).sum())(x)
    transform = lib.func.jacrev if kind == "jacrev" else lib.func.jacfwd
    return lambda: transform(f)(x)


def _mlp(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)).double()
    rng = np.random.default_rng(1)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape))))
    x, y = lib.tensor(rng.standard_normal((64, 2))), lib.tensor(rng.standard_normal((64, 1)))
    return model, x, y


def per_sample_case(lib, kind: str = "vmap"):
    model, x, y = _mlp(lib)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        return lib.nn.functional.mse_loss(lib.func.functional_call(model, p, (xi,)), yi)

    if kind == "vmap":
        run = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
        return lambda: run(params, x, y)

    def loop():
        grads = []
        for i in range(x.shape[0]):
            model.zero_grad()
            lib.nn.functional.mse_loss(model(x[i]), y[i]).backward()
            grads.append([p.grad for p in model.parameters()])
        return {k: lib.stack([g[j] for g in grads]) for j, k in enumerate(params)}

    return loop


def _np(tree):
    if isinstance(tree, dict):
        return [v.detach().numpy() for v in tree.values()]
    return [tree.detach().numpy()]


def check(name: str, got, want) -> None:
    for g, w in zip(_np(got), _np(want)):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=name)


def timed(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args(argv)
    import minigrad

    torch = importlib.import_module("torch")
    torch.set_num_threads(1)
    rows = {"jacrev": lambda lib: jacobian_case(lib, "jacrev"), "jacfwd": lambda lib: jacobian_case(lib, "jacfwd"),
            "hessian (sum)": lambda lib: jacobian_case(lib, "hessian"), "per-sample grads": per_sample_case}
    print(f"{'W10':<28} {'minigrad ms':>12} {'torch ms':>10} {'mg/torch':>9} {'gate':>6}")
    for name, make in rows.items():
        try:
            runs = {"minigrad": make(minigrad), "torch": make(torch)}
            check(name, runs["minigrad"](), runs["torch"]())
        except NotImplementedError as e:
            print(f"{name:<28} {'n/a: ' + str(e)[:60]}")
            continue
        samples = {lib: [] for lib in runs}
        for _ in range(args.repeats):
            for lib, fn in runs.items():
                samples[lib].append(timed(fn, args.calls))
        mg, tt = (statistics.median(samples[k]) * 1e3 for k in ("minigrad", "torch"))
        if name not in GATES:  # (for information: the issue sets no gate)
            print(f"{name:<28} {mg:>12.3f} {tt:>10.3f} {mg / tt:>9.2f} {'-':>6}")
            continue
        verdict = "ok" if mg / tt <= GATES[name] else "OVER"
        print(f"{name:<28} {mg:>12.3f} {tt:>10.3f} {mg / tt:>9.2f} {GATES[name]:>5.1f}x {verdict}")
    vmap_fn, loop_fn = per_sample_case(minigrad), per_sample_case(minigrad, "loop")
    check("loop", vmap_fn(), loop_fn())
    v = statistics.median(timed(vmap_fn, args.calls) for _ in range(args.repeats)) * 1e3
    lp = statistics.median(timed(loop_fn, max(args.calls // 10, 1)) for _ in range(args.repeats)) * 1e3
    print(f"{'per-sample: minigrad loop':<28} {lp:>12.3f} {'':>10} {'':>9}   vmap is {lp / v:.1f}x faster "
          f"(gate >= 5x: {'ok' if lp / v >= 5 else 'UNDER'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
