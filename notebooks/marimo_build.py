"""The course as marimo notebooks: ``notebooks/marimo/NN_name.py``, written from the learners' lessons.

    python notebooks/marimo_build.py            # every lesson (make notebooks runs this after build.py)
    python notebooks/marimo_build.py --check    # exit 1 when a stored marimo lesson differs from a fresh build
    marimo edit notebooks/marimo/03_backward.py # open one (the [marimo] extra: pip install -e .[marimo])

marimo is a reactive notebook: a cell runs again when a name it reads changes, every name is defined by one
cell only, and there is no "run this cell once more". A lesson written for Jupyter is rewritten by a stated
rule, and each marimo lesson opens by saying what differs:

1. **Names.** marimo's own converter (``marimo convert``, from the stored learner notebook) keeps a name used in
   one cell only private to that cell (``_y``) and makes a name that several cells define unique: the second
   ``x`` becomes ``x_1``, the third ``x_2``. The lesson's first cell lists the renamed names.
2. **Running a cell again.** Where a lesson asks to run a cell again (to see what a player's answers did), the
   marimo lesson says to press that cell's run button: marimo re-runs a cell when what it reads changes, not
   on its own. (Accumulation, lesson 4, is taught with a loop, which reads the same in both.)
3. **Printed values** show in the cell's output: a cell that prints runs inside ``with mo.redirect_stdout():``
   (``marimo run`` shows no console), its last bare expression (a player) after that block.
4. **Links.** Links to other lessons point at their marimo files; the solutions stay Jupyter notebooks
   (``notebooks/solutions/``), and the exercises' checks are the same ``minigrad_course`` functions.

Cell markers for nbval (``# NBVAL_IGNORE_OUTPUT``) are dropped: nothing compares marimo's outputs.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "marimo"
NBVAL_MARKER = re.compile(r"^[ \t]*# NBVAL_\w+[ \t]*\n", re.MULTILINE)
BANNER = re.compile(r'(@app\.cell\(hide_code=True\)\ndef _\(mo\):\n    mo\.md\(r""")'
                    r'\n    > \*\*Exercises included\.\*\*.*?(?=""")', re.DOTALL)
RUN_AGAIN = re.compile(r"run the cell (?:under|below|above)[\w \n]*? again(?: after [\w]+)?", re.IGNORECASE)
LESSON_LINK = re.compile(r"\]\((?P<path>\d\d_\w+)\.ipynb\)")
SOLUTION_LINK = re.compile(r"\]\((?:\.\./)?solutions/(?P<path>\d\d_\w+)\.ipynb\)")
GENERATED_WITH = re.compile(r'^__generated_with = "[^"]*"\n', re.MULTILINE)


def lessons(selected: list[str] | None = None) -> list[Path]:
    paths = sorted(HERE.glob("[0-9][0-9]_*.ipynb"))
    if selected:
        paths = [p for p in paths if any(p.name.startswith(s) for s in selected)]
    return paths


def convert(notebook: Path) -> str:
    """marimo's own conversion of a stored lesson (its outputs are dropped)."""
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / (notebook.stem + ".py")
        run = subprocess.run([sys.executable, "-m", "marimo", "convert", str(notebook), "-o", str(target)],
                             capture_output=True, text=True, timeout=120)
        if run.returncode != 0 or not target.exists():
            raise RuntimeError(f"marimo convert failed on {notebook.name}: {run.stderr[-1000:]}")
        return target.read_text(encoding="utf-8")


def renamed(source: str) -> list[tuple[str, list[str]]]:
    """The names marimo's converter made unique: (the lesson's name, [its renamed copies])."""
    defined = {m.group(0) for m in re.finditer(r"\b[A-Za-z]\w*?_\d+\b", source)}
    copies: dict[str, list[str]] = {}
    for name in sorted(defined):
        m = re.fullmatch(r"(?P<base>\w+?)_(?P<k>\d+)", name)
        if m and re.search(rf"^\s+{m.group('base')}\s*=", source, re.MULTILINE):  # the first cell's, unnumbered
            copies.setdefault(m.group("base"), []).append(name)
    return [(base, sorted(found, key=lambda n: int(n.rsplit("_", 1)[1]))) for base, found in sorted(copies.items())]


