"""Record a backward pass as plain frames, through the public hooks only.

``record_backward(loss, ...)`` draws the graph first (``viz.draw``: the picture of the graph
before anything is freed), then registers observer hooks on every node and leaf it walked —
node prehooks and hooks, tensor hooks on the leaves and on the tensors a node produced (when
the graph says which: minigrad's ``output_tensor``, and the root itself), post-accumulate
hooks on the leaves — and runs ``loss.backward(...)`` itself, so the engine, its order, its
results, user hooks and the freeing of saved values are exactly those of a plain backward.
The observers never return a value, are registered after the user's hooks (so they see
what the user's hooks returned) and are removed afterwards, also when backward raises.

Each hook call is one event; the engine runs one node at a time, so consecutive events of
one node form one step. From the events and the graph map this module builds ``Frame``s:
one "start" frame (the seed), one frame per node that ran, one "done" frame. Frames hold
copies of the gradients as NumPy arrays plus the texts the player shows; the cumulative
state at step k (done, waiting, labels) is derived by ``state_at`` (and in the browser),
never stored per frame.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from . import probe
from .dot import clean
from .i18n import tr
from .walk import WALK_LIMIT, Walk
from .walk import walk as _walk

SMALL = 6  # tensors with at most this many elements are shown with their values


# -- frames --------------------------------------------------------------------------------------------------


@dataclass
class HookEvent:
    """User hooks of one kind firing on a node (or its tensor), and what they did."""

    kind: str  # "tensor hook" | "prehook" | "tensor hook or prehook" | "hook" | "post-accumulate hook"
    count: int | None  # how many user hooks of this kind (None: the graph does not say)
    before: Any = None  # the gradient(s) the hooks were given (array, tuple of arrays, or None)
    after: Any = None  # what came out (the hooks' replacement, or the unchanged value)
    replaced: bool = False
    text: str = ""


@dataclass
class Arrival:
    """The gradient a node received on one output slot: the parts that met, their sum, and
    what the node finally ran with (after tensor hooks and prehooks)."""

    slot: int
    parts: list[tuple[str, np.ndarray]] = field(default_factory=list)  # (from whom, value)
    total: np.ndarray | None = None
    consumed: np.ndarray | None = None
    text: str = ""
    edges: list[int | None] = field(default_factory=list)  # the drawn edge each part came along


@dataclass
class Send:
    """One gradient a node sent along one of its ``next_functions`` edges."""

    input: int  # index in next_functions
    to: str | None  # drawn id of the receiving node (None when it is not drawn)
    to_name: str
    slot: int  # input_nr: the receiving node's slot
    edge: int | None  # index of the drawn edge (Graph.model.edges), None when not drawn
    grad: np.ndarray | None
    text: str = ""  # the value in words (values, or shape and norm)
    label: str = ""  # the short edge label


@dataclass
class Frame:
    """One step of the backward pass, as plain data.

    ``kind`` is "start" (the seed enters the graph), "run" (a node ran), "accumulate" (an
    AccumulateGrad node added into a leaf's ``.grad``), "captured" (the gradient reached a
    node that ``inputs=`` does not run), "module" (the nodes folded into one module's box ran:
    ``by_module``) or "done". ``node``/``nodes`` are ids of the drawn
    graph (``n0``, ``n1``, ... as in ``viz.draw``), ``index`` the node's place in
    ``viz.walk`` order.
    """

    step: int
    kind: str
    name: str = ""
    node: str | None = None
    nodes: list[str] = field(default_factory=list)
    index: int | None = None
    grads_in: list[Arrival] = field(default_factory=list)
    grads_out: list[Send] = field(default_factory=list)
    grad_before: np.ndarray | None = None  # AccumulateGrad: the leaf's .grad before ...
    grad_after: np.ndarray | None = None  # ... and after this step
    hooks: list[HookEvent] = field(default_factory=list)  # in the order the engine ran them
    freed: list[str] = field(default_factory=list)  # saved values released after the node ran
    relabels: list[tuple[int, str]] = field(default_factory=list)  # (drawn edge, the value the node consumed)
    rule: str = ""
    title: str = ""
    lines: list[tuple[str, str]] = field(default_factory=list)  # (kind, text) for the side panel
    refs: list[str] = field(default_factory=list)  # ids the text mentions
    check: Any = None  # animate(check=True): viz.check.NodeCheck, the verdict on this node's backward
    source: str | None = None  # animate(source=True): the line of code that made the node (viz.source)
    inside: list[Frame] = field(default_factory=list)  # "module": the steps of the nodes folded in its box
    note: str = ""  # "module": the .grads it filled, as its box shows them ("weight.grad, bias.grad")

    @property
    def text(self) -> str:
        """The side panel's words as plain text, in viz's language (viz.i18n)."""
        return "\n".join(tr(t) for t in [self.title] + [t for _, t in self.lines])


# -- the graph map: raw walk -> drawn ids ----------------------------------------------------------------------


@dataclass
class GraphMap:
    """Where each walked node and edge ended up in the drawn graph."""

    node_ids: list[list[str]]  # raw index -> drawn ids (ghost copies, or a hidden group)
    names: list[str]  # raw index -> display name ("MulBackward0", "AccumulateGrad (a)")
    edge_of: dict[tuple[int, int], int]  # (raw index, index in next_functions) -> drawn edge
    root_ids: list[str | None]  # root k -> drawn id of its output box
    root_edges: list[int | None]  # root k -> drawn edge from its box into its grad_fn
    edges: list[tuple[str, str]]  # drawn edge -> (src id, dst id)
    ids: list[str]  # every drawn node id, in order

    def first_id(self, raw: int | None) -> str | None:
        if raw is None:
            return None
        ids = self.node_ids[raw]
        return ids[0] if ids else None


def map_graph(walk: Walk, model: Any, fold_of: dict[str, str] | None = None, full: Any = None) -> GraphMap:
    """Match a walk with the model ``viz.draw`` built from the same roots (same walk order).
    A folded model comes with ``fold_of`` (key in the ``full`` model -> its module box)."""
    fold_of = fold_of or {}
    full = full if full is not None else model
    by_base: dict[str, list[str]] = defaultdict(list)
    titles: dict[str, str] = {}
    for node in model.nodes:
        by_base[node.key.split("#", 1)[0]].append(node.id)
    for node in full.nodes:
        titles.setdefault(node.key.split("#", 1)[0], node.title)
    hidden = _hidden_keys(walk, full)

    def owner(raw: int) -> str:
        key = f"fn:{raw}"
        key = hidden.get(raw, key) if key not in titles else key
        return fold_of.get(key, key)

    node_ids = [list(by_base.get(owner(raw.index), [])) for raw in walk.nodes]
    names = []
    for raw in walk.nodes:
        name = probe.short_name(raw.name)
        if raw.leaf is not None:
            title = titles.get(f"fn:{raw.index}")
            name = f"{name} ({title})" if title and title != "leaf" else f"{name} (leaf {_shape_text(raw.leaf)})"
        names.append(clean(name))  # as draw() cleans labels: no lone surrogates, no raw control characters

    ids = {node.key: node.id for node in model.nodes}
    pool: dict[tuple[str, str, int | None], deque[int]] = defaultdict(deque)
    edges = []
    for k, edge in enumerate(model.edges):
        src, dst = edge.src.split("#", 1)[0], edge.dst.split("#", 1)[0]
        pool[(src, dst, edge.slot)].append(k)
        edges.append((ids[edge.src], ids[edge.dst]))

    def take(src: str, dst: str, slot: int) -> int | None:
        if src == dst:
            return None
        merged = src.startswith(("hidden:", "module:")) or dst.startswith(("hidden:", "module:"))
        for key in ((src, dst, slot), (src, dst, None)):
            queue = pool.get(key)
            if queue:
                return queue[0] if merged else queue.popleft()
        return None

    root_ids: list[str | None] = []
    root_edges: list[int | None] = []
    for k, root in enumerate(walk.roots):
        box = by_base.get(fold_of.get(f"out:{k}", f"out:{k}"))
        root_ids.append(box[0] if box else None)
        if root.tensor is not None and root.fn_index is not None:
            root_edges.append(take(fold_of.get(f"out:{k}", f"out:{k}"), owner(root.fn_index), root.slot))
        else:
            root_edges.append(None)
    edge_of: dict[tuple[int, int], int] = {}
    for raw in walk.nodes:
        for j, (child, nr) in enumerate(raw.edges):
            if child is None:
                continue
            k = take(owner(raw.index), owner(child), nr)
            if k is not None:
                edge_of[(raw.index, j)] = k
    return GraphMap(node_ids, names, edge_of, root_ids, root_edges, edges, [n.id for n in model.nodes])


def _hidden_keys(walk: Walk, model: Any) -> dict[int, str]:
    """raw index -> 'hidden:g' for nodes collapsed by max_nodes (same grouping as viz.model)."""
    if not any(node.role == "hidden" for node in model.nodes):
        return {}
    try:
        from .model import DEFAULT_MAX_NODES, _choose_kept, _hidden_groups

        drawn = sum(1 for node in model.nodes if node.key.startswith("fn:") and "#" not in node.key)
        budget = max(drawn, 1) if drawn else DEFAULT_MAX_NODES
        groups = _hidden_groups(walk, _choose_kept(walk, budget))
    except Exception:  # the summarising rules changed: hidden nodes are simply not highlighted
        return {}
    return {i: f"hidden:{g}" for i, g in enumerate(groups) if g is not None}


# -- values ----------------------------------------------------------------------------------------------------


def to_numpy(value: Any) -> np.ndarray | None:
    """A private NumPy copy of a tensor (minigrad's or PyTorch's), or None."""
    if value is None:
        return None
    try:
        t = value.detach() if hasattr(value, "detach") else value
        if hasattr(t, "cpu"):
            t = t.cpu()
        arr = t.numpy() if hasattr(t, "numpy") else np.asarray(t)
        return np.array(arr, copy=True)
    except Exception:
        try:
            return np.array(value.tolist())
        except Exception:
            return None


def _shape_text(tensor: Any) -> str:
    return probe.format_shape(probe.shape_of(tensor))


def _nested(values: Any) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v) for v in values) + "]"
    return probe.format_number(values)


def value_text(arr: np.ndarray | None, short: bool = False) -> str:
    """Values for small tensors, shape and norm for large ones ('None' for no gradient)."""
    if arr is None:
        return "None"
    if arr.size <= SMALL:
        return _nested(arr.tolist())
    norm = float(np.linalg.norm(np.asarray(arr, dtype=np.float64).ravel()))
    if short:
        return f"‖g‖={probe.format_number(norm)}"
    return f"{probe.format_shape(arr.shape)} ‖g‖={probe.format_number(norm)}"


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _sum_to(arr: np.ndarray, shape: tuple[int, ...] | None, dtype: Any = None) -> np.ndarray:
    """What the engine does with a gradient before adding it to a buffer: sum broadcast
    dimensions back to the input's shape and cast to its dtype."""
    if shape is not None and tuple(arr.shape) != tuple(shape):
        try:
            lead = arr.ndim - len(shape)
            if lead > 0:
                arr = arr.sum(axis=tuple(range(lead)))
            axes = tuple(d for d, n in enumerate(shape) if n == 1 and arr.shape[d] != 1)
            if axes:
                arr = arr.sum(axis=axes, keepdims=True)
            arr = arr.reshape(shape)
        except Exception:
            pass
    if dtype is not None and arr.dtype != dtype:
        try:
            arr = arr.astype(dtype)
        except Exception:
            pass
    return arr


