"""Exports for slides and handouts: PNGs at a chosen scale, captioned filmstrip frames, GIFs."""

from __future__ import annotations

import pytest

import viz
from viz.export import step_caption
from viz.render import png_size


def _small(mg):
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = mg.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    return (c * a).sum(), {"a": a, "b": b}


def test_graph_png_at_a_scale_is_sharp_and_deterministic(mg, pgv, tmp_path):
    loss, params = _small(mg)
    graph = viz.draw(loss, params=params)
    one = png_size(graph.save(tmp_path / "one.png", scale=1).read_bytes())
    two = graph.save(tmp_path / "two.png").read_bytes()  # scale=2 by default
    assert abs(png_size(two)[0] - 2 * one[0]) <= 2 and abs(png_size(two)[1] - 2 * one[1]) <= 2
    three = png_size(graph.save(tmp_path / "three.png", scale=3).read_bytes())
    assert abs(three[0] - 3 * one[0]) <= 3 and abs(three[1] - 3 * one[1]) <= 3
    assert graph.save(tmp_path / "again.png").read_bytes() == two
    with pytest.raises(ValueError, match="positive scale"):
        graph.save(tmp_path / "bad.png", scale=0)
    assert not (tmp_path / "bad.png").exists()


def test_filmstrip_pngs_carry_a_caption_at_their_scale(mg, pgv, tmp_path):
    loss, params = _small(mg)
    player = viz.animate(loss, params=params)
    big = player.filmstrip(steps=[0, 3], scale=2).save(tmp_path / "big.png")
    small = player.filmstrip(steps=[0, 3], scale=1).save(tmp_path / "small.png")
    assert [p.name for p in big] == ["big-00.png", "big-03.png"]
    for b, s in zip(big, small):
        (bw, bh), (sw, sh) = png_size(b.read_bytes()), png_size(s.read_bytes())
        assert abs(bw - 2 * sw) <= 2 and abs(bh - 2 * sh) <= 2
    # the caption is drawn under the picture: the frame is taller than the step without it
    plain = player.scene.png(3)
    assert png_size(big[1].read_bytes())[1] > png_size(plain.data)[1]
    assert step_caption(player.scene, 3) == "Step 3 / 6: MulBackward0 runs"
    again = player.filmstrip(steps=[0, 3], scale=2).save(tmp_path / "again.png")
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in big]


def test_gif_plays_every_step_at_one_size_deterministically(mg, pgv, tmp_path):
    from PIL import Image

    loss, params = _small(mg)
    player = viz.animate(loss, params=params)
    path = player.save_gif(tmp_path / "steps.gif", fps=4)
    with Image.open(path) as gif:
        width = gif.size[0]
        assert gif.n_frames == player.num_steps
        assert gif.info["duration"] == 250 and gif.info["loop"] == 0
        sizes = set()
        for k in range(gif.n_frames):
            gif.seek(k)
            sizes.add(gif.size)
        assert len(sizes) == 1
    assert player.save_gif(tmp_path / "again.gif", fps=4).read_bytes() == path.read_bytes()
    few = player.save_gif(tmp_path / "few.gif", steps=[0, 2, 6], scale=1)
    with Image.open(few) as gif:
        assert gif.n_frames == 3 and gif.size[0] < width
    with pytest.raises(ValueError, match=r"\.gif path"):
        player.save_gif(tmp_path / "steps.png")
    with pytest.raises(ValueError, match="positive fps"):
        player.save_gif(tmp_path / "zero.gif", fps=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.gif", "few.gif", "steps.gif"]
