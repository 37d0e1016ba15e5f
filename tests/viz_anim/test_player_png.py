"""The player's still picture, its lifetime, and exports that never leave partial files.

- Each display carries image/png: the first step plus "Run the cell to play", at 2x, shown
  at the picture's CSS size; no text/html (so no inline SVG) anywhere.
- Players made and dropped without being shown do not pile up (RSS measured in a fresh
  process).
- Names with lone surrogates are cleaned as ``viz.draw`` cleans them; ``save_html`` and the
  other exports write through a temporary file and ``os.replace``.
"""

from __future__ import annotations

import base64
import gc
import json
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

import viz
from viz import player as player_module
from viz import render
from viz.animate import animate, record


def small_player(mg, graphs):
    built = graphs["small"](mg)
    return animate(built.loss, params=built.leaves)


def png_of(bundle) -> tuple[bytes, dict]:
    data, meta = bundle
    return base64.b64decode(data["image/png"]), meta["image/png"]


def all_html(bundle) -> list[str]:
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    return [v for k, v in data.items() if k == "text/html"]


def test_the_still_picture_is_the_first_step_with_a_line_to_run(mg, graphs, pgv):
    player = small_player(mg, graphs)
    png, size = png_of(player._repr_mimebundle_())
    assert render.png_size(png) == (2 * size["width"], 2 * size["height"])
    first = player.scene.png(0, player_module.PLAY_NOTE)
    assert png == first.data  # step 0, as the player opens, with the note
    bare = player.scene.png(0)
    last = player.scene.png(player.num_steps - 1, player_module.PLAY_NOTE)
    assert last.data != first.data  # the steps look different, so "the first step" means something
    assert first.width == bare.width and first.height > bare.height + 10  # the "Run the cell to play" line
    again = small_player(mg, graphs)
    assert png_of(again._repr_mimebundle_())[0] == png  # the same graph gives the same bytes


def test_forward_player_shows_the_finished_graph(mg, pgv):
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with record() as rec:
        h = x * 3
        loss = (h + 1.0).sum()
    assert loss.grad_fn is not None
    player = rec.player()
    png, size = png_of(player._repr_mimebundle_())
    assert png == player.scene.png(player.num_steps - 1, player_module.PLAY_NOTE).data
    assert png != player.scene.png(0, player_module.PLAY_NOTE).data  # step 0 is still empty
    assert render.png_size(png) == (2 * size["width"], 2 * size["height"])


def test_no_output_holds_inline_svg_in_html(mg, graphs, pgv, monkeypatch):
    built = graphs["small"](mg)
    bundles = [viz.draw(built.loss, params=built.leaves)._repr_mimebundle_(),
               small_player(mg, graphs)._repr_mimebundle_()]
    monkeypatch.setattr(player_module, "_WIDGET", [None])  # as without anywidget
    static = small_player(mg, graphs)
    bundles.append(static._repr_mimebundle_())
    for bundle in bundles:
        assert not any("<svg" in html.lower() for html in all_html(bundle))
        assert "image/png" in bundle[0]
    data, _ = bundles[-1]
    assert "application/vnd.jupyter.widget-view+json" not in data and static.widget is None
    assert png_of(bundles[-1])[0] == static.scene.png(static.num_steps - 1, player_module.NO_WIDGET_NOTE).data


def test_without_a_renderer_the_player_says_so_in_one_line(mg, graphs, monkeypatch):
    monkeypatch.setattr(render, "find_renderer", lambda: None)
    player = small_player(mg, graphs)
    data, meta = player._repr_mimebundle_()
    assert "image/png" not in data and meta == {}
    # the widget lays the graph out in the browser; the line says so, and that saved pictures need pygraphviz
    assert data["text/plain"].split("\n") == ["BackwardPlayer(nodes=7, steps=8)", player_module.BROWSER_HINT]


def test_players_are_no_widgets_until_shown(mg, graphs, pgv):
    player = small_player(mg, graphs)
    assert player._widget is None  # nothing registered with ipywidgets yet
    ref = weakref.ref(player)
    del player
    gc.collect()
    assert ref() is None


LOOP = """
import gc, sys
import minigrad as torch
from viz.animate import animate

def rss_mib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024

def one():
    x = torch.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    w = torch.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
    loss = ((x @ w).tanh() * 2).sum()
    return animate(loss, params={"x": x, "w": w})

for _ in range(20):  # warm up: imports, caches, the allocator's first arenas
    one()
gc.collect()
before = rss_mib()
for _ in range(200):
    one()
gc.collect()
print(before, rss_mib())
"""


