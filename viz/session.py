"""``with viz.session() as s: ...`` — several calls as one story.

A learner's hardest questions are about what connects calls: why ``.grad`` doubles after a second
``backward()``, what ``zero_grad`` did, why the second backward fails, which in-place op broke the graph.
A session records, in order, as steps with their values before -> after:

- each ``backward()`` and ``autograd.backward(...)`` (the ``.grad`` of every watched tensor, accumulated:
  old + new = after; the saved values it freed when ``retain_graph`` was not set);
- each ``autograd.grad(...)`` (the gradients it returned; ``.grad`` stays as it was);
- ``zero_grad`` (seen as gradients that became None or zeros between two calls);
- each ``optimizer.step()`` (through the public optimizer step hooks: every parameter before -> after,
  and SGD's rule with its numbers);
- in-place ops (a watched tensor's version counter went up: its values and version before -> after, and
  the line that changed it when the block records source lines);
- a backward that fails: on saved values freed by an earlier backward (which node's, freed at which step)
  or on a saved value changed in place (its version then and now, the step and line that changed it).

Watched tensors are those of the block's scope (and the parameters of modules there); with ``params=``
(a dict, named_parameters() or a model) those and the tensors the block makes (in a notebook, whose
scope holds every earlier cell's tensors, this keeps the story short). viz replaces ``Tensor.backward``,
``autograd.backward`` and ``autograd.grad`` of the imported libraries for the duration of the block (the
real ones run; they are put back on exit; a name imported before the block, ``from torch.autograd import
grad``, is not seen) and registers optimizer step hooks it removes again. The error that
ended the block (a failing backward) is shown as the last step instead of being raised (``catch=False``
raises it).
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import probe
from .i18n import tr
from .trace import to_numpy

__all__ = ["Session", "SessionStep", "Change", "session"]

_LIBRARIES = ("minigrad", "torch")
_FREED = re.compile(r"backward through the graph a second time|after they have already been freed")
_VERSION = re.compile(r"is at version (\d+); expected version (\d+)")


@dataclass
class Change:
    """One tensor's value before -> after a step (``what``: "grad", "data" or "version")."""

    name: str
    what: str
    before: Any
    after: Any
    rule: str = ""  # how after follows from before ("0.5 + 0.5 = 1", "1 - 0.1 × 0.5 = 0.95")
    tensor: Any = field(default=None, repr=False, compare=False)  # marked in the player's picture
    terms: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # an update rule's terms

    @property
    def text(self) -> str:
        before = tr("(made in the block)") if self.before is None and self.what == "data" else _show(self.before)
        head = f"{self.name}.{self.what}: {before} -> {_show(self.after)}"
        return f"{head}   ({self.rule})" if self.rule else head


@dataclass
class SessionStep:
    """One call of the story: kind is start | backward | grad | zero_grad | step | inplace | error | done."""

    index: int
    kind: str
    title: str
    changes: list[Change] = field(default_factory=list)
    lines: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None
    nodes: list[str] = field(default_factory=list)  # drawn ids of the session's graph this step is about
    results: list[tuple[str, Any]] = field(default_factory=list)  # autograd.grad: (input's name, gradient)
    freed: list[str] = field(default_factory=list)  # drawn ids of the nodes whose saved values this step freed

    @property
    def text(self) -> str:
        """The step as plain text, in viz's language (viz.i18n): names, values and code as they are."""
        return "\n".join([f"[{self.index}] {tr(self.title)}"] + [f"    {c.text}" for c in self.changes]
                         + [f"    {tr(t)}" for _, t in self.lines])


@dataclass
class _Seen:
    name: str
    tensor: Any
    version: int
    data: np.ndarray | None
    grad: np.ndarray | None
    grad_fn: Any


