"""The player's notebook output keeps what each front end needs (Colab, VS Code, JupyterLab).

Colab renders a third-party widget only through its custom widget manager, which anywidget turns on
through the metadata of the widget's output. These tests stand in a fake ``google.colab.output`` module
(what anywidget looks for) and compare the player's bundle with anywidget's own for the same widget:
every key of that metadata is kept, and the PNG fallback stays beside it.
"""

from __future__ import annotations

import sys
import types

import pytest

import viz
from viz import render
from viz.animate import animate

COLAB_URL = "https://colab.example/widget-manager.js"  # never fetched: only compared


@pytest.fixture
def colab(monkeypatch):
    """A stand-in for Colab's output module, as anywidget's ``in_colab`` finds it."""
    output = types.ModuleType("google.colab.output")
    output.enable_custom_widget_manager = lambda: None
    output._widgets = types.SimpleNamespace(_installed_url=COLAB_URL)
    google = types.ModuleType("google")
    colab = types.ModuleType("google.colab")
    colab.output = output
    google.colab = colab
    monkeypatch.setitem(sys.modules, "google", google)
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setitem(sys.modules, "google.colab.output", output)
    return output


def small_player(mg, graphs):
    built = graphs["small"](mg)
    return animate(built.loss, params=built.leaves)


def test_on_colab_the_player_keeps_anywidgets_metadata(mg, graphs, pgv, colab):
    player = small_player(mg, graphs)
    data, meta = player._repr_mimebundle_()
    own_data, own_meta = player.widget._repr_mimebundle_()  # anywidget's bundle for the same widget
    view = "application/vnd.jupyter.widget-view+json"
    assert own_meta[view]["colab"]["custom_widget_manager"]["url"] == COLAB_URL  # the fake is what anywidget reads
    assert data[view] == own_data[view]
    for key, value in own_meta.items():  # every key anywidget gives, as it gives it
        assert meta[key] == value
    assert "image/png" in data and "image/png" in meta  # the still picture stays for hosts without widgets


def test_outside_colab_the_bundle_is_unchanged(mg, graphs, pgv):
    player = small_player(mg, graphs)
    data, meta = player._repr_mimebundle_()
    own_meta = player.widget._repr_mimebundle_()[1]
    assert own_meta == {} and sorted(meta) == ["image/png"]
    assert sorted(data) == ["application/vnd.jupyter.widget-view+json", "image/png", "text/plain"]


def test_a_drawing_laid_out_in_the_browser_keeps_the_metadata_too(mg, colab, monkeypatch):
    # without a Graphviz in Python, viz.draw shows a widget that lays the DOT out in the browser
    monkeypatch.setattr(render, "find_renderer", lambda: None)
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    out = viz.draw((x * 3).sum())._repr_mimebundle_()
    assert isinstance(out, tuple), "the metadata must travel with the widget view"
    data, meta = out
    assert "application/vnd.jupyter.widget-view+json" in data
    assert meta["application/vnd.jupyter.widget-view+json"]["colab"]["custom_widget_manager"]["url"] == COLAB_URL


def test_in_marimo_the_player_carries_the_other_layout_and_answers_pings(mg, graphs, pgv, monkeypatch):
    # marimo's exported page keeps the widget's state and has no kernel: the other direction travels along
    marimo = types.ModuleType("marimo")
    marimo.running_in_notebook = lambda: True
    monkeypatch.setitem(sys.modules, "marimo", marimo)
    player = small_player(mg, graphs)
    widget = player.widget
    assert widget.svg_alt.startswith("<svg") and widget.svg_alt != widget.svg
    sent = []
    monkeypatch.setattr(widget, "send", lambda content, buffers=None: sent.append(content))
    player._on_msg(widget, {"type": "ping"}, [])  # the page asks whether a kernel is there
    assert sent == [{"type": "pong"}]


def test_outside_marimo_the_other_layout_is_made_on_request(mg, graphs, pgv, monkeypatch):
    monkeypatch.delitem(sys.modules, "marimo", raising=False)
    player = small_player(mg, graphs)
    assert player.widget.svg_alt == ""


def test_in_marimo_a_quiz_player_carries_the_other_layout_too(mg, graphs, pgv, monkeypatch):
    marimo = types.ModuleType("marimo")
    marimo.running_in_notebook = lambda: True
    monkeypatch.setitem(sys.modules, "marimo", marimo)
    built = graphs["small"](mg)
    player = animate(built.loss, params=built.leaves, quiz=True)
    assert player.widget.svg_alt.startswith("<svg")
