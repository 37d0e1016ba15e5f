"""`Optimizer`: parameter groups, per-parameter state, zero_grad and state_dict, as torch.optim.

Subclasses update parameters with NumPy on the arrays behind the tensors (`p._data`), in place,
and bump each parameter's version counter exactly as PyTorch's in-place updates do, so a graph
that saved a parameter before the step refuses a later backward (as in PyTorch).
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

from .._hooks import HookDict, RemovableHandle
from .._tensor import Tensor, make
from ..autograd.grad_mode import enable_grad


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


_global_optimizer_pre_hooks: HookDict = HookDict()
_global_optimizer_post_hooks: HookDict = HookDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """A hook run before every optimizer's `step()`: `hook(optimizer, args, kwargs) -> None or (new_args,
    new_kwargs)` (as `torch.optim.optimizer.register_optimizer_step_pre_hook`; viz.session watches steps so)."""
    return _global_optimizer_pre_hooks.add(hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """A hook run after every optimizer's `step()`: `hook(optimizer, args, kwargs) -> None`."""
    return _global_optimizer_post_hooks.add(hook)


def _hook_step(func: Callable) -> Callable:
    """`step` wrapped as PyTorch wraps it: global then own pre hooks, the step, own then global post hooks."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        self = args[0]
        for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), but got "
                                       f"{result}.")
        out = func(*args, **kwargs)
        for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True
    return wrapper


class Optimizer:
    """Base class: holds `param_groups` (dicts of params + options) and `state` (per parameter)."""

    __module__ = "minigrad.optim"

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        self._optimizer_step_pre_hooks: HookDict = HookDict()
        self._optimizer_step_post_hooks: HookDict = HookDict()
        self._patch_step_function()
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            f"got minigrad.{params.type().split('.')[-1]}")
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", HookDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", HookDict())
        self._patch_step_function()

    def _patch_step_function(self) -> None:
        """Wrap the class's `step` with the step hooks once, when its first instance is made (as PyTorch)."""
        cls = type(self)
        if not getattr(cls.step, "hooked", False):
            cls.step = _hook_step(cls.step)

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """`hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)`, run before this optimizer's step."""
        return self._optimizer_step_pre_hooks.add(hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """`hook(optimizer, args, kwargs) -> None`, run after this optimizer's step."""
        return self._optimizer_step_post_hooks.add(hook)

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (missing options take the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        names, tensors = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__module__}.{type(p).__name__}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          UserWarning, stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's .grad: to None (the default) or to zeros in place."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure: Callable[[], Any] | None = None):
        raise NotImplementedError

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- state_dict -------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """{'state': {index: {...}}, 'param_groups': [{options..., 'params': [index, ...]}]}, as PyTorch.

        Parameters are numbered in the order the groups list them; the tensors are not copied.
        """
        mapping: dict[int, int] = {}
        start = 0

        def pack(group: dict) -> dict:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore options and per-parameter state saved by `state_dict()` (state tensors are copied)."""
        state_dict = dict(state_dict)
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param: Tensor, value, key=None):
            if isinstance(value, Tensor):
                if key == "step" or not param.is_floating_point():
                    return make(value._data.copy())
                return make(value._data.astype(param._data.dtype, copy=True))
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v

        def update(group: dict, new: dict) -> dict:
            new["params"] = group["params"]
            if "param_names" in group and "param_names" not in new:
                new["param_names"] = group["param_names"]
            return new

        self.__setstate__({"state": state, "param_groups": [update(g, s) for g, s in zip(groups, saved_groups)]})


def zero_grads(params, set_to_none: bool = True) -> None:
    """Reset `.grad` of each parameter: to None (PyTorch 2's default) or to zeros in place, detached."""
    for p in params:
        g = p._grad
        if g is None:
            continue
        if set_to_none:
            p._grad = None
        else:
            if g._grad_fn is not None:
                g.detach_()
            else:
                g.requires_grad_(False)
            g.zero_()
