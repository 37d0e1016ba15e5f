"""The per-thread switch every operation reads: is autograd recording?

`GRAD.mode` is 1 with grad mode on (the default in every new thread, as in PyTorch), 0 under
`no_grad`, -1 under `inference_mode` (no graph, and new tensors are inference tensors). The context
managers that set it are `minigrad.autograd.grad_mode`'s; this module sits below Tensor so that
Tensor can read the switch.
"""

from __future__ import annotations

import contextvars
import itertools
import threading

import numpy as np


class _GradState(threading.local):
    mode = 1  # a class default: each new thread starts with grad enabled
    formula = 0  # > 0 while derivative formulas run under create_graph (ops/recording.py, RuleNode._apply)
    # While a backward that only some inputs' gradients are asked of runs (autograd.grad, backward(inputs=)): the
    # nodes that run or are captured, else None. PyTorch's formulas skip an input whose edge leads to none of them
    # (`task_should_compute_output`, read from the running graph task's exec_info): set by the engine, read by
    # RuleNode._gradients.
    wanted = None

    def __init__(self):
        # PyTorch computes inf and nan silently (`inf - inf` is nan); NumPy warns. Ops run their NumPy
        # calls inside this context, where np.errstate(all="ignore") holds, via `quietly(fn, *args)`.
        with np.errstate(all="ignore"):
            self.quiet = contextvars.copy_context()


GRAD = _GradState()

# Graph nodes are numbered as they are made (autograd/graph.py); `detach_()` takes a number too, so that a node
# can tell whether a tensor it saved was detached in place after it saved it.
SEQUENCE = itertools.count()

# Becomes True when any thread first enters inference_mode, and stays so. Until then no tensor can be an
# inference tensor, and making a tensor need not read the per-thread mode (a slower read than a global's).
INFERENCE_MODE_USED = [False]


def quietly(fn, *args):
    """`fn(*args)` with NumPy's floating-point warnings off (inf and nan are results, as in PyTorch)."""
    return GRAD.quiet.run(fn, *args)

# torch.func's forward-mode transforms (jvp, jacfwd) running now (minigrad.func): a few forward formulas read
# an absent tangent as PyTorch's zero tensor only there, where functorch hands it to them as a wrapped tensor
FUNC_FORWARD = [0]
# torch.func's backward passes (vjp, jacrev, grad) running now: PyTorch's backward formulas see wrapped tensors
# there and take their branch for tensor subclasses (`mask * (grad / count)`, not a masked fill of zeros)
FUNC_BACKWARD = [0]
# torch.func's differentiating transforms running now (their depth), and vmap's levels in force (func/_batched.py
# appends and pops them): inside any of them PyTorch runs an op's Python decomposition, with its own errors
FUNC_DEPTH = [0]
FUNC_LEVELS: list = []

# The forward-AD level in force (minigrad.autograd.forward_ad): None when no `dual_level` is active, else a
# token new for each level entered. A tangent is stored on its tensor with the token of the level it belongs
# to, so a level's tangents are gone once it exits, without visiting them. Every op reads `DUAL[0]` once.
DUAL = [None]
