"""viz.summary: the deterministic text twin of a picture."""

from __future__ import annotations

import viz

BACKWARD = """\
backward view: 4 nodes, 4 edges
id  kind    name          shape  to         data       grad       notes
n0  output  loss          ()     n1:0       14
n1  fn      SumBackward0         n2:0
n2  fn      MulBackward0         n3:0 n3:0
n3  leaf    x             (3,)              [1, 2, 3]  [2, 4, 6]  AccumulateGrad"""

VALUES = """\
values view: 5 nodes, 5 edges
id  kind    name  shape  to     data       grad       notes
n0  output  loss  ()            14
n1  op      sum          n0
n2  tensor        (3,)   n1                           value not kept by autograd
n3  op      *            n2
n4  leaf    x     (3,)   n3 n3  [1, 2, 3]  [2, 4, 6]  leaf"""


def graph(torch):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    return x, loss


def test_backward_summary_text(torch):
    x, loss = graph(torch)
    assert str(viz.summary(loss, params={"x": x, "loss": loss})) == BACKWARD


def test_values_summary_text(torch):
    x, loss = graph(torch)
    assert str(viz.summary(loss, params={"x": x, "loss": loss}, view="values")) == VALUES


def test_summary_prints_cleanly(torch, capsys):
    x, loss = graph(torch)
    table = viz.summary(loss, params={"x": x, "loss": loss})
    print(table)
    assert capsys.readouterr().out == BACKWARD + "\n"
    assert repr(table) == str(table) == BACKWARD
    assert table == BACKWARD and table == viz.summary(loss, params={"x": x, "loss": loss})
    assert all(line == line.rstrip() for line in BACKWARD.splitlines())
    assert [row["id"] for row in table.rows] == ["n0", "n1", "n2", "n3"]


def test_summary_matches_the_picture(torch):
    x, loss = graph(torch)
    table = viz.summary(loss, show_saved=True)
    picture = viz.draw(loss, show_saved=True)
    assert [row["id"] for row in table.rows] == [n.id for n in picture.model.nodes]
    assert "saved other = freed (after backward)" not in str(table)  # retain_graph kept them
    assert "saved other = [1, 2, 3] (3,)" in str(table)


def test_summary_of_fakes_lists_badges_and_modules(fakes):
    g = fakes.mul_graph()
    g["sq"].metadata["module"] = "square"
    g["sq"].prehooks = (print,)
    text = str(viz.summary(g["y"], params={"x": g["x"]}))
    assert "module square; prehooks ×1" in text
    assert "[1, 4, 9]" in text  # the output_tensor of x * x


def test_statistics_print_a_mean_within_rounding_noise_as_zero(torch):
    """A bias gradient's mean is 0 up to the last bits, which change with the BLAS build: printed as 0."""
    from viz import probe

    noisy = torch.tensor([0.5, -0.25, -0.25 + 3e-9, 0.0, 0.1, -0.1, 0.0], dtype=torch.float32)
    assert probe.describe_values(noisy).startswith("mean 0 std ")
    real = torch.tensor([0.5, -0.25, -0.25, 0.0, 0.1, -0.1, 0.01], dtype=torch.float32)
    assert probe.describe_values(real).startswith("mean 0.001429 std ")
    tiny64 = torch.tensor([1e-12, 2e-12, 3e-12, 4e-12, 5e-12, 6e-12, 7e-12], dtype=torch.float64)
    assert probe.describe_values(tiny64).startswith("mean 4e-12 std ")
