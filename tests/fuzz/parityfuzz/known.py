"""The CI set (the corpus plus CI_N programs of CI_SEED) and the checked-in list of its known mismatches.

``known_failures.md`` holds one entry per program of the CI set that disagrees today: its id, its
category, the issue-14 bullet it belongs to, and the shrunk snippet. The CI test asserts

- the CI set's mismatches are exactly the listed ones (same programs, same categories): a fixed bug
  makes the test fail until its entries are removed, and a new mismatch fails it too;
- every listed snippet still disagrees in its category (so each entry is a live, runnable report);
- no entry is ``unclassified``.

``python -m parityfuzz known --update`` (``make fuzz-known``) rewrites the file: entries whose
program and category did not change keep their snippet and bullet; new ones are shrunk and filed
by ``bullets.classify``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from . import bullets, corpus, fuzz
from .compare import Mismatch, check
from .program import Program, program_from_text
from .runner import Library

CI_SEED = 14
CI_N = 500
PATH = Path(__file__).with_name("known_failures.md")
# Forward mode's CI set (issue 26): programs 0..FORWARD_CI_N-1 of FORWARD_CI_SEED under a dual level, listed apart
FORWARD_CI_SEED = 26
FORWARD_CI_N = 150
FORWARD_PATH = Path(__file__).with_name("known_failures_forward.md")
# Function transforms' CI set (issue 27): programs 0..TRANSFORM_CI_N-1 of TRANSFORM_CI_SEED of `--mode transform`,
# compared in every category but those of errors and warnings (TRANSFORM_UNCOMPARED), which another branch brings
# to PyTorch's texts: a program whose first difference is one of them counts as agreeing here.
TRANSFORM_CI_SEED = 27
TRANSFORM_CI_N = 108
TRANSFORM_PATH = Path(__file__).with_name("known_failures_transform.md")
TRANSFORM_UNCOMPARED = ("missing error", "error type", "error text", "warning")


def path_of(mode: str) -> Path:
    return {"forward": FORWARD_PATH, "transform": TRANSFORM_PATH}.get(mode, PATH)


@dataclasses.dataclass
class Known:
    id: str
    category: str
    bullet: str
    snippet: str
    detail: str = ""

    def program(self) -> Program:
        return program_from_text(self.id, self.snippet)


def ci_programs(mode: str = "normal") -> list[Program]:
    if mode == "forward":
        return fuzz.programs(FORWARD_CI_SEED, FORWARD_CI_N, mode="forward")
    if mode == "transform":
        return fuzz.programs(TRANSFORM_CI_SEED, TRANSFORM_CI_N, mode="transform")
    return corpus.programs() + fuzz.programs(CI_SEED, CI_N)


_ENTRY = re.compile(r"^### (?P<id>.+?) \u00b7 (?P<cat>[^\n]+)\n(?:> (?P<detail>[^\n]*)\n)?\n?```python\n"
                    r"(?P<code>.*?)\n```", re.S | re.M)
_BULLET = re.compile(r"^## .*?\[(?P<key>[\w<>.-]+)\]\s*$", re.M)


def read(path: Path = PATH) -> dict[str, Known]:
    """The entries of ``known_failures.md`` by program id."""
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    entries: dict[str, Known] = {}
    heads = [(m.start(), m.group("key")) for m in _BULLET.finditer(text)]
    for m in _ENTRY.finditer(text):
        key = next((k for pos, k in reversed(heads) if pos < m.start()), "unclassified")
        entries[m.group("id")] = Known(m.group("id"), m.group("cat"), key, m.group("code"), m.group("detail") or "")
    return entries


def write(entries: dict[str, Known], path: Path = PATH) -> None:
    order = list(bullets.BULLETS)
    groups: dict[str, list[Known]] = {}
    for e in entries.values():
        groups.setdefault(e.bullet, []).append(e)
    if path == TRANSFORM_PATH:
        what = ("# Known function-transform fuzz mismatches (minigrad.func vs torch.func 2.13)", "The transform CI set "
                f"is programs 0-{TRANSFORM_CI_N - 1} of seed {TRANSFORM_CI_SEED} of `--mode transform` (`modes.py`), "
                f"compared in every category but {', '.join(TRANSFORM_UNCOMPARED)} (`known.TRANSFORM_UNCOMPARED`).",
                "`make fuzz-known-transform`")
    elif path == FORWARD_PATH:
        what = ("# Known forward-mode fuzz mismatches (minigrad vs PyTorch 2.13)", f"The forward-mode CI set is "
                f"programs 0-{FORWARD_CI_N - 1} of seed {FORWARD_CI_SEED} of `--mode forward` (`modes.py`).",
                "`make fuzz-known-forward`")
    else:
        what = ("# Known fuzz mismatches (minigrad vs PyTorch 2.13)", "The CI set is the corpus (`corpus.py`, every "
                f"example of issue 14) plus programs 0-{CI_N - 1} of seed {CI_SEED}.", "`make fuzz-known`")
    lines = [
        what[0],
        "",
        f"{what[1]} Every program of that set that disagrees today is listed here, shrunk to a snippet that "
        "runs with `import torch` or `import minigrad as torch` after the preamble of `program.py`, under the "
        "issue-14 bullet it belongs to. `tests/fuzz/test_fuzz.py` fails when this list and today's results "
        f"differ. Regenerate with {what[2]} (entries that did not change keep their bullet), then "
        "review the diff.",
        "",
        f"{len(entries)} entries.",
    ]
    for key in sorted(groups, key=lambda k: (order.index(k) if k in order else len(order), k)):
        items = sorted(groups[key], key=lambda e: _natural(e.id))
        lines += ["", f"## {bullets.title(key)} [{key}]", ""]
        for e in items:
            lines.append(f"### {e.id} \u00b7 {e.category}")
            if e.detail:
                lines.append("> " + " ".join(e.detail.split()))
            lines += ["", "```python", e.snippet, "```", ""]
    path.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")


def _natural(text: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def run_ci(ref: Library, lib: Library, mode: str = "normal") -> dict[str, Mismatch]:
    if mode != "normal":
        from .modes import warm_up

        warm_up(ref.module)
        warm_up(lib.module)
    found = fuzz.run_batch(ci_programs(mode), ref, lib).mismatches
    uncompared = TRANSFORM_UNCOMPARED if mode == "transform" else ()
    return {m.program.name: m for m in found if m.category not in uncompared}


def check_ci(ref: Library, lib: Library, found: dict[str, Mismatch] | None = None, mode: str = "normal") -> str:
    """What differs between today's CI-set results (of `mode`) and its list ('' when they agree)."""
    found = run_ci(ref, lib, mode) if found is None else found
    known = read(path_of(mode))
    problems = []
    changed = [m for pid, m in found.items() if pid not in known or known[pid].category != m.category]
    changed = [m for m in changed if corpus.bullet_of(m.program.name)] + fuzz.shrink_all(
        [m for m in changed if not corpus.bullet_of(m.program.name)], ref, lib)
    for m in changed:
        was = known.get(m.program.name)
        why = f"was listed as {was.category}" if was else "not listed"
        key = corpus.bullet_of(m.program.name) or bullets.classify(m.category, m.detail, m.program.snippet())
        problems.append(f"NEW MISMATCH ({why}; bullet suggestion: {key})\n{m.report()}")
    for pid, e in known.items():
        if pid not in found:
            problems.append(f"NOW AGREES: {pid} ({e.category}, {e.bullet}) - remove its entry\n{e.snippet}")
        if e.bullet == "unclassified":
            problems.append(f"UNCLASSIFIED: {pid} - file it under an issue-14 bullet")
        m = check(e.program(), ref, lib)
        if pid in found and (m is None or m.category != e.category):
            now = "agrees" if m is None else f"shows {m.category}"
            problems.append(f"STALE SNIPPET: {pid}'s snippet now {now}, not {e.category} - regenerate it\n{e.snippet}")
    if problems:
        problems.append(f"Fix or file these, then run `make fuzz-known` and review the diff of {path_of(mode).name}.")
    return "\n\n".join(problems)


def update(ref: Library, lib: Library, mode: str = "normal") -> str:
    found = run_ci(ref, lib, mode)
    known = read(path_of(mode))
    keep, redo = {}, []
    for pid, m in found.items():
        e = known.get(pid)
        if e is not None and e.category == m.category:
            still = check(e.program(), ref, lib)
            if still is not None and still.category == e.category:
                keep[pid] = e
                continue
        redo.append(m)
    fixed = [m for m in redo if corpus.bullet_of(m.program.name)]
    random = fuzz.shrink_all([m for m in redo if not corpus.bullet_of(m.program.name)], ref, lib)
    for m in fixed + random:
        pid = m.program.name
        key = corpus.bullet_of(pid) or bullets.classify(m.category, m.detail, m.program.snippet())
        keep[pid] = Known(pid, m.category, key, m.program.snippet(), m.detail)
    write(keep, path_of(mode))
    removed = sorted(set(known) - set(keep), key=_natural)
    return (f"{path_of(mode).name}: {len(keep)} entries ({len(redo)} new or redone, {len(removed)} removed"
            + (f": {', '.join(removed)}" if removed else "") + ")")
