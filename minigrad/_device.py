"""Devices as tutorials write them. Only the CPU exists; anything else is a clear error."""

from __future__ import annotations

from ._hint import hint
from ._missing import MISSING_HINT


class device:
    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index: int | None = None):  # noqa: A002 - PyTorch's name
        if isinstance(type, device):
            type, index = type.type, type.index
        kind = str(type).split(":")[0]
        if kind != "cpu":
            raise RuntimeError(
                f"minigrad runs on the CPU only, so device '{type}' is not available.\n"
                + hint("drop the device argument or use device('cpu'); minigrad.cuda.is_available() is False.")
            )
        self.type = "cpu"
        self.index = index

    def __repr__(self) -> str:
        return "device(type='cpu')" if self.index is None else f"device(type='cpu', index={self.index})"

    def __str__(self) -> str:
        return "cpu" if self.index is None else f"cpu:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        return isinstance(other, device) and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.type)


CPU = device("cpu")


def check(dev) -> None:
    """Validate a `device=` argument (None, 'cpu', device('cpu'))."""
    if dev is not None and not isinstance(dev, device):
        device(dev)


NO_CUDA = "Torch not compiled with CUDA enabled"


def no_cuda() -> AssertionError:
    """A CPU-only PyTorch's error, and the hint in the learner's language (chosen when it is raised)."""
    return AssertionError(NO_CUDA + "\n" + hint("minigrad runs on the CPU only; check "
                                                "minigrad.cuda.is_available() (False) first."))


class _Missing:
    """A namespace object whose missing names raise minigrad's "does not implement" error (as modules' do)."""

    _torch_name = "torch"

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(f"minigrad does not implement {self._torch_name}.{name}. {MISSING_HINT}")


class _Cuda(_Missing):
    """`minigrad.cuda`: answers the questions tutorials ask as a CPU-only PyTorch does: no device, no memory
    used; asking for a device's name or number fails with PyTorch's message."""

    _torch_name = "torch.cuda"

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def device_count() -> int:
        return 0

    @staticmethod
    def manual_seed(seed: int) -> None:
        pass

    manual_seed_all = manual_seed

    @staticmethod
    def empty_cache() -> None:
        pass

    @staticmethod
    def memory_allocated(device=None) -> int:
        return 0

    memory_reserved = max_memory_allocated = memory_allocated

    @staticmethod
    def is_bf16_supported(including_emulation: bool = True) -> bool:
        return False

    @staticmethod
    def current_device() -> int:
        raise no_cuda()

    @staticmethod
    def get_device_name(device=None) -> str:
        raise no_cuda()

    get_device_capability = set_device = synchronize = get_device_name


cuda = _Cuda()


class _Accelerator(_Missing):
    """`minigrad.accelerator`: PyTorch's device-agnostic questions, answered as on a CPU-only machine."""

    @staticmethod
    def is_available() -> bool:
        return False

    _torch_name = "torch.accelerator"

    @staticmethod
    def current_accelerator(check_available: bool = False) -> None:
        return None

    @staticmethod
    def device_count() -> int:
        return 0


accelerator = _Accelerator()


class _Flags(_Missing):
    """A backend's switches: settable attributes (`cudnn.deterministic = True` is accepted and read back, as
    PyTorch accepts it on a CPU-only machine) and `is_available()`, which is False."""

    def __init__(self, name: str, **flags) -> None:
        self.__dict__.update(flags)
        self._name = name
        self._torch_name = f"torch.backends.{name}"

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def is_built() -> bool:
        return False

    def __repr__(self) -> str:
        return f"<minigrad.backends.{self._name} (CPU only)>"


class _Backends(_Missing):
    """`minigrad.backends`: cudnn's and the CUDA matmul's flags, mps's questions (nothing there but the CPU)."""

    _torch_name = "torch.backends"

    def __init__(self) -> None:
        self.cudnn = _Flags("cudnn", enabled=True, benchmark=False, deterministic=False, allow_tf32=True)
        self.mps = _Flags("mps")
        self.cuda = _Flags("cuda", matmul=_Flags("cuda.matmul", allow_tf32=False,
                                                 allow_fp16_reduced_precision_reduction=True))


backends = _Backends()


class _Version(_Missing):
    """`minigrad.version`: as a CPU-only PyTorch's `torch.version`, no CUDA (`cuda` is None)."""

    _torch_name = "torch.version"
    cuda = None
    hip = None


version = _Version()
