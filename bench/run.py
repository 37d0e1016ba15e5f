#!/usr/bin/env python
"""Benchmark minigrad against torch and a hand-written NumPy forward+backward (the performance issue).

    python bench/run.py                          # every workload, every library that imports (~4 min)
    python bench/run.py --quick                  # fewer repeats, no 1M-op graph (< 1 min)
    python bench/run.py --libs torch,numpy --only W1,W3
    python bench/run.py --alias minigrad=torch   # exercise the minigrad column with torch standing in

Each workload first checks an engine's values and gradients against the NumPy reference and refuses
to time a wrong engine (its cells read FAILED). See bench/README.md for what each row measures.
"""

# ruff: noqa: E402  -- the thread variables below must be set before NumPy or torch is imported.
from __future__ import annotations

import os

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
               "NUMEXPR_NUM_THREADS")
if __name__ == "__main__":  # imported (by the tests), NumPy is loaded already and the env is theirs
    for _var in THREAD_VARS:
        os.environ[_var] = "1"  # one thread everywhere: per-op overhead is compared, not cores

import argparse
import contextlib
import gc
import importlib
import importlib.util
import io
import json
import math
import platform
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent


def _load_sibling(name: str) -> Any:
    """Import bench/<name>.py by path, under a unique name: the tests then need no sys.path changes."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(spec.name)
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module


wl = _load_sibling("workloads")

DEFAULT_LIBS = ("minigrad", "torch", "numpy")
REFERENCE = "numpy"
"""The hand-written NumPy forward+backward: not an autograd engine, but the physical limit."""
RESULT_MARK = "BENCH_RESULT "
MAX_SAMPLES = 20
W5_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536"}
"""glibc's default *dynamic* mmap threshold serves freed 8 MB buffers from the heap, where they are
not returned to the OS: RSS then reports fragmentation (torch's W5 forward shows 1.5 GB for 0.4 GB of
live tensors), not what the engine keeps alive. A fixed threshold maps every large buffer on its own,
so RSS follows live memory. Set only in W5's subprocesses, and only when not already set."""


# ----------------------------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """Sizes and repeat counts; ``QUICK`` and the tests shrink them."""

    w1_iters: int = 5_000
    w1_repeats: int = 15
    w2_sizes: tuple[int, ...] = (2, 32, 32, 1)
    w2_batch: int = 32
    w2_steps: int = 300
    w2_lr: float = 0.1
    w2_repeats: int = 10
    w3_sizes: tuple[int, ...] = (784, 1024, 1024, 10)
    w3_batch: int = 256
    w3_lr: float = 0.01
    w3_steps: int = 3  # SGD steps per timed repeat; the warm-up/check run does as many
    w3_repeats: int = 8
    w3_dtypes: tuple[str, ...] = ("float64", "float32")
    w4_ops: tuple[int, ...] = (10_000, 100_000)
    w4_big_ops: int | None = 1_000_000  # in a subprocess, run once; None skips it (--quick)
    w4_repeats: int = 3  # samples per length, the checked run included
    w4_min_time: float = 2.0  # ... and more samples while they add up to less than this (s)
    w5_shape: tuple[int, ...] = (1000, 1000)
    w5_iters: int = 50
    w6_n: int = 1_000
    w6_calls: int = 200  # calls per timed repeat
    w6_repeats: int = 10
    w7_inputs: int = 10_000
    w7_repeats: int = 3  # fresh processes, one sample each
    w8_views: int = 30_000  # `y = y.view(1)[0]`, chained
    w8_inplace: int = 100_000  # in-place steps on a tensor and a view of it
    w8_repeats: int = 3
    subprocess_timeout: float = 900.0


FULL = Config()
QUICK = replace(FULL, w1_repeats=5, w2_repeats=5, w3_steps=2, w3_repeats=3, w4_big_ops=None, w4_repeats=1,
                w4_min_time=0.3, w6_repeats=5, w7_repeats=1)


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------


@dataclass
class Cell:
    """One library's figure for one row: samples in the row's unit, or why there is none."""

    samples: list[float] = field(default_factory=list)
    status: str = "ok"  # "ok" or "FAILED"
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok" and bool(self.samples)

    @property
    def best(self) -> float | None:
        """The minimum: timeit's convention, the run least disturbed by the rest of the machine."""
        return min(self.samples) if self.ok else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.ok else None


def failed(metrics: list[str], err: BaseException | str) -> dict[str, Cell]:
    """Every row of a (sub)workload FAILED with one message: a wrong engine gets no figures at all."""
    msg = err if isinstance(err, str) else f"{type(err).__name__}: {err}"
    note = msg.strip().splitlines()[-1][:300] if msg.strip() else ""
    return {m: Cell(status="FAILED", note=note) for m in metrics}


@dataclass(frozen=True)
class Target:
    """A goal of the performance issue for minigrad's figure on one row.

    kind "vs": minigrad / ``against`` <= limit; "self": minigrad's own figure (already a ratio) <= limit;
    "succeeds": minigrad produced a checked figure at all.
    """

    kind: str
    limit: float = 0.0
    against: str = ""

    def label(self) -> str:
        if self.kind == "vs":
            return f"<= {self.limit:.2f}x {self.against}"
        if self.kind == "self":
            return f"<= {self.limit:.2f}"
        return "succeeds"

    def met(self, cells: dict[str, Cell]) -> bool | None:
        """True/False, or None when it cannot be judged (minigrad or the baseline did not run)."""
        mine = cells.get("minigrad")
        if mine is None:
            return None
        if mine.status == "FAILED":
            return False
        if self.kind == "succeeds":
            return mine.ok
        if mine.best is None:
            return None
        if self.kind == "self":
            return mine.best <= self.limit
        base = cells.get(self.against)
        if base is None or base.best is None:
            return None
        return mine.best / base.best <= self.limit


