"""Ill-conditioned programs: a value or gradient mismatch that PyTorch itself does not hold to the tolerance.

A float32 op's last bit differs between PyTorch's kernels (SLEEF, oneDNN, a vectorised sum's order) and NumPy's;
neither is wrong. Most programs carry that 1-ulp difference to their results unchanged, and the comparison's
tolerance absorbs it; some amplify it past any tolerance: ``tan`` next to a pole, ``sign_``/``trunc_``/``floor``
of a value 1 ulp from a step (``layer_norm``'s mean is exactly 0.31 under PyTorch, 0.30999999999999994 under
NumPy; ``sign`` of their difference is 0 or -1). Such a difference says nothing about minigrad.

The rule: when minigrad's run differs from PyTorch's in ``value`` or ``gradient``, PyTorch runs the same
program again with its float inputs moved by 1 ulp (``np.nextafter``): all up, all down, and a few random
mixes of up, down and unchanged. If PyTorch's own result at the mismatching output (the variable the
mismatch names, after the same statement) then moves by more than the comparison's tolerance, the program
is **ill-conditioned**: reported on its own line, not counted. Otherwise the mismatch is counted.

What the rule cannot hide: a wrong result of a well-conditioned program (PyTorch's perturbed runs agree with
its own to the tolerance, so the mismatch stays counted; tests/fuzz/test_fuzz.py checks this with a
deliberately wrong minigrad op). Input elements that are integers or halves (0, -0.0, +-1, 0.5, 1e30, and
inf and nan) are never moved: they are the kinks and domain edges the generator draws on purpose
(``relu``/``sign`` at 0, ``acos`` at 1), where a wrong answer is a bug, not rounding. A program whose inputs
hold nothing else cannot be ill-conditioned; neither can a program read from text (no input arrays).

What the rule does not see (such mismatches stay counted; read them): a 1-ulp difference of an intermediate that
the program amplifies more than the same change of an input (seed 1313 program 303: NumPy's float32 ``atan2`` is
1 ulp off the correctly rounded result, then ``sinh`` and ``tan`` next to a pole multiply that by ~10^4, while
1 ulp of the input moves PyTorch's result by 65% of the tolerance only).
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from .compare import Mismatch, step_differences
from .program import Program
from .runner import Library, Step, run

RANDOM_RUNS = 4  # random mixes of +1 ulp, -1 ulp and unchanged, besides all up and all down
CATEGORIES = ("value", "gradient")  # what the rule may reclassify


def ill_conditioned(m: Mismatch, ref: Library) -> bool:
    """True when PyTorch's own result at ``m``'s output moves past the tolerance at 1-ulp input changes."""
    if m.category not in CATEGORIES or m.line < 0:
        return False
    where = m.detail.split(": ", 1)[0] + ": "
    variants = perturbed(m.program)
    if not variants:
        return False
    base = _step(m.program, ref, m.line)
    if base is None:
        return False
    for variant in variants:
        moved = _step(variant, ref, m.line)
        if moved is None:
            continue
        if any(cat == m.category and detail.startswith(where)
               for cat, detail in step_differences(base, moved, m.program)):
            return True
    return False


def perturbed(program: Program) -> list[Program]:
    """The program with its float inputs moved by 1 ulp (all up, all down, random mixes); [] when nothing moves."""
    movable = [i for i, s in enumerate(program.stmts) if s.array is not None and _movable(s.array).any()]
    if not movable:
        return []
    rng = random.Random(program.name)
    out = []
    for how in ["up", "down"] + ["mix"] * RANDOM_RUNS:
        stmts = list(program.stmts)
        for i in movable:
            stmts[i] = stmts[i].with_array(_nudge(stmts[i].array, how, rng))
        out.append(dataclasses.replace(program, stmts=tuple(stmts)))
    return out


def _movable(a: np.ndarray) -> np.ndarray:
    """Elements that are finite floats and neither integers nor halves (see the module docstring)."""
    if a.dtype.kind != "f":
        return np.zeros(a.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        return np.isfinite(a) & (a * 2 != np.round(a * 2))


def _nudge(a: np.ndarray, how: str, rng: random.Random) -> np.ndarray:
    up, down = np.nextafter(a, np.inf).astype(a.dtype), np.nextafter(a, -np.inf).astype(a.dtype)
    if how == "up":
        new = up
    elif how == "down":
        new = down
    else:
        pick = np.array([rng.randrange(3) for _ in range(a.size)]).reshape(a.shape)
        new = np.where(pick == 0, up, np.where(pick == 1, down, a))
    return np.where(_movable(a), new, a).astype(a.dtype)


def _step(program: Program, ref: Library, line: int) -> Step | None:
    """PyTorch's record of statement ``line`` of ``program``."""
    steps = run(program, ref)
    try:
        for step in steps:
            if step.index == line:
                return step
    finally:
        steps.close()
    return None
