"""`nn.Module`: the base class of every layer and model, as PyTorch's.

Assigning a Parameter, a Module or a registered buffer to an attribute registers it (so
`parameters()`, `state_dict()`, `train()` and `repr()` find it); calling a module runs its hooks
and `forward`. One minigrad addition: every graph node a module's forward creates is tagged with
the module's qualified name in `node.metadata["module"]` (e.g. "encoder.0"), so a picture of the
graph can group nodes by layer. The tagging walks the new part of the output's graph once after
forward returns; the per-operation recording path is untouched.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping

from .. import _dtypes
from .._device import no_cuda
from .._hooks import HookDict, RemovableHandle
from .._state import GRAD
from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..autograd.graph import SEQUENCE, AccumulateGrad
from ..ops.views import parse_to
from ..optim.optimizer import zero_grads
from .parameter import Parameter

# -- the module scope stack: which module's forward is running --------------------------------------------
_SCOPE: list = []  # one _Scope per module call in progress, innermost last
_STRUCTURE = [0]  # bumped whenever any module's children change, so cached name maps go stale


class _Scope:
    """One module call in progress: its qualified name and where its part of the graph begins.

    `names` maps id(module) -> qualified name inside the root module being called; `start` is a
    sequence number taken before forward (every node made during the call has a larger one);
    `frontier` collects nodes inner calls reached but did not own; `tagged` (shared by all calls
    under one root call) holds the nodes tagged so far, so each node is walked once.
    """

    __slots__ = ("names", "name", "start", "frontier", "tagged")

    def __init__(self, names: dict, name: str, start: int, tagged: set) -> None:
        self.names = names
        self.name = name
        self.start = start
        self.frontier: list = []
        self.tagged = tagged


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return "minigrad." + _dtypes.FROM_NP[obj._data.dtype]._legacy
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _tensors_in(obj, out: list) -> None:
    """Every tensor in a forward's result (a tensor, or nested tuples/lists/dicts of them)."""
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)


def _tag_nodes(result, scope: _Scope, parent: _Scope | None) -> None:
    """Set `metadata["module"] = scope.name` on the nodes this call created that no inner call tagged.

    Inner calls return first and tag their own nodes, so this walk (iterative, from the outputs and
    from the nodes inner calls handed up) stops at tagged nodes, at leaves, and at nodes older than
    this call; the latter go up to the enclosing call, which may own them (`h = x * 3; self.fc(h)`).
    A tag already present (set by the user) is kept.
    """
    tensors: list = []
    _tensors_in(result, tensors)
    stack = [t._grad_fn for t in tensors if t._grad_fn is not None]
    stack += scope.frontier
    start, name, tagged = scope.start, scope.name, scope.tagged
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen or type(node) is AccumulateGrad:
            continue
        seen.add(node)
        if node._sequence_number < start:
            if parent is not None:
                parent.frontier.append(node)
            continue
        if node in tagged:
            continue
        tagged.add(node)
        node.metadata.setdefault("module", name)
        for nxt in node._next_nodes:
            if nxt is not None:
                stack.append(nxt)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join((num_spaces * " ") + line if line.strip() else "" for line in lines)


def _add_hook(hooks: HookDict, hook: Callable, prepend: bool) -> RemovableHandle:
    handle = hooks.add(hook)
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks[handle.id] = hook
        hooks.update((k, v) for k, v in items if k != handle.id)
    return handle


