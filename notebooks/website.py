"""The course as a website that plays with no install: every lesson a page, every player playing.

    python notebooks/website.py                   # every lesson -> build/site/  (make site)
    python notebooks/website.py 00 03 --out DIR   # only the lessons whose name starts with 00 or 03

Built from the learners' lessons (``notebooks/NN_name.ipynb``, never ``solutions/``): each is run again in
a kernel of this interpreter, where every player a cell shows is also written as a standalone page
(``viz``'s own export, the one ``player.save_html`` writes: it plays and its quizzes score with no kernel)
and shown in the lesson's page in a frame. Graphs keep their SVG; formulas become MathML (read by the
browser itself, no MathJax); links between lessons point at their pages. The exercises are shown with
their checks, read-only, beside a link that runs the lesson in Binder and the notebook to download. Pages
under ``docs/`` (Markdown) become pages of the site too. Nothing in the site is fetched from the network:
no CDN, no fonts, no script from elsewhere (a test opens it with the network cut off).

Why the course's own build and not a site generator: the pages must carry the players' standalone
runtime (which Jupyter Book 2 / mystmd and MkDocs know nothing of), mystmd fetches its site template at
build time, and the course already has every piece (nbclient, nbconvert, the players' export).
"""

from __future__ import annotations

import argparse
import copy
import html
import os
import re
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import nbformat

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = REPO / "build" / "site"
DOCS = REPO / "docs"
DEFAULT_REPO_URL = "https://github.com/minigrad-lab/minigrad"  # where Binder finds the course; --repo overrides
TITLE = "minigrad: see and learn how autograd works"

# Run first in the lesson's kernel (and removed from the page): every player shown is written as a standalone
# page next to the lesson, and the cell's HTML output frames it. Nothing else of the lesson changes.
PRELUDE = """\
import itertools as _it, os as _os
from IPython import get_ipython as _get_ipython
from viz.export import page as _page
from viz.files import write_atomic as _write
from viz.player import Player as _Player
_site_count = _it.count(1)

def _site_player(player):
    name = f"{_os.environ['MINIGRAD_SITE_LESSON']}-player-{next(_site_count)}.html"
    target = _os.path.join(_os.environ["MINIGRAD_SITE_PLAYERS"], name)
    _write(target, _page(player.scene, title=repr(player), frame=player.frame))
    return (f'<iframe class="mg-site-player" src="players/{name}" title="{repr(player)}" '
            f'data-steps="{player.num_steps}"></iframe>')

_get_ipython().display_formatter.formatters["text/html"].for_type(_Player, _site_player)
"""

LESSON_LINK = re.compile(r"\]\((?P<path>\d\d_\w+)\.ipynb(?P<anchor>#[^)]*)?\)")
SOLUTION_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?:\.\./)?solutions/(?P<path>\d\d_\w+)\.ipynb\)")
DOC_LINK = re.compile(r"\]\((?:\.\./)*docs/(?P<path>[\w-]+)\.md(?P<anchor>#[^)]*)?\)")
SOURCE_LINK = re.compile(r"\]\(\.\./(?P<path>(?:minigrad|viz|bench|tests)/[^)\s]+)\)")  # the code a lesson opens
IMAGE = re.compile(r"(?P<alt>!\[[^\]]*\])\((?!https?:)(?P<path>[^)\s]+)\)")  # a picture a Markdown page shows
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
EXTERNAL_SCRIPT = re.compile(r"<script[^>]*\bsrc=\"https?://[^\"]*\"[^>]*>\s*</script>\s*", re.IGNORECASE)
MERMAID = re.compile(r"<script type=\"module\">(?:(?!</script>).)*mermaid(?:(?!</script>).)*</script>\s*", re.DOTALL)
MARKDOWN_CELL = re.compile(r'(<div class="[^"]*jp-RenderedMarkdown[^"]*"[^>]*>)(.*?)(</div>)', re.DOTALL)
CODE = re.compile(r"(<code\b.*?</code>|<pre\b.*?</pre>)", re.DOTALL | re.IGNORECASE)
MATH = re.compile(r"\$\$(?P<display>.+?)\$\$|\$(?P<inline>[^$\n]+?)\$", re.DOTALL)

