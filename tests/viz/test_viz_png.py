"""PNG beside every picture: 2x the SVG's size, shown at the SVG's size, deterministic, and a
plain line instead of a broken image when nothing can make PNGs. Also: stderr survives
rendering from several threads at once (fd 2 is process-wide)."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
import textwrap
import zlib

import pytest

import viz
from viz import render


def small(fakes):
    return fakes.mul_graph()["y"]


def svg_css_size(svg: str) -> tuple[float, float]:
    """The CSS pixel size a browser gives Graphviz's SVG (its width and height are in pt)."""
    m = re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    assert m, svg[:300]
    return float(m.group(1)) * 4 / 3, float(m.group(2)) * 4 / 3


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """A small reference decoder (8-bit, non-interlaced): (width, height, rows of raw pixels)."""
    chunks = render.png_chunks(data)
    width, height, depth, colour, _, _, interlace = __import__("struct").unpack(">IIBBBBB", chunks[0][1][:13])
    assert depth == 8 and interlace == 0
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def test_graph_carries_a_png_at_twice_the_svg_size(fakes, pgv):
    graph = viz.draw(small(fakes))
    data, meta = graph._repr_mimebundle_()
    png = base64.b64decode(data["image/png"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = meta["image/png"]["width"], meta["image/png"]["height"]
    assert isinstance(width, int) and isinstance(height, int)
    assert render.png_size(png) == (2 * width, 2 * height)  # 2x device pixels, exactly
    css_w, css_h = svg_css_size(data["image/svg+xml"])
    # shown at the SVG's size: Graphviz rounds the same drawing to whole points for the SVG
    # (<= 0.67 CSS px) and to whole pixels for the PNG (<= 0.75 CSS px after the 2x cut)
    assert abs(width - css_w) <= 1.42 and abs(height - css_h) <= 1.42
    assert [kind for kind, _ in render.png_chunks(png)] == [b"IHDR", b"IDAT", b"IEND"]  # no time stamps, no text
    assert graph.png() is graph.png()  # rendered once per Graph


def test_png_is_deterministic_across_processes(fakes, pgv):
    script = textwrap.dedent("""
        import hashlib, importlib.util, sys
        import viz
        spec = importlib.util.spec_from_file_location("viz_fakes", sys.argv[1])
        fakes = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fakes)
        print(hashlib.sha256(viz.draw(fakes.mul_graph()["y"]).png().data).hexdigest())
    """)
    fakes_path = os.path.join(os.path.dirname(__file__), "viz_fakes.py")
    digests = {subprocess.run([sys.executable, "-c", script, fakes_path], capture_output=True, text=True,
                              timeout=120, check=True).stdout.strip() for _ in range(2)}
    import hashlib

    here = hashlib.sha256(viz.draw(small(fakes)).png().data).hexdigest()
    assert digests == {here}


def test_odd_sizes_are_cut_to_an_exact_multiple_without_changing_pixels(pgv):
    for source in ('digraph { a -> b }', 'digraph { node [shape=box]; "wide label here" -> b -> c }',
                   'digraph { rankdir=LR; a -> b -> c -> d }'):
        with render.quiet_stderr():
            graph = pgv.AGraph(string=source)
            graph.graph_attr["dpi"] = "192"
            original = graph.draw(format="png", prog="dot")
        w0, h0, rows0 = decode_png(original)
        out = render.png_at_scale(original, 2)
        w1, h1, rows1 = decode_png(out.data)
        assert (w1, h1) == (out.width * 2, out.height * 2) == (w0 - w0 % 2, h0 - h0 % 2)
        bpp = len(rows0[0]) // w0
        assert rows1 == [row[: w1 * bpp] for row in rows0[:h1]]  # the same pixels, the margin cut


def test_no_png_renderer_is_one_plain_line(fakes, pgv, monkeypatch):
    monkeypatch.setattr(render, "render_png", lambda source, css_size=None, scale=2: None)
    graph = viz.draw(small(fakes))
    data = graph._repr_mimebundle_()
    assert isinstance(data, dict) and "image/png" not in data
    assert data["image/svg+xml"].startswith("<?xml")
    assert data["text/plain"].split("\n") == [repr(graph), render.PNG_HINT]


def test_a_dot_without_png_support_gives_no_image(fakes, tmp_path, monkeypatch):
    fake_dot = tmp_path / "dot"
    fake_dot.write_text("#!/bin/sh\ncat > /dev/null\necho 'Format: \"png\" not recognized' >&2\nexit 1\n")
    fake_dot.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(render, "find_renderer", lambda: "dot")
    assert render.render_png(viz.draw(small(fakes)).source) is None
    fake_dot.write_text("#!/bin/sh\ncat > /dev/null\nprintf 'not a png'\n")
    assert render.render_png(viz.draw(small(fakes)).source) is None


THREADS = """
import os, sys, threading, warnings
from viz import render

SOURCE = 'digraph { a [label=<<B>a</B>>]; a -> b -> c; b -> d }'
before = os.fstat(2)
errors = []

def work():
    try:
        for _ in range(12):
            assert render.render(SOURCE, "svg")
            with render.quiet_stderr():
                with render.quiet_stderr():  # nested use in one thread is fine too
                    pass
    except Exception as exc:
        errors.append(exc)

threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
after = os.fstat(2)
os.write(2, b"fd2 still works\\n")
print("python stderr still works", file=sys.stderr, flush=True)
warnings.warn("a warning after rendering")
print("same fd 2:", (before.st_dev, before.st_ino) == (after.st_dev, after.st_ino), "errors:", errors)
"""


def test_rendering_from_threads_never_silences_stderr(pgv):
    done = subprocess.run([sys.executable, "-c", THREADS], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same fd 2: True errors: []"
    assert "fd2 still works" in done.stderr
    assert "python stderr still works" in done.stderr
    assert "a warning after rendering" in done.stderr
    assert "Fontconfig" not in done.stderr  # while rendering, it stays quiet


def test_quiet_stderr_restores_fd2_after_an_exception(capfd):
    with pytest.raises(RuntimeError):
        with render.quiet_stderr():
            os.write(2, b"hidden\n")
            raise RuntimeError("boom")
    os.write(2, b"shown\n")
    assert capfd.readouterr().err == "shown\n"


def test_huge_pictures_are_capped_not_drawn_at_2x(pgv):
    # a wide graph, 120 columns of 3 nodes: at 2x it would be ~20 million device pixels
    chains = " ".join(f'"root" -> "leaf {i}" -> "mid {i}" -> "end {i}";' for i in range(120))
    source = f"digraph {{ node [shape=box]; {chains} }}"
    svg = render.render(source, "svg").decode()
    css = render.svg_css_size(svg)
    assert css[0] * css[1] * 4 > 4 * render.MAX_PNG_PIXELS
    png = render.render_png(source, css)
    w, h = render.png_size(png.data)
    assert w * h <= render.MAX_PNG_PIXELS * 1.01 and png.scale < 2
    assert abs(png.width - css[0]) <= 2 and abs(png.height - css[1]) <= 2  # still shown at the SVG's size
    small = render.render_png("digraph { a -> b }", (100.0, 100.0))
    assert small.scale == 2 and render.png_size(small.data) == (2 * small.width, 2 * small.height)