def test_players_made_in_a_loop_do_not_pile_up(pgv):
    done = subprocess.run([sys.executable, "-c", LOOP], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    before, after = (float(v) for v in done.stdout.split())
    print(f"\nRSS around 200 viz.animate calls: {before:.1f} -> {after:.1f} MiB")
    # each player that kept its widget held ~90 KB (200 calls: +18 to +48 MiB); now nothing stays
    assert after - before < 6.0, (before, after)


# -- names and exports --------------------------------------------------------------------------------------------


def test_save_html_cleans_lone_surrogates_as_draw_does(mg, pgv, tmp_path):
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    name = "a\ud800\x01"
    player = animate((a * a).sum(), params={name: a})
    titles = [f.title for f in player.frames]
    assert "AccumulateGrad (a?\\x01) adds into a?\\x01.grad" in titles
    path = player.save_html(tmp_path / "p.html")
    text = path.read_text(encoding="utf-8")  # valid UTF-8
    assert "AccumulateGrad (a?\\\\x01)" in text  # JSON in the page: the visible backslash, escaped
    assert "\\ud800" not in text
    json.dumps(player.data, ensure_ascii=False).encode("utf-8")  # the widget's state travels as UTF-8 too
    for frame in player.frames:
        frame.text.encode("utf-8")
    graph_text = viz.draw((a * a).sum(), params={name: a}).source
    assert "a?\\\\x01" in graph_text  # draw's own cleaning, for comparison


def test_forward_frames_are_cleaned_too(mg, pgv):
    from types import SimpleNamespace

    holder = SimpleNamespace(leaf=mg.tensor([1.0], requires_grad=True))  # named only by params=
    with record(params={"x\udfff": holder.leaf}) as rec:
        y = holder.leaf * 2
    assert y.grad_fn is not None
    for frame in rec.frames:
        frame.text.encode("utf-8")
    assert any("x?" in frame.text for frame in rec.frames)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_failed_export_leaves_no_file_and_keeps_the_old_one(mg, graphs, pgv, tmp_path, monkeypatch):
    player = small_player(mg, graphs)
    target = tmp_path / "p.html"
    import viz.export as export

    monkeypatch.setattr(export, "page", lambda scene, title=None: "half a page \ud800")  # unencodable
    with pytest.raises(UnicodeEncodeError):
        player.save_html(target)
    assert leftovers(tmp_path) == []  # no 0-byte file, no temporary file
    target.write_text("the old export", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        player.save_html(target)
    assert target.read_text(encoding="utf-8") == "the old export" and leftovers(tmp_path) == ["p.html"]


def test_an_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    from viz import files

    target = tmp_path / "g.svg"
    target.write_bytes(b"old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        files.write_atomic(target, b"new picture")
    assert target.read_bytes() == b"old" and leftovers(tmp_path) == ["g.svg"]
    monkeypatch.undo()
    files.write_atomic(target, "new picture")
    assert target.read_text() == "new picture" and leftovers(tmp_path) == ["g.svg"]
    mode = target.stat().st_mode & 0o777
    mask = os.umask(0)
    os.umask(mask)
    assert mode == 0o666 & ~mask  # a normal new file, not mkstemp's 0600


def test_every_export_goes_through_the_atomic_writer(mg, graphs, pgv, tmp_path, monkeypatch):
    from viz import export, files, graph

    written = []
    real = files.write_atomic

    def spy(path, data):
        written.append(Path(path).name)
        return real(path, data)

    monkeypatch.setattr(export, "write_atomic", spy)
    monkeypatch.setattr(graph, "write_atomic", spy)
    player = small_player(mg, graphs)
    player.save_html(tmp_path / "p.html")
    strip = player.filmstrip(steps=[0, 1])
    strip.save(tmp_path / "s.svg")
    strip.save(tmp_path / "s.html")
    strip.save(tmp_path / "s.png")
    built = graphs["small"](mg)
    drawn = viz.draw(built.loss)
    for suffix in (".svg", ".png", ".pdf", ".dot"):
        drawn.save(tmp_path / f"g{suffix}")
    assert written == ["p.html", "s.svg", "s.html", "s-00.png", "s-01.png", "g.svg", "g.png", "g.pdf", "g.dot"]
    assert not [n for n in leftovers(tmp_path) if n.startswith(".")]
