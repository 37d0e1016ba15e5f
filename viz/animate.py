"""Public entry points: ``animate`` (a backward player), ``trace_backward`` (its frames as
plain data) and ``record`` (the forward animation: the graph growing op by op).

    import viz
    viz.animate(loss, params=dict(model.named_parameters()))     # runs loss.backward()

    with viz.record() as rec:
        h = x @ w
        loss = h.relu().sum()
    rec.player()                                                  # or rec.frames

Like the rest of viz, nothing here imports torch or minigrad: the same code animates both.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from . import probe
from .i18n import tr
from .player import Scene, backward_scene, player_class, sources_payload
from .trace import Frame, by_module, clean_texts, map_graph, record_backward
from .walk import paused_gc
from .walk import walk as _walk

__all__ = ["animate", "trace_backward", "record", "Recording", "ForwardFrame"]


def animate(
    loss: Any,
    params: Any = None,
    gradient: Any = None,
    inputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    *more_inputs: Any,
    show_saved: bool = True,
    rankdir: str = "TB",
    max_nodes: int | None = None,
    speed: float = 1.0,
    fold: str | None = None,
    expand: Any = (),
    check: bool = False,
    quiz: bool = False,
    quiz_kinds: Any = ("next", "grad", "sum", "accumulate"),
    quiz_every: int = 1,
    compare: Any = None,
    source: bool = False,
    layers: bool = False,
    tangents: Any = None,
) -> Any:
    """Run ``loss.backward(gradient, retain_graph, create_graph, inputs)`` and return a player
    that replays it node by node.

    Forward mode: ``viz.animate(f, x, ...)`` of a function and its inputs, dual tensors made under
    ``forward_ad.dual_level()`` (or plain tensors and ``tangents=(v, ...)``), runs ``f`` once more and
    plays the tangent moving forward with the values, one op per step, each with its forward rule and
    this step's numbers (viz.tangent; ``rankdir`` and ``speed`` apply). Under a dual level,
    ``viz.animate(out)`` of a dual tensor with a graph plays it too, with the tangents the graph still reaches.

    The backward pass is the real one: the same ``.grad`` values, user hooks fire, saved
    values are freed unless ``retain_graph``. viz watches it through hooks it removes again.
    ``params`` names leaves (a dict, ``model.named_parameters()`` or the model), as in ``viz.draw``;
    ``fold="module"`` shows each module as one box (click one in the player to open it), as
    ``viz.draw(..., fold="module", expand=[...])`` does, and plays a folded module as one step: what
    entered it, the ``.grad``s it filled, what left it (its node steps in ``frame.inside``).
    ``check=True`` checks each custom ``autograd.Function`` on the gradient it received against
    finite differences (``viz.check``): wrong nodes are marked and each step's ``frame.check`` holds
    the verdict. ``quiz=True`` asks a question before steps (``quiz_kinds`` of ``viz.quiz.KINDS``, at
    every ``quiz_every``-th step):
    ``player.answer(id, value)``, ``player.answers`` and ``player.score`` (``viz.quiz``).
    ``compare=viz.compare(loss, ...)`` colours the picture by how your gradients compare.
    ``source=True`` shows the line of code that made each node (for graphs built inside
    ``viz.source_lines()`` or ``viz.record(source=True)``; see viz.source). ``layers=True`` colours the
    nodes an earlier backward made under ``create_graph=True`` (the second backward runs through them;
    see viz.layers).
    """
    if callable(loss) and not probe.is_tensor(loss) and not probe.is_node(loss):
        from .tangent import animate_tangents

        given = [params, gradient, inputs, retain_graph, create_graph, *more_inputs]
        while given and given[-1] is (False if len(given) == 5 else None):  # the defaults nobody gave
            given.pop()
        return animate_tangents(loss, *given, tangents=tangents, rankdir=rankdir, speed=speed,
                                show_saved=False)
    if more_inputs or tangents is not None:
        raise TypeError("viz.animate: more inputs and tangents= go with a function: viz.animate(f, x, ...)")
    if _is_dual(loss):
        from .tangent import animate_tangents

        return animate_tangents(loss, params=params, rankdir=rankdir, speed=speed,
                                show_saved=False)
    sources = _sources_before(loss) if source else None
    layered = _layers_before(loss) if layers and fold is None else None
    recording = record_backward(loss, params=params, gradient=gradient, inputs=inputs, retain_graph=retain_graph,
                                create_graph=create_graph, show_saved=show_saved, max_nodes=max_nodes,
                                rankdir=rankdir, fold=fold, expand=expand)
    if sources is not None:
        attach_sources(recording.frames, sources)
        # and again on each picture with a folded module opened (a click: Player._on_msg), as checks below
        recording.redraw.finish += (lambda again: attach_sources(again.frames, sources),)
    if layered is not None:
        attach_layers(recording, layered, rankdir)
    if check:
        from .check import attach_checks

        attach_checks(recording, rankdir=rankdir)
        recording.redraw.finish += (lambda again: attach_checks(again, rankdir=rankdir),)
    if compare is not None:
        from .compare import attach_comparison

        attach_comparison(recording, compare, rankdir=rankdir)
        recording.redraw.finish += (lambda again: attach_comparison(again, compare, rankdir=rankdir),)
    if fold is not None:  # one step per folded module (each picture made again too: last, after the others)
        by_module(recording)
        recording.redraw.finish += (by_module,)
    scene = backward_scene(recording)
    if sources is not None:
        scene.payload.setdefault("sources", {})  # none found: the story's front end still says how to get them
    if layered is not None:
        scene.payload["layers"] = True  # viz/story.js: the legend's second layer
    player = player_class("BackwardPlayer")(scene, speed=speed)
    if quiz:
        from .quiz import make_quiz, quiz_player

        quiz_player(player, make_quiz(recording.frames, tuple(quiz_kinds), every=quiz_every))
    return player


def _is_dual(loss: Any) -> bool:
    """A tensor carrying a tangent (under forward_ad.dual_level()): viz.animate plays forward mode."""
    from .tangent import tangent_of

    return probe.is_tensor(loss) and tangent_of(loss) is not None


def trace_backward(
    loss: Any,
    params: Any = None,
    gradient: Any = None,
    inputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    *,
    show_saved: bool = True,
    max_nodes: int | None = None,
    fold: str | None = None,
    expand: Any = (),
    check: bool = False,
    source: bool = False,
) -> list[Frame]:
    """Run ``loss.backward(...)`` as ``animate`` does and return the recorded steps as plain
    data: a list of ``viz.trace.Frame`` (start, one per node that ran, done). Node ids are
    those of ``viz.draw(loss, params=params, show_saved=show_saved)``."""
    sources = _sources_before(loss) if source else None
    recording = record_backward(loss, params=params, gradient=gradient, inputs=inputs, retain_graph=retain_graph,
                                create_graph=create_graph, show_saved=show_saved, max_nodes=max_nodes, fold=fold,
                                expand=expand)
    if sources is not None:
        attach_sources(recording.frames, sources)
    if check:
        from .check import attach_checks

        attach_checks(recording)
    return recording.frames


NO_SOURCE_NOTE = ("No node remembers the line that made it: build the graph inside `with viz.source_lines():` "
                  "or `with viz.record(source=True):` to see the code behind each node.")


def _sources_before(loss: Any) -> list:
    """Each walked node's source line, read before backward runs (walk order is that of record_backward)."""
    from .source import lines_by_node

    if not probe.is_tensor(loss):
        return []
    with paused_gc():
        walked = _walk((loss,))
        try:
            return lines_by_node(walked)
        finally:
            walked.release()


