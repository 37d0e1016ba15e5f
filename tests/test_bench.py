"""Fast checks of the benchmark harness (bench/run.py, bench/workloads.py) at tiny sizes.

The harness must never time a wrong engine, so what is tested here is the correctness side: the
hand-written NumPy references agree with finite differences, every workload body passes its own
checks on torch and on the references, and a deliberately wrong gradient is rejected.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import sys
import types
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _load(name: str) -> Any:
    """Import bench/<name>.py by path (pytest runs in importlib mode: no sys.path changes)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    if spec.name not in sys.modules:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules[spec.name]


run = _load("run")
wl = run.wl

TINY = replace(
    run.FULL, w1_iters=25, w1_repeats=1, w2_steps=3, w2_repeats=1, w3_sizes=(12, 16, 16, 4), w3_batch=8,
    w3_steps=2, w3_repeats=1, w4_ops=(400, 800), w4_big_ops=None, w4_repeats=1, w4_min_time=0.0, w6_n=10,
    w6_calls=2, w6_repeats=1, w7_inputs=200, w7_repeats=1, w8_views=300, w8_inplace=300, w8_repeats=1,
)
BENCHES = {"W1": run.bench_w1, "W2": run.bench_w2, "W3": run.bench_w3, "W6": run.bench_w6,
           "W4": lambda lib, cfg: run.bench_w4(lib, cfg, {}), "W7": lambda lib, cfg: run.bench_w7(lib, cfg, {}),
           "W8": run.bench_w8}


@pytest.fixture(autouse=True)
def _frozen_gc():
    """As bench/run.py does after its imports: the gc.collect() before each timed region then
    skips the test session's objects (with torch loaded, ~0.1 s a call)."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


def _numeric_grad(f, a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of a scalar function: an independent check of the hand-written backwards."""
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = (f(hi) - f(lo)) / (2 * eps)
    return g


# ----------------------------------------------------------------------------------------------
# The NumPy references themselves
# ----------------------------------------------------------------------------------------------


def test_chain_reference_matches_finite_differences() -> None:
    a = np.array([0.3, 0.7, -0.5])
    want = _numeric_grad(lambda v: wl.np_chain_forward(v, 7, save=False)[0].sum(), a)
    np.testing.assert_allclose(wl.chain_reference(a, 7)["x.grad"], want, rtol=1e-6)


@pytest.mark.parametrize(("act", "loss"), [("tanh", "mse"), ("relu", "xent")])
def test_mlp_reference_matches_finite_differences(act: str, loss: str) -> None:
    params = wl.mlp_init([3, 5, 4, 3])
    x = np.random.default_rng(0).standard_normal((6, 3))
    target = wl.regression_data(6, 3)[1] @ np.ones((1, 3)) if loss == "mse" else np.eye(3)[[0, 1, 2, 0, 1, 2]]
    _, grads = wl.np_mlp_loss_and_grads(params, x, target, act, loss)
    for k, p in enumerate(params):
        def f(v: np.ndarray, k: int = k) -> float:
            ps = list(params)
            ps[k] = v
            return wl.np_mlp_loss_and_grads(ps, x, target, act, loss)[0]

        np.testing.assert_allclose(grads[k], _numeric_grad(f, p), rtol=1e-5, atol=1e-8, err_msg=f"grad[{k}]")


def test_hessian_reference_matches_finite_differences() -> None:
    a = wl.w6_input(5)
    g, h = wl.np_hessian_diag(a)
    np.testing.assert_allclose(g, _numeric_grad(lambda v: np.tanh(v).sum(), a), rtol=1e-6)
    np.testing.assert_allclose(h, _numeric_grad(lambda v: wl.np_hessian_diag(v)[0].sum(), a), rtol=1e-5)


# ----------------------------------------------------------------------------------------------
# Every workload's checks pass for the NumPy reference and for torch
# ----------------------------------------------------------------------------------------------


def _assert_all_ok(cells: dict[str, Any]) -> None:
    bad = {k: c.note for k, c in cells.items() if c.status != "ok"}
    assert not bad, bad
    assert all(c.samples and all(np.isfinite(c.samples)) for c in cells.values())


@pytest.mark.parametrize("wid", sorted(BENCHES))
def test_reference_rows_pass_their_checks(wid: str) -> None:
    _assert_all_ok(BENCHES[wid](run.load_lib("numpy", {}), TINY))


@pytest.mark.parametrize("wid", sorted(BENCHES))
def test_torch_rows_pass_their_checks(torch, wid: str) -> None:
    _assert_all_ok(BENCHES[wid](run.load_lib("torch", {}), TINY))


W5_TINY = replace(TINY, w5_shape=(512, 512), w5_iters=5)  # 2 MiB tensors: well above RSS noise


def test_memory_rows_pass_their_checks_for_the_reference() -> None:
    cells = run.bench_w5(run.load_lib("numpy", {}), W5_TINY, {})
    _assert_all_ok(cells)
    assert cells["retain:after_backward"].best > cells["no retain:after_backward"].best  # graph kept


def test_memory_worker_passes_its_checks_for_torch(torch) -> None:
    """Only the case without retain_graph, whose checks are W5's own: one torch import, not two."""
    spec = {"task": "memory", "lib": "torch", "aliases": {}, "shape": list(W5_TINY.w5_shape),
            "n_iter": W5_TINY.w5_iters, "retain": False}
    res = run.run_worker(spec, 120, run.W5_MALLOC_ENV)
    assert "error" not in res, res["error"]
    assert res["after_forward_mib"] >= W5_TINY.w5_iters * res["tensor_mib"]  # the saved tanh outputs
    assert res["after_backward_mib"] <= 2.5 * res["tensor_mib"]