@dataclass(frozen=True)
class RowSpec:
    workload: str
    metric: str  # the key the bench function fills
    label: str
    unit: str
    target: Target | None = None


def row_specs(cfg: Config) -> list[RowSpec]:
    """The table's rows, in order, with the issue's targets."""
    rows = [
        RowSpec("W1", "forward", "W1 forward", "us/op", Target("vs", 1.0, "torch")),
        RowSpec("W1", "backward", "W1 backward", "us/op", Target("vs", 0.8, "torch")),
        RowSpec("W1", "nograd", "W1 forward no_grad", "us/op", Target("vs", 0.7, "torch")),
        RowSpec("W1", "gc_off", "W1 forward gc off", "us/op"),
        RowSpec("W1", "gc_ratio", "W1 fwd gc on/off", "ratio", Target("self", 1.5)),
        RowSpec("W1", "dual", "W1 forward dual_level", "us/op", Target("vs", 1.0, "torch")),
        RowSpec("W2", "step", "W2 small MLP step", "ms", Target("vs", 1.1, "torch")),
    ]
    limits = {"float64": 1.05, "float32": 1.05}  # issue 30: a held-out 784-1024-1024-10 step, batch 256
    for dt in cfg.w3_dtypes:
        target = Target("vs", limits[dt], REFERENCE)
        rows.append(RowSpec("W3", f"step_{dt}", f"W3 big MLP {dt}", "ms", target))
    sizes = list(cfg.w4_ops) + ([cfg.w4_big_ops] if cfg.w4_big_ops else [])
    for n in sizes:
        big = n == cfg.w4_big_ops
        for phase in ("forward", "backward"):
            target = Target("succeeds") if big and phase == "backward" else None
            rows.append(RowSpec("W4", f"{n}_{phase}", f"W4 {fmt_count(n)} ops {phase[0]}wd", "s", target))
    if len(cfg.w4_ops) >= 2:
        lo, hi = fmt_count(cfg.w4_ops[0]), fmt_count(cfg.w4_ops[-1])
        rows.append(RowSpec("W4", "per_op_ratio", f"W4 per-op {hi}/{lo}", "ratio", Target("self", 1.5)))
    for retain in (False, True):
        tag = "retain" if retain else "no retain"
        rows += [
            RowSpec("W5", f"{tag}:after_forward", f"W5 {tag}: after fwd", "MiB", Target("vs", 1.05, "torch")),
            RowSpec("W5", f"{tag}:peak_backward", f"W5 {tag}: peak bwd", "MiB", Target("vs", 1.1, "torch")),
            RowSpec("W5", f"{tag}:after_backward", f"W5 {tag}: after bwd", "MiB"),
        ]
    rows.append(RowSpec("W6", "call", "W6 hessian diag", "us/call", Target("vs", 1.5, "torch")))
    n = fmt_count(cfg.w7_inputs)
    rows += [RowSpec("W7", "time", f"W7 stack {n}: fwd+bwd", "ms"),
             RowSpec("W7", "memory", f"W7 stack {n}: graph", "MiB")]
    rows += [RowSpec("W8", "views", f"W8 {fmt_count(cfg.w8_views)} chained views", "s", Target("vs", 3.0, "torch")),
             RowSpec("W8", "inplace", f"W8 {fmt_count(cfg.w8_inplace)} in-place steps", "s",
                     Target("vs", 3.0, "torch"))]
    return rows


def fmt_count(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)


# ----------------------------------------------------------------------------------------------
# Libraries
# ----------------------------------------------------------------------------------------------


@dataclass
class Lib:
    """A column of the table: an autograd engine with the PyTorch API, or the NumPy reference."""

    name: str
    module: Any
    version: str

    @property
    def is_reference(self) -> bool:
        return self.name == REFERENCE


def load_lib(name: str, aliases: dict[str, str]) -> Lib:
    """Import ``name`` (or the module it is aliased to) pinned to one thread."""
    if name == REFERENCE:
        return Lib(name, np, np.__version__)
    module = importlib.import_module(aliases.get(name, name))
    if hasattr(module, "set_num_threads"):
        module.set_num_threads(1)
    version = str(getattr(module, "__version__", "?"))
    if name in aliases:
        version += f" (alias of {aliases[name]})"
    return Lib(name, module, version)


# ----------------------------------------------------------------------------------------------
# Timing helpers
# ----------------------------------------------------------------------------------------------


@contextlib.contextmanager
def gc_disabled(disable: bool = True) -> Iterator[None]:
    was = gc.isenabled()
    if disable:
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def freeze_imports() -> None:
    """Move every object alive now (the imported libraries') out of the collector's reach.

    Otherwise each full collection during minigrad's timed forward would also walk the million
    objects torch creates at import, charging minigrad for torch being in the same process; and
    the ``gc.collect()`` before each timed region would take ~0.1 s instead of ~1 ms.
    """
    gc.collect()
    gc.freeze()


CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
"""cpu (the default): this process's CPU time, which on a shared machine leaves out the time other
processes held the core; on a quiet machine it equals wall time for this single-threaded work."""
_timer = CLOCKS["cpu"]


def set_clock(name: str) -> None:
    global _timer
    _timer = CLOCKS[name]