def _layers_before(loss: Any) -> Any:
    from .layers import parents_of

    if not probe.is_tensor(loss):
        return None
    with paused_gc():
        walked = _walk((loss,))
        try:
            return parents_of(walked)
        finally:
            walked.release()


def attach_layers(recording: Any, layered: Any, rankdir: str) -> None:
    """Colour the second layer in the recording's picture and say in each of its steps which node made it."""
    from .dot import to_dot
    from .graph import Graph
    from .layers import mark_layers, parent_label

    model = recording.graph.model
    mark_layers(model, layered, lambda i: recording.gmap.node_ids[i], links=False)
    recording.graph = Graph(model, to_dot(model, rankdir=rankdir))
    for f in recording.frames:
        if f.index is not None and layered.second[f.index]:
            parent = parent_label(layered, f.index)
            f.lines.append(("layer", f"This {f.name} is in layer 2, the graph of the backward pass: the backward "
                                     f"of {parent} made it (that backward ran with create_graph=True), so this "
                                     "second backward differentiates the first one's formula."))


def attach_sources(frames: list, sources: list) -> None:
    """Put the line that made each step's node first in its text (``frame.source``); say once how to get
    them when no node has one."""
    for f in frames:
        line = sources[f.index] if f.index is not None and 0 <= f.index < len(sources) else None
        if line is not None:
            f.source = str(line)
            f.lines.insert(0, ("source", f.source))
    if frames and not any(line is not None for line in sources):
        frames[0].lines.append(("note", NO_SOURCE_NOTE))


