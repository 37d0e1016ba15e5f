"""`minigrad.nn.functional`: PyTorch's functional interface.

The ops declared for this namespace (`linear`, the losses, `gelu`, `softplus`, ...) come from the op
registry, where each is declared beside its derivative rows (ops/linalg.py, ops/losses.py,
ops/elementwise.py). This module adds what PyTorch's functional interface spells differently
(`relu(input, inplace=False)`, `softmax(input, dim, _stacklevel)`) and what is not an op of its own
(dropout, one_hot).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._missing import missing_name
from .._random import default_generator
from .._tensor import Tensor, make
from ..autograd.grad_mode import no_grad
from ..ops.registry import REGISTRY, overridable

# (each gives way to `__torch_function__`, PyTorch's override protocol, as the top-level functions do)
_DECLARED = {name: overridable(op.named(name), name) for op in REGISTRY.values()
             if op.namespace == "nn.functional" and op.public for name in (op.name, *op.aliases)}
globals().update(_DECLARED)
pixel_shuffle = overridable(REGISTRY["pixel_shuffle"].named("pixel_shuffle"), "pixel_shuffle")  # also torch.'s


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else input.relu()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return input.softmax(dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return input.log_softmax(dim, dtype)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p): `input * mask/(1-p)` (MulBackward0).

    The mask comes from minigrad's generator (`manual_seed`), so it differs from PyTorch's draws.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input._data.size == 0:
        return input
    d = input._data
    if p == 1:
        noise = np.zeros(d.shape, d.dtype)
    else:
        keep = default_generator._np.random(d.shape) < (1 - p)
        noise = keep.astype(d.dtype) / np.asarray(1 - p, d.dtype)
    noise_t = make(noise)
    return input.mul_(noise_t) if inplace else input * noise_t


dropout = overridable(dropout, "dropout")  # vmap's batched tensors draw its mask as their randomness says


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels (the 2-D maps of (N, C, H, W)) with probability p, scaling the rest by 1/(1-p):
    `input * mask/(1-p)` with one mask value per (sample, channel) (MulBackward0). A 3-D input is read as
    (N, C, L), as PyTorch does (with its warning)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    nd = input._data.ndim
    if nd not in (3, 4):
        warnings.warn(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    if not training or p == 0 or input._data.size == 0:
        return input
    d = input._data
    shape = d.shape[:2] + (1,) * (nd - 2)
    if p == 1:
        noise = np.zeros(shape, d.dtype)
    else:
        keep = default_generator._np.random(shape) < (1 - p)
        noise = keep.astype(d.dtype) / np.asarray(1 - p, d.dtype)
    noise_t = make(noise)
    return input.mul_(noise_t) if inplace else input * noise_t


dropout2d = overridable(dropout2d, "dropout2d")


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """cos of the angle between x1 and x2 along `dim`: (x1 / |x1|) . (x2 / |x2|), each norm at least `eps`.
    Written as PyTorch's composite is (norms, clones clamped without recording, divisions, product, sum), so the
    graph has its nodes."""
    if x1.shape != x2.shape:
        shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
        x1, x2 = x1.expand(shape), x2.expand(shape)  # (PyTorch expands both when the shapes differ)
    n1, n2 = x1.norm(2, dim=dim, keepdim=True).clone(), x2.norm(2, dim=dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    t = tensor._data
    if t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if not t.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size and (t.min() < 0 or t.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes." if t.size and t.max() >= num_classes
                           else "Class values must be non-negative.")
    out = make((t[..., None] == np.arange(num_classes)).astype(np.int64))
    if t.size:  # PyTorch fills it in place, zeros then a scatter: its version reads 2 (an empty one returns early)
        out._shared_counter().value = 2
    return out


from .attention_functional import multi_head_attention_forward  # noqa: E402, F401

__all__ = sorted([*_DECLARED, "relu", "sigmoid", "tanh", "softmax", "log_softmax", "dropout", "dropout2d", "one_hot",
                  "multi_head_attention_forward"])

__getattr__ = missing_name(__name__, "torch.nn.functional")


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """input / max(‖input‖_p along dim, eps): unit vectors, composed as PyTorch composes it (norm, clamp_min,
    expand_as, div)."""
    if out is not None:
        raise NotImplementedError("minigrad does not implement normalize(out=...)")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Standardise each (sample, channel) over its spatial dims: batch_norm on the input viewed as one sample of
    N * C channels, as PyTorch computes it (its graph: view, batch_norm with the affine parameters repeated N
    times, view back); running statistics, when given, move towards the batch's mean over the samples."""
    n, c = input.shape[0], input.shape[1]
    x = input.reshape(1, n * c, *input.shape[2:])
    rm = None if running_mean is None else running_mean.repeat(n)
    rv = None if running_var is None else running_var.repeat(n)
    w = None if weight is None else weight.repeat(n)
    b = None if bias is None else bias.repeat(n)
    out = _DECLARED["batch_norm"](x, rm, rv, w, b, use_input_stats, momentum, eps)
    if running_mean is not None:  # the per-sample running statistics, averaged back into the module's
        with no_grad():
            running_mean.copy_(rm.view(n, c).mean(0))
            running_var.copy_(rv.view(n, c).mean(0))
    return out.view(input.shape)