def clock(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds taken by ``fn()`` and its result; a full collection first so every repeat starts alike."""
    gc.collect()
    t0 = _timer()
    out = fn()
    return _timer() - t0, out


@cache
def chain_ref(shape: tuple[int, ...], n_iter: int) -> dict[str, np.ndarray]:
    return wl.chain_reference(wl.chain_input(shape), n_iter)


# ----------------------------------------------------------------------------------------------
# Workloads: each returns {metric: Cell} for one library
# ----------------------------------------------------------------------------------------------


def chain_samples(lib: Lib, n_iter: int, repeats: int, extra: bool, keep_first: bool = False,
                  min_time: float = 0.0) -> dict[str, list[float]]:
    """Check, then time, W1's chain: forward and backward (and, if ``extra``, no_grad and gc-off forwards).

    The first run is the warm-up and the correctness check at once; it raises CheckFailed on a wrong
    engine. With ``keep_first`` (W4's long chains, where a run takes seconds and the shorter chain
    before it was the warm-up) that checked run is also the first of the ``repeats`` samples.
    Short runs are repeated beyond ``repeats`` until the timed runs add up to ``min_time`` seconds
    (at most MAX_SAMPLES), as timeit's autorange does: one 10k-op chain is too short to time once.
    """
    a = wl.chain_input((1,))
    want = chain_ref((1,), n_iter)
    out: dict[str, list[float]] = {"forward": [], "backward": [], "nograd": [], "gc_on": [], "gc_off": []}
    ref = lib.is_reference
    m = lib.module

    def forward_backward() -> tuple[float, float, dict[str, Any]]:
        if ref:
            tf, (y, saved) = clock(partial(wl.np_chain_forward, a, n_iter))
            tb, grad = clock(partial(wl.np_chain_backward, saved))
            return tf, tb, {"y": y, "x.grad": grad}
        x = wl.leaf(m, a)
        tf, y = clock(partial(wl.chain, x, n_iter))
        tb, _ = clock(partial(wl.chain_backward, y))
        return tf, tb, wl.chain_result(x, y)

    def forward_only(no_grad: bool, gc_off: bool) -> float:
        if ref:
            with gc_disabled(gc_off):
                return clock(partial(wl.np_chain_forward, a, n_iter, save=not no_grad))[0]
        x = wl.leaf(m, a)
        with m.no_grad() if no_grad else contextlib.nullcontext(), gc_disabled(gc_off):
            return clock(partial(wl.chain, x, n_iter))[0]

    tf, tb, got = forward_backward()
    wl.check_all(got, want)
    del got
    if keep_first:
        out["forward"].append(tf)
        out["backward"].append(tb)
    if extra:
        if ref:
            y = wl.np_chain_forward(a, n_iter, save=False)[0]
        else:
            with m.no_grad():
                y = wl.chain(wl.leaf(m, a), n_iter)
            if getattr(y, "requires_grad", False):
                raise wl.CheckFailed("no_grad(): the output still requires grad, a graph was recorded")
        wl.assert_close("no_grad y", y, want["y"])
        del y
    while len(out["forward"]) < repeats or (
        sum(out["forward"]) + sum(out["backward"]) < min_time and len(out["forward"]) < MAX_SAMPLES
    ):
        tf, tb, _ = forward_backward()
        out["forward"].append(tf)
        out["backward"].append(tb)
        if extra:
            out["nograd"].append(forward_only(no_grad=True, gc_off=False))
            # The gc on/off pair back to back, in alternating order: on a busy machine a ratio of
            # forwards taken seconds apart, or always in the same order, drifts by tens of percent.
            for gc_off in (False, True) if len(out["forward"]) % 2 else (True, False):
                out["gc_off" if gc_off else "gc_on"].append(forward_only(no_grad=False, gc_off=gc_off))
    return out


def bench_w1(lib: Lib, cfg: Config) -> dict[str, Cell]:
    """W1: per-op overhead of a 20,000-op chain on a 1-element tensor."""
    metrics = ["forward", "backward", "nograd", "gc_off", "gc_ratio"]
    try:
        s = chain_samples(lib, cfg.w1_iters, cfg.w1_repeats, extra=True)
    except Exception as e:  # any error in an engine is a FAILED row, not a crash
        return failed(metrics, e)
    us_per_op = 1e6 / (wl.OPS_PER_ITER * cfg.w1_iters)
    cells = {k: Cell([t * us_per_op for t in v]) for k, v in s.items() if k != "gc_on"}
    cells["gc_ratio"] = Cell([min(s["gc_on"]) / min(s["gc_off"])])
    try:
        cells["dual"] = Cell([t * us_per_op for t in dual_samples(lib, cfg.w1_iters, cfg.w1_repeats)])
    except Exception as e:
        cells.update(failed(["dual"], e))
    return cells


def dual_samples(lib: Lib, n_iter: int, repeats: int) -> list[float]:
    """W1's chain under forward AD (a dual input, no grad): checked against hand-written dual numbers, then timed."""
    a = wl.chain_input((1,))
    want = wl.np_chain_dual(a, n_iter)
    if lib.is_reference:
        run = partial(wl.np_chain_dual, a, n_iter)
    else:
        run = partial(wl.chain_dual, lib.module, a, n_iter)
    wl.check_all(run(), want)
    return [clock(run)[0] for _ in range(repeats)]


_MLP_REFS: dict[tuple[Any, ...], dict[str, np.ndarray]] = {}


Timer = Callable[[], float]  # times one repeat; returns the row's figure


def mlp_timer(lib: Lib, sizes: tuple[int, ...], x: np.ndarray, target: np.ndarray, act: str, loss: str,
              lr: float, steps: int, dtype: str) -> Timer:
    """Check SGD steps of an MLP against the NumPy reference, then return a timer of one repeat (ms per step)."""
    p0 = wl.mlp_init(list(sizes), dtype)
    key = (sizes, x.shape, act, loss, lr, steps, dtype)  # the data are a function of these too
    if key not in _MLP_REFS:
        _MLP_REFS[key] = wl.mlp_reference(p0, x, target, act, loss, lr, steps)
    want = _MLP_REFS[key]
    if lib.is_reference:
        got = wl.np_mlp_run_checked([p.copy() for p in p0], x, target, act, loss, lr, steps)
        wl.check_all(got, want, dtype)
        make_params: Callable[[], list[Any]] = lambda: [p.copy() for p in p0]
        step: Callable[[list[Any]], Any] = lambda ps: wl.np_train_step(ps, x, target, act, loss, lr)
    else:
        m = lib.module
        X, T = wl.leaf(m, x, requires_grad=False), wl.leaf(m, target, requires_grad=False)
        got = wl.mlp_run_checked(m, [wl.leaf(m, p) for p in p0], X, T, act, loss, lr, steps)
        wl.check_all(got, want, dtype)
        make_params = lambda: [wl.leaf(m, p) for p in p0]
        step = lambda ps: wl.train_step(m, ps, X, T, act, loss, lr)
    return lambda: clock(partial(run_steps, step, make_params(), steps))[0] / steps * 1e3


def run_steps(step: Callable[[list[Any]], Any], params: list[Any], steps: int) -> None:
    for _ in range(steps):
        step(params)


def w2_timers(lib: Lib, cfg: Config) -> dict[str, Timer | Cell]:
    """W2: a 2-32-32-1 tanh MLP where every op is tiny, so engine overhead dominates a training step."""
    x, y = wl.regression_data(cfg.w2_batch, cfg.w2_sizes[0])
    try:
        return {"step": mlp_timer(lib, cfg.w2_sizes, x, y, "tanh", "mse", cfg.w2_lr, cfg.w2_steps, "float64")}
    except Exception as e:
        return dict(failed(["step"], e))


def w3_timers(lib: Lib, cfg: Config) -> dict[str, Timer | Cell]:
    """W3: a 784-1024-1024-10 relu MLP where matmuls dominate: the engine should add ~nothing to BLAS."""
    timers: dict[str, Timer | Cell] = {}
    for dt in cfg.w3_dtypes:
        x, onehot = wl.classification_data(cfg.w3_batch, cfg.w3_sizes[0], cfg.w3_sizes[-1], dt)
        try:
            timers[f"step_{dt}"] = mlp_timer(lib, cfg.w3_sizes, x, onehot, "relu", "xent", cfg.w3_lr,
                                             cfg.w3_steps, dt)
        except Exception as e:
            timers.update(failed([f"step_{dt}"], e))
    return timers


def interleaved(timers: dict[str, dict[str, Timer | Cell]], repeats: int) -> dict[str, dict[str, Cell]]:
    """Samples taken in rounds, one repeat of every library per round (library -> metric -> Cell).

    Every library then runs in the same process state: allocator, caches, whatever ran before. Run
    one after another, the last library profits from the heap the earlier ones grew (W3's NumPy
    reference measured 7-10% faster after torch than before it)."""
    out: dict[str, dict[str, Cell]] = {lib: {m: t for m, t in ts.items() if isinstance(t, Cell)}
                                       for lib, ts in timers.items()}
    for _ in range(repeats):
        for lib, ts in timers.items():
            for metric, timer in ts.items():
                if isinstance(timer, Cell) or out[lib].get(metric, Cell()).status == "FAILED":
                    continue
                try:
                    out[lib].setdefault(metric, Cell()).samples.append(timer())
                except Exception as e:
                    out[lib].update(failed([metric], e))
    return out


def bench_w2(lib: Lib, cfg: Config) -> dict[str, Cell]:
    """W2 for one library alone (the full run times the libraries in turn)."""
    return interleaved({lib.name: w2_timers(lib, cfg)}, cfg.w2_repeats)[lib.name]


def bench_w3(lib: Lib, cfg: Config) -> dict[str, Cell]:
    """W3 for one library alone (the full run times the libraries in turn)."""
    return interleaved({lib.name: w3_timers(lib, cfg)}, cfg.w3_repeats)[lib.name]


def bench_w4(lib: Lib, cfg: Config, aliases: dict[str, str]) -> dict[str, Cell]:
    """W4: the chain at growing lengths: per-op cost must stay flat and 1M ops must not break."""
    cells: dict[str, Cell] = {}
    per_op: dict[int, float] = {}
    for n in cfg.w4_ops:
        keys = [f"{n}_forward", f"{n}_backward"]
        try:
            s = chain_samples(lib, n // wl.OPS_PER_ITER, cfg.w4_repeats, extra=False, keep_first=True,
                              min_time=cfg.w4_min_time)
        except Exception as e:
            cells.update(failed(keys, e))
            continue
        cells[keys[0]], cells[keys[1]] = Cell(s["forward"]), Cell(s["backward"])
        per_op[n] = min(f + b for f, b in zip(s["forward"], s["backward"])) / n
    if len(cfg.w4_ops) >= 2:
        lo, hi = cfg.w4_ops[0], cfg.w4_ops[-1]
        if lo in per_op and hi in per_op:
            cells["per_op_ratio"] = Cell([per_op[hi] / per_op[lo]])
        else:
            cells.update(failed(["per_op_ratio"], "a chain length FAILED"))
    if cfg.w4_big_ops:
        n = cfg.w4_big_ops
        keys = [f"{n}_forward", f"{n}_backward"]
        want = chain_ref((1,), n // wl.OPS_PER_ITER)
        spec = {"task": "chain", "lib": lib.name, "aliases": aliases, "n_iter": n // wl.OPS_PER_ITER,
                "expect": {k: v.tolist() for k, v in want.items()}}
        res = run_worker(spec, cfg.subprocess_timeout, clock_name=current_clock())
        if res.get("error"):
            cells.update(failed(keys, res["error"]))
        else:
            cells[keys[0]], cells[keys[1]] = Cell([res["forward_s"]]), Cell([res["backward_s"]])
    return cells


def bench_w5(lib: Lib, cfg: Config, aliases: dict[str, str]) -> dict[str, Cell]:
    """W5: resident memory of the chain on a 1000x1000 tensor, each case in a fresh process."""
    cells: dict[str, Cell] = {}
    specs = [{"task": "memory", "lib": lib.name, "aliases": aliases, "shape": list(cfg.w5_shape),
              "n_iter": cfg.w5_iters, "retain": retain} for retain in (False, True)]
    # Both cases at once: memory is per process and nothing here is timed, so this only saves time.
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        outs = list(pool.map(lambda spec: run_worker(spec, cfg.subprocess_timeout, W5_MALLOC_ENV), specs))
    for spec, res in zip(specs, outs):
        tag = "retain" if spec["retain"] else "no retain"
        keys = [f"{tag}:{k}" for k in ("after_forward", "peak_backward", "after_backward")]
        if res.get("error"):
            cells.update(failed(keys, res["error"]))
            continue
        for k in keys:
            cells[k] = Cell([res[k.split(":")[1] + "_mib"]])
        if not res["hwm_reset"]:
            cells[keys[1]].note = "VmHWM could not be reset: peak is the process's, relative to the baseline"
    return cells


def bench_w6(lib: Lib, cfg: Config) -> dict[str, Cell]:
    """W6: double backward (create_graph) on 1,000 elements: the cost of differentiating a backward."""
    a = wl.w6_input(cfg.w6_n)
    want = wl.hessian_reference(a)
    calls = cfg.w6_calls
    try:
        if lib.is_reference:
            g, h = wl.np_hessian_diag(a)
            wl.check_all({"grad": g, "hessian_diag": h}, want)
            fn: Callable[[], Any] = lambda: [wl.np_hessian_diag(a) for _ in range(calls)]
        else:
            m = lib.module
            x = wl.leaf(m, a)
            g, h = wl.hessian_diag(m, x)
            wl.check_all({"grad": g, "hessian_diag": h}, want)
            if x.grad is not None:
                raise wl.CheckFailed("autograd.grad() accumulated into x.grad; it must only return gradients")
            fn = lambda: [wl.hessian_diag(m, x) for _ in range(calls)]
        samples = [clock(fn)[0] / calls * 1e6 for _ in range(cfg.w6_repeats)]
    except Exception as e:
        return failed(["call"], e)
    return {"call": Cell(samples)}


def bench_w7(lib: Lib, cfg: Config, aliases: dict[str, str]) -> dict[str, Cell]:
    """W7: `stack` of 10,000 one-element inputs that require grad, then backward: time (forward and
    backward) and the memory the graph holds after forward, each sample in a fresh process."""
    spec = {"task": "stack", "lib": lib.name, "aliases": aliases, "n": cfg.w7_inputs}
    times, mems = [], []
    for _ in range(cfg.w7_repeats):
        res = run_worker(spec, cfg.subprocess_timeout, clock_name=current_clock())
        if res.get("error"):
            return failed(["time", "memory"], res["error"])
        times.append(res["time_s"] * 1e3)
        mems.append(res["graph_mib"])
    return {"time": Cell(times), "memory": Cell(mems)}


def _view_chain(m: Any, n: int) -> Any:
    """`y = y.view(1)[0]` n times from a leaf, then backward: each view's cost must not grow with the chain."""
    x = wl.leaf(m, np.ones(1))
    y = x[0]
    for _ in range(n):
        y = y.view(1)[0]
    y.backward()
    return x.grad


def _inplace_chain(m: Any, n: int) -> Any:
    """n in-place steps, alternately `mul_` on a tensor and `add_` on a view of it, then backward."""
    a = wl.leaf(m, np.ones(3))
    b = a.clone()
    v = b[1:]
    for i in range(n):
        if i % 2:
            v.add_(1.0)
        else:
            b.mul_(1.0)
    b.sum().backward()
    return a.grad


def bench_w8(lib: Lib, cfg: Config) -> dict[str, Cell]:
    """W8: long chains of views and of in-place ops (issue 34: each step once cost O(chain length))."""
    out: dict[str, Cell] = {}
    if lib.is_reference:  # (nothing to compare: NumPy records no graph)
        return out
    for key, fn, n in (("views", _view_chain, cfg.w8_views), ("inplace", _inplace_chain, cfg.w8_inplace)):
        try:
            samples = []
            for _ in range(cfg.w8_repeats):
                elapsed, grad = clock(lambda fn=fn, n=n: fn(lib.module, n))
                wl.assert_close(f"{key}: the leaf's gradient", grad, np.ones(np.shape(wl.to_numpy(grad))))
                samples.append(elapsed)
            out[key] = Cell(samples)
        except Exception as e:
            out.update(failed([key], e))
    return out


# ----------------------------------------------------------------------------------------------
# Subprocess workers (W4's 1M graph, W5's memory, W7's stack)
# ----------------------------------------------------------------------------------------------


def current_clock() -> str:
    return next(name for name, fn in CLOCKS.items() if fn is _timer)


def run_worker(spec: dict[str, Any], timeout: float, env: dict[str, str] | None = None,
               clock_name: str = "cpu") -> dict[str, Any]:
    """Run one case in a fresh interpreter; a crash (say a segfault on a deep graph) becomes an error."""
    full_env = dict(os.environ)
    for k, v in (env or {}).items():
        full_env.setdefault(k, v)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--clock", clock_name, "--worker", json.dumps(spec)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
    except subprocess.TimeoutExpired:
        return {"error": f"subprocess timed out after {timeout:.0f} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_MARK):
            return json.loads(line[len(RESULT_MARK):])
    tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
    return {"error": f"subprocess exited with code {proc.returncode}: {tail}"}


def proc_status_mib() -> dict[str, float]:
    """VmRSS and VmHWM of this process, in MiB."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(rest.split()[0]) / 1024
    return out


def reset_hwm() -> bool:
    """Reset VmHWM to the current RSS (Linux: "5" to clear_refs), so it then records backward's peak."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def worker_chain(lib: Lib, spec: dict[str, Any]) -> dict[str, Any]:
    """W4's 1M-op case: one forward and one backward, timed, then checked."""
    n_iter = spec["n_iter"]
    a = wl.chain_input((1,))
    if lib.is_reference:
        tf, (y, saved) = clock(lambda: wl.np_chain_forward(a, n_iter))
        tb, grad = clock(lambda: wl.np_chain_backward(saved))
        got: dict[str, Any] = {"y": y, "x.grad": grad}
    else:
        x = wl.leaf(lib.module, a)
        tf, y = clock(lambda: wl.chain(x, n_iter))
        tb, _ = clock(lambda: wl.chain_backward(y))
        got = wl.chain_result(x, y)
    want = {k: np.array(v) for k, v in spec["expect"].items()}
    wl.check_all(got, want)
    return {"forward_s": tf, "backward_s": tb}


def worker_memory(lib: Lib, spec: dict[str, Any]) -> dict[str, Any]:
    """W5: RSS above a pre-forward baseline after forward, at backward's peak, after backward.

    Also checks that backward without retain_graph frees the graph (only the output and ``.grad``
    remain while the output is still referenced, only ``.grad`` once it is dropped) and that a
    second backward after retain_graph=True works and accumulates.
    """
    shape, n_iter, retain = tuple(spec["shape"]), spec["n_iter"], spec["retain"]
    a = wl.chain_input(shape)
    one = a.nbytes / 2**20  # MiB of one tensor of this shape
    slack = 0.5 * one  # anything kept that is as big as a tensor fails the checks
    m = lib.module
    if not lib.is_reference:
        # Warm up on a tiny tensor first: the engine's one-off set-up and the code pages it faults in
        # (several MiB of libtorch on the first backward) are not memory the graph holds.
        small = wl.leaf(m, wl.chain_input((4, 4)))
        wl.chain(small, 2).sum().backward(retain_graph=True)
        del small
    x = a.copy() if lib.is_reference else wl.leaf(m, a)
    gc.collect()
    base = proc_status_mib()["VmRSS"]
    if lib.is_reference:
        y, saved = wl.np_chain_forward(x, n_iter)
    else:
        y = wl.chain(x, n_iter)
    after_forward = proc_status_mib()["VmRSS"] - base
    hwm_reset = reset_hwm()
    if lib.is_reference:
        grad = wl.np_chain_backward(saved, free=not retain)
    else:
        loss = y.sum()
        loss.backward(retain_graph=retain)
        grad = x.grad
    st = proc_status_mib()
    res: dict[str, Any] = {"after_forward_mib": after_forward, "peak_backward_mib": st["VmHWM"] - base,
                           "after_backward_mib": st["VmRSS"] - base, "hwm_reset": hwm_reset,
                           "tensor_mib": one}
    if retain:
        first = wl.to_numpy(grad)
        if lib.is_reference:
            grad = grad + wl.np_chain_backward(saved)
        else:
            loss.backward()  # the second backward must work and accumulate into x.grad
            grad = x.grad
        wl.assert_close("x.grad after a second backward (retain_graph=True)", grad, 2 * first)
    else:
        if res["after_backward_mib"] > 2 * one + slack:
            raise wl.CheckFailed(f"after backward without retain_graph {res['after_backward_mib']:.1f} MiB "
                                 f"remain, more than the output and .grad ({2 * one:.1f} MiB)")
        del y
        if not lib.is_reference:
            del loss
        gc.collect()
        res["after_release_mib"] = proc_status_mib()["VmRSS"] - base
        if res["after_release_mib"] > one + slack:
            raise wl.CheckFailed(f"with the output dropped, {res['after_release_mib']:.1f} MiB remain, "
                                 f"more than .grad ({one:.1f} MiB)")
        first = wl.to_numpy(grad)
    # The chain is elementwise, so a strided sample of the input checks the whole gradient cheaply.
    idx = slice(None, None, max(1, a.size // 10_000))
    want = wl.chain_reference(a.reshape(-1)[idx], n_iter)
    wl.assert_close("x.grad (sampled)", first.reshape(-1)[idx], want["x.grad"])
    return res


def worker_stack(lib: Lib, spec: dict[str, Any]) -> dict[str, Any]:
    """W7: stack n inputs of shape (1,) and backward through the sum; checks every input's gradient."""
    n = spec["n"]
    values = np.arange(n, dtype=np.float64).reshape(n, 1)
    if lib.is_reference:
        xs = [values[i] for i in range(n)]
    else:
        xs = [wl.leaf(lib.module, values[i]) for i in range(n)]
    gc.collect()
    base = proc_status_mib()["VmRSS"]
    t0 = _timer()
    if lib.is_reference:
        y = np.stack(xs).sum()
        graph_mib = proc_status_mib()["VmRSS"] - base
        grads = list(np.ones((n, 1)))  # backward of stack: the gradient split back, one row per input
    else:
        y = lib.module.stack(xs).sum()
        graph_mib = proc_status_mib()["VmRSS"] - base
        y.backward()
        grads = [wl.to_numpy(x.grad) for x in xs]
    elapsed = _timer() - t0
    wl.assert_close("sum of the inputs", np.asarray(y) if lib.is_reference else y, np.asarray(values.sum()))
    wl.assert_close("every input's gradient", np.stack(grads), np.ones((n, 1)))
    return {"time_s": elapsed, "graph_mib": graph_mib}


def worker_main(spec_json: str) -> int:
    """Entry point of a subprocess: print one result line, with "error" set on any failure."""
    spec = json.loads(spec_json)
    try:
        lib = load_lib(spec["lib"], spec.get("aliases", {}))
        freeze_imports()
        res = {"chain": worker_chain, "memory": worker_memory, "stack": worker_stack}[spec["task"]](lib, spec)
    except Exception as e:
        traceback.print_exc()
        res = {"error": f"{type(e).__name__}: {e}"}
    print(RESULT_MARK + json.dumps(res), flush=True)
    return 0


# ----------------------------------------------------------------------------------------------
# Machine description
# ----------------------------------------------------------------------------------------------


def blas_info() -> str:
    """Which BLAS (and which OpenBLAS kernel) NumPy runs, as threadpoolctl reports it at run time."""
    try:
        import threadpoolctl

        infos = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
        if infos:
            return "; ".join(f"{i.get('internal_api')} {i.get('version')}, "
                             f"kernel {i.get('architecture', '?')}, {i.get('num_threads')} thread(s)"
                             for i in infos)
    except Exception:  # optional, fall back to the build configuration
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        build = blas.get("openblas configuration", "?")
        return f"{blas.get('name')} {blas.get('version')} (build config, kernel unknown: {build})"
    except Exception:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            np.show_config()
        return " ".join(buf.getvalue().split())[:200]


def machine_info(libs: list[Lib]) -> dict[str, Any]:
    cpu = "?"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    info: dict[str, Any] = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas_info(),
        "libs": {lib.name: lib.version for lib in libs},
        "env": {k: os.environ.get(k) for k in (*THREAD_VARS, "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")},
        "w5_malloc_env": {k: os.environ.get(k, v) for k, v in W5_MALLOC_ENV.items()},
        "clock": current_clock(),
    }
    for lib in libs:
        if hasattr(lib.module, "get_num_threads"):
            info[f"{lib.name}_threads"] = lib.module.get_num_threads()
    try:
        from importlib.metadata import version

        info["torch_installed"] = version("torch")
    except Exception:
        info["torch_installed"] = None
    return info


# ----------------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------------


def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    a = abs(v)
    return f"{v:.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}" if a >= 1 else f"{v:.3g}"


def fmt_cell(c: Cell | None) -> str:
    if c is None:
        return "-"
    if c.status == "FAILED":
        return "FAILED"
    if len(c.samples) == 1:
        return fmt(c.best)
    return f"{fmt(c.best)} ({fmt(c.median)})"


def ratio(cells: dict[str, Cell], a: str, b: str) -> float | None:
    ca, cb = cells.get(a), cells.get(b)
    if ca is None or cb is None or ca.best is None or cb.best is None or cb.best == 0:
        return None
    return ca.best / cb.best


def render_table(rows: list[RowSpec], results: dict[str, dict[str, Cell]], libs: list[str]) -> str:
    """The table: min (median) per library, minigrad's ratios, and the issue's target with a verdict."""
    header = ["row", "unit", *libs, "mg/torch", "mg/numpy", "target", "ok"]
    lines = []
    for spec in rows:
        cells = results.get(key(spec), {})
        if not cells:
            continue
        r_t, r_n = ratio(cells, "minigrad", "torch"), ratio(cells, "minigrad", REFERENCE)
        verdict = "" if spec.target is None else {True: "✓", False: "✗", None: "?"}[spec.target.met(cells)]
        lines.append([spec.label, spec.unit, *(fmt_cell(cells.get(lib)) for lib in libs),
                      "-" if r_t is None else f"{r_t:.2f}x", "-" if r_n is None else f"{r_n:.2f}x",
                      spec.target.label() if spec.target else "", verdict])
    widths = [max(len(str(r[i])) for r in [header, *lines]) for i in range(len(header))]
    rule = "  ".join("-" * w for w in widths)
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths)), rule]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in lines]
    return "\n".join(out)