# -- forward: the graph growing -----------------------------------------------------------------------------------


@dataclass
class ForwardFrame:
    """One step of the forward animation: a node (and what it points to) appears."""

    step: int
    kind: str  # "before" | "create" | "done"
    name: str = ""
    node: str | None = None
    appear: list[str] = field(default_factory=list)  # drawn ids that appear in this step
    index: int | None = None  # place in viz.walk order
    sequence_nr: int | None = None
    variable: str | None = None  # the name the block gave the tensor this node made, if any
    source: str | None = None  # record(source=True): the line of code that made the node
    title: str = ""
    lines: list[tuple[str, str]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The side panel's words as plain text, in viz's language (viz.i18n)."""
        return "\n".join(tr(t) for t in [self.title] + [t for _, t in self.lines])


MAX_NAMED_OUTPUTS = 8


class Recording:
    """``with viz.record() as rec:`` — remembers the tensors the block creates.

    On exit it looks at the variables of the block's scope (in a notebook: the cell's
    globals): tensors that are new and have a ``grad_fn`` are the outputs; the graph behind
    them is ordered by ``_sequence_nr()`` (creation order, in minigrad and PyTorch), and
    whatever existed before the block is shown from the first frame. ``rec.watch(t)`` adds
    a tensor the scope does not hold (e.g. one inside an object).
    """

    def __init__(self, params: Any = None, show_saved: bool = False, rankdir: str = "TB",
                 max_nodes: int | None = None, source: bool = False) -> None:
        self.params = params
        self.source = source
        self._lines: Any = None
        self.show_saved = show_saved
        self.rankdir = rankdir
        self.max_nodes = max_nodes
        self._scope: Any = None
        self._before: dict[str, Any] = {}
        self._watched: list[Any] = []
        self._frames: list[ForwardFrame] | None = None
        self._scene: Scene | None = None
        self._roots: list[Any] = []
        self._graph: Any = None

    def __enter__(self) -> Recording:
        self._scope = sys._getframe(1)
        self._before = _tensors_in(self._scope.f_locals)
        self._frames = None
        if self.source:
            from .source import source_lines

            self._lines = source_lines()
            self._lines.__enter__()
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> bool:
        lines, self._lines = self._lines, None
        if lines is not None:
            lines.__exit__(None, None, None)
        scope, self._scope = self._scope, None
        after = _tensors_in(scope.f_locals) if scope is not None else {}
        del scope
        try:
            self._build(after)
        except Exception:
            if exc_type is None:
                raise
            self._frames = []  # the block's own error is the one to see
        return False

    def watch(self, *tensors: Any) -> Recording:
        """Also show the graph behind these tensors (call inside or after the block)."""
        self._watched.extend(t for t in tensors if probe.is_tensor(t))
        if self._frames is not None:
            self._build(self._after)
        return self

    @property
    def frames(self) -> list[ForwardFrame]:
        if self._frames is None:
            raise RuntimeError("viz.record: the frames exist once the `with` block has ended")
        return self._frames

    def player(self, speed: float = 1.0) -> Any:
        """The forward animation as a widget (the graph is laid out once, here)."""
        frames = self.frames
        if self._scene is None:
            from .player import _layout, layout_info

            steps = [{"ids": [f.node] if f.node else [], "kind": f.kind, "title": f.title,
                      "lines": [[k, t] for k, t in f.lines], "appear": list(f.appear)} for f in frames]
            payload = {"mode": "forward", "steps": steps}
            if self.source:
                payload["sources"] = sources_payload(frames)
            graph = self._graph
            if graph is None:
                root, hint, source = None, "viz.record: no graph was built in the block", ""
                nodes = 0
            else:
                root, hint, source = _layout(graph.source, self._edges, {}, {})
                nodes = len(graph.model.nodes)
            payload["layout"] = layout_info(source, self._edges if graph is not None else [], {}, {}, hint,
                                            self.rankdir)
            self._scene = Scene("forward", root, payload, frames, nodes, source, hint)
        return player_class("ForwardPlayer")(self._scene, speed=speed)

    def __repr__(self) -> str:
        if self._frames is None:
            return "Recording(open)"
        return f"Recording(outputs={len(self._roots)}, steps={len(self._frames)})"

    # -- building ---------------------------------------------------------------------------------
    def _build(self, after: dict[str, Any]) -> None:
        from . import draw

        self._after = after
        self._scene = None
        before_ids = {id(t) for t in self._before.values()}
        names: dict[int, str] = {}
        for name, t in list(self._before.items()) + list(after.items()):
            names.setdefault(id(t), name)
        new = [(name, t) for name, t in after.items() if id(t) not in before_ids]
        outputs = [(name, t) for name, t in new if getattr(t, "grad_fn", None) is not None]
        for t in self._watched:
            if getattr(t, "grad_fn", None) is not None and all(t is not o for _, o in outputs):
                outputs.append((names.get(id(t), "output"), t))
        outputs.sort(key=lambda nt: (-_seq(nt[1].grad_fn), nt[0]))
        if len(outputs) > MAX_NAMED_OUTPUTS:
            outputs = _final_only(outputs)
        self._roots = [t for _, t in outputs]
        if not outputs:
            self._graph = None
            self._frames = [ForwardFrame(0, "done", title="No graph was built",
                                         lines=[("note", "No new tensor with a grad_fn was assigned in the block "
                                                         "(inputs need requires_grad=True).")])]
            return
        params = _param_names(self._before, after, self.params)
        for name, t in outputs:
            params.setdefault(name, t)
        with paused_gc():
            walk = _walk(tuple(self._roots))
            graph = draw(*self._roots, params=params, show_saved=self.show_saved, rankdir=self.rankdir,
                         max_nodes=self.max_nodes or max(len(walk.nodes) + 8, 250), source=self.source)
        gmap = map_graph(walk, graph.model)
        self._graph = graph
        self._edges = gmap.edges
        before_fns = [t.grad_fn for t in self._before.values() if getattr(t, "grad_fn", None) is not None]
        old = set()
        if before_fns:
            old_walk = _walk(tuple(before_fns))  # keep it: a Walk releases its nodes when it goes
            old = {id(raw.fn) for raw in old_walk.nodes}
        var_of = {id(t.grad_fn): name for name, t in after.items() if getattr(t, "grad_fn", None) is not None}
        self._frames = _forward_frames(walk, gmap, graph.model, old, var_of, outputs)
        if self.source:
            by_id = {n.id: n.source for n in graph.model.nodes}
            for f in self._frames:
                f.source = by_id.get(f.node) if f.kind == "create" and f.node else None
                if f.source:
                    f.lines.insert(0, ("source", f.source))


def record(params: Any = None, show_saved: bool = False, rankdir: str = "TB", max_nodes: int | None = None,
           source: bool = False) -> Recording:
    """``with viz.record() as rec: ...`` then ``rec.player()`` or ``rec.frames``: the graph
    growing op by op while the block builds it (see ``Recording``). ``source=True`` runs the block
    in anomaly mode (no NaN checks) so that each node shows the line of code that made it."""
    return Recording(params=params, show_saved=show_saved, rankdir=rankdir, max_nodes=max_nodes, source=source)


def _seq(fn: Any) -> int:
    try:
        return int(fn._sequence_nr())
    except Exception:
        return -1


def _tensors_in(scope: Any) -> dict[str, Any]:
    """Tensors a scope holds by name (and one level inside lists, tuples and dicts)."""
    out: dict[str, Any] = {}
    try:
        items = list(scope.items())
    except Exception:
        return out
    for name, value in items:
        if name.startswith("_"):
            continue
        if probe.is_tensor(value) and hasattr(value, "requires_grad"):
            out[name] = value
        elif isinstance(value, (list, tuple)) and len(value) <= 64:
            for i, v in enumerate(value):
                if probe.is_tensor(v) and hasattr(v, "requires_grad"):
                    out[f"{name}[{i}]"] = v
        elif isinstance(value, dict) and len(value) <= 64:
            for k, v in value.items():
                if probe.is_tensor(v) and hasattr(v, "requires_grad"):
                    out[f"{name}[{k!r}]"] = v
    return out


def _param_names(before: dict[str, Any], after: dict[str, Any], params: Any) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for scope in (before, after):
        for name, t in scope.items():
            if getattr(t, "grad_fn", None) is None and getattr(t, "requires_grad", False):
                names.setdefault(name, t)
    if params is not None:
        items = params.items() if hasattr(params, "items") else params
        for name, t in items:
            names[str(name)] = t
    return names


def _final_only(outputs: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Outputs whose node no other output's graph reaches (the 'last' tensors)."""
    reached: set[int] = set()
    for _, t in outputs:
        w = _walk((t,))
        for raw in w.nodes[1:]:
            reached.add(id(raw.fn))
    return [(n, t) for n, t in outputs if id(t.grad_fn) not in reached] or outputs[:1]


