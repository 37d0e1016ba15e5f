"""`torch.nn.modules.rnn`: the classes in it that minigrad has, for code naming the full path."""

from __future__ import annotations

from ..._missing import missing_name
from ..rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

__getattr__ = missing_name(__name__, "torch.nn.modules.rnn")