class Module:
    """Base class for all neural network modules; subclass it and define `forward`."""

    __module__ = "minigrad.nn"
    training: bool
    _version: int = 1
    call_super_init: bool = False

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected argument")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_hooks"] = HookDict()
        d["_forward_hooks_with_kwargs"] = set()
        d["_forward_hooks_always_called"] = set()
        d["_forward_pre_hooks"] = HookDict()
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_scope_cache"] = None

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # -- calling ---------------------------------------------------------------------------------------
    def _scope_names(self) -> dict:
        """id(module) -> qualified name for every module under this one (cached until the tree changes)."""
        cache = self.__dict__.get("_scope_cache")
        if cache is not None and cache[0] == _STRUCTURE[0] and cache[1] == id(self):
            return cache[2]  # (a deep copy has a new id, so it never reuses its original's map)
        names = {}
        for n, m in self.named_modules():
            names.setdefault(id(m), n)
        self.__dict__["_scope_cache"] = (_STRUCTURE[0], id(self), names)
        return names

    def __call__(self, *args, **kwargs):
        parent = _SCOPE[-1] if _SCOPE else None
        if parent is not None:
            scope = _Scope(parent.names, parent.names.get(id(self), parent.name), next(SEQUENCE), parent.tagged)
        else:
            scope = _Scope(self._scope_names(), "", next(SEQUENCE), set())
        _SCOPE.append(scope)
        try:
            result = self._call_forward(args, kwargs)
        finally:
            _SCOPE.pop()
        if GRAD.mode > 0:
            _tag_nodes(result, scope, parent)
        return result

    def _call_forward(self, args: tuple, kwargs: dict):
        if not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                out = hook(self, args, kwargs)
                if out is not None:
                    if not (isinstance(out, tuple) and len(out) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {out}.")
                    args, kwargs = out
            else:
                out = hook(self, args)
                if out is not None:
                    args = out if isinstance(out, tuple) else (out,)
        called = set()
        try:
            result = self.forward(*args, **kwargs)
            for hook_id, hook in list(self._forward_hooks.items()):
                called.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs:
                    out = hook(self, args, kwargs, result)
                else:
                    out = hook(self, args, result)
                if out is not None:
                    result = out
        except Exception:
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called and hook_id not in called:
                    hook(self, args, None)
            raise
        return result

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """`hook(module, args)` runs before forward; a returned value replaces the arguments."""
        handle = _add_hook(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """`hook(module, args, output)` runs after forward; a returned value replaces the output."""
        handle = _add_hook(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        return handle

    # -- attribute registration --------------------------------------------------------------------------
    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d:
            if name in d["_parameters"]:
                return d["_parameters"][name]
            if name in d["_buffers"]:
                return d["_buffers"][name]
            if name in d["_modules"]:
                return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, d["_buffers"], d["_modules"], d["_non_persistent_buffers_set"])
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(minigrad.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                self._remove_from(name, d, d["_parameters"], d["_buffers"], d["_non_persistent_buffers_set"])
                modules[name] = value
                _STRUCTURE[0] += 1
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(minigrad.nn.Module or None expected)")
                modules[name] = value
                _STRUCTURE[0] += 1
            else:
                buffers = d.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(minigrad.Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name: str, *dicts_or_sets) -> None:
        for d in dicts_or_sets:
            if name in d:
                if isinstance(d, dict):
                    del d[name]
                else:
                    d.discard(name)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
            _STRUCTURE[0] += 1
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = list(dir(type(self))) + list(self.__dict__) + list(self._parameters) + list(self._modules) + list(
            self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    def _check_name(self, name, kind: str, registry: dict) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\"" if kind != "module"
                           else f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter under `name` (None registers the name with no tensor, like a bias=False)."""
        self._check_name(name, "parameter", self.__dict__.get("_parameters", {}))
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(minigrad.nn.Parameter or None required)")
        elif param._grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        else:
            self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (saved in state_dict unless persistent=False)."""
        self._check_name(name, "buffer", self.__dict__.get("_buffers", {}))
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(minigrad Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name(name, "module", self.__dict__.get("_modules", {}))
        self._modules[name] = module
        _STRUCTURE[0] += 1

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    # -- iteration ------------------------------------------------------------------------------------------
    def _named_members(self, get_members, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(name, module) for this module ("") and every submodule ("0", "encoder.0", ...), depth first."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # -- modes and bulk changes ------------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's .grad: to None (the default, as PyTorch 2) or to zeros in place."""

        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call `fn` on every submodule (children first) and then on self, e.g. to initialise weights."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Replace every parameter's and buffer's values by fn(values), keeping the Parameter objects."""
        for m in self.children():
            m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                p._data = fn(p)._data
                if p._grad is not None:
                    p._grad._data = fn(p._grad)._data
            for key, b in self._buffers.items():
                if b is not None:
                    self._buffers[key] = fn(b)
        return self

    def to(self, *args, **kwargs) -> Module:
        """`to(dtype)`, `to(device)` (the CPU only), `to(tensor)`: floating-point state changes dtype."""

        dtype, _ = parse_to(args, kwargs)
        if dtype is None:
            return self
        if not isinstance(dtype, _dtypes.dtype):
            dtype = _dtypes.FROM_NP[_dtypes.to_np(dtype)]
        if not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def double(self) -> Module:
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def float(self) -> Module:
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def half(self) -> Module:
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def cpu(self) -> Module:
        return self

    def cuda(self, device=None) -> Module:
        raise no_cuda()  # a CPU-only PyTorch's error

    # -- state_dict -------------------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(self, *, destination: dict | None = None, prefix: str = "", keep_vars: bool = False) -> dict:
        """Name -> tensor for every parameter and persistent buffer (detached, sharing storage)."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = {"version": self._version}
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict: Mapping, prefix: str, strict: bool, missing_keys: list,
                              unexpected_keys: list, error_msgs: list, assign: bool) -> None:
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                       if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected minigrad.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(value)}")
                continue
            if param._data.ndim == 0 and value._data.ndim == 1 and value._data.shape[0] == 1:
                value = value[0]
            if value._data.shape != param._data.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {Size(value._data.shape)} "
                                  f"from checkpoint, the shape in current model is {Size(param._data.shape)}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter) and not isinstance(value, Parameter):
                            value = Parameter(value, requires_grad=param._requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.size()} and whose dimensions in the checkpoint are {value.size()}, an "
                                  f"exception occurred : {ex.args}.")
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Copy tensors from `state_dict` into this module's parameters and buffers (in place).

        With strict=True (the default) the keys must match exactly; PyTorch's error lists the
        missing and unexpected keys.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list = []
        unexpected: list = []
        errors: list = []
        state_dict = OrderedDict(state_dict)

        def load(module: Module, local: dict, prefix: str = "") -> None:
            module._load_from_state_dict(local, prefix, True, missing, unexpected, errors, assign)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)}, child_prefix)

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # -- printing -------------------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (override in your own modules)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
