"""viz on real PyTorch graphs: structure, labels, badges, clusters, views."""

from __future__ import annotations

import re

import viz
from viz.walk import WALK_LIMIT


def node_texts(graph, parse_dot, label_text):
    """{node id: label text} of a drawn graph, read back from its DOT."""
    agraph = parse_dot(graph.source)
    return {n: label_text(agraph.get_node(n).attr["label"]) for n in agraph.nodes() if n.startswith("n")}


def is_leaf(text: str, caption: str = "AccumulateGrad") -> bool:
    """A leaf's box: its name first, then "AccumulateGrad · (3,) float32" (caption and shape on one row)."""
    lines = text.split("\n")
    return len(lines) > 1 and lines[1].startswith(caption)


def edges_of(graph, parse_dot, label_text):
    agraph = parse_dot(graph.source)
    return [(u, v, label_text(e.attr.get("label") or ""), e.attr.get("style") or "")
            for e in agraph.edges(keys=False) for u, v in [e]]


def test_a_times_a_has_two_edges(torch, parse_dot, label_text):
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    graph = viz.draw(a * a, params={"a": a})
    agraph = parse_dot(graph.source)
    texts = node_texts(graph, parse_dot, label_text)
    assert agraph.number_of_nodes() == 3  # output, MulBackward0, AccumulateGrad[a]
    mul = next(n for n, t in texts.items() if "MulBackward0" in t)
    leaf = next(n for n, t in texts.items() if "AccumulateGrad" in t)
    assert "a" in texts[leaf].split("\n") and "(3,) float32" in texts[leaf]
    into_leaf = [e for e in agraph.edges() if e == (mul, leaf)]
    assert len(into_leaf) == 2  # micrograd's set-based drawing shows one
    # each edge names the input it feeds (minigrad's declaration of MulBackward0 gives the names)
    labels = re.findall(rf"{mul} -> {leaf} \[label=<(.*?)>\];", graph.source)
    assert labels == ["(3,) · self", "(3,) · other"]


def test_constant_input_is_a_faint_none_node(torch, parse_dot, label_text):
    x = torch.ones(2, requires_grad=True)
    graph = viz.draw(x * 2)
    agraph = parse_dot(graph.source)
    texts = node_texts(graph, parse_dot, label_text)
    none = [n for n, t in texts.items() if t == "None"]
    assert len(none) == 1
    (edge,) = [e for e in agraph.edges() if e[1] == none[0]]
    attrs = agraph.get_edge(*edge).attr
    assert attrs["style"] == "dashed" and attrs["color"].endswith("99")  # faint: dashed, translucent


def test_edge_labels_carry_shape_and_slot(torch, parse_dot, label_text):
    a = torch.randn(3, 4, requires_grad=True)
    m = torch.randn(4, 5, requires_grad=True)
    parts = (a @ m).split([2, 3], dim=1)
    y = parts[1].sum() + parts[0].sum()
    graph = viz.draw(y, params={"a": a, "m": m})
    agraph = parse_dot(graph.source)
    texts = node_texts(graph, parse_dot, label_text)
    labels: dict[tuple[str, str], list[str]] = {}
    for u, v, k in agraph.edges(keys=True):
        key = tuple("AccumulateGrad" if is_leaf(texts[n]) else texts[n].split("\n")[0] for n in (u, v))
        labels.setdefault(key, []).append(label_text(agraph.get_edge(u, v, key=k).attr["label"]))
    # SplitWithSizesBackward0 has one input slot per piece: the edges say which slot they feed (when not 0),
    # and every edge names the input it is the gradient of
    assert sorted(labels[("SumBackward0", "SplitWithSizesBackward0")]) == ["(3, 2) · self", "(3, 3) · self → slot 1"]
    assert labels[("SplitWithSizesBackward0", "MmBackward0")] == ["(3, 5) · self"]
    assert sorted(labels[("MmBackward0", "AccumulateGrad")]) == ["(3, 4) · self", "(4, 5) · mat2"]
    assert labels[("output", "AddBackward0")] == ["() · slot 0"]


def test_params_name_leaves(torch, parse_dot, label_text):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    loss = model(torch.randn(2, 3)).sum()
    graph = viz.draw(loss, params=dict(model.named_parameters()))
    texts = node_texts(graph, parse_dot, label_text)
    names = sorted(t.split("\n")[0] for t in texts.values() if is_leaf(t))
    assert names == ["0.bias", "0.weight", "2.bias", "2.weight"]
    text = str(viz.summary(loss, params=model.named_parameters()))
    assert "0.weight" in text and "(4, 3)" in text


