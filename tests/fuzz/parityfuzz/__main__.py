"""Command line: ``python -m parityfuzz`` (with ``tests/fuzz`` on ``PYTHONPATH``; ``make fuzz`` does this).

    python -m parityfuzz run --n 2000 --seed 0            # counts by category and the coverage table
    python -m parityfuzz run --n 2000 --seed 0 --show 3   # ... and 3 shrunk snippets per category
    python -m parityfuzz coverage --n 10000               # the coverage table only (no library runs)
    python -m parityfuzz known --check                    # the CI set against known_failures.md
    python -m parityfuzz known --update                   # rewrite known_failures.md from today's results
    python -m parityfuzz known --check --mode forward     # forward mode's CI set against known_failures_forward.md
    python -m parityfuzz known --check --mode transform   # the transforms' CI set against known_failures_transform.md
"""

from __future__ import annotations

import argparse
import collections
import re
import sys

from . import bullets, compare, fuzz, known


def _libraries():
    import torch

    import minigrad

    from .runner import minigrad_library, torch_library

    return torch_library(torch), minigrad_library(minigrad)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="parityfuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run N programs from SEED on torch and minigrad")
    run.add_argument("--n", type=int, default=2000)
    run.add_argument("--seed", default="0", help="a seed, a range (0-4) or a list (0,3)")
    run.add_argument("--show", type=int, default=0, help="print this many shrunk snippets per category")
    run.add_argument("--no-coverage", action="store_true")
    run.add_argument("--mode", choices=("normal", "forward", "transform"), default="normal",
                     help="normal programs, forward-AD programs (dual_level) or transforms (torch.func) of programs")
    run.add_argument("--grad-versions", action="store_true", help="also compare _version of gradient tensors")
    run.add_argument("--by-bullet", action="store_true",
                     help="shrink every mismatch and count them by issue-14 bullet (bullets.classify)")
    cov = sub.add_parser("coverage", help="the coverage table of N programs (generation only)")
    cov.add_argument("--n", type=int, default=10_000)
    cov.add_argument("--seed", type=int, default=0)
    kn = sub.add_parser("known", help="the CI set against the known-failures list")
    group = kn.add_mutually_exclusive_group(required=True)
    group.add_argument("--check", action="store_true")
    group.add_argument("--update", action="store_true")
    kn.add_argument("--mode", choices=("normal", "forward", "transform"), default="normal",
                    help="the normal CI set (known_failures.md), forward mode's (known_failures_forward.md) or the "
                         "transforms' (known_failures_transform.md)")
    args = parser.parse_args(argv)

    if args.command == "coverage":
        counts, n = fuzz.coverage(fuzz.programs(args.seed, args.n))
        print(fuzz.format_coverage(counts, n))
        return 0 if all(ok for *_, ok in fuzz.coverage_rows(counts, n)) else 1

    ref, lib = _libraries()
    if args.command == "known":
        if args.update:
            print(known.update(ref, lib, args.mode))
            return 0
        problems = known.check_ci(ref, lib, mode=args.mode)
        print(problems or f"the CI set matches {known.path_of(args.mode).name}")
        return 1 if problems else 0

    compare.GRAD_VERSIONS = args.grad_versions
    if args.mode != "normal":
        from .modes import warm_up

        warm_up(ref.module)
        warm_up(lib.module)
    total = fuzz.BatchResult([], 0, 0.0)
    counts: collections.Counter = collections.Counter()
    seeds = _seeds(args.seed)
    for seed in seeds:
        progs = fuzz.programs(seed, args.n, mode=args.mode)
        result = fuzz.run_batch(progs, ref, lib)
        print(f"seed {seed}: {result.summary()}", flush=True)
        total = fuzz.BatchResult(total.mismatches + result.mismatches, total.n + result.n,
                                 total.seconds + result.seconds, total.gaps + result.gaps, total.ill + result.ill)
        if args.show:
            by_cat: dict[str, list] = collections.defaultdict(list)
            for m in result.mismatches:
                if len(by_cat[m.category]) < args.show:
                    by_cat[m.category].append(m)
            for cat in compare.CATEGORIES:
                for m in fuzz.shrink_all(by_cat.get(cat, []), ref, lib):
                    print("\n" + m.report())
            gaps: dict[str, list] = collections.defaultdict(list)
            for m in result.gaps:
                op = re.search(r"(?:forward AD with|batching rule for) (\S+?)\.? ", m.detail)
                gaps[(m.category, op.group(1) if op else "?")].append(m)
            for (category, op), ms in sorted(gaps.items()):
                print(f"\n# {category}: {op} (first in {len(ms)} programs, e.g. {ms[0].program.name})")
            for m in result.ill:
                print(f"\n# ill-conditioned {m.category} (not counted): {m.program.name} after line {m.line + 1}: "
                      f"{m.detail}")
        if not args.no_coverage:
            counts.update(fuzz.coverage(progs)[0])
    if len(seeds) > 1:
        print(f"seeds {args.seed}: {total.summary()}")
    if args.by_bullet:
        tally: collections.Counter = collections.Counter()
        for m in fuzz.shrink_all(total.mismatches, ref, lib):
            tally[(bullets.classify(m.category, m.detail, m.program.snippet()), m.category)] += 1
        print("by issue-14 bullet (shrunk, classified by bullets.classify), bullet / category / programs:")
        for (key, cat), count in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {count:>6}  {key:<28} {cat}")
    if not args.no_coverage:
        print(fuzz.format_coverage(counts, total.n))
    return 0


def _seeds(text: str) -> list[int]:
    if "-" in text.strip("-"):
        lo, hi = text.split("-", 1)
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


if __name__ == "__main__":
    sys.exit(main())
