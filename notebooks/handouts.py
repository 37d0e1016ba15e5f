"""Handouts for learners without Jupyter: each lesson as one static HTML file and as a PDF.

    python notebooks/handouts.py                 # every lesson and solution -> build/handouts/  (make handouts)
    python notebooks/handouts.py 03 05 --out DIR # only the notebooks whose name starts with 03 or 05

For every stored notebook (the lessons in ``notebooks/``, the solutions in ``notebooks/solutions/``) this
writes ``NN_name.html``: nbconvert's HTML of the notebook as stored, its pictures as the PNGs stored beside
every SVG (embedded, so the file stands alone; SVG and widget views are left out, as the conventions ask),
links between lessons pointing at the other handouts. Then ``NN_name.pdf``, that HTML printed by Debian's
headless chromium (``--print-to-pdf``). Formulas: the HTML loads MathJax from its CDN when opened online;
the PDF is printed with Debian's MathJax (package ``libjs-mathjax``, which ``make handouts`` installs), so
it needs no network, and shows the TeX source if that package is missing.
"""

from __future__ import annotations

import argparse
import copy
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "build" / "handouts"
CHROMIUM = Path("/usr/bin/chromium")
LOCAL_MATHJAX = Path("/usr/share/javascript/mathjax/MathJax.js")
MATHJAX_CONFIG = "?config=TeX-AMS_CHTML-full,Safe"
# headless, and nothing that reaches out: no background updates, sync, first-run pages or GPU
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--no-pdf-header-footer",
                  "--virtual-time-budget=20000"]  # lets MathJax typeset before the page is printed
NOTEBOOK_LINK = re.compile(r"\]\((?P<path>(?:\.\./|solutions/)?\d\d_\w+)\.ipynb\)")
PICTURES = ("image/svg+xml", "application/vnd.jupyter.widget-view+json")


def notebooks(selected: list[str] | None = None) -> list[Path]:
    paths = sorted(HERE.glob("[0-9][0-9]_*.ipynb")) + sorted((HERE / "solutions").glob("[0-9][0-9]_*.ipynb"))
    if selected:
        paths = [p for p in paths if any(p.name.startswith(s) for s in selected)]
    return paths


def prepare(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook as a handout shows it: PNG pictures only, links to the other handouts."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = NOTEBOOK_LINK.sub(lambda m: f"]({m.group('path')}.html)", cell.source)
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                for mime in PICTURES:
                    data.pop(mime, None)
    return nb


def to_html(nb: nbformat.NotebookNode, mathjax_url: str | None = None) -> str:
    """nbconvert's HTML (the lab template) of a prepared notebook."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter()
    if mathjax_url is not None:
        exporter.mathjax_url = mathjax_url
    html, _ = exporter.from_notebook_node(nb)
    return html


def print_pdf(html_path: Path, pdf_path: Path, chromium: Path = CHROMIUM) -> None:
    """Print an HTML file to PDF with headless chromium; raises when no PDF comes out."""
    with tempfile.TemporaryDirectory() as profile:
        run = subprocess.run([str(chromium), *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                              f"--print-to-pdf={pdf_path}", html_path.resolve().as_uri()],
                             capture_output=True, text=True, timeout=180)
    if not pdf_path.exists() or pdf_path.stat().st_size == 0:
        raise RuntimeError(f"chromium printed no PDF for {html_path.name} (exit {run.returncode}): {run.stderr[-500:]}")


def make(path: Path, out: Path, pdf: bool = True) -> list[Path]:
    """The handout(s) of one stored notebook: HTML, and the PDF unless ``pdf`` is False."""
    rel = path.relative_to(HERE).with_suffix("")
    html_path = out / rel.with_suffix(".html")
    html_path.parent.mkdir(parents=True, exist_ok=True)
    nb = prepare(nbformat.read(path, as_version=4))
    html_path.write_text(to_html(nb), encoding="utf-8")
    written = [html_path]
    if pdf:
        pdf_path = html_path.with_suffix(".pdf")
        mathjax = LOCAL_MATHJAX.as_uri() + MATHJAX_CONFIG if LOCAL_MATHJAX.exists() else None
        with tempfile.TemporaryDirectory() as tmp:
            printable = Path(tmp) / html_path.name
            printable.write_text(to_html(nb, mathjax) if mathjax else html_path.read_text(encoding="utf-8"),
                                 encoding="utf-8")
            print_pdf(printable, pdf_path)
        written.append(pdf_path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="only notebooks whose file name starts with one of these")
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT})")
    parser.add_argument("--no-pdf", action="store_true", help="HTML only")
    args = parser.parse_args(argv)
    if not args.no_pdf and not CHROMIUM.exists():
        print(f"handouts: {CHROMIUM} is missing (make browser-deps installs it); --no-pdf writes HTML only",
              file=sys.stderr)
        return 2
    if not args.no_pdf and not LOCAL_MATHJAX.exists():
        print(f"handouts: {LOCAL_MATHJAX} is missing (Debian's libjs-mathjax): the PDFs show formulas as TeX",
              file=sys.stderr)
    paths = notebooks(args.names)
    if args.out.exists() and not args.names:
        shutil.rmtree(args.out)
    for path in paths:
        for written in make(path, args.out, pdf=not args.no_pdf):
            print(f"handouts: {written}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
