"""`nn.utils.rnn.pad_sequence`: sequences of different lengths stacked into one padded batch, written as PyTorch
writes it (a filled tensor, each sequence copied into its slice: the graph is a chain of CopySlices).
`PackedSequence` and `pack_padded_sequence` are not there (docs/differences.md)."""

from __future__ import annotations

from ..._creation import full
from ..._missing import missing_name
from ..._tensor import Tensor

__all__ = ["pad_sequence"]


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """(longest, batch, *) (or (batch, longest, *) with `batch_first`), each sequence followed (or, with
    padding_side="left", preceded) by `padding_value`."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    longest = max(len(s) for s in sequences)
    first = sequences[0]
    shape = (len(sequences), longest) if batch_first else (longest, len(sequences))
    out = full(shape + tuple(first.shape[1:]), padding_value, dtype=first.dtype)
    for i, seq in enumerate(sequences):
        at = slice(0, len(seq)) if padding_side == "right" else slice(longest - len(seq), longest)
        if batch_first:
            out[i, at] = seq
        else:
            out[at, i] = seq
    return out


__getattr__ = missing_name(__name__, "torch.nn.utils.rnn")
