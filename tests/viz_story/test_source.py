"""The code behind each node (viz.source): record/draw/animate(source=True) for scripts and notebook
cells, with minigrad and PyTorch; nothing is recorded unless asked, and the previous anomaly mode returns."""

from __future__ import annotations

import inspect
import runpy
import textwrap
import warnings

import numpy as np
import pytest

import viz
from viz.source import cell_name, line_of


def _line(marker: str) -> int:
    """The line number of this file's line that contains ``marker`` (so tests survive edits)."""
    lines, start = inspect.getsourcelines(inspect.getmodule(_line))
    return next(i for i, text in enumerate(lines, start=1) if marker in text and "_line(" not in text)


def test_record_source_names_each_line(lib):
    x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
    with viz.record(source=True) as rec:
        y = x * x  # made-y
        z = y.sum()  # made-z
    created = [f for f in rec.frames if f.kind == "create"]
    assert [f.source for f in created] == [
        f"test_source.py, line {_line('# made-y')}: y = x * x  # made-y",
        f"test_source.py, line {_line('# made-z')}: z = y.sum()  # made-z",
    ]
    assert all(f.lines[0] == ("source", f.source) for f in created)
    assert rec.player().scene.payload["sources"] == {f.node: f.source for f in created}
    del z


def test_anomaly_mode_restored_and_silent(lib):
    enabled = lib.autograd.anomaly_mode.is_anomaly_enabled if lib.__name__ == "minigrad" else lib.is_anomaly_enabled
    x = lib.tensor(np.array([1.0]), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Anomaly Detection has been enabled" must not reach the learner
        with viz.source_lines():
            assert enabled()
            y = (x * float("nan")).sum()
            y.backward()  # NaN is no error: check_nan=False
    assert not enabled()
    assert np.isnan(np.asarray(x.grad.detach().numpy() if hasattr(x.grad, "detach") else x.grad)).all()


def test_off_by_default_nothing_recorded(lib):
    x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = (x * x).sum()
    assert "traceback_" not in y.grad_fn.metadata
    graph = viz.draw(y, source=True)
    assert all(n.source is None for n in graph.model.nodes)
    assert "source" not in {k for n in graph.model.nodes for k, _ in n.rows}
    frames = viz.trace_backward(y, source=True)
    assert frames[0].lines[-1][1].startswith("No node remembers the line that made it")
    plain = viz.draw((x * x).sum())
    assert all(n.source is None for n in plain.model.nodes)


def test_animate_source_shows_line_of_active_node(lib):
    x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
    with viz.source_lines():
        y = x.exp()  # exp-line
        loss = (y * 3.0).sum()  # loss-line
    frames = viz.trace_backward(loss, source=True)
    by_name = {f.name: f.source for f in frames if f.kind == "run"}
    assert by_name["ExpBackward0"] == f"test_source.py, line {_line('# exp-line')}: y = x.exp()  # exp-line"
    assert by_name["MulBackward0"].startswith(f"test_source.py, line {_line('# loss-line')}:")
    assert by_name["SumBackward0"] == by_name["MulBackward0"]
    assert all(f.source is None for f in frames if f.kind == "accumulate")
    np.testing.assert_allclose(np.asarray(x.grad.tolist()), 3 * np.exp([1.0, 2.0]), rtol=1e-9)


def test_script_lines_and_escaped_labels(lib, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        import viz
        with viz.source_lines():
            h = x * w
            out = h.sum() * 1.0  # <b>&"bold"</b>
    """))
    x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
    w = lib.tensor(np.array([3.0, 4.0]), requires_grad=True)
    scope = runpy.run_path(str(script), init_globals={"x": x, "w": w})
    graph = viz.draw(scope["out"], params={"x": x, "w": w}, source=True)
    lines = {n.title: n.source for n in graph.model.nodes if n.role == "fn"}
    assert lines["MulBackward0"] in {"train.py, line 3: h = x * w",
                                     'train.py, line 4: out = h.sum() * 1.0  # <b>&"bold"</b>'}
    assert lines["SumBackward0"] == 'train.py, line 4: out = h.sum() * 1.0  # <b>&"bold"</b>'
    mul = line_of(scope["h"].grad_fn)
    assert (mul.filename, mul.lineno, mul.code, mul.where) == (str(script), 3, "h = x * w", "train.py, line 3")
    assert "<b>" not in graph.source and "&lt;b&gt;&amp;&quot;bold&quot;&lt;/b&gt;" in graph.source


def test_module_nodes_point_at_the_call(lib):
    lin = lib.nn.Linear(2, 1).double()
    x = lib.tensor(np.array([[1.0, 2.0]]))
    with viz.source_lines():
        out = lin(x).sum()  # module-call
    graph = viz.draw(out, source=True)
    want = f"test_source.py, line {_line('# module-call')}: out = lin(x).sum()  # module-call"
    fn_lines = {n.source for n in graph.model.nodes if n.role == "fn"}
    assert fn_lines == {want}


def _shell():
    pytest.importorskip("IPython")
    compiler = pytest.importorskip("ipykernel.compiler")
    from IPython.core.interactiveshell import InteractiveShell

    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    shell.compile = compiler.XCachingCompiler()  # cells become /tmp/ipykernel_<pid>/<hash>.py, as in a kernel
    return shell


@pytest.mark.parametrize("name", ["minigrad", "torch"])
def test_notebook_cells_are_named_by_execution_count(name, request):
    if name == "torch":
        request.getfixturevalue("torch")
    shell = _shell()
    try:
        def run(code):
            result = shell.run_cell(code, store_history=True)
            result.raise_error()

        run(f"import {name} as lib, numpy as np, viz")
        run("x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)")
        run("with viz.record(source=True) as rec:\n    y = x * x\n    z = y.sum()\n")
        run("w = viz.draw(z, source=True)")
        ns = shell.user_ns
        created = [f.source for f in ns["rec"].frames if f.kind == "create"]
        assert created == ["cell [3], line 2: y = x * x", "cell [3], line 3: z = y.sum()"]
        filename = line_of(ns["z"].grad_fn).filename
        assert "ipykernel_" in filename and cell_name(filename) == "cell [3]"
        assert sorted(n.source for n in ns["w"].model.nodes if n.source) == created
    finally:
        from IPython.core.interactiveshell import InteractiveShell

        InteractiveShell.clear_instance()


def test_cell_names_without_history():
    assert cell_name("<ipython-input-7-0123abcd>") == "cell [7]"
    assert cell_name("/tmp/ipykernel_12/999999.py") == "cell"
    assert cell_name("/home/me/train.py") is None


def test_cells_run_without_history_keep_ipythons_number():
    """nbval runs cells with store_history=False: IPython still numbers them (its tracebacks say "Cell In[n]")."""
    shell = _shell()
    try:
        for code in ("import minigrad as lib, numpy as np, viz",
                     "x = lib.tensor(np.array([1.0]), requires_grad=True)",
                     "with viz.source_lines():\n    y = x * 2\n"):
            shell.run_cell(code, store_history=False).raise_error()
        assert line_of(shell.user_ns["y"].grad_fn).where == f"cell [{shell.execution_count}], line 2"
    finally:
        from IPython.core.interactiveshell import InteractiveShell

        InteractiveShell.clear_instance()


def test_animate_payload_maps_nodes_to_lines(lib):
    x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
    with viz.source_lines():
        loss = (x.exp() * 2.0).sum()  # payload-line
    player = viz.animate(loss, source=True)
    sources = player.data["sources"]
    ran = {f.node: f.source for f in player.frames if f.kind == "run"}
    assert sources == ran and len(set(sources.values())) == 1
    assert next(iter(sources.values())).endswith("# payload-line")


def test_opening_a_folded_module_keeps_the_source_lines(mg, pgv):
    """The bug: after a folded module was opened in the player, its steps had no source lines and the page
    no source map, so clicking a line lit nothing up. (PyTorch's nodes carry no module to fold by.)"""
    lib = mg
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x) * x  # line-block

    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 2), Block()).double()
    with viz.source_lines():
        loss = model(lib.randn(1, 2, dtype=lib.float64)).sum()  # line-loss
    player = viz.animate(loss, params=model, fold="module", source=True)
    folded = player.data["sources"]
    assert any(t.endswith("# line-loss") for t in folded.values())

    class Widget:  # what Player._on_msg sets on the page's widget
        svg = svg_alt = ""
        data: dict = {}

    widget = Widget()
    player._on_msg(widget, {"type": "expand", "scope": "1"}, [])
    opened = widget.data["sources"]
    assert opened == player.data["sources"] and len(opened) > len(folded)
    lines = {t for t in opened.values()}
    assert any(t.endswith("# line-block") for t in lines) and any(t.endswith("# line-loss") for t in lines)
    # every step about a node of the block starts with the line that made it
    block = [f for f in player.frames if f.source and f.source.endswith("# line-block")]
    assert block and all(f.lines[0] == ("source", f.source) for f in block)
    assert {f.node for f in block} <= set(opened)