def _post_acc_hooks(tensor: Any) -> int:
    """Post-accumulate hooks on a leaf: minigrad's ``post_accumulate_hooks``, else PyTorch's
    private ``_post_accumulate_grad_hooks`` (a dict, or None)."""
    hooks = probe._try_attr(tensor, "post_accumulate_hooks")
    if hooks is None or callable(hooks):
        hooks = probe._try_attr(tensor, "_post_accumulate_grad_hooks")
    return probe._count(hooks)


# -- the recorder ---------------------------------------------------------------------------------------------


class Recorder:
    """Observer hooks on every walked node; ``events`` in the order the engine fired them."""

    def __init__(self, walk: Walk, create_graph: bool = False) -> None:
        self.walk = walk
        self.create_graph = create_graph
        self.events: list[tuple[str, int, Any]] = []
        self.handles: list[Any] = []
        self.index = {id(raw.fn): raw.index for raw in walk.nodes}
        self.children: list[list[tuple[int | None, int]]] = []
        self.counts: list[dict[str, int | None]] = []
        self.saved_before: list[list[str]] = []
        self.targets: list[list[tuple[tuple[int, ...] | None, Any]]] = []
        self.rules: list[str | None] = []  # each node's rule text, read before backward frees its values
        self.input_names: list[tuple[str, ...] | None] = []
        self.retains: list[set[int]] = []  # output slots whose tensor called retain_grad()
        self.failed: list[str] = []  # hooks the graph refused (shown in the texts)
        # PyTorch does not say which node hooks are registered: a node whose hooks are unknown is
        # run again by hand to see whether they replaced its gradients (small graphs only: it doubles the work)
        self.recompute_unknown = len(walk.nodes) <= RECOMPUTE_LIMIT

    # -- install / remove -----------------------------------------------------------------------
    def install(self) -> None:
        try:
            self._install()
        except BaseException:
            self.remove()
            raise

    def _install(self) -> None:
        roots_by_node: dict[tuple[int, int], Any] = {}
        for root in self.walk.roots:
            if root.tensor is not None and root.fn_index is not None:
                roots_by_node.setdefault((root.fn_index, root.slot), root.tensor)
        for raw in self.walk.nodes:
            fn, i = raw.fn, raw.index
            kids = []
            for pair in probe.next_functions(fn):
                try:
                    child, nr = pair
                except (TypeError, ValueError):
                    kids.append((None, 0))
                    continue
                kids.append((self.index.get(id(child)) if child is not None else None, int(nr or 0)))
            self.children.append(kids)
            self.targets.append(self._targets(raw))
            tensors, _ = probe.saved_values(fn)
            self.saved_before.append([name for name, value in tensors if value is not probe.FREED])
            self.rules.append(probe.rule_text(fn) if raw.leaf is None else None)
            self.input_names.append(probe.input_names(fn))
            known_node_hooks = probe._try_attr(fn, "hooks") is not None
            hooks, prehooks = probe.node_hooks(fn)
            counts: dict[str, int | None] = {
                "hook": hooks if known_node_hooks else None,
                "prehook": prehooks if known_node_hooks else None,
            }
            # tensor hooks: on the leaf, or on the tensors this node produced
            watched: list[tuple[int, Any]] = []
            if raw.leaf is not None:
                watched.append((0, raw.leaf))
            else:
                out = probe.output_tensor(fn)
                if out is not None and getattr(out, "grad_fn", None) is fn:
                    watched.append((int(getattr(out, "output_nr", 0) or 0), out))
                for (node_index, slot), tensor in roots_by_node.items():
                    if node_index == i and all(t is not tensor for _, t in watched):
                        watched.append((slot, tensor))
            self.retains.append({slot for slot, tensor in watched if probe.retains_grad(tensor)})
            for slot, tensor in watched:
                counts[f"tensor hook {slot}"] = self._user_tensor_hooks(tensor)
                self._register(lambda t=tensor, s=slot, k=i: t.register_hook(self._on_tensor(k, s, t)), "tensor hook")
            if raw.leaf is not None:
                counts["post-accumulate hook"] = _post_acc_hooks(raw.leaf)
                leaf = raw.leaf
                self._register(lambda t=leaf, k=i: t.register_post_accumulate_grad_hook(self._on_post_acc(k)),
                               "post-accumulate hook")
            self.counts.append(counts)
            self._register(lambda f=fn, k=i: f.register_prehook(self._on_pre(k)), "prehook")
            self._register(lambda f=fn, k=i: f.register_hook(self._on_post(k)), "hook")

    def _register(self, make: Any, what: str) -> None:
        try:
            handle = make()
        except Exception as exc:  # e.g. a tensor that does not require grad
            self.failed.append(f"{what}: {exc}")
            return
        self.handles.append(handle)

    def remove(self) -> None:
        handles, self.handles = self.handles, []
        for handle in reversed(handles):
            try:
                handle.remove()
            except Exception:
                pass

    @staticmethod
    def _user_tensor_hooks(tensor: Any) -> int | None:
        hooks = probe._try_attr(tensor, "hooks")
        if hooks is not None and not callable(hooks):
            return probe._count(hooks)
        private = probe._try_attr(tensor, "_backward_hooks")  # PyTorch keeps them here (or None)
        if private is not None or probe.is_tensor(tensor):
            return probe._count(private)
        return None

    def _targets(self, raw: Any) -> list[tuple[tuple[int, ...] | None, Any]]:
        """Shape and NumPy dtype each input slot of a node expects (for the engine's sum_to)."""
        slots = probe.input_slots(raw.fn)
        if raw.leaf is not None:
            arr = to_numpy(raw.leaf)
            return [(probe.shape_of(raw.leaf), arr.dtype if arr is not None else None)]
        if slots is None:
            return []
        return [(shape, None) for shape, _ in slots]

    # -- the observers (they never return anything) --------------------------------------------------
    def _on_tensor(self, i: int, slot: int, tensor: Any) -> Any:
        def hook(grad: Any) -> None:
            # retain_grad runs after every tensor hook (ours is the last): .grad is still the old one here
            before = to_numpy(probe.grad_of(tensor)) if slot in self.retains[i] else None
            self.events.append(("tensor", i, (slot, to_numpy(grad), before)))

        return hook

    def _on_pre(self, i: int) -> Any:
        def prehook(grad_outputs: Any) -> None:
            before = None
            leaf = self.walk.nodes[i].leaf
            if leaf is not None:
                before = to_numpy(probe.grad_of(leaf))
            self.events.append(("pre", i, (tuple(to_numpy(g) for g in grad_outputs), before)))

        return prehook

    def _on_post(self, i: int) -> Any:
        def hook(grad_inputs: Any, grad_outputs: Any) -> None:
            outs = tuple(to_numpy(g) for g in grad_inputs)
            raw_outs = None
            raw = self.walk.nodes[i]
            hooks = self.counts[i].get("hook")
            if (hooks or (hooks is None and self.recompute_unknown)) and raw.leaf is None and not self.create_graph:
                raw_outs = self._recompute(raw.fn, grad_outputs)
            after = to_numpy(probe.grad_of(raw.leaf)) if raw.leaf is not None else None
            self.events.append(("post", i, (outs, raw_outs, after)))

        return hook

    def _on_post_acc(self, i: int) -> Any:
        def hook(tensor: Any) -> None:
            self.events.append(("postacc", i, to_numpy(probe.grad_of(tensor))))

        return hook

    @staticmethod
    def _recompute(fn: Any, grad_outputs: Any) -> tuple | None:
        """What the node computed before the user's node hooks replaced it: the node called
        by hand on the same gradients (its saved values are released only after its hooks)."""
        try:
            out = fn(*grad_outputs)
        except Exception:
            return None
        out = out if isinstance(out, (tuple, list)) else (out,)
        return tuple(to_numpy(g) for g in out)

    # -- after backward -------------------------------------------------------------------------------
    def freed_now(self) -> list[list[str]]:
        """For each node, the saved values that existed before backward and are freed now."""
        out = []
        for raw, before in zip(self.walk.nodes, self.saved_before):
            if not before:
                out.append([])
                continue
            tensors, _ = probe.saved_values(raw.fn)
            freed = {name for name, value in tensors if value is probe.FREED}
            out.append([name for name in before if name in freed])
        return out


