"""Run every stored notebook with nbclient and print its run time and the total.

    python notebooks/timing.py                  # all notebooks (the lessons and their solutions)
    python notebooks/timing.py 03 10            # only those whose file name starts with 03 or 10

Each notebook runs in its own folder, in a fresh kernel of this interpreter, as nbval runs it;
the lessons keep their placeholders (their checks print ✗, which is fine here). The budget is
30 s per notebook and 3 minutes for the whole set; this script reports, it does not enforce
(the tests never assert a time).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from build import KERNEL_ARGS, KERNEL_TIMEOUT, _current_env_kernel_manager  # noqa: E402

PER_NOTEBOOK, TOTAL = 30.0, 180.0


def notebooks(selected: list[str] | None = None) -> list[Path]:
    paths = sorted(HERE.glob("[0-9][0-9]_*.ipynb")) + sorted((HERE / "solutions").glob("*.ipynb"))
    if selected:
        paths = [p for p in paths if any(p.name.startswith(s) for s in selected)]
    return paths


def run(path: Path) -> float:
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, km=_current_env_kernel_manager(), timeout=KERNEL_TIMEOUT,
                            resources={"metadata": {"path": str(path.parent)}}, allow_errors=False,
                            extra_arguments=KERNEL_ARGS)
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    selected = list(sys.argv[1:] if argv is None else argv)
    paths = notebooks(selected)
    total = 0.0
    width = max((len(str(p.relative_to(HERE))) for p in paths), default=10)
    for path in paths:
        seconds = run(path)
        total += seconds
        flag = "" if seconds < PER_NOTEBOOK else f"   over the {PER_NOTEBOOK:.0f} s budget"
        print(f"{str(path.relative_to(HERE)):{width}s}  {seconds:6.2f} s{flag}", flush=True)
    flag = "" if total < TOTAL else f"   over the {TOTAL:.0f} s budget"
    print(f"{'total (' + str(len(paths)) + ' notebooks)':{width}s}  {total:6.2f} s{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