class Session:
    """See the module docstring. ``s.steps`` (plain data), ``s.summary()`` (text), ``s.player()``."""

    def __init__(self, params: Any = None, source: bool = False, catch: bool = True, rankdir: str = "TB") -> None:
        self.params = params
        self.source = source
        self.catch = catch
        self.rankdir = rankdir
        self.steps: list[SessionStep] = []
        self._scope: Any = None
        self._seen: dict[int, _Seen] = {}
        self._patched: list[tuple[Any, str, Any]] = []  # (class or module, attribute, what it was)
        self._handles: list[Any] = []
        self._lines: Any = None
        self._freed: dict[int, tuple[int, str, list[str]]] = {}  # id(node) -> (step, node name, saved names)
        self._keep: list[Any] = []  # nodes whose ids _freed uses stay alive
        self._graph: Any = None  # (walk, model, gmap) of the first backward's graph, drawn before it ran
        self._opt_before: dict[int, dict[int, np.ndarray | None]] = {}
        self._running = 0
        # with params=: the scope's tensors from before the block are not watched; held (by id) until the block
        # ends, so that a new tensor never takes the id of an old one the block dropped (a name bound again)
        self._old: dict[int, Any] = {}

    # -- the block -------------------------------------------------------------------------------------------
    def __enter__(self) -> Session:
        self._scope = sys._getframe(1)
        if self.params is not None:
            from .animate import _tensors_in

            self._old = {id(t): t for t in _tensors_in(self._scope.f_locals).values()}
        if self.source:
            from .source import source_lines

            self._lines = source_lines()
            self._lines.__enter__()
        for lib in (sys.modules.get(n) for n in _LIBRARIES):
            cls = getattr(lib, "Tensor", None) if lib is not None else None
            if cls is None or not hasattr(cls, "backward"):
                continue
            original = cls.__dict__.get("backward")
            self._patched.append((cls, "backward", original))
            cls.backward = self._backward_of(original if original is not None else cls.backward)
            autograd = getattr(lib, "autograd", None)
            for name, wrap in (("backward", self._autograd_backward_of), ("grad", self._autograd_grad_of)):
                if callable(getattr(autograd, name, None)):
                    self._patched.append((autograd, name, getattr(autograd, name)))
                    setattr(autograd, name, wrap(getattr(autograd, name)))
            try:
                optimizer = importlib.import_module(f"{lib.__name__}.optim.optimizer")
                self._handles.append(optimizer.register_optimizer_step_pre_hook(self._before_step))
                self._handles.append(optimizer.register_optimizer_step_post_hook(self._after_step))
            except (ImportError, AttributeError):
                pass
        self._sync()
        start = self._add("start", "The tensors the session watches")
        for seen in self._seen.values():
            grad = "None" if seen.grad is None else _show(seen.grad)
            start.lines.append(("note", f"{seen.name} = {_show(seen.data)}   grad {grad}   version {seen.version}"))
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        for handle in self._handles:
            handle.remove()
        self._handles = []
        for owner, name, original in reversed(self._patched):
            if original is None:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        self._patched = []
        if self._lines is not None:
            self._lines.__exit__(None, None, None)
            self._lines = None
        self._sync(emit=True)
        self._scope = None
        self._old = {}
        caught = exc is not None and self.catch and bool(self.steps) and self.steps[-1].kind == "error" \
            and self.steps[-1].error == str(exc)
        done = self._add("done", "The block ended with the error above" if caught else "The block ended")
        if exc is not None and not caught:
            done.lines.append(("note", f"{exc_type.__name__}: {exc}"))
        return caught

    # -- what is watched ---------------------------------------------------------------------------------------
    def _watched(self) -> list[tuple[str, Any]]:
        from .animate import _tensors_in

        found: list[tuple[str, Any]] = []
        scope = self._scope.f_locals if self._scope is not None else {}
        for name, value in list(scope.items()) if self.params is None else ():
            if not name.startswith("_") and hasattr(value, "named_parameters") and not probe.is_tensor(value):
                try:
                    found.extend((f"{name}.{n}", p) for n, p in value.named_parameters())
                except Exception:
                    pass
        found.extend((n, t) for n, t in _tensors_in(scope).items() if id(t) not in self._old)
        if self.params is not None:
            params = self.params.named_parameters() if hasattr(self.params, "named_parameters") else self.params
            found.extend((str(n), t) for n, t in (params.items() if hasattr(params, "items") else params))
        return found

    def _sync(self, emit: bool = False) -> None:
        """Compare the watched tensors with what was seen last: changes nobody announced are zero_grad
        (gradients gone to None or zeros) or in-place ops (a version counter went up)."""
        zeroed: list[Change] = []
        inplace: list[tuple[Change, Any]] = []
        done: set[int] = set()
        for name, t in self._watched():
            if id(t) in done:
                continue
            done.add(id(t))
            old = self._seen.get(id(t))
            now = self._look(old.name if old is not None else name, t)
            self._seen[id(t)] = now
            if old is None and emit and now.version > 0 and now.grad_fn is not None:
                # made and changed in the block since the last call: the in-place op bumped it from 0
                inplace.append((Change(now.name, "data", None, now.data, rule=f"version 0 -> {now.version}", tensor=t),
                                t))
            if old is None or not emit:
                continue
            if now.version > old.version:
                inplace.append((Change(old.name, "data", old.data, now.data,
                                       rule=f"version {old.version} -> {now.version}", tensor=t), t))
            if old.grad is not None and (now.grad is None or (not np.any(now.grad) and np.any(old.grad))):
                zeroed.append(Change(old.name, "grad", old.grad, now.grad,
                                     rule="set to None" if now.grad is None else "zeroed in place", tensor=t))
        if zeroed:
            step = self._add("zero_grad", "zero_grad(): the gradients start again", zeroed)
            step.lines.append(("note", "backward adds into .grad; zero_grad clears it first (set_to_none=True, "
                                       "the default, sets .grad to None; set_to_none=False fills it with zeros)."))
        for change, t in inplace:
            step = self._add("inplace", f"{change.name} changed in place ({change.rule})", [change])
            line = self._line_of(getattr(t, "grad_fn", None))
            if line:
                step.lines.append(("source", line))
            step.lines.append(("note", "An in-place op bumps the tensor's version counter; autograd compares it "
                                       "with the version each node saved."))

    @staticmethod
    def _look(name: str, t: Any) -> _Seen:
        grad = probe.grad_of(t)
        return _Seen(name, t, int(getattr(t, "_version", 0)), to_numpy(t),
                     None if grad is None else to_numpy(grad), getattr(t, "grad_fn", None))

    def _line_of(self, fn: Any) -> str | None:
        if fn is None:
            return None
        from .source import line_of

        line = line_of(fn)
        return str(line) if line is not None else None

    def _add(self, kind: str, title: str, changes: list[Change] | None = None) -> SessionStep:
        step = SessionStep(len(self.steps), kind, title, changes or [])
        self.steps.append(step)
        return step

    def _names_of(self, tensors: tuple) -> str:
        names = [self._name_of(t) for t in tensors]
        return names[0] if len(names) == 1 else "[" + ", ".join(names) + "]"

    def _name_of(self, t: Any) -> str:
        seen = self._seen.get(id(t))
        if seen is not None:
            return seen.name
        for name, other in self._watched():
            if other is t:
                return name
        fn = getattr(t, "grad_fn", None)
        return f"(the output of {probe.node_name(fn)})" if fn is not None else "(a tensor)"

    # -- backward and autograd.grad -----------------------------------------------------------------------------
    def _backward_of(self, original: Any) -> Any:
        session = self

        def backward(tensor: Any, gradient: Any = None, retain_graph: Any = None, create_graph: bool = False,
                     inputs: Any = None) -> Any:
            call = f"{session._name_of(tensor)}.backward({_flags(retain_graph, create_graph)})"
            return session._call((tensor,), call, retain_graph, create_graph, None,
                                 lambda: original(tensor, gradient, retain_graph, create_graph, inputs))

        backward.__doc__ = getattr(original, "__doc__", None)
        return backward

    def _autograd_backward_of(self, original: Any) -> Any:
        session = self
        signature = inspect.signature(original)

        def backward(*args: Any, **kwargs: Any) -> Any:
            bound = _bind(signature, args, kwargs)
            if bound is None or session._running:  # let the library say what is wrong with the call
                return original(*args, **kwargs)
            roots = _roots(bound.get("tensors"))
            retain, create = bound.get("retain_graph"), bool(bound.get("create_graph"))
            call = f"autograd.backward({session._names_of(roots)}{', ' if _flags(retain, create) else ''}" \
                   f"{_flags(retain, create)})"
            return session._call(roots, call, retain, create, None, lambda: original(*args, **kwargs))

        backward.__doc__ = getattr(original, "__doc__", None)
        return backward

    def _autograd_grad_of(self, original: Any) -> Any:
        session = self
        signature = inspect.signature(original)

        def grad(*args: Any, **kwargs: Any) -> Any:
            bound = _bind(signature, args, kwargs)
            if bound is None or session._running:
                return original(*args, **kwargs)
            roots, inputs = _roots(bound.get("outputs")), _roots(bound.get("inputs"))
            retain, create = bound.get("retain_graph"), bool(bound.get("create_graph"))
            flags = _flags(retain, create)
            call = f"autograd.grad({session._names_of(roots)}, {session._names_of(inputs)}" \
                   f"{', ' if flags else ''}{flags})"
            return session._call(roots, call, retain, create, inputs, lambda: original(*args, **kwargs))

        grad.__doc__ = getattr(original, "__doc__", None)
        return grad

    def _call(self, roots: tuple, call: str, retain_graph: Any, create_graph: bool, inputs: tuple | None,
              run: Any) -> Any:
        """One backward or autograd.grad call as a step (a call made inside another, e.g. by a hook or by
        Tensor.backward itself, is part of the outer step)."""
        if self._running:
            return run()
        self._running += 1
        try:
            return self._run_backward(roots, call, retain_graph, create_graph, inputs, run)
        finally:
            self._running -= 1

    def _run_backward(self, roots: tuple, call: str, retain_graph: Any, create_graph: bool, inputs: tuple | None,
                      run: Any) -> Any:
        self._sync(emit=True)
        keep = bool(create_graph) if retain_graph is None else bool(retain_graph)
        saved = self._saved_by_node(roots)
        if self._graph is None and any(getattr(t, "grad_fn", None) is not None for t in roots):
            self._draw(roots)
        try:
            with warnings.catch_warnings():
                if self.source:  # anomaly mode's "Error detected in ..." repeats what the error step shows
                    warnings.filterwarnings("ignore", message="Error detected in ")
                out = run()
        except RuntimeError as err:
            self._failed(call, err, roots)
            raise
        before = {k: s.grad for k, s in self._seen.items()}
        self._sync()
        step = self._add("backward" if inputs is None else "grad", call)
        for key, seen in self._seen.items():
            old, new = before.get(key), seen.grad
            if new is None or (old is not None and np.array_equal(old, new)):
                continue
            rule = f"{_show(old)} + {_show(new - old)} = {_show(new)}: backward adds into .grad" \
                if old is not None and old.shape == new.shape else ""
            step.changes.append(Change(seen.name, "grad", old, new, rule=rule, tensor=seen.tensor))
        if inputs is not None:
            outputs = out if isinstance(out, (tuple, list)) else (out,)
            for t, g in zip(inputs, outputs):
                value = None if g is None else to_numpy(g)
                step.results.append((self._name_of(t), value))
                step.lines.append(("result", f"returns the gradient for {self._name_of(t)}: {_show(value)}"))
            step.lines.append(("note", "autograd.grad returns the gradients and leaves every .grad as it was."
                               if not step.changes else "autograd.grad returns the gradients and leaves every .grad "
                               "as it was (the changes above are hooks')."))
        step.nodes = self._ids_of_graph(roots)
        if keep:
            why = "retain_graph=True" if retain_graph else "create_graph=True (retain_graph defaults to it)"
            step.lines.append(("note", f"{why}: the saved values stay, so backward can run again."))
        elif saved:
            for fn, node_name, names in saved:
                self._freed[id(fn)] = (step.index, node_name, names)
                self._keep.append(fn)
            step.freed = self._ids_of_nodes([fn for fn, _, _ in saved])
            listed = ", ".join(f"{n} ({', '.join(s)})" for _, n, s in saved[:4])
            more = f" and {len(saved) - 4} more" if len(saved) > 4 else ""
            step.lines.append(("freed", f"Freed after this backward (retain_graph not set): the saved values of "
                                        f"{listed}{more}."))
        return out

    def _saved_by_node(self, roots: tuple) -> list[tuple[Any, str, list[str]]]:
        """(node, name, names of its saved tensors) for the graph behind ``roots``, newest node first."""
        from .walk import paused_gc
        from .walk import walk as _walk

        roots = _with_graph(roots)
        if not roots:
            return []
        out = []
        with paused_gc():
            walked = _walk(roots)
            try:
                for raw in walked.nodes:
                    if raw.is_accumulate:
                        continue
                    tensors, _ = probe.saved_values(raw.fn)
                    names = [n for n, v in tensors if probe.is_tensor(v)]
                    if names:
                        out.append((raw.fn, raw.name, names))
            finally:
                walked.release()
        return out

    def _failed(self, call: str, err: Exception, roots: tuple) -> None:
        message = str(err)
        step = self._add("error", f"{call} failed")
        step.error = message
        step.lines.append(("error", f"RuntimeError: {message.splitlines()[0] if message else ''}"))
        if _FREED.search(message):
            freed = [(fn, v) for fn, v in self._walk_freed(roots)]
            which = "every backward but the last"
            if freed:
                fn, (at, node_name, names) = freed[0]
                they = "they were" if len(names) > 1 else "it was"
                step.lines.append(("freed", f"{node_name} needs its {probe.saved_phrase(names)} for backward, "
                                            f"but {they} freed after the backward of step {at} (it ran without "
                                            "retain_graph=True)."))
                step.nodes = [i for i in self._ids_of_nodes([fn])]
                which = f"the backward of step {at} (the one that freed them)"
            step.lines.append(("note", f"Fix: pass retain_graph=True to {which}, or run the forward again to "
                                       "build a new graph."))
        match = _VERSION.search(message)
        if match:
            now, then = int(match.group(1)), int(match.group(2))
            culprits = [s for s in self.steps if s.kind in ("inplace", "step")]
            stale = self._stale(roots)
            what = f"{stale[0][1]}'s {probe.saved_label(stale[0][2])}" if stale else "A value saved for backward"
            step.lines.append(("version", f"{what} was at version {then} when it was saved; it is at version {now} "
                                          "now."))
            step.nodes = self._ids_of_nodes([fn for fn, _, _ in stale])
            for s in culprits[-1:]:
                where = next((t for k, t in s.lines if k == "source"), "")
                step.lines.append(("version", f"Changed at step {s.index}: {s.title}" + (f" ({where})" if where
                                                                                         else "")))
            step.lines.append(("note", "Fix: use the out-of-place op (x = x * 2 instead of x *= 2), or clone() "
                                       "the value before changing it."))

    @staticmethod
    def _stale(roots: tuple) -> list[tuple[Any, str, str]]:
        """(node, its name, saved name) for each saved value behind ``roots`` that an in-place op changed:
        reading it raises autograd's version error (public ``_saved_*`` attributes, as viz.probe reads them)."""
        from .walk import paused_gc
        from .walk import walk as _walk

        out = []
        roots = _with_graph(roots)
        if not roots:
            return out
        with paused_gc():
            walked = _walk(roots)
            try:
                for raw in walked.nodes:
                    for attr in sorted(a for a in dir(raw.fn) if a.startswith("_saved_")):
                        try:
                            getattr(raw.fn, attr)
                        except Exception as err:
                            if "inplace operation" in str(err):
                                out.append((raw.fn, raw.name, attr[len("_saved_"):]))
            finally:
                walked.release()
        return out

    def _walk_freed(self, roots: tuple) -> list[tuple[Any, tuple[int, str, list[str]]]]:
        out = []
        roots = _with_graph(roots)
        if not roots:
            return out
        from .walk import paused_gc
        from .walk import walk as _walk

        with paused_gc():
            walked = _walk(roots)
            try:
                for raw in walked.nodes:
                    hit = self._freed.get(id(raw.fn))
                    if hit is not None:
                        out.append((raw.fn, hit))
            finally:
                walked.release()
        return out

    # -- optimizer steps ---------------------------------------------------------------------------------------
    def _before_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        from .updates import snapshot

        self._sync(emit=True)
        self._opt_before[id(optimizer)] = snapshot(optimizer)

    def _after_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        from .updates import explain

        before = self._opt_before.pop(id(optimizer), {})
        name = type(optimizer).__name__
        step = self._add("step", f"{name}.step()")
        formulas = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                old, state_before = before.get(id(p), (None, {}))
                new = to_numpy(p)
                if old is None or new is None or np.array_equal(old, new):
                    continue
                update = explain(optimizer, group, p, old, state_before)
                rule = update.text if update is not None else f"changed by {_show(new - old)}"
                step.changes.append(Change(self._name_of(p), "data", old, new, rule=rule, tensor=p,
                                           terms=update.terms if update is not None else {}))
                if update is not None and update.formula not in formulas:
                    formulas.append(update.formula)
        if step.changes:
            hyper = _hyperparameters(optimizer.param_groups[0]) if optimizer.param_groups else ""
            step.lines.append(("note", f"{name}: {' | '.join(formulas)}{hyper}, in place (each parameter's "
                                       "version goes up)." if formulas else
                               f"{name} updates each parameter in place from its .grad and its state."))
        self._sync()  # the step's version bumps are its own, not in-place ops of the learner

    # -- showing -------------------------------------------------------------------------------------------------
    def _draw(self, roots: tuple) -> None:
        from . import draw
        from .trace import map_graph
        from .walk import walk as _walk

        roots = _with_graph(roots)
        walked = _walk(roots)
        graph = draw(*roots, params=dict((s.name, s.tensor) for s in self._seen.values()), show_saved=True,
                     rankdir=self.rankdir, max_nodes=max(len(walked.nodes) + 8, 250), source=self.source)
        self._graph = (walked, graph, map_graph(walked, graph.model))

    def _ids_of_nodes(self, fns: list[Any]) -> list[str]:
        if self._graph is None:
            return []
        walked, _, gmap = self._graph
        wanted = {id(f) for f in fns}
        return [i for raw in walked.nodes if id(raw.fn) in wanted for i in gmap.node_ids[raw.index]]

    def _ids_of_graph(self, roots: tuple) -> list[str]:
        """Every drawn id when this call ran on the drawn graph (the first call's roots)."""
        if self._graph is None:
            return []
        walked, _, gmap = self._graph
        if walked.roots and any(walked.roots[0].obj is t for t in roots):
            return list(gmap.ids)
        return []

    def _ids_of_tensors(self, tensors: list[Any]) -> list[str]:
        """The drawn ids of these tensors: a leaf's box, or a root's output box."""
        if self._graph is None:
            return []
        walked, _, gmap = self._graph
        wanted = {id(t) for t in tensors if t is not None}
        out = [i for raw in walked.nodes if raw.leaf is not None and id(raw.leaf) in wanted
               for i in gmap.node_ids[raw.index]]
        out += [gmap.root_ids[k] for k, root in enumerate(walked.roots)
                if id(root.obj) in wanted and gmap.root_ids[k] is not None and root.fn_index is not None]
        return out

    def summary(self) -> str:
        """The steps as text (the checked twin of the player in a notebook)."""
        return "\n".join(s.text for s in self.steps)

    def __repr__(self) -> str:
        return f"Session(steps={len(self.steps)})"

    def player(self, speed: float = 1.0) -> Any:
        """The steps as a player over the graph of the first backward (drawn before it ran)."""
        from .player import Scene, _layout, layout_info, player_class

        steps = []
        for s in self.steps:
            lines = [["change", c.text] for c in s.changes] + [[k, t] for k, t in s.lines]
            title = f"[{s.index}] {tr(s.title)}"  # the title in viz's language (the Scene translates the lines)
            steps.append({"ids": list(s.nodes), "kind": s.kind, "title": title, "lines": lines,
                          "appear": [],
                          # viz/story.js: the nodes a failure or an in-place step is about light up (mg-ref),
                          # the tensors a step changed are outlined, the nodes whose saved values it freed greyed
                          "refs": list(s.nodes) if s.kind in ("error", "inplace") else [],
                          "changed": self._ids_of_tensors([c.tensor for c in s.changes]), "freed": list(s.freed)})
        payload: dict[str, Any] = {"mode": "forward", "session": True, "legend": "session", "steps": steps,
                                   "sources": {}}
        if self._graph is None:
            root, hint, dot, edges, count = None, "viz.session: no backward ran in the block", "", [], 0
        else:
            _, graph, gmap = self._graph
            edges = gmap.edges
            root, hint, dot = _layout(graph.source, edges, {}, {})
            count = len(graph.model.nodes)
            payload["sources"] = {n.id: n.source for n in graph.model.nodes if n.source}
            if steps:
                steps[0]["appear"] = list(gmap.ids)
        payload["layout"] = layout_info(dot, edges, {}, {}, hint, self.rankdir)
        scene = Scene("forward", root, payload, self.steps, count, dot, hint)
        return player_class("ForwardPlayer")(scene, speed=speed)