# ----------------------------------------------------------------------------------------------
# Wrong results are rejected
# ----------------------------------------------------------------------------------------------


def test_checker_rejects_a_wrong_gradient() -> None:
    want = wl.chain_reference(wl.chain_input((4, 3)), 10)
    wrong = want["x.grad"].copy()
    wrong[2, 1] *= 1 + 1e-5  # one entry, ten times the tolerance
    with pytest.raises(wl.CheckFailed, match=r"x.grad: 1/12 entries"):
        wl.check_all({"y": want["y"], "x.grad": wrong}, want)
    with pytest.raises(wl.CheckFailed, match="missing"):
        wl.check_all({"y": want["y"], "x.grad": None}, want)
    with pytest.raises(wl.CheckFailed, match="shape"):
        wl.check_all({"y": want["y"], "x.grad": wrong[0]}, want)
    with pytest.raises(wl.CheckFailed, match="non-finite"):
        wl.assert_close("g", np.full(3, np.nan), np.ones(3))
    with pytest.raises(wl.CheckFailed, match="norm-wise"):
        wl.assert_close("g", np.ones(3, np.float32) * 1.001, np.ones(3), dtype="float32")
    # Rounding-level differences pass.
    wl.check_all({"y": want["y"], "x.grad": want["x.grad"] * (1 + 1e-9)}, want)
    wl.assert_close("g", np.ones(3, np.float32) * (1 + 1e-6), np.ones(3), dtype="float32")


def test_runner_refuses_to_time_a_wrong_engine(torch) -> None:
    """An engine whose tanh backward is 0.1% off gets FAILED cells and no figures, not timings."""

    class BadTanh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.tanh(x.as_subclass(torch.Tensor))
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * (1 - y * y) * 1.001

    class BadTensor(torch.Tensor):
        def tanh(self):
            return BadTanh.apply(self)

    bad = types.SimpleNamespace(from_numpy=lambda a: torch.from_numpy(a).as_subclass(BadTensor),
                                no_grad=torch.no_grad, autograd=torch.autograd)
    lib = run.Lib("minigrad", bad, "broken")
    for bench in (run.bench_w1, run.bench_w2):
        cells = bench(lib, TINY)
        assert cells and all(c.status == "FAILED" and not c.samples for c in cells.values()), cells
        assert any("CheckFailed" in c.note for c in cells.values())


# ----------------------------------------------------------------------------------------------
# Ratios, verdicts and the command line
# ----------------------------------------------------------------------------------------------


def test_targets_and_table() -> None:
    cells = {"minigrad": run.Cell([2.0, 3.0]), "torch": run.Cell([2.5]), "numpy": run.Cell(status="FAILED")}
    assert run.Target("vs", 1.0, "torch").met(cells) is True
    assert run.Target("vs", 0.7, "torch").met(cells) is False
    assert run.Target("vs", 1.1, "numpy").met(cells) is None  # no baseline figure: cannot judge
    assert run.Target("self", 1.5).met({"minigrad": run.Cell(status="FAILED")}) is False
    assert run.Target("succeeds").met({"torch": run.Cell([1.0])}) is None
    spec = run.RowSpec("W9", "m", "W9 thing", "ms", run.Target("vs", 1.0, "torch"))
    table = run.render_table([spec], {"W9:m": cells}, ["minigrad", "torch", "numpy"])
    assert "2.00 (2.50)" in table and "0.80x" in table and "FAILED" in table and "✓" in table


def test_command_line_with_an_alias_writes_json(
    torch, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run, "QUICK", TINY)
    out = tmp_path / "r.json"
    assert run.main(["--quick", "--libs", "minigrad,torch,numpy", "--alias", "minigrad=torch", "--only", "W6",
                     "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    (row,) = doc["rows"]
    assert row["metric"] == "call" and set(row["cells"]) == {"minigrad", "torch", "numpy"}
    assert row["ratios"]["minigrad/torch"] > 0 and row["target"]["met"] in (True, False)
    assert doc["machine"]["blas"] and doc["aliases"] == {"minigrad": "torch"}
    assert "W6 hessian diag" in capsys.readouterr().out


def test_interleaved_takes_turns_and_keeps_failures() -> None:
    calls: list[str] = []

    def timer(name: str, fail_at: int | None = None):
        def tick() -> float:
            calls.append(name)
            if fail_at is not None and calls.count(name) == fail_at:
                raise RuntimeError(f"{name} broke")
            return float(len(calls))
        return tick

    timers = {
        "a": {"m": timer("a.m"), "n": timer("a.n", fail_at=2)},
        "b": {"m": timer("b.m"), "n": run.Cell(status="FAILED", note="wrong gradient")},
    }
    out = run.interleaved(timers, repeats=3)
    assert calls == ["a.m", "a.n", "b.m", "a.m", "a.n", "b.m", "a.m", "b.m"]  # a.n stops after it raised
    assert out["a"]["m"].samples == [1.0, 4.0, 7.0] and out["b"]["m"].samples == [3.0, 6.0, 8.0]
    assert out["a"]["n"].status == "FAILED" and "a.n broke" in out["a"]["n"].note
    assert out["b"]["n"].status == "FAILED" and out["b"]["n"].note == "wrong gradient"


def test_minigrad_stack_row_passes_its_checks() -> None:
    """W7 on minigrad itself: stack of many inputs, each gradient checked in the worker."""
    _assert_all_ok(run.bench_w7(run.load_lib("minigrad", {}), TINY, {}))


def test_w8_long_chains_of_views_and_inplace_ops():
    """W8 on minigrad: the chains run and every leaf's gradient is checked (issue 34's linear-cost rows)."""
    cells = run.bench_w8(run.load_lib("minigrad", {}), TINY)
    assert sorted(cells) == ["inplace", "views"]
    _assert_all_ok(cells)