# -- events -> frames --------------------------------------------------------------------------------------------


def _steps(events: list[tuple[str, int, Any]]) -> list[tuple[int, list[tuple[str, Any]]]]:
    """Consecutive events of one node form one step (the engine runs one node at a time)."""
    steps: list[tuple[int, list[tuple[str, Any]]]] = []
    for kind, i, payload in events:
        if steps and steps[-1][0] == i:
            steps[-1][1].append((kind, payload))
        else:
            steps.append((i, [(kind, payload)]))
    return steps


def build_frames(rec: Recorder, gmap: GraphMap, seeds: list[np.ndarray | None], retain_graph: bool,
                 root_names: list[str], seed_given: bool = False) -> list[Frame]:
    walk = rec.walk
    freed_lists = rec.freed_now()
    # node -> slot -> (from whom, value, drawn edge) for each gradient sent to it and not yet consumed
    pending: dict[int, dict[int, list[tuple[str, np.ndarray, int | None]]]] = defaultdict(lambda: defaultdict(list))

    # the start frame: the seed enters the graph at each root
    start = Frame(0, "start", name="backward()", title="Backward starts")
    for k, root in enumerate(walk.roots):
        seed = seeds[k] if k < len(seeds) else None
        if root.fn_index is None or seed is None:
            continue
        pending[root.fn_index][root.slot].append(("seed", seed, gmap.root_edges[k]))
        to = gmap.first_id(root.fn_index)
        text = value_text(seed)
        start.grads_out.append(Send(-1, to, gmap.names[root.fn_index], root.slot, gmap.root_edges[k], seed, text,
                                    value_text(seed, short=True)))
        name = root_names[k] if k < len(root_names) else "output"
        where = f"{gmap.names[root.fn_index]} (the grad_fn of {name})"
        if not seed_given and seed.size == 1:
            start.lines.append(("in", f"The seed ∂{name}/∂{name} = {text} enters {where}."))
        else:
            start.lines.append(("in", f"The gradient you passed, {text}, enters {where}."))
        if to:
            start.refs.append(to)
    start.nodes = [i for k, r in enumerate(walk.roots) if (i := gmap.root_ids[k])]
    start.node = start.nodes[0] if start.nodes else None
    start.lines.append(("note", "Each step runs one node: it turns the gradient of its output into gradients "
                                "of its inputs (its local derivative rule) and sends them along next_functions."))
    frames = [start]

    for i, events in _steps(rec.events):
        frames.append(_frame(len(frames), i, events, rec, gmap, pending, freed_lists, retain_graph))

    done = Frame(len(frames), "done", name="done", title="Backward done")
    ran = sum(1 for f in frames if f.kind in ("run", "accumulate"))
    done.lines.append(("note", f"{ran} node{'s' if ran != 1 else ''} ran, each once, after all the gradients "
                               "flowing into it had arrived."))
    for f in frames:
        if f.kind == "accumulate":
            done.lines.append(("acc", f"{_leaf_label(f.name)}.grad = {value_text(f.grad_after)}"))
            if f.node:
                done.refs.append(f.node)
    if any(f.freed for f in frames):
        done.lines.append(("free", "Saved values were freed as their nodes finished (retain_graph=False): "
                                   "a second backward through this graph would fail."))
    elif retain_graph:
        done.lines.append(("note", "retain_graph=True: the saved values were kept, so backward can run again."))
    frames.append(done)
    return clean_texts(frames)