def banner(stem: str, source: str) -> str:
    """What the marimo lesson says first: that it is the marimo version, and what differs from Jupyter's."""
    names = renamed(source)
    listed = "; ".join(f"`{base}` → {', '.join(f'`{n}`' for n in found)}" for base, found in names)
    lines = [
        f"    > **The marimo version of this lesson** (written from `notebooks/{stem}.ipynb` by",
        "    > `notebooks/marimo_build.py`). marimo runs a cell again whenever a name it reads changes, and",
        "    > each name belongs to one cell, so these things differ from the Jupyter lesson:",
        "    >",
        "    > - **Names defined in several cells are numbered** in the order the cells come"
        + (f": {listed}." if listed else " (none in this lesson)."),
        "    >   A name used in one cell only starts with `_` (private to that cell).",
        "    > - **Where the lesson says to run a cell again,** press that cell's run button (▶): marimo",
        "    >   does not re-run a cell on its own.",
        "    > - **Printed values** appear in the cell's output: a cell that prints does it inside",
        "    >   `with mo.redirect_stdout():`.",
        "    > - **The exercises** have the same placeholders (`...`) and the same `check_...()` cells;"
        " the solutions",
        f"    >   are the Jupyter notebook `notebooks/solutions/{stem}.ipynb`.",
        "    ",
    ]
    return "\n" + "\n".join(lines)


def _prints(node: ast.AST) -> bool:
    """Does this code print (a ``print`` call, or a course check, which prints its verdict)?"""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
               and (n.func.id == "print" or n.func.id.startswith("check_")) for n in ast.walk(node))


def show_prints(source: str) -> str:
    """Cells that print do so into their output (``mo.redirect_stdout``): ``marimo run`` shows no console, and the
    lessons teach with printed values. A cell's last bare expression (a player, a graph) stays after the block,
    where marimo shows it."""
    lines = source.splitlines(keepends=True)
    cells = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.decorator_list
             and ast.unparse(n.decorator_list[0]).startswith("app.cell")]
    for cell in reversed(cells):  # from the end, so that earlier line numbers stay right
        body = cell.body[:-1] if isinstance(cell.body[-1], ast.Return) else cell.body
        if not body or not any(_prints(stmt) for stmt in body):
            continue
        last = body[-1]
        inside = body[:-1] if isinstance(last, ast.Expr) and not _prints(last) else body
        if not inside:
            continue
        start = min([inside[0].lineno] + [d.lineno for d in getattr(inside[0], "decorator_list", [])])
        first, end = start - 1, inside[-1].end_lineno  # 0-based start, exclusive end
        while first > cell.lineno and lines[first - 1].strip().startswith("#"):
            first -= 1  # the comments above the first statement go in with it
        lines[first:end] = ["    with mo.redirect_stdout():\n"] + [
            ("    " + line) if line.strip() else line for line in lines[first:end]]
        head = cell.lineno - 1  # the `def _(...):` line (a decorated function's line number is its def's)
        params = [a.arg for a in cell.args.args]
        if "mo" not in params:  # the signature (one line or several) becomes one line that also takes mo
            tail = next(i for i in range(head, len(lines)) if lines[i].rstrip().endswith("):"))
            lines[head:tail + 1] = [f"def _({', '.join(sorted([*params, 'mo']))}):\n"]
    return "".join(lines)


def rewrite(stem: str, source: str) -> str:
    """The converted lesson, rewritten by the module's rules."""
    source = NBVAL_MARKER.sub("", source)
    source = show_prints(source.replace("app = marimo.App()", 'app = marimo.App(width="medium")', 1))
    note = banner(stem, source)
    if BANNER.search(source):
        source = BANNER.sub(lambda m: m.group(1) + note, source, count=1)
    else:  # a lesson without exercises: the note goes after the title cell
        source = re.sub(r'(@app\.cell\(hide_code=True\)\ndef _\(mo\):\n    mo\.md\(r"""\n    # [^\n]*\n)',
                        lambda m: m.group(1) + note, source, count=1)
    source = RUN_AGAIN.sub(lambda m: m.group(0) + " (in marimo: press that cell's run button, ▶)", source)
    source = SOLUTION_LINK.sub(lambda m: f"](../solutions/{m.group('path')}.ipynb)", source)
    return LESSON_LINK.sub(lambda m: f"]({m.group('path')}.py)", source)


def build(path: Path) -> str:
    return rewrite(path.stem, convert(path))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="only lessons whose file name starts with one of these")
    parser.add_argument("--check", action="store_true", help="compare with the stored marimo lessons")
    args = parser.parse_args(argv)
    stale = []
    for path in lessons(args.names):
        text = build(path)
        target = OUT / (path.stem + ".py")
        if args.check:
            stored = target.read_text(encoding="utf-8") if target.exists() else ""
            if GENERATED_WITH.sub("", stored) != GENERATED_WITH.sub("", text):  # marimo's version line aside
                stale.append(target)
                sys.stdout.writelines(difflib.unified_diff(stored.splitlines(True), text.splitlines(True),
                                                           str(target), "fresh build", n=1))
            continue
        OUT.mkdir(exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(f"marimo_build: {target.relative_to(HERE.parent)}")
    if stale:
        print(f"marimo_build: {len(stale)} stored marimo lesson(s) differ from their lesson: make notebooks",
              file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