def test_show_saved_and_show_attrs(torch, parse_dot, label_text):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = (x.pow(3).sum(dim=-1) * x[:, 0]).exp()
    plain = node_texts(viz.draw(y), parse_dot, label_text)
    assert not any("saved" in t or "exponent" in t for t in plain.values())
    texts = node_texts(viz.draw(y, show_saved=True, show_attrs=True, params={"x": x}), parse_dot, label_text)
    joined = "\n".join(texts.values())
    assert "saved self = x (2, 2)" in joined  # the leaf, named, not merged into the leaf node
    assert "saved result = " in joined  # ExpBackward0 keeps its output
    assert "exponent = 3" in joined
    assert "dim = (-1,)" in joined  # signed, not 18446744073709551615
    assert "18446744073709551615" not in joined
    assert "sym_sizes" not in joined and "sym_strides" not in joined and "raw_saved" not in joined
    # saved tensors are rows of the node that saved them: no extra nodes, no extra edges
    assert len(texts) == len(plain)


def test_freed_saved_tensors_say_so(torch):
    x = torch.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    text = viz.draw(y, show_saved=True).source
    assert "freed" in text


def test_retain_grad_and_hook_badges(torch, parse_dot, label_text):
    x = torch.ones(3, requires_grad=True)
    y = x.exp()
    y.retain_grad()
    y.register_hook(lambda g: g)
    x.register_hook(lambda g: g)
    texts = node_texts(viz.draw(y, params={"x": x}), parse_dot, label_text)
    output = next(t for t in texts.values() if t.startswith("output"))
    leaf = next(t for t in texts.values() if is_leaf(t))
    assert "retain_grad" in output and "tensor hooks ×1" in output
    assert "tensor hooks ×1" in leaf and "retain_grad" not in leaf


def test_module_scopes_from_metadata(torch, parse_dot):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))

    def tag(name):
        def hook(module, inputs, output):
            output.grad_fn.metadata["module"] = name
        return hook

    for name, module in model.named_children():
        module.register_forward_hook(tag(name))
    y = model(torch.randn(5, 3)).sum()
    agraph = parse_dot(viz.draw(y).source)
    clusters = {sg.graph_attr["label"]: sorted(sg.nodes()) for sg in agraph.subgraphs()}
    assert sorted(clusters) == ["0", "1", "2"]
    assert all(len(nodes) == 1 for nodes in clusters.values())  # the node that made each output


def test_roots_tensor_several_tensors_or_grad_fn(torch):
    x = torch.ones(2, requires_grad=True)
    a, b = x * 2, x.exp()
    one = viz.draw(a)
    two = viz.draw(a, b)
    as_list = viz.draw([a, b])
    node = viz.draw(a.grad_fn)
    assert one.num_nodes == 4  # output, MulBackward0, None, AccumulateGrad
    assert two.source == as_list.source
    assert "output 0" in two.source and "output 1" in two.source
    assert two.num_nodes == 6  # the leaf is shared
    assert node.num_nodes == 3  # no output node for a grad_fn root
    leaf_only = viz.draw(x)
    assert leaf_only.num_nodes == 1 and "leaf" in leaf_only.source


def test_custom_function_node(torch):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g, None

    x = torch.ones(2, requires_grad=True)
    y = Square.apply(x, 5)
    source = viz.draw(y, show_saved=True, show_attrs=True, params={"x": x}).source
    assert "SquareBackward" in source
    assert "saved_tensors[0] = x (2,)" in source
    assert "k = 5" in source


def test_values_view(torch, parse_dot, label_text):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    loss = (x * w).tanh().sum()
    loss.backward(retain_graph=True)
    graph = viz.draw(loss, view="values", params={"x": x, "w": w, "loss": loss})
    texts = node_texts(graph, parse_dot, label_text)
    agraph = parse_dot(graph.source)
    by_title = {t.split("\n")[0]: n for n, t in texts.items()}
    assert {"x", "w", "loss", "*", "tanh", "sum"} <= set(by_title)
    assert "data [1, 2, 3]" in texts[by_title["x"]]
    assert "grad [" in texts[by_title["x"]]
    # data flows forward: x -> * -> ... -> sum -> loss
    assert agraph.has_edge(by_title["x"], by_title["*"])
    assert agraph.has_edge(by_title["sum"], by_title["loss"])
    # tanh's output is kept by PyTorch (saved result), so its value is shown
    assert any("data [" in t and "(3,)" in t and not is_leaf(t, "leaf ·") for t in texts.values())


def test_values_view_big_tensor_is_summarised(torch):
    x = torch.arange(1000.0, requires_grad=True)
    text = str(viz.summary((x * 2).sum(), view="values"))
    assert "mean 499.5" in text and "min 0 max 999" in text


def test_ghost_copies_for_a_leaf_used_more_than_three_times(torch, parse_dot, label_text):
    w = torch.ones(3, requires_grad=True)
    h = torch.ones(3)
    for _ in range(5):
        h = h * w
    texts = node_texts(viz.draw(h, params={"w": w}), parse_dot, label_text)
    ghosts = [t for t in texts.values() if is_leaf(t, "AccumulateGrad · use")]
    assert len(ghosts) == 5 and all(t.split("\n")[0] == "w" for t in ghosts)
    agraph = parse_dot(viz.draw(h, params={"w": w}).source)
    for n in agraph.nodes():
        if is_leaf(texts.get(n, "")):
            assert agraph.in_degree(n) == 1
            assert "dashed" in agraph.get_node(n).attr["label"]
    # three uses: still one node
    h = torch.ones(3)
    for _ in range(3):
        h = h * w
    texts = node_texts(viz.draw(h, params={"w": w}), parse_dot, label_text)
    assert sum(is_leaf(t) for t in texts.values()) == 1