# -- a folded model plays by module -------------------------------------------------------------------------------

MODULE_ACC_LINES = 4  # a module step tells this many .grads it filled (the last line: how many more)
MODULE_NOTE_CHARS = 28  # longer lists of the .grads a module filled are counted instead ("72 .grads filled")


def by_module(recording: Any) -> Any:
    """One step per folded module: consecutive steps of nodes drawn in one module's box become one "module"
    step telling what entered the module, the ``.grad``s it filled and what left it. The node steps stay in
    ``frame.inside``; opening the box (``expand=``, a click in the player) plays them one by one."""
    boxes = {n.id: n for n in recording.graph.model.nodes if n.role == "module"}
    if not boxes:
        return recording
    out: list[Frame] = []
    for f in recording.frames:
        box = f.nodes[0] if len(f.nodes) == 1 and f.kind in ("run", "accumulate", "captured") else None
        if box not in boxes:
            out.append(f)
        elif out and out[-1].kind == "module" and out[-1].node == box:
            out[-1].inside.append(f)
        else:
            out.append(Frame(0, "module", name=clean(boxes[box].title), node=box, nodes=[box], inside=[f]))
    for step, f in enumerate(out):
        f.step = step
        if f.kind == "module":
            _module_step(f, boxes[f.node].key, recording.gmap, {b: clean(n.title) for b, n in boxes.items()})
    recording.frames = out
    return recording


