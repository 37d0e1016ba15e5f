"""Batches: run many programs, count mismatches by category, measure coverage, shrink what failed."""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Iterable

from . import catalogue
from .compare import CATEGORIES, Mismatch, check
from .conditioning import ill_conditioned
from .generator import generate
from .program import Program
from .runner import Library
from .shrink import shrink

# Features the generator must draw (each at least MIN_PER_10K times per 10,000 programs), besides every op.
FEATURES = (
    "shape:0-d", "shape:size-1", "shape:empty", "broadcast",
    "value:tie", "value:zero", "value:negative", "value:inf", "value:-inf", "value:nan", "value:-0.0", "value:large",
    "dtype:float32", "dtype:float64", "dtype:int64", "dtype:bool",
    "scalar:float", "scalar:int", "scalar:numpy", "scalar:0-d tensor",
    "feat:requires_grad mix", "feat:in-place on a non-leaf", "feat:in-place through a view", "feat:view",
    "feat:in-place on a leaf", "feat:no_grad in-place on a leaf", "feat:op under no_grad",
    "feat:hook", "feat:hook remove", "feat:retain_grad", "feat:detach", "feat:detach_", "feat:requires_grad_",
    "feat:.data",
    "feat:backward", "feat:backward gradient=", "feat:backward inputs=", "feat:reset .grad",
    "feat:autograd.grad", "feat:grad of a leaf", "feat:grad of an intermediate", "feat:unused input",
    "feat:allow_unused", "feat:create_graph", "feat:second order",
    "feat:backward twice (retain_graph)", "feat:backward twice (no retain_graph)",
)
MIN_PER_10K = 50


def programs(seed: int, n: int, start: int = 0, mode: str = "normal") -> list[Program]:
    """Programs start..start+n-1 of ``seed``; ``mode``: normal, forward (forward AD) or transform (torch.func)."""
    if mode != "normal":
        from .modes import generate as generate_mode

        return [generate_mode(mode, seed, i) for i in range(start, start + n)]
    return [generate(seed, i) for i in range(start, start + n)]


def coverage(progs: Iterable[Program]) -> tuple[collections.Counter, int]:
    """How many programs drew each op (``op:<name>``) and each feature; and how many programs there were."""
    counts: collections.Counter = collections.Counter()
    n = 0
    for p in progs:
        n += 1
        counts.update(p.tags())
    return counts, n


def coverage_rows(counts: collections.Counter, n: int) -> list[tuple[str, int, float, bool]]:
    """(name, programs that drew it, per 10,000 programs, enough?) for every op and feature."""
    rows = []
    for key in [f"op:{op.name}" for op in catalogue.OPS] + list(FEATURES):
        per10k = counts[key] * 10_000 / max(n, 1)
        rows.append((key, counts[key], per10k, per10k >= MIN_PER_10K))
    return rows


def format_coverage(counts: collections.Counter, n: int) -> str:
    rows = coverage_rows(counts, n)
    width = max(len(r[0]) for r in rows)
    lines = [f"coverage over {n} programs (programs drawing each op / feature, per 10,000; need >= {MIN_PER_10K})"]
    for key, count, per10k, ok in rows:
        lines.append(f"  {key:<{width}}  {count:>7}  {per10k:>8.0f}  {'' if ok else '<-- too rare'}")
    return "\n".join(lines)


@dataclasses.dataclass
class BatchResult:
    mismatches: list[Mismatch]
    n: int
    seconds: float
    gaps: list[Mismatch] = dataclasses.field(default_factory=list)  # no forward / batching rule yet (modes.gap_of)
    ill: list[Mismatch] = dataclasses.field(default_factory=list)  # ill-conditioned programs (conditioning.py)

    def counts(self) -> collections.Counter:
        return collections.Counter(m.category for m in self.mismatches)

    def summary(self) -> str:
        c = self.counts()
        share = 100 * len(self.mismatches) / max(self.n, 1)
        parts = ", ".join(f"{cat} {c[cat]}" for cat in CATEGORIES if c[cat])
        gaps = collections.Counter(m.category for m in self.gaps)
        gap_text = ", ".join(f"{k} {v}" for k, v in sorted(gaps.items()))
        ill = collections.Counter(m.category for m in self.ill)
        ill_text = ", ".join(f"{k} {v}" for k, v in sorted(ill.items()))
        return (f"{self.n} programs in {self.seconds:.1f} s: {len(self.mismatches)} disagree ({share:.1f}%)"
                + (f"; by first mismatch: {parts}" if parts else "")
                + (f"; stopped at a known gap (not counted): {gap_text}" if gap_text else "")
                + (f"; ill-conditioned (torch itself moves past the tolerance at 1-ulp input changes; not counted):"
                   f" {ill_text}" if ill_text else ""))


def run_batch(progs: Iterable[Program], ref: Library, lib: Library) -> BatchResult:
    """Check every program; a value or gradient mismatch that PyTorch itself does not hold to the tolerance at
    1-ulp input changes is listed apart as ill-conditioned (conditioning.py), never counted and never dropped."""
    from .modes import gap_of

    start = time.perf_counter()
    found, gaps, ill, n = [], [], [], 0
    for p in progs:
        n += 1
        m = check(p, ref, lib)
        if m is not None:
            gap = gap_of(m.category, m.detail)
            if gap:
                gaps.append(dataclasses.replace(m, category=gap))
            elif ill_conditioned(m, ref):
                ill.append(m)
            else:
                found.append(m)
    return BatchResult(found, n, time.perf_counter() - start, gaps, ill)


def shrink_all(found: list[Mismatch], ref: Library, lib: Library) -> list[Mismatch]:
    """Each mismatch shrunk; the result keeps the original program's name."""
    out = []
    for m in found:
        small = shrink(m, ref, lib)
        out.append(dataclasses.replace(small, program=dataclasses.replace(small.program, name=m.program.name)))
    return out