def test_hub_non_leaf_gets_references(torch):
    x = torch.ones(3, requires_grad=True)
    e = x.exp()
    h = e
    for _ in range(20):
        h = h * e
    model = viz.draw(h).model
    exps = [n for n in model.nodes if n.title == "ExpBackward0"]
    real = [n for n in exps if not n.ghost]
    assert len(real) == 1 and len(exps) == 21
    assert all(n.caption == f"same node as {real[0].id}" for n in exps if n.ghost)


def test_determinism(torch, pgv):
    def build():
        torch.manual_seed(1)
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
        loss = model(torch.randn(3, 4)).pow(2).mean()
        return viz.draw(loss, params=dict(model.named_parameters()), show_saved=True, show_attrs=True,
                        show_values=True)

    first, second = build(), build()
    assert first.source == second.source
    assert first.svg() == second.svg()
    assert repr(first) == repr(second) == "<viz.Graph backward view: 13 nodes, 12 edges>"
    assert "0x" not in first.source


def test_max_nodes_collapses_the_middle(torch, parse_dot, label_text):
    x = torch.ones(2, requires_grad=True)
    y = x
    for _ in range(60):
        y = y.sin()
    graph = viz.draw(y, max_nodes=10)
    texts = node_texts(graph, parse_dot, label_text)
    hidden = [t for t in texts.values() if "nodes hidden" in t]
    assert len(hidden) == 1
    assert "51 nodes hidden" in hidden[0] and "SinBackward0 ×51" in hidden[0]
    shown = sum(t.startswith("SinBackward0") for t in texts.values())
    assert shown + 51 == 60
    assert graph.model.hidden == 51 and "51 hidden" in repr(graph)
    assert any(is_leaf(t) for t in texts.values())  # the leaf end is kept


def test_hundred_thousand_node_chain(torch, pgv, svg_texts):
    # No time assertion (conventions): the point is no RecursionError, a summarised picture,
    # and no crash when the graph is dropped afterwards (PyTorch frees nodes that Python has
    # touched recursively in C++, so viz touches at most WALK_LIMIT of them).
    import gc

    x = torch.ones(2, requires_grad=True)
    y = x
    for i in range(100_000):
        y = y * 1.0001 if i % 2 else y + 1.0
    graph = viz.draw(y)
    assert graph.model.truncated and graph.model.hidden > WALK_LIMIT - viz.DEFAULT_MAX_NODES - 10
    assert graph.num_nodes <= 2 * viz.DEFAULT_MAX_NODES + 10
    texts = svg_texts(graph.svg())
    assert any("nodes hidden" in t for t in texts.values())
    assert any("graph continues" in t for t in texts.values())
    assert "nodes hidden" in str(viz.summary(y))
    del y
    gc.collect()  # a segfault here would take the whole test run down


def test_show_values_and_grads_in_backward_view(torch, parse_dot, label_text):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    plain = "\n".join(node_texts(viz.draw(y, params={"x": x}), parse_dot, label_text).values())
    assert "data" not in plain and "grad [" not in plain
    texts = node_texts(viz.draw(y, params={"x": x}, show_values=True, show_grads=True), parse_dot, label_text)
    leaf = next(t for t in texts.values() if is_leaf(t))
    assert "data [1, 2]" in leaf.split("\n") and "grad [2, 4]" in leaf.split("\n")
    output = next(t for t in texts.values() if t.startswith("output"))
    assert "data 5" in output.split("\n")


def test_tensor_outside_any_graph(torch):
    x = torch.ones(2)
    for view in ("backward", "values"):
        model = viz.draw(x, view=view).model
        assert [(n.role, n.title) for n in model.nodes] == [("output", "output")]


def test_custom_function_edges_and_saved_values_read_as_forward_names_them(lib):
    """A custom Function's edges carry forward's argument names (the gradient check's verdict says `x`,
    so the picture must too, not input0), and its saved values read "saved_tensors[0]", not
    "saved saved_tensors[0]"."""
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, beta):
            ctx.save_for_backward(x)
            return x * beta

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g, g * x

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    beta = lib.tensor([3.0, 4.0], requires_grad=True)
    y = Scale.apply(x * 1, beta * 1).sum()
    source = viz.draw(y, show_saved=True).source
    assert "(2,) · x>" in source and "(2,) · beta>" in source and "input0" not in source
    assert "saved_tensors[0] = " in source and "saved saved_tensors" not in source
    text = str(viz.summary(y, show_saved=True))
    assert "saved_tensors[0]" in text and "saved saved_tensors" not in text