def _module_step(frame: Frame, key: str, gmap: GraphMap, boxes: dict[str, str]) -> None:
    """The texts of a module's step, from the steps inside it (``boxes``: drawn id -> title of each module)."""
    inner, box = frame.inside, frame.node
    ran = [f for f in inner if f.kind in ("run", "accumulate")]
    frame.title = f"{frame.name} runs its backward ({len(ran)} node{'s' if len(ran) != 1 else ''} inside)"
    frame.source = next((f.source for f in inner if f.source), None)
    if frame.source:
        frame.lines.append(("source", frame.source))
    for f in inner:
        for a in f.grads_in:
            outside = [(i, part) for i, part in enumerate(a.parts) if part[0] != box]
            if not outside:
                continue
            parts = [part for _, part in outside]
            edges = [a.edges[i] if i < len(a.edges) else None for i, _ in outside]
            frame.grads_in.append(Arrival(a.slot, parts, sum(v for _, v in parts), a.consumed, edges=edges))
            for src, value in parts:
                origin = "the seed" if src == "seed" else _name_of(gmap, src) + _in_box(boxes, src)
                frame.lines.append(("in", f"In: grad = {value_text(value)} from {origin} (into {f.name})"))
    names = Counter(probe.short_name(f.name.split(" (", 1)[0]) for f in ran)
    listed = ", ".join(f"{n} ×{c}" if c > 1 else n for n, c in names.most_common(4))
    listed += ", ..." if len(names) > 4 else ""
    if len(ran) == 1:
        frame.lines.append(("note", f"Inside, one node ran: {listed}."))
    else:
        frame.lines.append(("note", f"Inside, {len(ran)} nodes ran one after another ({listed}); open the box "
                                    "(click it) to play them one by one."))
    told = ("acc", "hook", "check", "layer", "rule") if len(ran) == 1 else ("acc", "hook", "check", "layer")
    out: list[tuple[str, str]] = []
    for f in inner:
        frame.lines.extend(line for line in f.lines if line[0] in told)
        frame.hooks.extend(f.hooks)
        frame.freed.extend(f.freed)
        frame.refs.extend(r for r in f.refs if r != box)
        frame.relabels.extend((e, text) for e, text in f.relabels if e is not None)
        for send in f.grads_out:
            if send.to == box:
                continue
            send = replace(send, to_name=send.to_name + _in_box(boxes, send.to))  # the quiz asks with this name
            frame.grads_out.append(send)
            slot = f" (slot {send.slot})" if send.slot else ""
            out.append(("out", f"Out: grad = {send.text} → {send.to_name}{slot}"))
    acc = [i for i, line in enumerate(frame.lines) if line[0] == "acc"]
    if len(acc) > MODULE_ACC_LINES:  # a big module: the first few, then how many more (opening it tells each)
        more = ("acc", f"... and {len(acc) - MODULE_ACC_LINES + 1} more .grads filled (open the box to see each)")
        frame.lines = [line for i, line in enumerate(frame.lines) if i not in acc[MODULE_ACC_LINES - 1:]]
        frame.lines.insert(acc[MODULE_ACC_LINES - 1], more)
    frame.lines.extend(out or [("out", "No gradient leaves the module (its inputs need none).")])
    if frame.freed:
        frame.lines.append(("free", "Saved values inside freed as their nodes finished (retain_graph=False)."))
    frame.check = next((f.check for f in inner if f.check is not None and f.check.verdict == "wrong"), None)
    frame.note = _module_note([_leaf_label(f.name) for f in inner if f.kind == "accumulate"], key)


def _in_box(boxes: dict[str, str], drawn: str | None) -> str:
    return f" in {boxes[drawn]}" if drawn in boxes else ""


def _module_note(leaves: list[str], key: str) -> str:
    """'weight.grad, bias.grad' for the leaves of module 2 (2.weight, 2.bias); '72 .grads filled' when long."""
    if not leaves:
        return ""
    scope = key[len("module:"):].split("..")[0] + "."
    names = [n[len(scope):] if n.startswith(scope) else n for n in leaves]
    text = ", ".join(f"{n}.grad" for n in names)
    return text if len(text) <= MODULE_NOTE_CHARS else f"{len(leaves)} .grads filled"


def frame_note(f: Frame) -> str:
    """What a step writes on its node: an AccumulateGrad's new ``.grad``, the ``.grad``s a module filled."""
    if f.kind == "accumulate":
        return ".grad = " + value_text(f.grad_after, short=True)
    return f.note if f.kind in ("module", "tangent") else ""  # "tangent": viz.tangent, the node's tangent


def clean_texts(frames: list[Any]) -> list[Any]:
    """Clean every text of the frames as ``viz.draw`` cleans labels (a name can hold a lone
    surrogate or a control character), so they print, travel as JSON and save as UTF-8."""
    for f in frames:
        f.title = clean(f.title)
        f.name = clean(f.name)
        f.lines = [(kind, clean(text)) for kind, text in f.lines]
        if getattr(f, "variable", None) is not None:  # forward frames: the name in the block
            f.variable = clean(f.variable)
    return frames


def _leaf_label(name: str) -> str:
    """'AccumulateGrad (a)' -> 'a'."""
    if name.startswith("AccumulateGrad (") and name.endswith(")"):
        return name[len("AccumulateGrad ("):-1]
    return name


def _frame(step: int, i: int, events: list[tuple[str, Any]], rec: Recorder, gmap: GraphMap,
           pending: dict, freed_lists: list[list[str]], retain_graph: bool) -> Frame:
    """One node's step, told in the order the engine ran it: the gradient that arrived, the hooks
    on its output tensor and retain_grad, its prehooks, its rule and what it sent (or, for a leaf,
    the accumulation and the post-accumulate hooks), its node hooks, the release of saved values."""
    raw = rec.walk.nodes[i]
    name = gmap.names[i]
    seen = _StepEvents(events)
    is_acc = raw.leaf is not None
    ran = seen.pre is not None or seen.outs is not None
    frame = Frame(step, "accumulate" if is_acc and ran else ("run" if ran else "captured"), name=name,
                  nodes=list(gmap.node_ids[i]), index=i)
    frame.node = frame.nodes[0] if frame.nodes else None
    rule = rec.rules[i]
    frame.rule = f"{probe.short_name(raw.name)}: {rule}" if rule else ""
    if is_acc and ran:
        frame.title = f"{name} adds into {_leaf_label(name)}.grad"
    else:
        frame.title = f"{name} runs" if ran else f"{name} receives its gradient"

    _arrivals(frame, i, seen, pending)
    _arrival_lines(frame, gmap)
    _before_run(frame, rec, i, seen)
    if ran and frame.rule:
        frame.lines.append(("rule", frame.rule))
    replaced_outs = _sends(frame, rec, gmap, pending, i, seen)
    if is_acc:
        _accumulate_lines(frame, rec.counts[i], seen)
    hooks = rec.counts[i].get("hook")
    if ran and (hooks or replaced_outs is not None):
        if is_acc:  # an AccumulateGrad's hooks get no gradients to change
            event = _hook_event("hook", hooks, None, None, f"on {name}")
        else:
            before = replaced_outs if replaced_outs is not None else seen.outs
            event = _hook_event("hook", hooks, before, seen.outs, f"on {name}")
            if event.replaced:
                event.text += ": those are the gradients sent on"
        _add_hook(frame, event)
    frame.freed = list(freed_lists[i]) if ran else []
    if frame.freed:
        frame.lines.append(("free", f"Saved {', '.join(frame.freed)} freed now (retain_graph=False)."))
    elif ran and rec.saved_before[i] and retain_graph:
        frame.lines.append(("note", f"Saved {', '.join(rec.saved_before[i])} kept (retain_graph=True)."))
    return frame


