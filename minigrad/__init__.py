"""minigrad: PyTorch's autograd, re-built over NumPy so you can see how it works.

`import minigrad as torch` runs autograd tutorial code and prints what PyTorch prints.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math
import warnings as _warnings

from . import (
    _dtypes,
    autograd,
    ops,  # declares the ops and gives Tensor its methods
)
from ._creation import (
    arange,
    as_tensor,
    bernoulli,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    is_tensor,
    linspace,
    multinomial,
    normal,
    numel,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    real,
    tensor,
    zeros,
    zeros_like,
)
from ._creation import range_ as range  # torch.range: the module's `range` is PyTorch's, as in torch/__init__
from ._device import accelerator, backends, cuda, device, version
from ._dtypes import (
    bool,
    double,
    dtype,
    finfo,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from ._layout import contiguous_format, memory_format, preserve_format
from ._printing import get_printoptions, set_printoptions
from ._random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from ._stacklevel import is_warn_always_enabled, set_warn_always
from ._tensor import (
    BoolTensor,
    ByteTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    Size,
    Tensor,
)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__version__ = "0.1.0"

# PyTorch's constants (Python floats, as torch.pi is)
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan

# every public op declared for the top-level namespace (ops/registry.py): minigrad.exp, minigrad.cat, ...
# (each gives way to `__torch_function__`, PyTorch's override protocol: ops.registry.overridable)
globals().update({name: ops.registry.overridable(op.named(name), name) for op in ops.REGISTRY.values()
                  if op.public and op.namespace == "" for name in (op.name, *op.aliases)})
# the `*_like` factories and the draws from a tensor's values too (vmap's batched tensors make them batched)
globals().update({name: ops.registry.overridable(globals()[name], name) for name in (
    "empty_like", "full_like", "ones_like", "rand_like", "randn_like", "zeros_like", "bernoulli", "multinomial",
    "normal")})

from .autograd import forward_ad  # noqa: E402, F401  (minigrad.autograd.forward_ad: it builds on the ops)


def is_floating_point(input: Tensor) -> _builtins.bool:
    return input.is_floating_point()


def detach(input: Tensor) -> Tensor:
    return input.detach()


def get_default_device() -> device:
    return device("cpu")


_MATMUL_PRECISION = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted as PyTorch's (its "high"/"medium" allow TF32 or bfloat16 on GPUs); NumPy's float32 matmul is the
    same whatever is asked."""
    if precision not in ("highest", "high", "medium"):
        _warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _MATMUL_PRECISION[0] = precision


def get_float32_matmul_precision() -> str:
    return _MATMUL_PRECISION[0]


def compile(model=None, *, fullgraph: _builtins.bool = False, dynamic=None, backend=None, mode=None, options=None,
            disable: _builtins.bool = False, **kwargs):
    """`torch.compile` without a compiler: the model or function itself, which runs as written (minigrad has no
    graph compiler; PyTorch's compiled model computes the same values). Without a model, a decorator."""
    if model is None:
        return lambda m: m
    return model


from . import functional  # noqa: E402

functional.attach(globals())


from ._missing import install_tensor_stubs, missing_name  # noqa: E402

__getattr__ = missing_name(__name__, "torch")

del _dtypes

# nn, optim, data loading and saving, imported last: they build on everything above
# (func, the function transforms of torch.func, batches nn's functions: after nn)
from . import distributions, func, nn, optim, random, testing, utils  # noqa: E402
from .func import vmap  # noqa: E402
from .serialization import load, save  # noqa: E402

Tensor._STUBS = install_tensor_stubs(Tensor)  # last: after every module has added its Tensor methods

# PyTorch computes inf and nan silently (`inf - inf` is nan, no warning); NumPy warns. The common ops
# (arithmetic, matmul, sum, log, exp, division, backward) run with NumPy's error state off; for the
# rest, NumPy's floating-point RuntimeWarnings raised inside minigrad's own modules are filtered out.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"minigrad\.(ops|autograd|nn)\.")