SITE_CSS = """
.mg-site-bar { position: sticky; top: 0; z-index: 10; display: flex; flex-wrap: wrap; gap: 6px 18px;
  align-items: center; padding: 8px 16px; background: #f4f6fb; border-bottom: 1px solid #d0d7e2;
  font: 14px/1.4 system-ui, sans-serif; }
.mg-site-bar a { color: #1f4f9c; text-decoration: none; }
.mg-site-bar a:hover { text-decoration: underline; }
.mg-site-bar .mg-site-home { font-weight: 600; margin-right: auto; }
.mg-site-note { margin: 12px 16px 0; padding: 8px 12px; border-left: 4px solid #1f4f9c; background: #f4f6fb;
  font: 14px/1.5 system-ui, sans-serif; }
iframe.mg-site-player { display: block; width: 100%; min-height: 360px; height: 560px; border: 1px solid #d0d7e2;
  border-radius: 6px; background: #fff; }
math[display="block"] { margin: 0.6em 0; }
body.mg-site-doc main { max-width: 52rem; margin: 0 auto; padding: 8px 20px 40px; font: 16px/1.6 system-ui,
  sans-serif; color: #1a1a1a; }
.mg-site-lessons { list-style: none; padding-left: 0; } .mg-site-lessons li { margin: 6px 0; }
body.mg-site-doc pre { background: #f6f8fa; padding: 10px 12px; overflow-x: auto; border-radius: 6px; }
body.mg-site-doc code { font-size: 0.92em; }
body.mg-site-doc table { border-collapse: collapse; } body.mg-site-doc td, body.mg-site-doc th {
  border: 1px solid #d0d7e2; padding: 4px 8px; }
"""

# The frames of the players grow to their content: each standalone page posts its height (viz's export does).
SITE_JS = """<script>
window.addEventListener("message", function (event) {
  var h = event.data && event.data.mgHeight;
  if (typeof h !== "number") return;
  document.querySelectorAll("iframe.mg-site-player").forEach(function (f) {
    if (f.contentWindow === event.source) f.style.height = Math.ceil(h + 4) + "px";
  });
});
</script>
"""


def lessons(selected: list[str] | None = None) -> list[Path]:
    """The learners' lessons, in order (never the solutions)."""
    paths = sorted(HERE.glob("[0-9][0-9]_*.ipynb"))
    if selected:
        paths = [p for p in paths if any(p.name.startswith(s) for s in selected)]
    return paths


def docs_pages() -> list[Path]:
    return sorted(DOCS.glob("*.md")) if DOCS.is_dir() else []


def title_of(nb: nbformat.NotebookNode, fallback: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return re.sub(r"[`*]", "", line[2:]).strip()
    return fallback


def run(path: Path, players: Path) -> nbformat.NotebookNode:
    """The lesson run again, its players written into ``players/`` and framed in their cells' outputs."""
    import build  # the course's own build: its kernel of this interpreter, its settings

    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(PRELUDE))
    os.environ["MINIGRAD_SITE_PLAYERS"] = str(players)
    os.environ["MINIGRAD_SITE_LESSON"] = path.stem
    build.execute(nb, HERE)
    del nb.cells[0]
    return nb


def prepare(nb: nbformat.NotebookNode, repo: str, branch: str, built: set[str]) -> nbformat.NotebookNode:
    """The notebook as the site shows it: links between pages, no widget views (their players are framed)."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = relink(cell.source, repo, branch, built)
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            data.pop(WIDGET_VIEW, None)
            if "mg-site-player" in data.get("text/html", ""):
                data.pop("image/png", None)  # the player itself plays here; its still picture is not needed
    return nb


def relink(markdown: str, repo: str, branch: str, built: set[str] | None = None) -> str:
    """Lesson links to lesson pages, docs links to docs pages; the solutions stay in the repository, and so do
    lessons a partial build (``built``: the lessons it has) leaves out, and the source files a lesson opens."""
    blob = f"{repo}/blob/{quote(branch, safe='')}/notebooks"
    markdown = SOLUTION_LINK.sub(lambda m: f"[{m.group('text')}]({blob}/solutions/{m.group('path')}.ipynb)", markdown)

    def lesson(m: re.Match) -> str:
        if built is not None and m.group("path") not in built:
            return f"]({blob}/{m.group('path')}.ipynb)"
        return f"]({m.group('path')}.html{m.group('anchor') or ''})"

    markdown = LESSON_LINK.sub(lesson, markdown)
    markdown = SOURCE_LINK.sub(lambda m: f"]({repo}/blob/{quote(branch, safe='')}/{m.group('path')})", markdown)
    return DOC_LINK.sub(lambda m: f"](../docs/{m.group('path')}.html{m.group('anchor') or ''})", markdown)


def mathml(text: str) -> str:
    """TeX between dollars (as nbconvert leaves it in rendered Markdown) as MathML, outside code."""
    from latex2mathml.converter import convert

    def one(m: re.Match) -> str:
        display = m.group("display") is not None
        tex = html.unescape(m.group("display") if display else m.group("inline"))
        try:
            return convert(tex.strip(), display="block" if display else "inline")
        except Exception:  # a formula latex2mathml cannot read stays as its TeX, visibly
            return m.group(0)

    parts = CODE.split(text)
    return "".join(p if i % 2 else MATH.sub(one, p) for i, p in enumerate(parts))


def to_html(nb: nbformat.NotebookNode) -> str:
    """nbconvert's HTML (the lab template), with nothing fetched: no require.js, no MathJax."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    body = MERMAID.sub("", EXTERNAL_SCRIPT.sub("", body))  # (the course draws no Mermaid diagrams)
    return MARKDOWN_CELL.sub(lambda m: m.group(1) + mathml(m.group(2)) + m.group(3), body)