class _StepEvents:
    """What the observer hooks saw during one node's step."""

    def __init__(self, events: list[tuple[str, Any]]) -> None:
        self.tensor: dict[int, np.ndarray | None] = {}  # slot -> the gradient after the tensor hooks
        self.retained_before: dict[int, np.ndarray | None] = {}  # slot -> .grad before retain_grad added
        self.pre: tuple | None = None  # what the node ran with (after its prehooks)
        self.acc_before = self.acc_after = None
        self.outs: tuple | None = None  # what the node sent (after its hooks)
        self.raw_outs: tuple | None = None  # what its rule computed, when known
        for kind, payload in events:
            if kind == "tensor":
                slot, value, before = payload
                self.tensor[slot] = value
                self.retained_before[slot] = before
            elif kind == "pre":
                self.pre, self.acc_before = payload
            elif kind == "post":
                self.outs, self.raw_outs, after = payload
                if self.acc_after is None:
                    self.acc_after = after
            elif kind == "postacc":
                self.acc_after = payload


def _arrivals(frame: Frame, i: int, seen: _StepEvents, pending: dict) -> None:
    """The gradients that arrived on each output slot, their sum, and what the node consumed."""
    slots = sorted(set(pending.get(i, {})) | set(seen.tensor) | set(range(len(seen.pre or ()))))
    for slot in slots:
        parts = pending[i].pop(slot, []) if i in pending else []
        total = None
        for _, value, _ in parts:
            total = value.copy() if total is None else total + value
        after_tensor = seen.tensor.get(slot, total)
        consumed = seen.pre[slot] if seen.pre is not None and slot < len(seen.pre) else after_tensor
        frame.grads_in.append(Arrival(slot, [(src, value) for src, value, _ in parts], total, consumed,
                                      edges=[edge for _, _, edge in parts]))


def _before_run(frame: Frame, rec: Recorder, i: int, seen: _StepEvents) -> None:
    """Tensor hooks on the node's output (or its leaf), retain_grad, then prehooks: each slot's
    gradient before -> after, and the incoming edge relabelled with the value the node consumed.

    The hooks of a tensor viz cannot reach (PyTorch's intermediate tensors; a minigrad tensor no
    longer alive) still run: then the change between arriving and being used is told as one event
    of the tensor hooks or the prehooks, never pinned on one of them."""
    counts = rec.counts[i]
    is_acc = rec.walk.nodes[i].leaf is not None
    prehooks = counts.get("prehook")
    where = f"on the leaf {_leaf_label(frame.name)}" if is_acc else "on its output tensor"
    unseen = [a for a in frame.grads_in if f"tensor hook {a.slot}" not in counts]
    for arrival in frame.grads_in:
        key = f"tensor hook {arrival.slot}"
        if key not in counts:
            continue
        after_tensor = seen.tensor.get(arrival.slot, arrival.total)
        if counts[key] or (counts[key] is None and not _same(arrival.total, after_tensor)):
            _add_hook(frame, _hook_event("tensor hook", counts[key], arrival.total, seen.tensor.get(arrival.slot),
                                         where))
        if arrival.slot in rec.retains[i] and arrival.slot in seen.tensor:
            _retain_line(frame, seen.retained_before.get(arrival.slot), after_tensor)
    if seen.pre is not None:
        before = tuple(seen.tensor.get(a.slot, a.total) for a in frame.grads_in)
        after = tuple(a.consumed for a in frame.grads_in)
        changed = not all(_same(b, a) for b, a in zip(before, after))
        many = len(before) > 1
        if unseen and (prehooks or changed):
            if prehooks is None:
                where_unseen = f"on its output tensor or on {frame.name}"
            elif prehooks:
                where_unseen = f"on its output tensor and prehook ×{prehooks} on {frame.name}"
            else:
                where_unseen = "on its output tensor (viz cannot reach it)"
            _add_hook(frame, _hook_event("tensor hook or prehook", None, before if many else before[0],
                                         after if many else after[0], where_unseen))
        elif prehooks or (prehooks is None and changed):
            _add_hook(frame, _hook_event("prehook", prehooks, before if many else before[0],
                                         after if many else after[0], f"on {frame.name}"))
    for arrival in frame.grads_in:
        if _same(arrival.total, arrival.consumed) or arrival.consumed is None:
            continue
        where = f" on slot {arrival.slot}" if len(frame.grads_in) > 1 else ""
        frame.lines.append(("in", f"So {frame.name} uses grad{where} = {value_text(arrival.consumed)}."))
        if len(arrival.edges) == 1 and arrival.edges[0] is not None:
            frame.relabels.append((arrival.edges[0], value_text(arrival.consumed, short=True)))


def _add_hook(frame: Frame, event: HookEvent) -> None:
    frame.hooks.append(event)
    frame.lines.append(("hook", event.text))


def _retain_line(frame: Frame, before: np.ndarray | None, value: np.ndarray | None) -> None:
    if value is None:
        return
    if before is None:
        text = f"retain_grad: its output's .grad = {value_text(value)} (what the tensor hooks returned)"
    else:
        text = (f"retain_grad: its output's .grad += {value_text(value)}: {value_text(before)} → "
                f"{value_text(before + value)}")
    frame.lines.append(("acc", text))


