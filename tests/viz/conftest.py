"""Fixtures for viz tests.

``torch`` comes from tests/conftest.py (skips without torch, fails under CI=true). ``pgv``
does the same for pygraphviz: its skip reason starts with "missing tool:", which the
top-level conftest turns into a failure under CI=true. ``fakes`` is a tiny duck-typed
autograd graph with minigrad's introspection names (tests/viz/viz_fakes.py), for testing
that code path before minigrad exists.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


@pytest.fixture
def parse_dot(pgv):
    """DOT text -> pygraphviz.AGraph (parsing also proves the DOT is well formed)."""

    def parse(source: str):
        from viz.render import quiet_stderr

        with quiet_stderr():
            return pgv.AGraph(string=source)

    return parse


@pytest.fixture(scope="session")
def fakes():
    path = Path(__file__).with_name("viz_fakes.py")
    spec = importlib.util.spec_from_file_location("viz_fakes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def label_text():
    """The plain text of a (HTML-like) DOT label, as a reader would see it."""
    import html
    import re

    def text(label: str) -> str:
        """One line per table row or line break; entities and doubled backslashes undone."""
        label = re.sub(r"<BR[^>]*>|</TR>", "\n", str(label))
        plain = html.unescape(re.sub(r"<[^>]*>", "", label)).replace("\\\\", "\\")
        return plain.strip("\n")

    return text


@pytest.fixture(scope="session")
def svg_texts():
    """SVG text -> {node id: its visible text lines joined by newlines} (parses the XML)."""
    import xml.etree.ElementTree as ET

    ns = {"svg": "http://www.w3.org/2000/svg"}

    def texts(svg: str) -> dict[str, str]:
        root = ET.fromstring(svg)
        out = {}
        for group in root.iter("{http://www.w3.org/2000/svg}g"):
            if group.get("class") != "node":
                continue
            title = group.find("svg:title", ns).text
            out[title] = "\n".join(t.text or "" for t in group.iter("{http://www.w3.org/2000/svg}text"))
        return out

    return texts
