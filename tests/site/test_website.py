"""The course's website (notebooks/website.py, `make site`): links, formulas, and what is fetched.

The browser test (tests/browser/test_site_browser.py) builds a part of the site and plays it; these tests
check the pieces the build is made of, on small inputs, without a kernel.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def website():
    sys.path.insert(0, str(REPO / "notebooks"))  # website.py imports the course's build and links modules
    try:
        spec = importlib.util.spec_from_file_location("website", REPO / "notebooks" / "website.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(REPO / "notebooks"))


def test_links_between_lessons_and_docs_become_links_between_pages(website):
    md = ("Next: [lesson 4](04_accumulation_and_retain_graph.ipynb), [the ops](03_backward.ipynb#the-chain-rule); "
          "stuck? [the solution](solutions/03_backward.ipynb); see [the guide](../docs/viz.md#players); "
          "read [the engine](../minigrad/autograd/engine.py).")
    out = website.relink(md, "https://github.com/o/r", "main")
    assert "](04_accumulation_and_retain_graph.html)" in out and "](03_backward.html#the-chain-rule)" in out
    # the site is built from the learners' lessons: a solution stays in the repository
    assert "[the solution](https://github.com/o/r/blob/main/notebooks/solutions/03_backward.ipynb)" in out
    assert "](../docs/viz.html#players)" in out
    # a source file a lesson opens is read in the repository (the site has no page for it)
    assert "[the engine](https://github.com/o/r/blob/main/minigrad/autograd/engine.py)" in out
    # a partial build links the lessons it leaves out to the repository
    partial = website.relink(md, "https://github.com/o/r", "main", built={"03_backward"})
    assert "](https://github.com/o/r/blob/main/notebooks/04_accumulation_and_retain_graph.ipynb)" in partial
    assert "](03_backward.html#the-chain-rule)" in partial


def test_formulas_become_mathml_outside_code(website):
    text = "<p>Then $dy/dx = 3x^2$ and $$H_{ij} = \\frac{\\partial^2 f}{\\partial x_i \\partial x_j}$$</p>" \
           "<p><code>cost = $5</code> and <pre>echo $HOME $PATH</pre></p>"
    out = website.mathml(text)
    assert out.count("<math") == 2 and 'display="block"' in out and "<mfrac>" in out
    assert "$" not in out.split("<code>")[0]  # every formula converted
    assert "<code>cost = $5</code>" in out and "<pre>echo $HOME $PATH</pre>" in out  # code untouched


def test_the_link_checker_finds_dead_links_missing_anchors_and_fetches(website, tmp_path):
    (tmp_path / "lessons").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="lessons/a.html#there">ok</a> <a href="lessons/a.html#nowhere">no anchor</a>'
        '<a href="lessons/missing.html">dead</a> <a href="https://mybinder.org/v2/gh/o/r/main">out</a>'
        '<a href="http://example.org/">plain http</a> <img src="https://cdn.example/x.png">'
        '<a href="#top">top</a><h1 id="top">t</h1>')
    (tmp_path / "lessons" / "a.html").write_text('<h2 id="there">x</h2><iframe src="players/p.html"></iframe>'
                                                 '<a href="../index.html">home</a>')
    problems = website.dead_links(tmp_path)
    assert len(problems) == 5, problems
    joined = "\n".join(problems)
    assert "lessons/a.html#nowhere: no element has the id 'nowhere'" in joined
    assert "lessons/missing.html leads to no file of the site" in joined
    assert "http://example.org/ is not https" in joined
    assert "https://cdn.example/x.png is loaded from the network" in joined
    assert "players/p.html leads to no file of the site" in joined
    (tmp_path / "lessons" / "players").mkdir()
    (tmp_path / "lessons" / "players" / "p.html").write_text("<p>player</p>")
    assert len(website.dead_links(tmp_path)) == 4


def test_the_pages_workflow_builds_with_make_site():
    workflow = (REPO / ".github" / "workflows" / "pages.yml").read_text()
    assert "make site" in workflow and "upload-pages-artifact" in workflow and "deploy-pages" in workflow
    assert "path: build/site" in workflow