def _sends(frame: Frame, rec: Recorder, gmap: GraphMap, pending: dict, i: int, seen: _StepEvents) -> tuple | None:
    """The gradients the node sent, with the lines for what its rule computed. Returns what the
    rule computed when node hooks replaced it (then the lines show the rule's values and the
    edges carry the hooks' values), else None."""
    kids = rec.children[i]
    replaced = _replaced_by_hooks(seen.raw_outs, seen.outs)
    names = rec.input_names[i]
    for j, g in enumerate(seen.outs or ()):
        if j >= len(kids):
            break
        child, nr = kids[j]
        if child is None or g is None:
            continue
        targets = rec.targets[child]
        shape, dtype = targets[nr] if nr < len(targets) else (None, None)
        value = _sum_to(g, shape, dtype)
        edge = gmap.edge_of.get((i, j))
        pending[child][nr].append((gmap.first_id(i) or frame.name, value, edge))
        frame.grads_out.append(Send(j, gmap.first_id(child), gmap.names[child], nr, edge, value,
                                    value_text(value), value_text(value, short=True)))
    for send in frame.grads_out:
        label = names[send.input] if names and send.input < len(names) else f"input {send.input}"
        shown = send.text
        if replaced is not None and send.input < len(replaced) and replaced[send.input] is not None:
            shown = value_text(replaced[send.input])
        frame.lines.append(("out", f"grad_{label} = {shown} → {send.to_name}" +
                            (f" (slot {send.slot})" if send.slot != 0 else "")))
        if send.to:
            frame.refs.append(send.to)
    if frame.kind == "run" and not frame.grads_out:
        frame.lines.append(("out", "No gradient flows on from here (its inputs need none)."))
    return replaced


def _replaced_by_hooks(computed: tuple | None, sent: tuple | None) -> tuple | None:
    """What the node's rule computed, when its hooks sent something else; else None.

    ``computed`` comes from calling the node by hand: PyTorch hands its hooks gradients already summed
    to each input's shape (a broadcast bias), and sums in another order, so each value is fitted to
    the sent one's shape and compared with a float tolerance: a doubt is no replacement."""
    if computed is None or sent is None:
        return None
    if len(computed) != len(sent):
        return computed
    for raw, out in zip(computed, sent):
        if raw is None or out is None:
            if (raw is None) != (out is None):
                return computed
            continue
        fitted = _sum_to(raw, tuple(out.shape)) if raw.shape != out.shape else raw
        if fitted.shape != out.shape or not np.allclose(fitted, out, rtol=1e-5, atol=1e-6, equal_nan=True):
            return computed
    return None


def _accumulate_lines(frame: Frame, counts: dict, seen: _StepEvents) -> None:
    if frame.kind != "accumulate":
        return
    frame.grad_before, frame.grad_after = seen.acc_before, seen.acc_after
    leaf = _leaf_label(frame.name)
    got = frame.grads_in[0].consumed if frame.grads_in else None
    if seen.acc_before is None:
        frame.lines.append(("acc", f"{leaf}.grad was None, so it becomes the gradient: {value_text(seen.acc_after)}"))
    else:
        frame.lines.append(("acc", f"{leaf}.grad += {value_text(got)}: {value_text(seen.acc_before)} → "
                                   f"{value_text(seen.acc_after)} (gradients add up across backward calls)"))
    post = counts.get("post-accumulate hook")
    if post:
        text = (f"post-accumulate hook{f' ×{post}' if post > 1 else ''} ran after .grad was updated "
                f"(it sees {leaf} with .grad = {value_text(seen.acc_after)})")
        _add_hook(frame, HookEvent("post-accumulate hook", post, None, seen.acc_after, False, text))


def _hook_event(kind: str, count: int | None, before: Any, after: Any, where: str) -> HookEvent:
    if isinstance(before, tuple) or isinstance(after, tuple):
        replaced = before is not None and after is not None and (
            len(before) != len(after) or not all(_same(a, b) for a, b in zip(before, after)))
    else:
        replaced = before is not None and after is not None and not _same(before, after)
    times = f" ×{count}" if count and count > 1 else ""
    what = f"{kind}{times} {where}"
    if after is None and before is None:
        return HookEvent(kind, count, before, after, False, f"{what} fired")
    shown_after = _many_text(after)
    if replaced:
        if before is None:
            text = f"{what} fired; the gradients after it: {shown_after}"
        else:
            text = f"{what} fired and returned {shown_after}, replacing {_many_text(before)}"
    else:
        text = f"{what} fired and returned None: the gradient stays {shown_after}"
    return HookEvent(kind, count, before, after, replaced, text)


def _many_text(value: Any) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(value_text(v) for v in value) + ")"
    return value_text(value)


def _arrival_lines(frame: Frame, gmap: GraphMap) -> None:
    many = len(frame.grads_in) > 1
    for arrival in frame.grads_in:
        where = f" on slot {arrival.slot}" if many else ""
        parts = arrival.parts
        if len(parts) > 1:
            froms = " + ".join(value_text(v) for _, v in parts)
            arrival.text = (f"{len(parts)} gradients met here{where} and were summed: {froms} = "
                            f"{value_text(arrival.total)}")
            frame.lines.append(("sum", arrival.text))
        elif len(parts) == 1:
            src, value = parts[0]
            origin = "the seed" if src == "seed" else _name_of(gmap, src)
            arrival.text = f"grad{where} = {value_text(value)} (from {origin})"
            frame.lines.append(("in", arrival.text))
        else:
            arrival.text = f"grad{where} = {value_text(arrival.consumed)}"
            frame.lines.append(("in", arrival.text))
        for src, _ in parts:
            if src != "seed":
                frame.refs.append(src)


def _name_of(gmap: GraphMap, drawn_id: str) -> str:
    for ids, name in zip(gmap.node_ids, gmap.names):
        if drawn_id in ids:
            return name
    return drawn_id


# -- cumulative state (what the browser derives) ----------------------------------------------------------------


@dataclass
class State:
    """What the picture shows at one step: node states, edge labels, notes."""

    nodes: dict[str, str]  # drawn id -> "current" | "done" | "waiting" | "pending"
    labels: dict[int, str]  # drawn edge -> gradient label
    current_edges: set[int]
    notes: dict[str, str]  # drawn id -> note text (".grad = ...")
    freed: set[str]
    arrived: dict[str, tuple[int, int]]  # drawn id -> (arrived so far, total)
    hooked: set[int] = field(default_factory=set)  # drawn edges showing a value a hook changed


