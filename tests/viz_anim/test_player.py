"""The player widget, the standalone HTML and the filmstrip (no browser needed here)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from viz.animate import animate, record
from viz.player import CSS, ESM

SVG = "{http://www.w3.org/2000/svg}"


def small_player(mg, graphs):
    built = graphs["small"](mg)
    return animate(built.loss, params=built.leaves), built


def test_repr_is_deterministic(mg, graphs, pgv):
    player, _ = small_player(mg, graphs)
    assert repr(player) == "BackwardPlayer(nodes=7, steps=8)"
    again, _ = small_player(mg, graphs)
    assert repr(again) == repr(player)


def test_mimebundle_has_the_widget_and_a_picture(mg, graphs, pgv):
    player, _ = small_player(mg, graphs)
    data, meta = player._repr_mimebundle_()
    assert sorted(data) == ["application/vnd.jupyter.widget-view+json", "image/png", "text/plain"]
    assert data["text/plain"] == "BackwardPlayer(nodes=7, steps=8)"
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == player.widget.model_id
    assert sorted(meta) == ["image/png"]  # the PNG's display size; no text/html, so no inline SVG anywhere
    assert player._repr_mimebundle_()[0] == data  # one widget per player, however often it is shown


def test_widget_state_is_small_and_linear(mg, pgv):
    # sent with every live widget (notebooks are stored without widget state); the front end also lays
    # graphs out and decorates them when Python has no Graphviz, and fits, themes and folds the picture
    assert len(ESM) < 40_000 and len(CSS) < 12_000

    def payload_size(n):
        x = mg.tensor([0.5, 0.25], requires_grad=True)
        y = x
        for _ in range(n):
            y = (y * 1.5).tanh()
        player = animate(y.sum(), params={"x": x})
        return len(json.dumps(player.data)), len(player.frames)

    small, steps_small = payload_size(40)
    big, steps_big = payload_size(80)
    assert steps_big > 1.9 * steps_small
    assert big < 2.3 * small  # no per-frame table of cumulative state (that would grow as N^2)


def test_frame_and_speed_are_traits(mg, graphs, pgv):
    player, _ = small_player(mg, graphs)
    assert player.frame == 0 and player.speed == 1.0
    player.frame = 3
    player.speed = 2.0
    assert player.frame == 3
    assert player.num_steps == len(player.frames) == len(player.data["steps"])
    widget = player.widget  # made now, with the values set before
    assert (widget.frame, widget.speed) == (3, 2.0)
    assert widget.svg == player.scene.svg(html=True) and widget.data == player.data
    widget.frame = 5  # the browser moved
    assert player.frame == 5
    player.frame = 1
    assert widget.frame == 1
    player.close()
    assert player._widget is None and widget.comm is None


def test_save_html_is_self_contained(mg, graphs, pgv, tmp_path):
    player, _ = small_player(mg, graphs)
    path = player.save_html(tmp_path / "player.html")
    text = path.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text
    assert not re.search(r"<script[^>]*\bsrc\s*=", text, re.I)
    assert not re.search(r"<link\b", text, re.I) and "@import" not in text and "fetch(" not in text
    assert "export default" not in text and "__mgModule.render" in text
    state = re.search(r'<script type="application/json" id="mg-state">(.*?)</script>', text, re.S).group(1)
    data = json.loads(state)
    assert [s["title"] for s in data["data"]["steps"]] == [f.title for f in player.frames]
    assert data["svg"].startswith("<svg") and "xmlns" not in data["svg"].split(">", 1)[0]
    again, _ = small_player(mg, graphs)
    assert again.save_html(tmp_path / "again.html").read_text(encoding="utf-8") == text  # deterministic
    with pytest.raises(ValueError, match="html"):
        player.save_html(tmp_path / "player.svg")


def test_svg_is_decorated_for_the_player(mg, graphs, pgv):
    player, _ = small_player(mg, graphs)
    root = ET.fromstring(player.scene.svg(html=False))
    nodes = [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
    edges = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]
    assert [g.get("data-n") for g in nodes] == [f"n{i}" for i in range(7)]
    assert sorted(int(g.get("data-e")) for g in edges) == list(range(8))
    for g in edges:
        assert g.get("data-src") + "->" + g.get("data-dst") == g.find(f"{SVG}title").text
        (label,) = [t for t in g.iter(f"{SVG}text") if "mg-glabel" in (t.get("class") or "")]
        assert label.text in (None, "") and label.get("text-anchor") == "middle"
    saved = [t for t in root.iter(f"{SVG}text") if "mg-saved" in (t.get("class") or "")]
    assert len(saved) == 4 and all(t.text.startswith("saved ") for t in saved)
    notes = [t for t in root.iter(f"{SVG}text") if "mg-note" in (t.get("class") or "")]
    assert len(notes) == 2  # the .grad rows of a and b


def test_static_frames_show_the_state(mg, graphs, pgv):
    player, _ = small_player(mg, graphs)
    frames = player.frames
    k = next(f.step for f in frames if f.name == "MulBackward0")
    root = ET.fromstring(player.svg_at(k))
    node = next(g for g in root.iter(f"{SVG}g") if g.get("data-n") == frames[k].node)
    assert any(el.get("stroke") == "#0072B2" and el.get("stroke-width") == "3" for el in node.iter())
    labels = {t.text for t in root.iter(f"{SVG}text")}
    for send in frames[k].grads_out:
        assert send.label in labels
    last = ET.fromstring(player.svg_at())
    texts = [t.text for t in last.iter(f"{SVG}text")]
    assert ".grad = [9, 20]" in texts and ".grad = [2, 6]" in texts
    struck = [t for t in last.iter(f"{SVG}text") if t.get("text-decoration") == "line-through"]
    assert len(struck) == 4  # every saved value freed by the end


def test_filmstrip(mg, graphs, pgv, tmp_path):
    player, _ = small_player(mg, graphs)
    strip = player.filmstrip(columns=3)
    root = ET.fromstring(strip.svg)
    cells = [s for s in root.iter(f"{SVG}svg") if s is not root]
    assert len(cells) == len(player.frames) == len(strip.steps)
    assert "step 0" in strip.svg and "Backward done" in strip.svg
    assert strip._repr_svg_() == strip.svg
    assert strip.save(tmp_path / "strip.svg").read_text(encoding="utf-8") == strip.svg
    few = player.filmstrip(steps=[0, 3])
    assert few.steps == [0, 3]


def test_filmstrip_png(mg, graphs, pgv, tmp_path):
    player, _ = small_player(mg, graphs)
    paths = player.filmstrip(steps=[0, 4, 7]).save(tmp_path / "strip.png")
    assert [p.name for p in paths] == ["strip-00.png", "strip-04.png", "strip-07.png"]
    for p in paths:
        assert p.read_bytes().startswith(b"\x89PNG")


def test_forward_recording(mg, pgv, tmp_path):
    w0 = mg.tensor([1.0, -1.0], requires_grad=True)  # exists before the block
    with record() as rec:
        x = mg.tensor([1.0, 2.0], requires_grad=True)
        h = x * w0
        loss = (h + 1.0).sum()
    frames = rec.frames
    assert [f.kind for f in frames] == ["before", "create", "create", "create", "done"]
    assert [f.name for f in frames[1:-1]] == ["MulBackward0", "AddBackward0", "SumBackward0"]
    seqs = [f.sequence_nr for f in frames[1:-1]]
    assert seqs == sorted(seqs)
    assert frames[1].variable == "h" and "h.grad_fn is MulBackward0" in frames[1].title
    assert frames[3].variable == "loss"
    assert any("AccumulateGrad" in text for _, text in frames[1].lines)
    assert any("(None, 0)" in text for _, text in frames[2].lines)  # the constant 1.0
    player = rec.player()
    appeared = [n for f in frames for n in f.appear]
    assert sorted(appeared) == sorted(set(appeared))  # each node appears once
    assert len(appeared) == player.scene.num_nodes
    assert repr(player) == f"ForwardPlayer(nodes={player.scene.num_nodes}, steps=5)"
    assert repr(rec) == "Recording(outputs=2, steps=5)"
    text = player.save_html(tmp_path / "forward.html").read_text(encoding="utf-8")
    assert "http://" not in text and "h.grad_fn is MulBackward0" in text
    root = ET.fromstring(player.svg_at(1))
    shown = {g.get("data-n") for g in root.iter(f"{SVG}g") if g.get("data-n")}
    assert len(shown) < player.scene.num_nodes  # later nodes are not drawn yet
    assert loss.grad_fn is not None and x.grad is None  # recording did not run anything


def test_forward_recording_without_a_graph(mg, pgv):
    with record() as rec:
        y = mg.tensor([1.0]) * 2
    assert y.grad_fn is None
    assert rec.frames[0].title == "No graph was built"


@pytest.mark.parametrize("name", ['say "hi"', "back\\slash", 'both \\" of them'])
def test_a_module_name_with_quotes_keeps_the_dot_valid(name):
    # issue 34: the player moves a module's label into its frame's tooltip; the tooltip is a quoted DOT string,
    # which may hold escaped quotes and backslashes (a ModuleDict key is any string in PyTorch)
    from viz import _dot
    from viz.player import reserve

    label = _dot.html_text(f"{name} (Linear)")
    line = f"\tgraph [fontsize=9 label=<{label}> style=rounded tooltip={_dot.quote('module ' + name)} color=grey];"
    out = reserve(line, {}, {})
    assert out == f"\tgraph [fontsize=9 style=rounded tooltip={_dot.quote('module ' + name + ' (Linear)')} color=grey];"
