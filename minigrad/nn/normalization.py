"""Normalization layers: LayerNorm, BatchNorm1d, BatchNorm2d, as torch.nn's.

BatchNorm keeps running statistics as buffers (`running_mean`, `running_var`, `num_batches_tracked`, in the
state_dict): training mode normalises with the batch's statistics and moves the running ones towards them
(`momentum`, or a cumulative average when momentum is None); eval mode normalises with the running ones.
"""

from __future__ import annotations

import numpy as np

from .. import _creation
from .._tensor import Tensor, make
from ..autograd.grad_mode import no_grad
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class LayerNorm(Module):
    """Standardise each sample over its last dims (`normalized_shape`), then scale and shift (learnt, per element)."""

    __module__ = "minigrad.nn"

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, (int, np.integer)):
            normalized_shape = (int(normalized_shape),)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.empty(self.normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(_creation.empty(self.normalized_shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class _BatchNorm(Module):
    """What BatchNorm1d and BatchNorm2d share; they differ only in the input ranks they accept."""

    __module__ = "minigrad.nn"
    _version = 2
    _ranks: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(_creation.empty(num_features, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(_creation.empty(num_features, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", make(np.zeros((), np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in self._ranks:
            raise ValueError(f"expected {' or '.join(f'{r}D' for r in self._ranks)} input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats  # which running statistics the call may use
        return F.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, strict, missing_keys, unexpected_keys, error_msgs,
                              assign) -> None:
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and key not in state_dict:  # a checkpoint from before the counter existed
            state_dict[key] = self.num_batches_tracked if self.num_batches_tracked is not None else make(
                np.zeros((), np.int64))
        super()._load_from_state_dict(state_dict, prefix, strict, missing_keys, unexpected_keys, error_msgs, assign)


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs, per channel C."""

    __module__ = "minigrad.nn"
    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs, per channel C."""

    __module__ = "minigrad.nn"
    _ranks = (4,)


class _InstanceNorm(_BatchNorm):
    """Instance normalization: each sample's channels standardised over their own spatial dims (no running
    statistics and no affine parameters unless asked, unlike batch norm)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in self._ranks:
            raise ValueError(f"expected {self._ranks[0]}D or {self._ranks[1]}D input (got {input.dim()}D input)")
        unbatched = input.dim() == self._ranks[0]
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum or 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) inputs (or unbatched (C, L))."""

    __module__ = "minigrad.nn"
    _ranks = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) inputs (or unbatched (C, H, W))."""

    __module__ = "minigrad.nn"
    _ranks = (3, 4)