def key(spec: RowSpec) -> str:
    return f"{spec.workload}:{spec.metric}"


def render_header(info: dict[str, Any], cfg: Config, quick: bool) -> str:
    env = info["env"]
    clock_text = {"cpu": "process CPU time (time.process_time)", "wall": "wall time (time.perf_counter)"}
    lines = [
        f"minigrad benchmark ({'quick' if quick else 'full'} run, {time.strftime('%Y-%m-%d %H:%M:%S')})",
        f"machine : {info['cpu']}, {info['cores']} cores ({info['cores_usable']} usable), {info['platform']}",
        f"python  : {info['python']}   numpy {info['numpy']}   "
        f"torch {info['torch_installed'] or 'not installed'}",
        f"BLAS    : {info['blas']}",
        f"threads : 1 ({', '.join(f'{k}={env[k]}' for k in THREAD_VARS[:3])}"
        + "".join(f", {k.removesuffix('_threads')}.get_num_threads()={v}"
                  for k, v in info.items() if k.endswith("_threads")) + ")",
        f"OpenBLAS: OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE'] or 'unset'}, "
        f"OPENBLAS_L2_SIZE={env['OPENBLAS_L2_SIZE'] or 'unset'} (left as found)",
        f"libs    : {', '.join(f'{k} {v}' for k, v in info['libs'].items())}",
        "figures : min (median) over repeats after a warm-up run that is also the correctness check; "
        "ratios and verdicts use the min;",
        f"          timed with {clock_text[info['clock']]};",
        "          single figures are one run (W4 1M ops, W5 in a fresh process each) or derived ratios.",
    ]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------