def bar(links: list[tuple[str, str]], home: str) -> str:
    items = "".join(f'<a href="{html.escape(href)}"{" download" if href.endswith(".ipynb") else ""}>'
                    f'{html.escape(text)}</a>' for text, href in links)
    return f'<nav class="mg-site-bar"><a class="mg-site-home" href="{home}">{html.escape(TITLE)}</a>{items}</nav>'


def decorate(page: str, nav: str, note: str = "") -> str:
    """A page with the site's bar, its note, its style and the players' resizing."""
    page = page.replace("</head>", f"<style>{SITE_CSS}</style>\n</head>", 1)
    page = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + nav + note, page, count=1)
    return page.replace("</body>", SITE_JS + "</body>", 1)


def lesson_page(nb: nbformat.NotebookNode, path: Path, order: list[Path], repo: str, branch: str) -> str:
    from links import binder_link

    i = order.index(path)
    links = []
    if i > 0:
        links.append(("← previous", order[i - 1].stem + ".html"))
    if i + 1 < len(order):
        links.append(("next →", order[i + 1].stem + ".html"))
    binder = binder_link(repo, branch, f"notebooks/{path.name}")
    links += [("run it in Binder", binder), ("download the notebook", f"notebooks/{path.name}")]
    note = ('<p class="mg-site-note">This page shows the lesson as stored, run once: the players play and the '
            'quizzes score right here, with no install. To answer the exercises and run their checks, open the '
            f'notebook: <a href="{html.escape(binder)}">run it in Binder</a>, or download it and open it in '
            'JupyterLab (<code>make lab</code>).</p>')
    built = {p.stem for p in order}
    return decorate(to_html(prepare(nb, repo, branch, built)), bar(links, "../index.html"), note)


def doc_page(path: Path, repo: str, branch: str, assets: Path | None = None) -> str:
    """A Markdown page of docs/ as HTML (nbconvert's Markdown renderer, the one the lessons use). Its pictures are
    copied into ``assets`` (nothing is fetched); its other links into the repository point at the repository."""
    from nbconvert.filters.markdown import markdown2html

    text = path.read_text(encoding="utf-8")
    if assets is not None:
        text = IMAGE.sub(lambda m: m.group("alt") + f"(assets/{_copy_asset(path.parent / m.group('path'), assets)})",
                         text)
    text = re.sub(r"\]\((?P<name>[\w-]+)\.md(?P<anchor>#[^)]*)?\)",
                  lambda m: f"]({m.group('name')}.html{m.group('anchor') or ''})", text)
    text = re.sub(r"\]\((?:\.\./)?notebooks/(?P<path>\d\d_\w+)\.ipynb\)", r"](../lessons/\g<path>.html)", text)
    text = re.sub(r"\]\((?!https?:|#|\.\./lessons/|assets/|[\w-]+\.html)(?P<path>[^)\s]+)\)",
                  lambda m: f"]({repo}/blob/{quote(branch, safe='')}/{m.group('path').removeprefix('../')})", text)
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), path.stem)
    body = markdown2html(text)
    return decorate(f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                    f'<meta name="viewport" content="width=device-width, initial-scale=1">'
                    f"<title>{html.escape(title)}</title></head><body class=\"mg-site-doc\"><main>{body}</main>"
                    "</body></html>", bar([], "../index.html"))


def _copy_asset(source: Path, assets: Path) -> str:
    """Copy a picture a page shows into the site's assets; its name there."""
    assets.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, assets / source.name)
    return source.name


