"""What the lessons claim about PyTorch, checked against torch 2.13: cells that teach a PyTorch
behaviour minigrad copies print the same under `import torch` (with `torch.` for `minigrad.`)."""

from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "notebooks" / "src"


def _cell(build, stem, marker):
    nb = build.generate(SRC / f"{stem}.py", "solution")
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and marker in c.source]
    return cell.source


def _run(source, torch_module):
    namespace = {"__name__": "__main__", "torch": torch_module, "Function": torch_module.autograd.Function}
    out = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out):
        warnings.simplefilter("ignore")
        exec(source, namespace)  # noqa: S102
    return out.getvalue()


@pytest.mark.parametrize("stem, marker", [
    ("07_custom_function", "class ClampWithMask"),  # mark_non_differentiable
    ("07_custom_function", "class AddOneInplace"),  # mark_dirty
    ("07_custom_function", "class MulConstant"),
])
def test_lesson_cell_prints_what_pytorch_prints(build, torch, stem, marker):
    import minigrad

    source = _cell(build, stem, marker)
    source = source.replace("from minigrad.autograd import Function, gradcheck", "")
    source = source.replace("import minigrad as torch", "").replace("import viz", "")
    ours = _run(source, minigrad)
    theirs = _run(source, torch)
    clean = [line.replace("minigrad", "torch") for line in ours.splitlines()]
    strip = [line for line in theirs.splitlines()]
    # node objects print their address; everything else must match
    assert [_no_address(x) for x in clean] == [_no_address(x) for x in strip]


def _no_address(line: str) -> str:
    import re

    return re.sub(r" object at 0x[0-9a-f]+", " object at 0xADDRESS", line)


def test_sgd_momentum_as_lesson_10_says(torch):
    """Lesson 10: with momentum the first step is p - lr * g, the second p - lr * (g2 + 0.9 * g1)."""
    import minigrad

    for lib in (torch, minigrad):
        p = lib.tensor([1.0, -2.0], requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        grads, values = [], [p.detach().clone()]
        for scale in (1.0, 3.0):
            opt.zero_grad()
            (scale * (p * p).sum()).backward()
            grads.append(p.grad.clone())
            opt.step()
            values.append(p.detach().clone())
        assert lib.allclose(values[1], values[0] - 0.1 * grads[0])
        assert not lib.allclose(values[2], values[1] - 0.1 * grads[1])
        assert lib.allclose(values[2], values[1] - 0.1 * (grads[1] + 0.9 * grads[0]))


_LESSON_13_IMPORTS = {
    "import minigrad as torch": "import torch",
    "import minigrad.autograd.forward_ad as fwAD": "import torch.autograd.forward_ad as fwAD",
    "from minigrad.func import": "from torch.func import",
}


def _lesson_13_printed(build, use_torch: bool) -> list[str]:
    """What the solution of lesson 13 prints, cell by cell, run with minigrad or with the same code under
    `import torch` (viz's pictures and tables run but are not compared, viz's own tests do that; checks are left
    out)."""
    nb = build.generate(SRC / "13_forward_mode_and_transforms.py", "solution")
    namespace: dict = {"__name__": "__main__"}
    printed = []
    for cell in nb.cells:
        if cell.cell_type != "code" or "check_" in cell.source:
            continue
        source = cell.source
        if use_torch:
            for ours, theirs in _LESSON_13_IMPORTS.items():
                source = source.replace(ours, theirs)
        out = io.StringIO()
        with warnings.catch_warnings(), contextlib.redirect_stdout(out):
            warnings.simplefilter("ignore")
            exec(source, namespace)  # noqa: S102
        if "viz." not in cell.source:  # a picture or viz's table: run (it defines names), not compared
            printed.append(out.getvalue() if use_torch else out.getvalue().replace("minigrad", "torch"))
    return printed


def test_lesson_13_prints_what_pytorch_prints(build, torch):
    """Every number lesson 13 prints (dual numbers, forward_ad, jvp/vjp, the Jacobians both ways, the Hessian,
    per-sample gradients with vmap) is what torch.autograd.forward_ad and torch.func print."""
    ours, theirs = _lesson_13_printed(build, use_torch=False), _lesson_13_printed(build, use_torch=True)
    assert len(ours) == len(theirs) and sum(1 for printed in ours if printed) >= 6
    for mine, pytorch in zip(ours, theirs):
        assert mine.splitlines() == pytorch.splitlines()
