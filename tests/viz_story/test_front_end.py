"""The story's front end (viz/story.js, viz/story.css) ships only with the players that use it: sessions,
players with source lines or with the backward-pass layer; player.js keeps room under its budget."""

from __future__ import annotations

import numpy as np
import pytest

import viz
from viz.player import ESM, front_ends

STORY_JS = "storyCls(id, k, cls) {"


def test_only_story_players_carry_the_story_front_end(mg, pgv, tmp_path):
    pytest.importorskip("anywidget")
    x = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    plain = viz.animate((x * x).sum(), params={"x": x})
    with viz.source_lines():
        loss = (x * x).sum()
    lines = viz.animate(loss, params={"x": x}, source=True)
    with viz.session(params={"x": x}) as s:
        (x * 3.0).sum().backward()
    story = s.player()
    assert front_ends(plain.data) == () and front_ends(lines.data) == ("story",) == front_ends(story.data)
    assert STORY_JS not in plain.widget._esm and "mg-l-source" not in plain.widget._css
    for player in (lines, story):
        assert STORY_JS in player.widget._esm and ".mg-l-source" in player.widget._css
    assert STORY_JS not in plain.save_html(tmp_path / "plain.html").read_text(encoding="utf-8")
    assert STORY_JS in story.save_html(tmp_path / "story.html").read_text(encoding="utf-8")
    quiz = viz.animate((x * x).sum(), params={"x": x}, quiz=True, source=True)
    assert front_ends(quiz.data) == ("story", "quiz") and "answers" in quiz.widget.keys
    assert STORY_JS in quiz.widget._esm and "quizGate(k) {" in quiz.widget._esm
    for player in (plain, lines, story, quiz):
        player.close()


def test_player_js_keeps_room():
    # the story's code lives in viz/story.js; player.js only calls its hooks
    assert STORY_JS not in ESM and "mg-pick" not in ESM and "mg-l-source" not in ESM


def test_only_pages_that_lay_the_graph_out_carry_the_layout_code(mg, pgv, monkeypatch, tmp_path):
    """The WebAssembly Graphviz's half of the front end (viz/layout.js) ships where Python has no Graphviz:
    with the players drawn there, viz.draw's widget and their exported pages; player.js keeps the room."""
    pytest.importorskip("anywidget")
    from viz import render
    from viz.player import graph_widget

    x = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    plain = viz.animate((x * x).sum(), params={"x": x})
    monkeypatch.setattr(render, "find_renderer", lambda: None)  # as without pygraphviz and dot
    laid = viz.animate((x * x).sum(), params={"x": x})
    assert front_ends(plain.data) == () and front_ends(laid.data) == ("layout",)
    assert "async layOut(dir) {" not in plain.widget._esm and "async layOut(dir) {" not in ESM
    assert "async layOut(dir) {" in laid.widget._esm
    assert "async layOut(dir) {" in graph_widget(viz.draw((x * x).sum()))._esm
    page = laid.save_html(tmp_path / "laid.html").read_text(encoding="utf-8")
    assert "async layOut(dir) {" in page and 'id="mg-graphviz"' in page
    assert len(ESM) < 36_000  # room under the 40,000 budget (tests/viz_anim/test_player.py)
    plain.close()
    laid.close()
