"""Shrink a failing program to a short snippet that still shows the same category of mismatch.

Deterministic greedy passes, repeated until nothing changes: drop chunks of statements (halves,
quarters, ... single lines), drop keyword arguments, simplify input values (the whole array to ones
or zeros, then each element to 0, 1 or -1), and finally renumber the variables in order of
appearance. A candidate is kept when it still mismatches with the same category.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import numpy as np

from .compare import Mismatch, check
from .program import Program, Stmt
from .runner import Library

_KWARG = re.compile(r", (?:retain_graph|create_graph|allow_unused|keepdim|alpha|unbiased|correction|reduction|"
                    r"inputs|requires_grad|dtype(?==torch\.)|materialize_grads)=(?:\[[^\]]*\]|[^,()\[\]]+)")


def shrink(found: Mismatch, ref: Library, lib: Library, *, budget: int = 400) -> Mismatch:
    """The smallest program this finds that mismatches like ``found`` (at most ``budget`` runs)."""
    state = {"runs": 0}

    def still(p: Program) -> Mismatch | None:
        if state["runs"] >= budget:
            return None
        state["runs"] += 1
        try:
            m = check(p, ref, lib)
        except ValueError:  # a candidate that does not compile
            return None
        return m if m is not None and m.category == found.category else None

    best = found
    changed = True
    while changed and state["runs"] < budget:
        changed = False
        for step in (_drop_statements, _drop_kwargs, _simplify_inputs):
            better = step(best, still)
            if better is not best:
                best, changed = better, True
    renamed = renumber(best.program)
    again = still(renamed) if renamed != best.program else None
    return again or best


def _drop_statements(best: Mismatch, still: Callable[[Program], Mismatch | None]) -> Mismatch:
    n = len(best.program.stmts)
    size = max(n // 2, 1)
    while size >= 1:
        i = 0
        while i < len(best.program.stmts):
            stmts = best.program.stmts
            cand = dataclasses.replace(best.program, stmts=stmts[:i] + stmts[i + size:])
            if cand.stmts and (m := still(cand)):
                best = m
            else:
                i += size
        size //= 2
    return best


def _drop_kwargs(best: Mismatch, still: Callable[[Program], Mismatch | None]) -> Mismatch:
    i = 0
    while i < len(best.program.stmts):
        stmt = best.program.stmts[i]
        for match in list(_KWARG.finditer(stmt.code)):
            code = stmt.code[: match.start()] + stmt.code[match.end():]
            cand = _replace(best.program, i, dataclasses.replace(stmt, code=code))
            if m := still(cand):
                best = m
                break
        else:
            i += 1
    return best


def _simplify_inputs(best: Mismatch, still: Callable[[Program], Mismatch | None]) -> Mismatch:
    for i in range(len(best.program.stmts)):
        stmt = best.program.stmts[i]
        if stmt.array is None or stmt.array.size == 0:
            continue
        for smaller in _smaller_shapes(stmt.array):
            if m := still(_replace(best.program, i, stmt.with_array(smaller))):
                best, stmt = m, stmt.with_array(smaller)
        for whole in (np.zeros_like(stmt.array), np.ones_like(stmt.array)):
            if _cost(whole) < _cost(stmt.array) and (m := still(_replace(best.program, i, stmt.with_array(whole)))):
                best, stmt = m, stmt.with_array(whole)
                break
        for k in range(stmt.array.size):
            for simple in (0, 1, -1):
                arr = stmt.array.copy()
                try:
                    arr.reshape(-1)[k] = simple
                except OverflowError:
                    continue
                if _cost(arr) >= _cost(stmt.array):
                    continue
                cand_stmt = stmt.with_array(arr)
                if m := still(_replace(best.program, i, cand_stmt)):
                    best, stmt = m, cand_stmt
                    break
    return best


def _smaller_shapes(a: np.ndarray) -> list[np.ndarray]:
    """The array cut to its first entry along one axis of size > 1 (same number of dimensions)."""
    return [a[(slice(None),) * axis + (slice(0, 1),)] for axis in range(a.ndim) if a.shape[axis] > 1]


def _cost(a: np.ndarray) -> float:
    """How far from simple an array is: 0 < 1 < -1 < anything else, summed over elements."""
    flat = a.reshape(-1)
    if a.dtype.kind == "b":
        return float(np.count_nonzero(flat))
    plain = np.where(flat == 0, 0.0, np.where(flat == 1, 1.0, np.where(flat == -1, 2.0, 3.0)))
    if a.dtype.kind == "f":
        plain = plain + 0.5 * ((flat == 0) & np.signbit(flat))
    return float(plain.sum()) + 10.0 * flat.size


def _replace(p: Program, i: int, stmt: Stmt) -> Program:
    return dataclasses.replace(p, stmts=p.stmts[:i] + (stmt,) + p.stmts[i + 1:])


def renumber(p: Program) -> Program:
    """Variables renamed in order of appearance (``x1``, ``v2``, ...), keeping their letters."""
    targets = [s.target for s in p.stmts if s.target]
    mapping = {}
    for k, name in enumerate(targets, start=1):
        prefix = name.rstrip("0123456789")
        mapping[name] = f"{prefix}{k}"
    if all(a == b for a, b in mapping.items()):
        return p
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(mapping, key=len, reverse=True)) + r")\b")

    def rename(text: str) -> str:
        return pattern.sub(lambda m: mapping[m.group(1)], text)

    stmts = tuple(
        dataclasses.replace(s, code=rename(s.code), target=mapping.get(s.target, s.target) if s.target else None)
        for s in p.stmts
    )
    return dataclasses.replace(p, stmts=stmts)
