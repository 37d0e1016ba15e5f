"""functional_call and stack_module_state: a module as a function of its parameters and buffers."""

from __future__ import annotations

from typing import Any

from ..ops.joining import stack


def _names(module) -> dict:
    """name -> tensor for every parameter and buffer, tied ones under each of their names (PyTorch's
    `remove_duplicate=False`)."""
    found = {}
    for prefix, sub in module.named_modules(remove_duplicate=False):
        for kind in ("_parameters", "_buffers"):
            for name, t in sub.__dict__[kind].items():
                if t is not None:
                    found[f"{prefix}.{name}" if prefix else name] = t
    return found


def _merge(parameter_and_buffer_dicts) -> dict:
    if isinstance(parameter_and_buffer_dicts, dict):
        return dict(parameter_and_buffer_dicts)
    merged: dict = {}
    for d in parameter_and_buffer_dicts:
        again = [k for k in d if k in merged]
        if again:
            raise ValueError(f"{again} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        merged.update(d)
    return merged


def _tie(module, given: dict, known: dict) -> dict:
    """Each tensor given for one name of a tied parameter, given for its other names too."""
    groups: dict = {}
    for name, t in known.items():
        groups.setdefault(id(t), []).append(name)
    out = dict(given)
    for names in groups.values():
        if len(names) < 2:
            continue
        supplied = [n for n in names if n in given]
        if len({id(given[n]) for n in supplied}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(supplied)}, which are tied. "
                             "Consider using tie_weights=False")
        if supplied:
            for n in names:
                out[n] = given[supplied[0]]
    return out


def _locate(module, name: str):
    *path, leaf = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


def functional_call(module, parameter_and_buffer_dicts, args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False):
    """`module(*args, **kwargs)` with the parameters and buffers named in `parameter_and_buffer_dicts` (a dict, or
    a tuple of dicts) in place of its own, which are put back afterwards."""
    given = _merge(parameter_and_buffer_dicts)
    known = _names(module)
    if tie_weights:
        given = _tie(module, given, known)
    if strict:
        missing = sorted(k for k in known if k not in given)
        unexpected = sorted(k for k in given if k not in known)
        if missing or unexpected:
            lines = ([f"\tUnexpected key(s): {', '.join(repr(k) for k in unexpected)}."] if unexpected else []) + \
                ([f"\tMissing key(s): {', '.join(repr(k) for k in missing)}."] if missing else [])
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n" + "\n".join(lines))
    saved = []
    try:
        for name, t in given.items():
            owner, leaf = _locate(module, name)
            d = owner.__dict__
            kind = "_parameters" if leaf in d["_parameters"] else "_buffers" if leaf in d["_buffers"] else None
            if kind is None:
                continue
            saved.append((d[kind], leaf, d[kind][leaf]))
            d[kind][leaf] = t
        args = args if isinstance(args, tuple) else () if args is None else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for where, leaf, old in reversed(saved):
            where[leaf] = old


def stack_module_state(models) -> tuple[dict, dict]:
    """The parameters (as new leaves that require grad) and buffers of several same-shaped modules, each stacked
    along a new first dim: the state of an ensemble, for `vmap(functional_call ...)`."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    names = dict(models[0].named_parameters())
    params = {k: stack([dict(m.named_parameters())[k] for m in models]).detach().requires_grad_(
        names[k].requires_grad) for k in names}
    buffers = {k: stack([dict(m.named_buffers())[k] for m in models]) for k, _ in models[0].named_buffers()}
    return params, buffers