def _forward_frames(walk: Any, gmap: Any, model: Any, old: set[int], var_of: dict[int, str],
                    outputs: list[tuple[str, Any]]) -> list[ForwardFrame]:
    shown: set[str] = set()
    frames: list[ForwardFrame] = []
    extra = {n.key: n.id for n in model.nodes}
    out_box = {}
    for k, root in enumerate(walk.roots):
        if root.fn_index is not None and gmap.root_ids[k]:
            out_box.setdefault(root.fn_index, []).append(gmap.root_ids[k])

    def ids_of(i: int) -> list[str]:
        return [n for n in gmap.node_ids[i] if n not in shown]

    first = ForwardFrame(0, "before", title="Before the block")
    for raw in walk.nodes:
        if id(raw.fn) in old:
            first.appear.extend(ids_of(raw.index))
            shown.update(first.appear)
    if first.appear:
        first.lines.append(("note", f"{len(set(first.appear))} node(s) existed before the block: they are drawn "
                                    "from the start."))
    else:
        first.lines.append(("note", "Nothing yet: autograd records a node each time an op runs on a tensor that "
                                    "requires grad."))
    frames.append(first)

    created = [raw for raw in walk.nodes if id(raw.fn) not in old and raw.leaf is None]
    created.sort(key=lambda raw: (_seq(raw.fn), -raw.index))
    for raw in created:
        i = raw.index
        name = gmap.names[i]
        var = var_of.get(id(raw.fn))
        f = ForwardFrame(len(frames), "create", name=name, index=i, sequence_nr=_seq(raw.fn), variable=var)
        appear = ids_of(i) + [n for n in out_box.get(i, []) if n not in shown]
        f.node = (gmap.node_ids[i] or [None])[0]
        f.title = f"{var} = …  →  {var}.grad_fn is {name}" if var else f"{name} is created"
        if var:
            f.lines.append(("in", f"The op that computed {var} recorded the node {name}, so {var}.grad_fn is "
                                  f"{name}."))
        else:
            f.lines.append(("in", f"An op recorded the node {name} (its tensor has no name in the block)."))
        pairs = []
        for j, (child, nr) in enumerate(raw.edges):
            if child is None:
                pairs.append(f"(None, {nr})")
                key = f"none:{i}:{j}"
                if key in extra and extra[key] not in shown:
                    appear.append(extra[key])
                f.lines.append(("note", f"next_functions[{j}] = (None, {nr}): that input needs no gradient "
                                        "(a constant, or requires_grad=False)."))
                continue
            child_raw = walk.nodes[child]
            cname = gmap.names[child]
            pairs.append(f"({cname}, {nr})")
            if child_raw.leaf is not None:
                new_ids = [n for n in ids_of(child) if n not in appear]
                if new_ids:
                    appear.extend(new_ids)
                    leaf = cname[len("AccumulateGrad ("):-1] if cname.startswith("AccumulateGrad (") else "the leaf"
                    f.lines.append(("acc", f"{leaf} is a leaf that requires grad: its AccumulateGrad node joins the "
                                           f"graph; backward will add into {leaf}.grad there."))
        if pairs:
            f.lines.append(("out", f"next_functions = ({', '.join(pairs)}{',' if len(pairs) == 1 else ''}): where "
                                   "the gradient will flow from here."))
        tensors, _ = probe.saved_values(raw.fn)
        rule = probe.rule_text(raw.fn)
        described = f"{probe.short_name(raw.name)}: {rule}" if rule else ""
        if tensors:
            saved = ", ".join(n for n, _ in tensors)  # each text whole, as viz/locale's catalog holds it
            f.lines.append(("rule", f"It saves {saved} for backward — {described}" if described
                            else f"It saves {saved} for backward."))
        elif described:
            f.lines.append(("rule", described))
        if f.sequence_nr is not None and f.sequence_nr >= 0:
            f.lines.append(("note", f"sequence_nr {f.sequence_nr}: nodes are numbered as they are created; "
                                    "backward runs the newest ready node first."))
        f.appear = appear
        shown.update(appear)
        frames.append(f)

    rest = [n.id for n in model.nodes if n.id not in shown]
    done = ForwardFrame(len(frames), "done", title="The graph is complete", appear=rest)
    count = len(walk.nodes)
    shown = [name for name, _ in outputs[:3]]
    names = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    nodes = f"{count} node{'s' if count != 1 else ''}"
    head = (f"{names} has a grad_fn now: the graph behind it holds {nodes}" if len(outputs) == 1 else
            f"{names} have a grad_fn now: the graph behind them holds {nodes}")  # whole sentences for the catalog
    done.lines.append(("note", f"{head}, recorded one by one as the ops ran. Nothing has been differentiated yet: "
                               "backward() follows these edges from the output, newest node first (viz.animate(loss) "
                               "shows it)."))
    frames.append(done)
    return clean_texts(frames)
