"""bench/models.py (W8, a LeNet-sized CNN step; W9, a step of the lecture's GPT) times only engines that agree:
its check (minigrad's first loss and every gradient against torch's, from the same weights and data) passes,
and rejects a wrong gradient."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import minigrad

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _models():
    spec = importlib.util.spec_from_file_location("bench_models", BENCH / "models.py")
    if spec.name not in sys.modules:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules[spec.name]


@pytest.mark.parametrize("wid", ["W8", "W9"])
def test_minigrad_matches_torch_on_the_timed_step(torch, wid):
    _models().check({"minigrad": minigrad, "torch": torch}, wid)


def test_a_wrong_gradient_is_rejected(torch, monkeypatch):
    models = _models()
    step = models.WORKLOADS["W8"][2]

    def wrong(lib, model, opt, x, y):
        loss = step(lib, model, opt, x, y)
        if lib is minigrad:
            with lib.no_grad():
                model[0].weight.grad.mul_(1.01)
        return loss

    monkeypatch.setitem(models.WORKLOADS, "W8", models.WORKLOADS["W8"][:2] + (wrong,) + models.WORKLOADS["W8"][3:])
    with pytest.raises(AssertionError, match="differs from torch"):
        models.check({"minigrad": minigrad, "torch": torch}, "W8")