def state_at(frames: list[Frame], k: int, ids: list[str] | None = None) -> State:
    """The cumulative state after step ``k`` (the same rules as player.js)."""
    k = max(0, min(k, len(frames) - 1))
    run_at: dict[str, list[int]] = defaultdict(list)
    total: dict[str, int] = defaultdict(int)
    for f in frames:
        if f.kind != "done":
            for n in f.nodes:
                run_at[n].append(f.step)
        for s in f.grads_out:
            if s.to:
                total[s.to] += 1
    arrived: dict[str, int] = defaultdict(int)
    labels: dict[int, str] = {}
    current_edges: set[int] = set()
    notes: dict[str, str] = {}
    freed: set[str] = set()
    hooked: set[int] = set()
    for f in frames[: k + 1]:
        for s in f.grads_out:
            if s.edge is not None:
                labels[s.edge] = s.label
                hooked.discard(s.edge)
                if f.step == k:
                    current_edges.add(s.edge)
            if s.to:
                arrived[s.to] += 1
        for edge, label in f.relabels:
            labels[edge] = label
            hooked.add(edge)
        note = frame_note(f)
        if note:
            for n in f.nodes:
                notes[n] = note
        if f.freed:
            freed.update(f.nodes)
    states: dict[str, str] = {}
    everyone = set(ids or []) | set(run_at) | set(total)
    for n in everyone:
        steps = run_at.get(n, [])
        if k in steps and frames[k].kind != "done":
            states[n] = "current"
        elif steps and max(steps) <= k:
            states[n] = "done"
        elif arrived.get(n, 0) > 0:
            states[n] = "waiting"
        else:
            states[n] = "pending"
    return State(states, labels, current_edges, notes, freed,
                 {n: (arrived.get(n, 0), total[n]) for n in total}, hooked)


# -- the entry point used by animate / trace_backward --------------------------------------------------------------


@dataclass
class BackwardRecording:
    frames: list[Frame]
    graph: Any  # viz.Graph, drawn before backward ran (folded when asked)
    gmap: GraphMap
    root_names: list[str]
    redraw: Any = None  # Redraw: the same recording on the graph folded another way


@dataclass
class Redraw:
    """What it takes to show one recording with other modules expanded: the full picture (drawn
    before backward freed anything) and the recorded events, so no autograd graph is read again."""

    rec: Recorder
    full: Any  # viz.model.Model, unfolded
    seeds: list
    keep: bool
    seed_given: bool
    rankdir: str
    fold: str | None
    expand: tuple[str, ...]
    finish: tuple = ()  # what a mode adds to each recording made again (animate's source lines)

    def folded(self, expand: tuple[str, ...]) -> BackwardRecording:
        from .dot import to_dot
        from .fold import fold as fold_model
        from .graph import Graph

        folded = fold_model(self.full, self.fold, expand)
        graph = Graph(folded.model, to_dot(folded.model, rankdir=self.rankdir))
        gmap = map_graph(self.rec.walk, folded.model, folded.fold_of, self.full)
        root_names = [_root_name(folded.model, gmap, k) for k in range(len(self.rec.walk.roots))]
        frames = build_frames(self.rec, gmap, self.seeds, self.keep, root_names, seed_given=self.seed_given)
        again = Redraw(self.rec, self.full, self.seeds, self.keep, self.seed_given, self.rankdir, self.fold,
                       tuple(expand), self.finish)
        recording = BackwardRecording(frames, graph, gmap, root_names, again)
        for finish in self.finish:
            finish(recording)
        return recording


def record_backward(loss: Any, params: Any = None, gradient: Any = None, inputs: Any = None,
                    retain_graph: bool | None = None, create_graph: bool = False, show_saved: bool = True,
                    max_nodes: int | None = None, rankdir: str = "TB", fold: str | None = None,
                    expand: Any = ()) -> BackwardRecording:
    """Draw, hook, run ``loss.backward(...)`` and turn what the hooks saw into frames."""
    from .model import build

    if not probe.is_tensor(loss) or not hasattr(loss, "backward"):
        raise TypeError(f"viz.animate: expected a tensor to run backward from, got {type(loss).__name__}")
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"viz: rankdir must be TB, LR, BT or RL, got {rankdir!r}")
    walk = _walk((loss,))
    if max_nodes is None:
        limit = WALK_LIMIT if fold else ANIMATE_MAX_NODES
        max_nodes = max(len(walk.nodes) + 8, 250) if len(walk.nodes) <= limit else limit
    full = build(walk, view="backward", params=params, show_saved=show_saved, max_nodes=max_nodes,
                 limit=WALK_LIMIT if fold else None)
    seed = _seed(loss, gradient)
    rec = Recorder(walk, create_graph=create_graph)
    keep = bool(create_graph) if retain_graph is None else bool(retain_graph)
    redraw = Redraw(rec, full, [seed], keep, gradient is not None, rankdir, fold,
                    tuple([expand] if isinstance(expand, str) else expand))
    rec.install()
    try:
        loss.backward(**_given(gradient=gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs))
    finally:
        rec.remove()
    return redraw.folded(redraw.expand)


def _given(**kwargs: Any) -> dict[str, Any]:
    """The arguments of backward() the caller gave (not None, not False): what a plain ``loss.backward()`` is
    called with, so a library whose backward takes fewer options (a teaching engine's ``backward(gradient)``)
    is animated too."""
    return {name: value for name, value in kwargs.items() if value is not None and value is not False}


ANIMATE_MAX_NODES = 1500
RECOMPUTE_LIMIT = 400  # nodes: up to this size, nodes whose hooks are unknown (PyTorch) are checked


def _seed(loss: Any, gradient: Any) -> np.ndarray | None:
    if gradient is not None:
        return to_numpy(gradient)
    value = to_numpy(loss)
    return np.ones_like(value) if value is not None else None


def _root_name(model: Any, gmap: GraphMap, k: int) -> str:
    rid = gmap.root_ids[k]
    if rid is None:
        return "output"
    for node in model.nodes:
        if node.id == rid:
            return clean(node.title) if node.title else "output"
    return "output"

