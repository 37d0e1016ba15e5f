"""What the teaching-code ports share: NumPy-made weights and data, captured prints.

The ports replace every random draw of the original with NumPy draws wrapped by the library under
test, so that torch and minigrad start from the same numbers, see the same batches and can be held
to the same recorded values. Nothing here imports torch: the library comes in as ``lib``.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import signal
import threading
from collections.abc import Callable

import numpy as np


def is_float64(t) -> bool:
    return str(t.dtype).endswith("float64")


def numpy_init(lib, model, seed: int, linear_std: float | None = None) -> None:
    """Overwrite the parameters of Linear/Conv/Embedding layers with NumPy draws, in place.

    The distributions are PyTorch's defaults (U(-1/sqrt(fan_in), +1/sqrt(fan_in)) for weights and
    biases of Linear and Conv layers, U(-1/sqrt(hidden_size), +1/sqrt(hidden_size)) for every parameter of
    the recurrent layers, N(0, 1) for Embedding), or N(0, linear_std) weights with zero biases when
    `linear_std` is given (what gpt.py's `_init_weights` draws). LayerNorm/BatchNorm parameters start
    deterministic (ones, zeros) and are left alone.
    """
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for module in model.modules():
            kind = type(module).__name__
            own = dict(module.named_parameters(recurse=False))
            if not own or kind in ("LayerNorm", "BatchNorm1d", "BatchNorm2d"):
                continue
            weight = own.get("weight")
            fan_in = math.prod(tuple(weight.shape)[1:]) if weight is not None and weight.dim() > 1 else 1
            if kind in ("RNN", "GRU", "LSTM", "RNNCell", "GRUCell", "LSTMCell"):
                fan_in = module.hidden_size
            for name, p in own.items():
                shape = tuple(p.shape)
                if kind == "Embedding":
                    values = rng.standard_normal(shape) * (1.0 if linear_std is None else linear_std)
                elif linear_std is not None and name == "weight":
                    values = rng.standard_normal(shape) * linear_std
                elif linear_std is not None and name == "bias":
                    values = np.zeros(shape)
                else:
                    bound = 1 / math.sqrt(fan_in)
                    values = rng.uniform(-bound, bound, shape)
                p.copy_(lib.tensor(values.astype(np.float64 if is_float64(p) else np.float32)))


def printed(fn: Callable, *args, **kwargs) -> tuple[str, object]:
    """Run fn and return (what it printed, its result)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        result = fn(*args, **kwargs)
    return buf.getvalue(), result


def as_torch_text(text: str) -> str:
    """minigrad prints `minigrad.` where PyTorch prints `torch.` (api-contract §3): read both as torch's."""
    text = re.sub(r"0x[0-9a-f]+", "0x?", text)
    return text.replace("minigrad::", "torch::").replace("minigrad.", "torch.")


def floats_in(text: str) -> list[float]:
    """Every decimal number printed in `text`, in order (for recorded-value checks of printed losses)."""
    return [float(x) for x in re.findall(r"-?\d+\.\d+(?:e[-+]?\d+)?", text)]


# -- synthetic data sets (the originals download theirs) ---------------------------------------------------------
_ONSETS = ["", "b", "br", "c", "ch", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "sh", "t", "th",
           "v", "w", "y", "z", "qu", "x"]
_VOWELS = ["a", "e", "i", "o", "u", "y", "ae", "ia", "ee", "oa"]
_CODAS = ["", "", "", "n", "l", "r", "s", "th", "x", "m", "ck"]


def synthetic_names(n: int, seed: int = 0) -> list[str]:
    """Name-like lowercase words of 2-12 letters (makemore's names.txt stand-in: every letter a-z occurs)."""
    rng = np.random.default_rng(seed)
    names = []
    while len(names) < n:
        word = "".join(_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))]
                       + _CODAS[rng.integers(len(_CODAS))] for _ in range(rng.integers(1, 4)))
        if 2 <= len(word) <= 12:
            names.append(word)
    names[:3] = ["abcdefghijkl", "mnopqrstuvwx", "yz"]  # the vocabulary is the full alphabet whatever the seed
    return names