def run_workload(wid: str, lib: Lib, cfg: Config, aliases: dict[str, str]) -> dict[str, Cell]:
    """A workload timed one library at a time (W2 and W3 take turns instead: INTERLEAVED)."""
    fns: dict[str, Callable[[], dict[str, Cell]]] = {
        "W1": lambda: bench_w1(lib, cfg),
        "W4": lambda: bench_w4(lib, cfg, aliases),
        "W5": lambda: bench_w5(lib, cfg, aliases),
        "W6": lambda: bench_w6(lib, cfg),
        "W7": lambda: bench_w7(lib, cfg, aliases),
        "W8": lambda: bench_w8(lib, cfg),
    }
    cells = fns[wid]()
    gc.collect()
    return cells


WORKLOADS = ("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8")
# Workloads timed with the libraries taking turns (see `interleaved`): timer makers and repeat counts
INTERLEAVED: dict[str, tuple[Callable[[Lib, Config], dict[str, Timer | Cell]], Callable[[Config], int]]] = {
    "W2": (w2_timers, lambda cfg: cfg.w2_repeats),
    "W3": (w3_timers, lambda cfg: cfg.w3_repeats),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--libs", default=None,
                   help=f"comma-separated columns (default: those of {','.join(DEFAULT_LIBS)} that import)")
    p.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads, e.g. W1,W3")
    p.add_argument("--quick", action="store_true", help="fewer repeats and no 1M-op graph (< 1 minute)")
    p.add_argument("--alias", action="append", default=[], metavar="NAME=MODULE",
                   help="load MODULE for column NAME, e.g. minigrad=torch to test the harness")
    p.add_argument("--json", default=str(BENCH_DIR / "results" / "latest.json"),
                   help="where to write the results (default: bench/results/latest.json)")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                   help="cpu: process CPU time, robust on a busy machine (default); wall: time.perf_counter")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    set_clock(args.clock)
    if args.worker:
        return worker_main(args.worker)
    cfg = QUICK if args.quick else FULL
    aliases = dict(a.split("=", 1) for a in args.alias)
    only = [w.strip().upper() for w in args.only.split(",") if w.strip()]
    unknown = [w for w in only if w not in WORKLOADS]
    if unknown:
        sys.exit(f"unknown workload(s) {unknown}; choose from {','.join(WORKLOADS)}")
    names = [n.strip() for n in (args.libs or ",".join(DEFAULT_LIBS)).split(",") if n.strip()]
    libs: list[Lib] = []
    skipped: dict[str, str] = {}
    for name in names:
        try:
            libs.append(load_lib(name, aliases))
        except Exception as e:
            skipped[name] = f"{type(e).__name__}: {e}"
            print(f"[skip] {name}: does not import ({skipped[name]})", file=sys.stderr)
    info = machine_info(libs)
    freeze_imports()
    t_start = time.perf_counter()
    results: dict[str, dict[str, Cell]] = {}
    try:
        for wid in only:
            if wid in INTERLEAVED:  # every library checked first, then timed in rounds
                make_timers, repeats = INTERLEAVED[wid]
                t0 = time.perf_counter()
                timers = {lib.name: make_timers(lib, cfg) for lib in libs}
                by_lib = interleaved(timers, repeats(cfg))
                gc.collect()
                print(f"[{wid}] {'all':<9} {time.perf_counter() - t0:6.1f} s  (libraries in turn)", file=sys.stderr)
            else:
                by_lib = {}
                for lib in libs:
                    t0 = time.perf_counter()
                    by_lib[lib.name] = run_workload(wid, lib, cfg, aliases)
                    print(f"[{wid}] {lib.name:<9} {time.perf_counter() - t0:6.1f} s", file=sys.stderr)
            for lib_name, cells in by_lib.items():
                for metric, cell in cells.items():
                    results.setdefault(f"{wid}:{metric}", {})[lib_name] = cell
                bad = {c.note for c in cells.values() if c.status == "FAILED"}
                if bad:
                    print(f"[{wid}] {lib_name:<9} FAILED: " + " | ".join(sorted(bad)), file=sys.stderr)
    finally:
        gc.unfreeze()  # main() may be called in a longer-lived process (the tests)
    elapsed = time.perf_counter() - t_start
    rows = [r for r in row_specs(cfg) if r.workload in only]
    col_names = [lib.name for lib in libs]
    print()
    print(render_header(info, cfg, args.quick))
    if skipped:
        print("skipped : " + "; ".join(f"{k} ({v})" for k, v in skipped.items()))
    print()
    print(render_table(rows, results, col_names))
    notes = sorted({f"{lib} {r.label}: {c.note}" for r in rows for lib, c in results.get(key(r), {}).items()
                    if c.note})
    if notes:
        print("\nnotes:\n  " + "\n  ".join(notes))
    print(f"\ntotal {elapsed:.0f} s")
    write_json(Path(args.json), info, cfg, args, rows, results, col_names, skipped, elapsed)
    print(f"results written to {args.json}")
    return 0