def session(params: Any = None, source: bool = False, catch: bool = True, rankdir: str = "TB") -> Session:
    """``with viz.session() as s: ...`` then ``s.player()``, ``s.steps`` or ``print(s.summary())``:
    every backward, zero_grad, optimizer step and in-place op of the block as one story (see viz.session)."""
    return Session(params=params, source=source, catch=catch, rankdir=rankdir)


def _show(values: Any) -> str:
    if values is None:
        return "None"
    arr = np.asarray(values)
    if arr.size <= 6:
        flat = arr.tolist()
        return _nested(flat)
    return f"[{arr.size} values, norm {probe.format_number(float(np.linalg.norm(arr.astype(np.float64))))}]"


def _nested(values: Any) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v) for v in values) + "]"
    return probe.format_number(float(values)) if isinstance(values, (int, float)) else str(values)


def _flags(retain_graph: Any, create_graph: bool) -> str:
    """The flags of a backward call as the learner wrote them (when they matter)."""
    keep = bool(create_graph) if retain_graph is None else bool(retain_graph)
    return "create_graph=True" if create_graph else "retain_graph=True" if keep else ""


def _bind(signature: inspect.Signature, args: tuple, kwargs: dict) -> dict | None:
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return dict(bound.arguments)


def _roots(tensors: Any) -> tuple:
    """autograd's ``tensors``/``outputs``/``inputs`` argument (one tensor or a sequence) as a tuple."""
    if tensors is None:
        return ()
    return (tensors,) if probe.is_tensor(tensors) else tuple(tensors)


def _with_graph(roots: tuple) -> tuple:
    return tuple(t for t in roots if getattr(t, "grad_fn", None) is not None)


_HYPER = (("lr", "lr"), ("momentum", "μ"), ("dampening", "dampening"), ("betas", "β1, β2"), ("alpha", "α"),
          ("eps", "eps"), ("weight_decay", "wd"), ("lr_decay", "lr_decay"))


def _hyperparameters(group: dict) -> str:
    """' (lr = 0.1, μ = 0.9)': the first group's hyperparameters that the rules use and are set."""
    said = []
    for key, shown in _HYPER:
        value = group.get(key)
        if value is None or isinstance(value, bool) or (key != "lr" and not isinstance(value, tuple) and not value):
            continue
        if isinstance(value, tuple):
            said.append(f"{shown} = {', '.join(probe.format_number(float(v)) for v in value)}")
        elif isinstance(value, (int, float)):
            said.append(f"{shown} = {probe.format_number(float(value))}")
    return f" ({', '.join(said)})" if said else ""
