"""Recurrent layers as torch.nn's: nn.RNN, nn.LSTM, nn.GRU and the one-step nn.RNNCell, nn.LSTMCell, nn.GRUCell.

Each layer is a Python loop over time steps, built from ops minigrad already has (linear, sigmoid, tanh, chunk,
stack, cat), so autograd, double backward and `viz` see every step. PyTorch's gate order and formulas (with the
operands in ATen's order, so the graphs have PyTorch's shape):

    RNN:   h' = tanh(W_ih x + b_ih + W_hh h + b_hh)                       (or relu)
    LSTM:  i, f, g, o = chunks of (W_ih x + b_ih + W_hh h + b_hh)
           c' = sigmoid(f) * c + sigmoid(i) * tanh(g);   h' = sigmoid(o) * tanh(c')   (then W_hr h' with proj_size)
    GRU:   r, z, n chunks of W_ih x + b_ih (i_*) and of W_hh h + b_hh (h_*)
           r = sigmoid(i_r + h_r);  z = sigmoid(i_z + h_z);  n = tanh(i_n + r * h_n);  h' = (1 - z) * n + z * h

A multi-layer module feeds each layer's output sequence to the next (with dropout in between when training); a
bidirectional one also runs every layer backwards in time and concatenates both directions' outputs. Parameters
are named and shaped as PyTorch's (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, ..._reverse, weight_hr_l0),
so a torch state_dict loads. Not here: PackedSequence inputs (pad the batch instead) and cuDNN's flat weights
(`flatten_parameters()` does nothing, as PyTorch's does on the CPU).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable

from .. import _creation
from .._tensor import Tensor
from ..ops.joining import cat, stack
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_step(activation: Callable[[Tensor], Tensor]):
    def step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, w_hr=None) -> Tensor:
        return activation(F.linear(h, w_hh, b_hh) + gi)
    return step


def _lstm_step(gi: Tensor, state: tuple[Tensor, Tensor], w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None = None) -> tuple[Tensor, Tensor]:
    h, c = state
    i, f, g, o = (F.linear(h, w_hh, b_hh) + gi).chunk(4, -1)
    c = F.sigmoid(f) * c + F.sigmoid(i) * F.tanh(g)
    h = F.sigmoid(o) * F.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, w_hr=None) -> Tensor:
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r = F.sigmoid(h_r + i_r)
    z = F.sigmoid(h_z + i_z)
    n = F.tanh(i_n + h_n * r)
    return (h - n) * z + n  # = (1 - z) * n + z * h, as ATen writes it


_STEPS = {"RNN_TANH": _rnn_step(F.tanh), "RNN_RELU": _rnn_step(F.relu), "LSTM": _lstm_step, "GRU": _gru_step}


class RNNBase(Module):
    """What nn.RNN, nn.LSTM and nn.GRU share: PyTorch's constructor checks, parameters, init, repr and forward."""

    __module__ = "minigrad.nn"

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._check_arguments(dropout)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        num_directions = 2 if bidirectional else 1
        like = {"dtype": dtype, "device": device}
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = {"weight_ih_l{}{}": (gate_size, layer_input_size),
                          "weight_hh_l{}{}": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update({"bias_ih_l{}{}": (gate_size,), "bias_hh_l{}{}": (gate_size,)})
                if proj_size > 0:
                    shapes["weight_hr_l{}{}"] = (proj_size, hidden_size)
                names = []
                for pattern, shape in shapes.items():
                    name = pattern.format(layer, "_reverse" if direction == 1 else "")
                    setattr(self, name, Parameter(_creation.empty(shape, **like)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def _check_arguments(self, dropout) -> None:
        """PyTorch's checks of the constructor's arguments (set on self already), with its exceptions and messages."""
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and self.num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={self.num_layers}", stacklevel=4)
        for name, kind in (("bias", bool), ("batch_first", bool), ("input_size", int), ("hidden_size", int)):
            value = getattr(self, name)
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if self.num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if self.proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if self.proj_size >= self.hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

    @property
    def _flat_weights(self) -> list[Tensor]:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction, in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op, as PyTorch's is off the GPU (it packs the weights for cuDNN)."""

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch's."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # --- forward -------------------------------------------------------------------------------------------

    def _check_input(self, input: Tensor) -> None:
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). "
                             f"Convert input: input.to({weight_dtype}), or convert model: model.to({input.dtype})")
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def _expected_hidden_size(self, input: Tensor, size: int) -> tuple[int, int, int]:
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, size)

    @staticmethod
    def _check_hidden_size(hx: Tensor, expected: tuple[int, int, int], msg: str = "Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected:
            raise RuntimeError(msg.format(expected, list(hx.size())))

    def _zeros(self, input: Tensor, size: int) -> Tensor:
        return _creation.zeros(self._expected_hidden_size(input, size), dtype=input.dtype, device=input.device)

    def _layers(self, input: Tensor, states: list) -> tuple[Tensor, list]:
        """Run every layer and direction over `input` (batched, in the module's layout) from `states` (one per
        layer and direction, in PyTorch's order); returns (last layer's output, final states in that order)."""
        x = input.transpose(0, 1) if self.batch_first else input  # time first
        step = _STEPS[self.mode]
        num_directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                weights = dict(zip(("w_ih", "w_hh", "b_ih", "b_hh") if self.bias else ("w_ih", "w_hh"),
                                   self.all_weights[k]))
                w_hr = self.all_weights[k][-1] if self.proj_size > 0 else None
                gi = F.linear(x, weights["w_ih"], weights.get("b_ih")).unbind(0)  # input part of every step at once
                state, out = states[k], [None] * len(gi)
                for t in (reversed(range(len(gi))) if direction == 1 else range(len(gi))):
                    state = step(gi[t], state, weights["w_hh"], weights.get("b_hh"), w_hr)
                    out[t] = state[0] if self.mode == "LSTM" else state
                outputs.append(stack(out, 0))
                finals.append(state)
            x = outputs[0] if num_directions == 1 else cat(outputs, 2)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return (x.transpose(0, 1) if self.batch_first else x), finals


def _check_dims(name: str, input: Tensor) -> None:
    if input.dim() not in (2, 3):
        raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                         f"{' tensor' if name == 'RNN' else ''} instead")


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu), over `num_layers` layers.

    `forward(input, hx=None)` returns (output, h_n): output (L, N, D * hidden_size) (N first with batch_first),
    h_n (D * num_layers, N, hidden_size); unbatched inputs (L, input_size) drop the N dim."""

    __module__ = "minigrad.nn"

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return _single_state_forward(self, "RNN", input, hx)


class GRU(RNNBase):
    """Gated recurrent unit layers (gates r, z, n as PyTorch's; see the module docstring).

    `forward(input, hx=None)` returns (output, h_n), shaped as nn.RNN's."""

    __module__ = "minigrad.nn"

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return _single_state_forward(self, "GRU", input, hx)


def _single_state_forward(module: RNNBase, name: str, input: Tensor, hx: Tensor | None) -> tuple[Tensor, Tensor]:
    """nn.RNN's and nn.GRU's forward: one hidden state per layer and direction."""
    _check_dims(name, input)
    is_batched = input.dim() == 3
    batch_dim = 0 if module.batch_first else 1
    if not is_batched:
        input = input.unsqueeze(batch_dim)
        if hx is not None:
            if hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            hx = hx.unsqueeze(1)
    elif hx is not None and hx.dim() != 3:
        raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
    if hx is None:
        hx = module._zeros(input, module.hidden_size)
    module._check_input(input)
    module._check_hidden_size(hx, module._expected_hidden_size(input, module.hidden_size))
    output, finals = module._layers(input, list(hx.unbind(0)))
    h_n = stack(finals, 0)
    if not is_batched:
        output, h_n = output.squeeze(batch_dim), h_n.squeeze(1)
    return output, h_n


class LSTM(RNNBase):
    """Long short-term memory layers (gates i, f, g, o as PyTorch's), with an optional projection of h (proj_size).

    `forward(input, hx=None)` with hx = (h_0, c_0) returns (output, (h_n, c_n)); h has proj_size features when
    proj_size > 0, c always hidden_size."""

    __module__ = "minigrad.nn"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        _check_dims("LSTM", input)
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            hx = (self._zeros(input, real_hidden_size), self._zeros(input, self.hidden_size))
        else:
            want = 3 if is_batched else 2
            if hx[0].dim() != want or hx[1].dim() != want:
                raise RuntimeError(f"For {'batched 3' if is_batched else 'unbatched 2'}-D input, hx and cx should "
                                   f"also be {want}-D but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not is_batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self._check_input(input)
        self._check_hidden_size(hx[0], self._expected_hidden_size(input, real_hidden_size),
                                "Expected hidden[0] size {}, got {}")
        self._check_hidden_size(hx[1], self._expected_hidden_size(input, self.hidden_size),
                                "Expected hidden[1] size {}, got {}")
        output, finals = self._layers(input, list(zip(hx[0].unbind(0), hx[1].unbind(0))))
        h_n, c_n = stack([h for h, _ in finals], 0), stack([c for _, c in finals], 0)
        if not is_batched:
            output, h_n, c_n = output.squeeze(batch_dim), h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


# --- cells ---------------------------------------------------------------------------------------------------

class RNNCellBase(Module):
    """One time step: weight_ih (chunks * hidden_size, input_size), weight_hh, bias_ih, bias_hh, as PyTorch's."""

    __module__ = "minigrad.nn"

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        like = {"dtype": dtype, "device": device}
        self.weight_ih = Parameter(_creation.empty((num_chunks * hidden_size, input_size), **like))
        self.weight_hh = Parameter(_creation.empty((num_chunks * hidden_size, hidden_size), **like))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, **like))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, **like))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch's."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, name: str, input: Tensor, hx: tuple):
        """PyTorch's checks; returns (batched input, batched states or None, whether the input was batched)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for i, h in enumerate(hx):
            if h is not None and h.dim() not in (1, 2):
                label = f"hx[{i}]" if len(hx) > 1 else "hidden"
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {h.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
            hx = tuple(h.unsqueeze(0) if h is not None else None for h in hx)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        if hx[0] is None:
            zeros = _creation.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            return input, tuple(zeros for _ in hx), is_batched
        for i, h in enumerate(hx):
            if h.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, expected "
                                   f"{self.hidden_size}")
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu); `forward(input, hx=None)` returns h'."""

    __module__ = "minigrad.nn"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (hx,), is_batched = self._prepare("RNNCell", input, (hx,))
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        step = _STEPS["RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"]
        ret = step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; `forward(input, (h, c)=None)` returns (h', c')."""

    __module__ = "minigrad.nn"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        input, hx, is_batched = self._prepare("LSTMCell", input, tuple(hx) if hx is not None else (None, None))
        h, c = _lstm_step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step; `forward(input, hx=None)` returns h'."""

    __module__ = "minigrad.nn"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (hx,), is_batched = self._prepare("GRUCell", input, (hx,))
        ret = _gru_step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