def write_json(path: Path, info: dict[str, Any], cfg: Config, args: argparse.Namespace, rows: list[RowSpec],
               results: dict[str, dict[str, Cell]], libs: list[str], skipped: dict[str, str],
               elapsed: float) -> None:
    out_rows = []
    for r in rows:
        cells = results.get(key(r), {})
        if not cells:
            continue
        out_rows.append({
            "workload": r.workload, "metric": r.metric, "label": r.label, "unit": r.unit,
            "cells": {lib: {"status": c.status, "min": c.best, "median": c.median, "samples": c.samples,
                            "note": c.note} for lib, c in cells.items()},
            "ratios": {"minigrad/torch": ratio(cells, "minigrad", "torch"),
                       "minigrad/numpy": ratio(cells, "minigrad", REFERENCE)},
            "target": None if r.target is None else {**asdict(r.target), "label": r.target.label(),
                                                     "met": r.target.met(cells)},
        })
    doc = {"machine": info, "config": asdict(cfg), "quick": args.quick, "libs": libs, "skipped": skipped,
           "aliases": dict(a.split("=", 1) for a in args.alias), "elapsed_s": elapsed,
           "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "rows": out_rows}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    for _p in (ROOT / "src", ROOT):  # prefer the working tree's minigrad over an installed copy
        if (_p / "minigrad").is_dir() and str(_p) not in sys.path:
            sys.path.insert(1, str(_p))
    sys.exit(main())