def index_page(titles: list[tuple[str, str]], docs: list[tuple[str, str]], repo: str) -> str:
    rows = "".join(f'<li><a href="lessons/{html.escape(stem)}.html">{html.escape(t)}</a></li>' for stem, t in titles)
    doc_rows = "".join(f'<li><a href="docs/{html.escape(stem)}.html">{html.escape(t)}</a></li>' for stem, t in docs)
    docs_part = f"<h2>Guides</h2><ul>{doc_rows}</ul>" if doc_rows else ""
    body = (f"<h1>{html.escape(TITLE)}</h1><p>A course through PyTorch's autograd, run on minigrad (a NumPy "
            "autograd with PyTorch's API) and drawn by viz, which animates every backward pass step by step. "
            "Every player on these pages plays, and every quiz asks and scores, in your browser with nothing "
            "installed.</p>"
            f"<h2>Lessons</h2><ul class=\"mg-site-lessons\">{rows}</ul>{docs_part}"
            f'<p>The code, the notebooks to run and the setup: <a href="{html.escape(repo)}">the repository</a>.</p>')
    return decorate(f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                    f'<meta name="viewport" content="width=device-width, initial-scale=1">'
                    f"<title>{html.escape(TITLE)}</title></head><body class=\"mg-site-doc\"><main>{body}</main>"
                    "</body></html>", bar([], "index.html"))


class _Links(HTMLParser):
    """The links (href) and the loaded resources (src) of a page, and its anchors (id, name)."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.loads: list[str] = []
        self.anchors: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        for key, value in attrs:
            if value is None:
                continue
            if key == "href" and tag in ("a", "area"):
                self.links.append(value)
            elif key == "href" or key == "src":  # <link href>, <script src>, <img src>, <iframe src>: loaded
                self.loads.append(value)
            elif key in ("id", "name"):
                self.anchors.add(value)


def _parse(page: Path, cache: dict) -> _Links:
    if page not in cache:
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        cache[page] = parser
    return cache[page]


def dead_links(site: Path) -> list[str]:
    """Every problem of the site's links: a link or a resource to a file that is not there, an anchor no element
    has, a resource from the network (nothing is fetched). Links out (Binder, the repository) must be https; they
    are not followed (the site is checked offline)."""
    problems, cache = [], {}
    for page in sorted(site.rglob("*.html")):
        found = _parse(page, cache)
        for url, loaded in [(u, False) for u in found.links] + [(u, True) for u in found.loads]:
            parts = urlsplit(url)
            where = f"{page.relative_to(site)}: {url}"
            if parts.scheme in ("http", "https") or url.startswith("//"):
                if loaded:
                    problems.append(f"{where} is loaded from the network")
                elif parts.scheme != "https":
                    problems.append(f"{where} is not https")
                continue
            if parts.scheme in ("data", "mailto", "blob", "javascript") or (not parts.path and not parts.fragment):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.is_file() or site.resolve() not in target.parents:
                problems.append(f"{where} leads to no file of the site")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _parse(
                    target, cache).anchors:
                problems.append(f"{where}: no element has the id {parts.fragment!r}")
    return problems


def build_site(out: Path, selected: list[str] | None = None, repo: str = DEFAULT_REPO_URL,
               branch: str = "main") -> list[Path]:
    """Write the site into ``out`` (replaced whole: written beside it, then moved in). Returns the pages."""
    order = lessons(selected)
    if not order:
        raise SystemExit(f"website: no lesson matches {selected}")
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "lessons" / "players").mkdir(parents=True)
    (tmp / "lessons" / "notebooks").mkdir()
    titles = []
    for path in order:
        print(f"website: {path.name}", flush=True)
        nb = run(path, tmp / "lessons" / "players")
        (tmp / "lessons" / f"{path.stem}.html").write_text(lesson_page(nb, path, order, repo, branch),
                                                           encoding="utf-8")
        shutil.copy2(path, tmp / "lessons" / "notebooks" / path.name)
        titles.append((path.stem, title_of(nb, path.stem)))
    docs = []
    for path in docs_pages():
        (tmp / "docs").mkdir(exist_ok=True)
        (tmp / "docs" / f"{path.stem}.html").write_text(doc_page(path, repo, branch, tmp / "docs" / "assets"),
                                                        encoding="utf-8")
        docs.append((path.stem, next((line[2:].strip() for line in path.read_text(encoding="utf-8").splitlines()
                                      if line.startswith("# ")), path.stem)))
    (tmp / "index.html").write_text(index_page(titles, docs, repo), encoding="utf-8")
    (tmp / ".nojekyll").write_text("")  # GitHub Pages serves the files as they are
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return sorted(out.rglob("*.html"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="only lessons whose file name starts with one of these")
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT})")
    parser.add_argument("--repo", default=DEFAULT_REPO_URL, help="the course's GitHub repository (Binder's link)")
    parser.add_argument("--branch", default="main")
    args = parser.parse_args(argv)
    pages = build_site(args.out, args.names, args.repo, args.branch)
    problems = dead_links(args.out)
    for problem in problems:
        print(f"website: dead link: {problem}", file=sys.stderr)
    print(f"website: {len(pages)} pages in {args.out}, {len(problems)} dead links (open {args.out / 'index.html'})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