def synthetic_text(n_chars: int, seed: int = 0) -> str:
    """Play-like English text (tiny-shakespeare's stand-in): speakers, capitals, punctuation, newlines."""
    rng = np.random.default_rng(seed)
    speakers = ["ROMEO", "JULIET", "KING HENRY", "First Citizen", "MENENIUS", "LADY CAPULET"]
    words = ["the", "and", "my", "of", "to", "thou", "thy", "lord", "love", "what", "shall", "be", "not", "with",
             "good", "king", "sweet", "death", "night", "fair", "heart", "speak", "come", "hence", "why", "tis",
             "o", "well", "you", "we", "must", "know", "blood", "crown", "grace", "queen", "war", "peace"]
    out = []
    size = 0
    while size < n_chars:
        lines = [speakers[rng.integers(len(speakers))] + ":"]
        for _ in range(rng.integers(1, 4)):
            w = [words[i] for i in rng.integers(0, len(words), rng.integers(3, 9))]
            w[0] = w[0].capitalize()
            lines.append(" ".join(w) + ".,!?;"[rng.integers(5)])
        block = "\n".join(lines) + "\n\n"
        out.append(block)
        size += len(block)
    return "".join(out)[:n_chars]


def class_images(n: int, channels: int, size: int, n_classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Images in [0, 1] whose class is a bright square at a class-specific place (plus noise), float32.

    A stand-in for CIFAR-10 / FashionMNIST: learnable by a small CNN in a few epochs, so "the network
    learnt something" (accuracy well above chance) can be checked the way the tutorials check it.
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    x = rng.uniform(0.0, 0.35, (n, channels, size, size))
    side = max(size // 4, 2)
    for i, label in enumerate(y):
        r, c = divmod(int(label), 4)
        top, left = (r * side) % (size - side), (c * side + r) % (size - side)
        x[i, label % channels, top:top + side, left:left + side] += 0.65
    return x.astype(np.float32), y.astype(np.int64)


class NumpyShuffle:
    """A sampler that yields a new NumPy permutation every epoch: `shuffle=True` with the same order in both
    libraries (their own shuffles draw from different random streams)."""

    def __init__(self, n: int, seed: int) -> None:
        self.n = n
        self.rng = np.random.default_rng(seed)

    def __iter__(self):
        return iter(self.rng.permutation(self.n).tolist())

    def __len__(self) -> int:
        return self.n


# -- guards: turn a known hang into the error a missing API raises ------------------------------------------------
@contextlib.contextmanager
def hang_guard(what: str, seconds: float):
    """Raise NotImplementedError(what) if the block runs longer than `seconds` (SIGALRM; POSIX main thread).

    For a port whose minigrad run would hang, not fail: with the guard the run ends, as a strict xfail,
    within the limit. The limits are hundreds of times what the guarded code takes once it works.
    """
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def timeout(signum, frame):
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Timeout:
        timed_out = True
    else:
        timed_out = False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if timed_out:  # raised here, outside the interrupted frames, so the traceback is a plain one
        raise NotImplementedError(f"{what} did not finish within {seconds} s") from None


class _Timeout(BaseException):
    """Raised by hang_guard's alarm inside the guarded block (a BaseException: no `except Exception` eats it)."""


def require_stack_of_many(lib, n: int = 40) -> None:
    """Stack and concatenate n tensors that require grad (an RNN's outputs over n time steps).

    Before the core redesign minigrad built the node class of an n-input stack/cat over all 2**n subsets
    of its inputs (20 inputs: 2 s; 32: hours): a port that stacks a long sequence calls this first, so
    that a regression fails within 2 s instead of stalling the run.
    """
    xs = [lib.ones(2, requires_grad=True) for _ in range(n)]
    with hang_guard(f"stack/cat of {n} tensors that require grad (StackBackward0/CatBackward0)", 2.0):
        lib.stack(xs).sum().backward()
        lib.cat(xs).sum().backward()
