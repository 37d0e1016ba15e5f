"""Handouts (notebooks/handouts.py, `make handouts`): standalone HTML with the stored PNG pictures, and a
PDF printed by Debian's headless chromium. One lesson is printed here (all of them take about a minute)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_handout_shows_the_png_pictures_and_links_to_other_handouts(handouts):
    path = ROOT / "notebooks" / "03_backward.ipynb"
    stored = nbformat.read(path, as_version=4)
    pictures = sum("image/png" in o.get("data", {}) for c in stored.cells for o in c.get("outputs", []))
    assert pictures >= 2
    html = handouts.to_html(handouts.prepare(stored))
    assert html.count('src="data:image/png;base64,') == pictures
    assert "jp-RenderedSVG jp-OutputArea" not in html  # PNG only
    assert not re.search(r'<img[^>]*src="data:image/svg', html)
    assert "widget-view" not in html
    assert "(04_accumulation_and_retain_graph.html)" not in html  # links are rendered, not left as Markdown
    assert 'href="04_accumulation_and_retain_graph.html"' in html and 'href="solutions/03_backward.html"' in html
    assert ".ipynb\"" not in html


def test_make_handouts_prints_a_pdf_with_chromium(handouts, tmp_path):
    if not handouts.CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{handouts.CHROMIUM} is missing: `make browser-deps` installs it")
        pytest.skip(f"{handouts.CHROMIUM} is missing (make browser-deps)")
    written = handouts.make(ROOT / "notebooks" / "05_hooks.ipynb", tmp_path)
    assert [p.name for p in written] == ["05_hooks.html", "05_hooks.pdf"]
    pdf = written[1].read_bytes()
    assert pdf.startswith(b"%PDF-")
    pages = len(re.findall(rb"/Type\s*/Page\b", pdf))
    assert pages >= 3, f"{pages} page(s)"
    assert len(re.findall(rb"/Subtype\s*/Image", pdf)) >= 1, "the PNG pictures are printed"


def test_makefile_has_the_targets():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("grade:", "autograder:", "handouts:", "install-grade:"):
        assert f"\n{target}" in makefile, target
    assert "notebooks/handouts.py" in makefile and "notebooks/grade.py" in makefile
